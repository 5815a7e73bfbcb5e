%% The floor for bench/micro_vs_bare_loop.sh: each expression in a hand-written tight loop,
%% timed in a plain emulator with nothing subtracted. `exprs/0' gives the same expressions as text
%% for `beamscale bench'.
-module(micro_bare).
-export([exprs/0, main/1]).

-define(SAMPLES, 20).
-define(SAMPLE_NS, 25000000).

exprs() ->
    ["rand:uniform(1000).", "lists:seq(1, 20).", "lists:reverse(lists:seq(1, 30)).",
     "erlang:phash2({a, [1, 2, 3], <<\"bin\">>}).", "maps:from_list([{a, 1}, {b, 2}, {c, 3}])."].

loop(1, 0) -> ok;
loop(1, N) -> _ = rand:uniform(1000), loop(1, N - 1);
loop(2, 0) -> ok;
loop(2, N) -> _ = lists:seq(1, 20), loop(2, N - 1);
loop(3, 0) -> ok;
loop(3, N) -> _ = lists:reverse(lists:seq(1, 30)), loop(3, N - 1);
loop(4, 0) -> ok;
loop(4, N) -> _ = erlang:phash2({a, [1, 2, 3], <<"bin">>}), loop(4, N - 1);
loop(5, 0) -> ok;
loop(5, N) -> _ = maps:from_list([{a, 1}, {b, 2}, {c, 3}]), loop(5, N - 1).

%% Prints "INDEX NS_PER_CALL" per expression: the median of the samples, taken in a fresh
%% process (as `beamscale bench' takes them): a process's heap size sets how often it collects,
%% which for a call allocating a few dozen words is a large part of its cost.
main([]) ->
    [io:format("~b ~.2f~n", [I, fresh(fun() -> median([sample(I, calls(I))
                                                        || _ <- lists:seq(1, ?SAMPLES)])
                                      end)])
     || I <- lists:seq(1, length(exprs()))],
    ok.

fresh(Fun) ->
    {Pid, Ref} = spawn_monitor(fun() -> exit({done, Fun()}) end),
    receive {'DOWN', Ref, process, Pid, {done, X}} -> X end.

calls(I) -> calls(I, 1000).

calls(I, N) ->
    case timed(I, N) of
        Ns when Ns >= ?SAMPLE_NS div 5 -> round(N * ?SAMPLE_NS / Ns);
        _ -> calls(I, N * 2)
    end.

sample(I, N) -> timed(I, N) / N.

timed(I, N) ->
    T0 = erlang:monotonic_time(nanosecond),
    ok = loop(I, N),
    erlang:monotonic_time(nanosecond) - T0.

median(Xs) -> lists:nth((length(Xs) + 1) div 2, lists:sort(Xs)).
