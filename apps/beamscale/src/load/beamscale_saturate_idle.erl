%% @doc Before a level of `beamscale saturate': wait until the target nodes are idle again, so
%% that what an earlier level left running there does not weigh on this one. A call the load
%% generator gave up on (its `rpc' timeout, or the level's end) keeps running on the target
%% (`erpc' does not stop it) and, through it, its statements in a database; the generator's
%% own backlog does not see it. A node is idle when it runs no more erpc calls than before the
%% first level and has at most a few more processes ready to run (`beamscale_bench_probe:
%% activity/0', polled over erpc). Targets that are a plain address, and nodes without the probe
%% (not started by beamscale), are not polled: their levels start as before.
-module(beamscale_saturate_idle).

-export([baseline/1, wait/2]).
-export_type([baseline/0, outcome/0]).

%% The activity of each polled node before the first level.
-type baseline() :: #{node() => beamscale_bench_probe:activity()}.
%% `idle': every node was (or became) idle; `timeout': one was still busy at the limit; `none':
%% no node to poll. `waited_ms': how long the wait took.
-type outcome() :: #{idle := idle | timeout | none, waited_ms := non_neg_integer()}.

%% A node under load answers a probe late; one that does not answer within this is left out
%% (its level will say what is wrong with it).
-define(PROBE_TIMEOUT, 5000).
-define(POLL_MS, 200).
%% Processes ready to run beyond the baseline still counted as idle: timers, the node's own
%% housekeeping, a pool reconnecting.
-define(ACTIVE_SLACK, 2).

%% @doc The activity of every node target that has the probe, taken while it is idle.
-spec baseline(#{atom() => map()}) -> baseline().
baseline(Targets) ->
    maps:from_list([{Node, A} || #{node := Node} <- maps:values(Targets),
                                 {ok, A} <- [probe(Node)]]).

%% @doc Poll the nodes of `Baseline' until each is idle or the monotonic time `Limit' (ms) is
%% reached.
-spec wait(baseline(), integer()) -> outcome().
wait(Baseline, _Limit) when map_size(Baseline) =:= 0 -> #{idle => none, waited_ms => 0};
wait(Baseline, Limit) ->
    T0 = now_ms(),
    Idle = poll(maps:to_list(Baseline), Limit),
    #{idle => Idle, waited_ms => now_ms() - T0}.

poll(Nodes, Limit) ->
    case [N || {N, Base} <- Nodes, busy(N, Base)] of
        [] -> idle;
        Busy ->
            Left = Limit - now_ms(),
            if
                Left =< 0 -> timeout;
                true ->
                    timer:sleep(min(Left, ?POLL_MS)),
                    poll([B || {N, _} = B <- Nodes, lists:member(N, Busy)], Limit)
            end
    end.

busy(Node, #{rpc := Rpc0, active := Active0}) ->
    case probe(Node) of
        {ok, #{rpc := Rpc, active := Active}} ->
            Rpc > Rpc0 orelse Active > Active0 + ?ACTIVE_SLACK;
        error -> false
    end.

probe(Node) ->
    try erpc:call(Node, beamscale_bench_probe, activity, [], ?PROBE_TIMEOUT) of
        #{rpc := _, active := _} = A -> {ok, A}
    catch _:_ -> error
    end.

now_ms() -> erlang:monotonic_time(millisecond).
