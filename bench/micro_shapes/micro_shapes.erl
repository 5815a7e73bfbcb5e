%% Where does `beamscale bench' lose time against a bare loop (bench/micro_vs_bare_loop.sh)?
%% The same call, rand:uniform(1000), in loops of several shapes and places, alternated ROUNDS
%% times in one emulator, each the minimum over samples of 20000 calls in a fresh process (the
%% minimum: on a shared host preemption only adds). Prints ns per call and the ratio to the
%% bare loop.
-module(micro_shapes).
-export([main/1]).

-define(N, 20000).

%% The bare loop of bench/micro_bare (result dropped), and the generated loop's shape (four
%% arguments, result kept), hand-written here.
a(0) -> ok;
a(N) -> _ = rand:uniform(1000), a(N - 1).
b(0, _, _, R) -> R;
b(N, S, I, _) -> R = rand:uniform(1000), b(N - 1, S, I, R).

main([Rounds]) ->
    {ok, B} = beamscale_micro_source:parse("rand:uniform(1000).", erlang),
    gen(bs_micro_bench, B),
    gen(bs_micro_empty, {empty, B}),
    Vs = [{"bare a/1", fun() -> plain(fun a/1) end},
          {"bare b/4 (the generated shape)", fun() -> plain(fun(N) -> b(N, x, y, ok) end) end},
          {"a/1 in another module", fun() -> plain(fun micro_shapes_ab:a/1) end},
          {"b/4 in another module", fun() -> plain(fun(N) -> micro_shapes_ab:b(N, x, y, ok) end)
           end},
          {"generated, without State/Input", fun() -> plain(fun micro_shapes_ab:c/1) end},
          {"generated, its result dropped",
           fun() -> plain(fun(N) -> micro_shapes_ab:d(N, x, y, ok) end) end},
          {"generated, plain process", fun() -> plain(fun(N) -> run(bs_micro_bench, N) end) end},
          {"generated, beamscale's harness", fun() -> harness(bs_micro_bench) end},
          {"empty loop, beamscale's harness", fun() -> harness(bs_micro_empty) end}],
    Rs = [[F() || {_, F} <- Vs] || _ <- lists:seq(1, list_to_integer(Rounds))],
    Mins = [lists:min([lists:nth(I, R) || R <- Rs]) || I <- lists:seq(1, length(Vs))],
    [io:format("~-34s ~7.2f ns ~7.3f~n", [Name, M, M / hd(Mins)])
     || {{Name, _}, M} <- lists:zip(Vs, Mins)],
    ok.

run(Mod, N) -> Mod:run(N, undefined, undefined).

gen(Mod, Bench) ->
    {ok, Forms} = beamscale_micro_source:erlang(Mod, Bench, #{}),
    {ok, Mod, Bin} = compile:forms(Forms, [binary]),
    {module, Mod} = code:load_binary(Mod, atom_to_list(Mod) ++ ".erl", Bin).

plain(F) -> fresh(fun() -> F(?N), lists:min([timed(F) || _ <- lists:seq(1, 20)]) end).

harness(Mod) ->
    {ok, S} = beamscale_bench_micro:time(Mod, #{time => 100, samples => 20, warmup => 1,
                                                calls => ?N}),
    lists:min([Ns / N || {N, Ns, _} <- S]).

timed(F) ->
    T0 = erlang:monotonic_time(nanosecond),
    _ = F(?N),
    (erlang:monotonic_time(nanosecond) - T0) / ?N.

fresh(Fun) ->
    {Pid, Ref} = spawn_monitor(fun() -> exit({done, Fun()}) end),
    receive {'DOWN', Ref, process, Pid, {done, X}} -> X end.
