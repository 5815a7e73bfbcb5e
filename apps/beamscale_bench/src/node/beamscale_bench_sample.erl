%% @doc On the node under test, where perf cannot run: the emulator's own sampling. Every few
%% milliseconds of a window, the current stack of every process that is running, waiting in a
%% run queue (on one scheduler the sampler itself is the one running) or collecting garbage is
%% read with `process_info/2' and counted, folded as perf's stacks are
%% (`beamscale_format_perf': thread first, then the root down to the leaf), so the profile's
%% categories and flame graphs read it as they read perf's. Only Erlang code is seen: a lock's
%% wait or the emulator's C functions are not.
-module(beamscale_bench_sample).

-export([sample/2]).

%% @doc Stacks seen in `WindowMs', one look at every process each `IntervalMs'.
-spec sample(pos_integer(), pos_integer()) -> #{[binary()] => pos_integer()}.
sample(WindowMs, IntervalMs) ->
    %% At normal priority a look waits behind the whole run queue (128 of mbrot's rows, each
    %% done in a slice or two), and sees little; high takes the next slice when its timer fires.
    _ = process_flag(priority, high),
    Deadline = erlang:monotonic_time(millisecond) + WindowMs,
    loop(Deadline, IntervalMs, #{}).

loop(Deadline, Interval, Acc) ->
    Acc1 = lists:foldl(fun(S, A) -> maps:update_with(S, fun(N) -> N + 1 end, 1, A) end, Acc,
                       stacks()),
    case erlang:monotonic_time(millisecond) >= Deadline of
        true -> Acc1;
        false ->
            receive after Interval -> ok end,
            loop(Deadline, Interval, Acc1)
    end.

stacks() ->
    Me = self(),
    [stack(Status, Trace) || P <- erlang:processes(), P =/= Me,
                             [{status, Status}, {current_stacktrace, Trace}]
                                 <- [process_info(P, [status, current_stacktrace])],
                             lists:member(Status, [running, runnable, garbage_collecting])].

stack(Status, Trace) ->
    Frames = lists:reverse([frame(M, F, A) || {M, F, A, _} <- Trace]),
    Gc = [<<"garbage_collect">> || Status =:= garbage_collecting],
    [<<"scheduler">> | Frames ++ Gc].

frame(M, F, A) when is_list(A) -> frame(M, F, length(A));
frame(M, F, A) ->
    iolist_to_binary([atom_to_binary(M), $:, atom_to_binary(F), $/, integer_to_binary(A)]).
