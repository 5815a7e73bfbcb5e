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

spin(Until) ->
    case erlang:monotonic_time(millisecond) < Until of
        true -> spin(Until);
        false -> ok
    end.
