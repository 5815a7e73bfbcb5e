%% `beamscale_saturate_idle': erpc calls a caller gave up on keep running on the target node;
%% the wait before a level lasts until they are done, or reports that it timed out; a target
%% that is a plain address is not polled.
-module(beamscale_saturate_idle_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1, init_per_testcase/2,
         end_per_testcase/2]).
-export([abandoned_calls/1, timeout_reported/1, address_not_polled/1]).
-export([abandoned_calls/0, timeout_reported/0, address_not_polled/0]).

%% One worker holding each request this long: N abandoned requests keep the node busy N x
%% this long.
-define(SERVICE_MS, 100).
%% The callers give up long before their requests are served.
-define(CALL_TIMEOUT_MS, 50).
-define(WAIT_LIMIT_MS, 20000).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [address_not_polled, abandoned_calls, timeout_reported].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

init_per_testcase(address_not_polled, Config) -> Config;
init_per_testcase(_Case, Config) ->
    S = beamscale_test_load:scenario(Config, "idle.scenario", io_lib:format(
        "{targets, [{sut, #{start => #{init => {beamscale_target_workers, start, [1, ~b]}}}}]}.\n"
        "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
        "{sessions, [{s, #{steps => [{rpc, #{target => sut, call => "
        "{beamscale_target_workers, request, []}}}]}}]}.\n", [?SERVICE_MS])),
    {ok, Targets, Started} = beamscale_loadtest_targets:resolve(maps:get(targets, S), undefined),
    [{targets, Targets}, {started, Started} | Config].

end_per_testcase(_Case, Config) ->
    ok = beamscale_loadtest_targets:stop(proplists:get_value(started, Config, [])).

address_not_polled() ->
    [{doc, "A target that is a host:port has no node to poll: the wait returns at once."}].
address_not_polled(_Config) ->
    Base = beamscale_saturate_idle:baseline(#{web => #{host => "127.0.0.1", port => 1}}),
    ?assertEqual(#{idle => none, waited_ms => 0},
                 beamscale_saturate_idle:wait(Base, erlang:monotonic_time(millisecond) + 1000)).

abandoned_calls() ->
    [{doc, "Calls whose callers timed out still run on the node; the wait ends only when they "
           "are done, and then the node runs none."}].
abandoned_calls(Config) ->
    #{sut := #{node := Node}} = Targets = ?config(targets, Config),
    Base = beamscale_saturate_idle:baseline(Targets),
    ?assertMatch(#{Node := #{rpc := 0}}, Base),
    N = 30,
    abandon(Node, N),
    T0 = erlang:monotonic_time(millisecond),
    #{idle := Idle, waited_ms := Waited} =
        beamscale_saturate_idle:wait(Base, T0 + ?WAIT_LIMIT_MS),
    ct:pal("~b abandoned calls of ~b ms: waited ~b ms (~p)", [N, ?SERVICE_MS, Waited, Idle]),
    ?assertEqual(idle, Idle),
    %% The last calls queue behind nearly N services (the first ones started while they were
    %% being sent).
    ?assert(Waited >= (N - 10) * ?SERVICE_MS),
    ?assertMatch(#{rpc := 0}, erpc:call(Node, beamscale_bench_probe, activity, [])).

timeout_reported() ->
    [{doc, "A node still busy at the limit: the wait ends there and says `timeout'."}].
timeout_reported(Config) ->
    #{sut := #{node := Node}} = Targets = ?config(targets, Config),
    Base = beamscale_saturate_idle:baseline(Targets),
    abandon(Node, 100),
    Limit = 1000,
    #{idle := Idle, waited_ms := Waited} =
        beamscale_saturate_idle:wait(Base, erlang:monotonic_time(millisecond) + Limit),
    ct:pal("waited ~b ms (~p)", [Waited, Idle]),
    ?assertEqual(timeout, Idle),
    ?assert(Waited >= Limit - 50 andalso Waited < 5 * Limit).

%% `N' requests whose callers give up after ?CALL_TIMEOUT_MS, as the load generator does.
abandon(Node, N) ->
    Callers = [spawn_monitor(fun() ->
                                     catch erpc:call(Node, beamscale_target_workers, request, [],
                                                     ?CALL_TIMEOUT_MS)
                             end) || _ <- lists:seq(1, N)],
    [receive {'DOWN', Ref, process, Pid, _} -> ok end || {Pid, Ref} <- Callers],
    ok.
