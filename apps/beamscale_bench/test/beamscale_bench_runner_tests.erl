%% bencherl's multi-phase contract, run by the node-side runner in this node.
-module(beamscale_bench_runner_tests).
-include_lib("eunit/include/eunit.hrl").

-export([run/3]).

%% A bencherl-style handler that matches its arguments exactly: each call gets the latest state
%% in front of the original argument list, set-up phases (`ignore') included.
run([orig], _Peers, _Conf) -> {{continue, ignore}, set_up};
run([set_up, orig], _, _) -> {{continue, p1}, s1};
run([s1, orig], _, _) -> {{continue, p2}, s2};
run([s2, orig], _, _) -> {{continue, ignore}, s3};
run([s3, orig], _, _) -> {{done, p3}, s4};
run([sleep, Ms], _, _) -> timer:sleep(Ms);
run([spin, Ms], _, _) -> spin(erlang:monotonic_time(millisecond) + Ms);
run([grow], _, _) -> grow([]);
run([grow_elsewhere], _, _) ->
    Self = self(),
    _ = [spawn(fun() -> Self ! started, grow([]) end) || _ <- [1, 2]],
    receive never -> ok end;
run([print, N], _, _) -> [io:put_chars(lists:duplicate(1000, $x)) || _ <- lists:seq(1, N)], ok;
run(Args, _, _) -> error({unexpected_args, Args}).

four_phases_get_latest_state_and_original_args_test() ->
    Outcome = beamscale_bench_runner:iteration(phased, ?MODULE, [orig], [], []),
    ?assertMatch({ok, [{"p1", _}, {"p2", _}, {"p3", _}], _}, Outcome).

%% The CPU clock counts work, not waiting: a handler asleep for 300 ms takes (almost) no CPU
%% time, one spinning for 300 ms of wall time takes some; the wall clock sees both sleep.
cpu_clock_counts_work_not_waiting_test_() ->
    {timeout, 30, fun() ->
        {ok, [{"clocked", Wall}], _} =
            beamscale_bench_runner:iteration(clocked, ?MODULE, [sleep, 300], [], [], wall),
        {ok, [{"clocked", Asleep}], _} =
            beamscale_bench_runner:iteration(clocked, ?MODULE, [sleep, 300], [], [], cpu),
        {ok, [{"clocked", Busy}], _} =
            beamscale_bench_runner:iteration(clocked, ?MODULE, [spin, 300], [], [], cpu),
        ?assert(Wall >= 0.3),
        ?assert(Asleep < 0.1),
        ?assert(Busy > Asleep)
    end}.

grow(L) -> grow([lists:seq(1, 1000) | L]).

%% A handler that allocates without end, in its process or in two it spawns: the job ends at the
%% node's bound (here 200 MB above what the node holds), named, its processes gone.
memory_bound_ends_the_job_test_() ->
    {timeout, 60, fun() ->
        Bound = erlang:memory(total) + 200 * 1024 * 1024,
        ok = application:set_env(beamscale_bench, job_memory_bytes, Bound),
        try
            [begin
                 Before = length(processes()),
                 {error, Why, [], _} = beamscale_bench_runner:iteration(hog, ?MODULE, Args, [], []),
                 ?assertMatch({match, _}, re:run(Why, "^memory bound: the node reached \\d+ MB "
                                                      "\\(its bound: \\d+ MB")),
                 %% Exit signals are asynchronous: the job's processes, and the memory they
                 %% held, go within a moment (a loaded host took longer than one look).
                 ?assert(processes_at_most(Before, 40)),
                 ?assert(memory_below(Bound, 40))
             end || Args <- [[grow], [grow_elsewhere]]]
        after application:unset_env(beamscale_bench, job_memory_bytes)
        end
    end}.

memory_below(Bound, Tries) ->
    erlang:garbage_collect(),
    erlang:memory(total) < Bound orelse
        (Tries > 0 andalso begin timer:sleep(50), memory_below(Bound, Tries - 1) end).

processes_at_most(N, 0) -> length(processes()) =< N;
processes_at_most(N, Tries) ->
    length(processes()) =< N orelse begin timer:sleep(50), processes_at_most(N, Tries - 1) end.

%% 10 MB printed: 1 MiB of it kept, and said to be cut.
printed_output_is_bounded_test() ->
    {ok, _, Out} = beamscale_bench_runner:iteration(printer, ?MODULE, [print, 10000], [], []),
    ?assert(byte_size(Out) < 1024 * 1024 + 100),
    ?assertMatch({match, _}, re:run(Out, "\\[output cut: more than 1 MiB printed\\]\\n$")).

spin(Until) ->
    case erlang:monotonic_time(millisecond) < Until of
        true -> spin(Until);
        false -> ok
    end.
