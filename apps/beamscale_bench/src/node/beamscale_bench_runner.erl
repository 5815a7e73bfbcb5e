%% @private The part of the executor that runs on the node under test: it asks a handler for its
%% argument sets and runs one iteration with bencherl's multi-phase protocol, each call to `run/3'
%% in a fresh process, timed there: elapsed time (`erlang:monotonic_time/0', as bencherl), or
%% the emulator's CPU time (`erlang:statistics(runtime)': user and system time of all its
%% threads, in ms), which other processes' load on the host stretches much less.
-module(beamscale_bench_runner).

-export([args/3, iteration/5, iteration/6]).
-export_type([outcome/0, clock/0]).

%% `{instructions, Counter}': wall time, and the instructions retired by the call counted by
%% `beamscale_bench_icount' (its NIF loaded on this node).
-type clock() :: wall | cpu | {instructions, beamscale_bench_icount:counter()}.

%% How often the node's memory is looked at while a handler runs: a loop allocating 1 GB/s
%% overshoots its bound by 50 MB at most.
-define(MEMORY_POLL_MS, 50).
%% Counted, each poll runs on the counted scheduler: seldom (Valgrind's node runs ~50x slower).
-define(COUNTED_POLL_MS, 1000).

-type timing() :: {Phase :: string(), Seconds :: float()}
                | {Phase :: string(), Seconds :: float(), Instructions :: non_neg_integer()}.
-type outcome() :: {ok, [timing()], Output :: binary()}
                 | {error, Reason :: term(), [timing()], Output :: binary()}.

%% @doc The argument sets of `Mod' for `Version'.
-spec args(module(), beamscale_bench:version(), beamscale_bench:conf()) ->
    {ok, [beamscale_bench:args()]} | {error, term()}.
args(Mod, Version, Conf) ->
    try Mod:bench_args(Version, Conf) of
        Sets when is_list(Sets) ->
            case lists:all(fun is_list/1, Sets) of
                true -> {ok, Sets};
                false -> {error, {bad_bench_args, Sets}}
            end;
        Other -> {error, {bad_bench_args, Other}}
    catch
        Class:Reason -> {error, {Class, Reason}}
    end.

%% @doc Run one iteration of benchmark `Name' (module `Mod') on the wall clock.
-spec iteration(atom(), module(), beamscale_bench:args(), [node()], beamscale_bench:conf()) ->
    outcome().
iteration(Name, Mod, Args, Peers, Conf) -> iteration(Name, Mod, Args, Peers, Conf, wall).

%% @doc Run one iteration of benchmark `Name' (module `Mod') timed by `Clock'; what it prints is
%% captured.
-spec iteration(atom(), module(), beamscale_bench:args(), [node()], beamscale_bench:conf(),
                clock()) -> outcome().
iteration(Name, Mod, Args, Peers, Conf, Clock) ->
    Capture = beamscale_bench_capture:start(),
    %% The bound is read once, before any phase: not beside a timed call, not per phase.
    Call = #{name => Name, mod => Mod, peers => Peers, conf => Conf, capture => Capture,
             clock => Clock, memory_bound => memory_bound()},
    try phases(Args, Call#{args => Args}, []) of
        {ok, Timings} -> {ok, Timings, beamscale_bench_capture:take(Capture)};
        {error, Reason, Timings} ->
            {error, Reason, Timings, beamscale_bench_capture:take(Capture)}
    after
        beamscale_bench_capture:stop(Capture)
    end.

phases(Args, Call, Acc) ->
    case timed_call(Args, Call) of
        {returned, Result, Seconds} -> next(Result, Seconds, Args, Call, Acc);
        {returned, Result, Seconds, {ok, N}} -> next(Result, {Seconds, N}, Args, Call, Acc);
        {returned, _, _, {error, Reason}} -> {error, Reason, lists:reverse(Acc)};
        {raised, Reason} -> {error, Reason, lists:reverse(Acc)}
    end.

%% bencherl's contract: the latest state goes in front of the *original* arguments, each time.
next({{continue, Phase}, State}, Seconds, _Args, #{args := Orig} = Call, Acc) ->
    phases([State | Orig], Call, timing(Phase, Seconds, Acc));
next({{done, Phase}, _}, Seconds, _Args, _Call, Acc) ->
    {ok, lists:reverse(timing(Phase, Seconds, Acc))};
next({error, Reason}, _Seconds, _Args, _Call, Acc) ->
    {error, Reason, lists:reverse(Acc)};
next(_Ok, Seconds, _Args, #{name := Name}, Acc) ->
    {ok, lists:reverse(timing(Name, Seconds, Acc))}.

timing(ignore, _Seconds, Acc) -> Acc;
timing(Phase, {Seconds, N}, Acc) -> [{phase_name(Phase), Seconds, N} | Acc];
timing(Phase, Seconds, Acc) -> [{phase_name(Phase), Seconds} | Acc].

phase_name(P) when is_atom(P) -> atom_to_list(P);
phase_name(P) when is_list(P) -> P;
phase_name(P) -> lists:flatten(io_lib:format("~0p", [P])).

%% One call to run/3 in a fresh process, as bencherl's executor did; the clock is read inside that
%% process so spawning and message passing stay out of the figure. The node's memory is looked
%% at meanwhile: a handler that allocates without end (in its process, in processes it spawns,
%% in ETS or binaries) ends at the node's bound, named, with every process it started (they
%% share its group leader, the capture), rather than taking the host's memory.
timed_call(Args, #{mod := Mod, peers := Peers, conf := Conf, capture := Capture,
                   clock := Clock, memory_bound := Bound}) ->
    Parent = self(),
    {Pid, Ref} = spawn_monitor(
        fun() ->
            group_leader(Capture, self()),
            Parent ! {self(), measured(Clock, fun() -> Mod:run(Args, Peers, Conf) end)}
        end),
    watch(Pid, Ref, Capture, Bound, poll_ms(Clock)).

%% The clock read inside the call's process; counted, the counter just around the call.
measured({instructions, Counter}, Run) ->
    T0 = now_s(wall),
    {Result, Count} = beamscale_bench_icount:counted(Counter, Run),
    {Result, now_s(wall) - T0, Count};
measured(Clock, Run) ->
    T0 = now_s(Clock),
    Result = Run(),
    {Result, now_s(Clock) - T0}.

poll_ms({instructions, _}) -> ?COUNTED_POLL_MS;
poll_ms(_) -> ?MEMORY_POLL_MS.

watch(Pid, Ref, Capture, Bound, Poll) ->
    receive
        {Pid, Measured} ->
            demonitor(Ref, [flush]),
            list_to_tuple([returned | tuple_to_list(Measured)]);
        {'DOWN', Ref, process, Pid, Reason} ->
            {raised, {crashed, Reason}}
    after Poll ->
        case erlang:memory(total) of
            Total when Total > Bound ->
                _ = [exit(P, kill) || P <- processes(), P =/= Capture,
                                      process_info(P, group_leader) =:= {group_leader, Capture}],
                receive {'DOWN', Ref, process, Pid, _} -> ok end,
                {raised, memory_text(Total, Bound)};
            _ -> watch(Pid, Ref, Capture, Bound, Poll)
        end
    end.

%% The node's bound: `job_memory_bytes' of this application's environment, else a quarter of
%% the host's memory (/proc/meminfo; 4 GiB where it cannot be read).
memory_bound() ->
    case application:get_env(beamscale_bench, job_memory_bytes) of
        {ok, N} when is_integer(N), N > 0 -> N;
        _ ->
            case file:read_file("/proc/meminfo") of
                {ok, <<"MemTotal:", Rest/binary>>} ->
                    {Kb, _} = string:to_integer(string:trim(Rest, leading)),
                    Kb * 1024 div 4;
                _ -> 4 bsl 30
            end
    end.

memory_text(Total, Bound) ->
    iolist_to_binary(io_lib:format("memory bound: the node reached ~b MB (its bound: ~b MB, a "
                                   "quarter of the host's or job_memory_bytes); the job and the "
                                   "processes it started were stopped",
                                   [Total bsr 20, Bound bsr 20])).

now_s(wall) -> erlang:monotonic_time(nanosecond) / 1.0e9;
now_s(cpu) -> element(1, erlang:statistics(runtime)) / 1.0e3.
