%% @doc Runs one load: starts an agent (`beamscale_load_agent': launcher, users, metrics) on each
%% load node, or one in this node, with an equal share of the arrival rate; merges their
%% per-second figures into one row a second (handed to `on_second' for the live view), and stops
%% everything at the end: when every user is done after the last phase, or at the scenario's hard
%% time limit, whichever comes first. A load node that dies takes its share of the users with
%% it: the others go on, and the run says which went down and when (`on_load_node_down').
-module(beamscale_load_run).

-export([run/3, interrupt/0, control/1, defaults/0, new_seed/0, format_error/1]).
-export_type([row/0, result/0, opts/0, down/0, command/0, event/0]).

-type row() :: beamscale_load_metrics:row().
-type result() :: #{rows := [row()], total := beamscale_load_metrics:interval(),
                    duration_s := float(),
                    stopped := done | time_limit | interrupted | aborted,
                    aborted_by => [binary()],
                    load_nodes := [#{node := node(), atom() => non_neg_integer()}],
                    load_nodes_down => [down()], events => [event()]}.
%% What `beamscale ctl' asks of the running load, and what it records: when (seconds into the
%% load) and what, in words (`rate 50', `users +10', `users 8', `stop').
-type command() :: status | stop | {rate, number()} | {users, integer()}
                 | {set_users, non_neg_integer()} | {event, binary()}.
%% A stalled launcher's event (`beamscale_load_control:stall/3') says more: its node, how long
%% it could not run and how many users were due meanwhile (counted late, not started).
-type event() :: #{t_s := float(), event := binary(), node => node(), lasted_s => float(),
                   late => non_neg_integer()}.
%% A load node gone during the load: when (seconds into it) and why (its agent's exit reason).
-type down() :: #{node := node(), at_s := float(), reason := term()}.
%% load_nodes: the nodes the users run on (default: this one), with beamscale's code loaded;
%% weights: their shares of the arrivals, relative (default: equal); on_load_node_down: told at
%% once when one dies; dump: the writer of `dump.log' and its N (`beamscale_load_dump');
%% node_sources: each load node's own source addresses, in their order (`default': the
%% scenario's `source_ips').
%% resolution_ms: the agents' report interval (default `beamscale_load_intervals:default_ms/0'),
%% each interval's merged figures handed to `on_interval' when under a second.
%% on_start: called once the load answers `control/1' (before the first user): a control
%% endpoint opened earlier would take commands it cannot record.
%% check: asked after each second with the run's figures so far; `{abort, Why}' ends the run at
%% once (a threshold's `:abort', `beamscale_stats_threshold:check/3').
-type opts() :: #{on_second => fun((row()) -> term()), seed => integer(),
                  check => fun((pos_integer(), beamscale_load_metrics:interval()) ->
                                      continue | {abort, [binary()]}),
                  resolution_ms => pos_integer(),
                  on_interval => fun((beamscale_load_metrics:fine_row()) -> term()),
                  load_nodes => [node()], weights => [number()],
                  node_sources => [default | [beamscale_load_source:source()]],
                  on_load_node_down => fun((down()) -> term()),
                  on_event => fun((event()) -> term()), on_start => fun(() -> term()),
                  sources => #{node() => [inet:ip_address()]},
                  dump => {pid(), non_neg_integer()}}.

-define(GRACE_MS, 10000).
-define(LATE_MS, 2000).
-define(REMOTE_LEAD_US, 300000).
-define(CONTROL_TIMEOUT_MS, 5000).

%% @doc The options' defaults.
-spec defaults() -> opts().
defaults() -> #{on_second => fun(_) -> ok end, seed => new_seed(),
                on_load_node_down => fun(_) -> ok end, on_event => fun(_) -> ok end,
                on_start => fun() -> ok end}.

%% @doc A seed of arrivals and think times that differs run to run: `rand''s own, seeded from the
%% clock. Not `erlang:unique_integer/1': a fresh node hands out the same first integers, so every
%% run without `--seed' drew the same arrivals.
-spec new_seed() -> pos_integer().
new_seed() -> rand:uniform(1 bsl 40).

%% @doc Run `Scenario' against resolved targets (name to `#{node}' or `#{host, port}').
-spec run(beamscale_load_scenario:scenario(), #{atom() => map()}, opts()) ->
    {ok, result()} | {error, {?MODULE | beamscale_load_source, term()}}.
run(Scenario, Targets, Opts0) ->
    Opts1 = maps:merge(defaults(), Opts0),
    Nodes = maps:get(load_nodes, Opts1, [node()]),
    Own = maps:get(node_sources, Opts1, [default || _ <- Nodes]),
    case sources(maps:get(source_ips, Scenario, []), lists:zip(Nodes, Own)) of
        {ok, Sources} -> run(Scenario, Targets, Opts1#{sources => Sources}, self());
        {error, _} = Error -> Error
    end.

%% Every load node's source addresses (its host's own, else the scenario's), checked there
%% (beamscale_load_source:resolve/1).
sources(Scenario, Nodes) ->
    lists:foldl(fun({Node, Own}, {ok, Acc}) ->
                        case {Own, Scenario} of
                            {default, []} -> {ok, Acc};
                            {default, _} -> resolve(Node, Scenario, Acc);
                            _ -> resolve(Node, Own, Acc)
                        end;
                   (_, Error) -> Error
                end, {ok, #{}}, Nodes).

resolve(Node, Sources, Acc) ->
    case erpc:call(Node, beamscale_load_source, resolve, [Sources]) of
        {ok, Addrs} -> {ok, Acc#{Node => Addrs}};
        {error, _} = Error -> Error
    end.

run(Scenario, Targets, Opts, Caller) ->
    {Pid, Ref} = spawn_monitor(fun() -> Caller ! {self(), control(Scenario, Targets, Opts)} end),
    Limit = round(maps:get(time_limit_s, Scenario) * 1000) + ?GRACE_MS,
    receive
        {Pid, Result} -> demonitor(Ref, [flush]), {ok, Result};
        %% A file that could not be written (a full disk) is said as such, naming it.
        {'DOWN', Ref, process, Pid, {{beamscale_format_file, _} = Why, _}} -> {error, Why};
        {'DOWN', Ref, process, Pid, Reason} -> {error, {?MODULE, {crashed, Reason}}}
    after Limit ->
        exit(Pid, kill),
        {error, {?MODULE, not_stopped}}
    end.

%% @doc Interrupt the load running in this node (SIGTERM, Ctrl-C): arrivals stop, the users in
%% flight have the scenario's drain to end, then the run ends as any other (`stopped' is
%% `interrupted'). `false' when no load runs.
-spec interrupt() -> boolean().
interrupt() ->
    case whereis(?MODULE) of
        undefined -> false;
        Pid -> Pid ! interrupt, true
    end.

%% @doc Steer the load running in this node (`beamscale ctl'): `status' says where it is; `stop'
%% is `interrupt/0'; `{rate, R}' sets the arrival rate (users/s) to the end of the current
%% phase; `{users, N}' starts N users at once, or ends N in flight when N is negative;
%% `{set_users, N}' sets an externally_controlled phase's users; `{event, Text}' is a change
%% made elsewhere (`ctl throttle'), only recorded. Each change is an event (`on_event', the
%% result's `events').
-spec control(command()) -> {ok, map()} | {error, not_running}.
control(Command) ->
    case whereis(?MODULE) of
        undefined -> {error, not_running};
        Pid ->
            Ref = monitor(process, Pid),
            Pid ! {control, self(), Ref, Command},
            receive
                {Ref, Reply} -> demonitor(Ref, [flush]), {ok, Reply};
                {'DOWN', Ref, process, Pid, _} -> {error, not_running}
            after ?CONTROL_TIMEOUT_MS -> demonitor(Ref, [flush]), {error, not_running}
            end
    end.

%% @doc One line for an error of `run/3'.
-spec format_error(term()) -> iodata().
format_error({crashed, Why}) ->
    %% A crash reason can be any term: bounded, so it fits the error line.
    io_lib:format("the load generator crashed: ~0tp", [Why], [{chars_limit, 400}]);
format_error(not_stopped) ->
    io_lib:format("the load did not stop within its time limit plus ~b s: stopped it",
                  [?GRACE_MS div 1000]).

control(Scenario, Targets, #{seed := Seed} = Opts) ->
    %% The one load of this node, found by `interrupt/0' (a load of a study's earlier level
    %% that is still going would keep the name: then that one is interrupted).
    _ = catch register(?MODULE, self()),
    _ = (maps:get(on_start, Opts))(),
    Nodes = maps:get(load_nodes, Opts, [node()]),
    N = length(Nodes),
    Weights = maps:get(weights, Opts, lists:duplicate(N, 1)),
    %% Remote agents need a moment to start: every agent starts its clock at the same instant.
    Lead = case Nodes of [Only] when Only =:= node() -> 0; _ -> ?REMOTE_LEAD_US end,
    StartUs = erlang:system_time(microsecond) + Lead,
    Args = maps:merge(#{targets => Targets, cookies => cookies(Targets, Nodes),
                        start_us => StartUs}, maps:with([dump, resolution_ms], Opts)),
    Agents = maps:from_list(
               [{element(1, A), {Node, element(2, A)}}
                || {I, Node} <- lists:zip(lists:seq(1, N), Nodes),
                   A <- [beamscale_load_agent:start(Node, sourced(beamscale_load_agent:share(
                                                                    Scenario, I, Weights),
                                                                  Node, Opts),
                                                    Args#{seed => Seed + I - 1})]]),
    Start = erlang:convert_time_unit(StartUs, microsecond, native) - erlang:time_offset(),
    Empty = beamscale_load_metrics:empty(maps:get(transactions, Scenario)),
    St = #{scenario => Scenario, start => Start, live => Agents, all => Agents, opts => Opts,
           rows => [], total => Empty, empty => Empty, pending => #{}, downs => [],
           index => maps:map(fun(_, {Node, _}) -> index(Node, Nodes) end, Agents),
           weights => Weights, rate => none, events => [], seen => #{},
           per => beamscale_load_intervals:per_second(
                    maps:get(resolution_ms, Opts, beamscale_load_intervals:default_ms())),
           fine_left => beamscale_load_intervals:max_rows(),
           per_node => maps:from_list([{Node, #{}} || Node <- Nodes])},
    collect(1, St).

%% A load node's share with the source addresses it resolved.
sourced(Share, Node, #{sources := Sources}) when is_map_key(Node, Sources) ->
    Share#{source_ips := maps:get(Node, Sources)};
sourced(Share, _Node, _Opts) -> Share.

%% The cookies of the node targets, for agents on other nodes.
cookies(Targets, Nodes) ->
    case Nodes =:= [node()] of
        true -> [];
        false -> [{Node, erlang:get_cookie(Node)} || #{node := Node} <- maps:values(Targets),
                                                     Node =/= node()]
    end.

%% Second `N' is complete when every live agent has reported its last interval, or when it is
%% late by ?LATE_MS (a load node that hangs does not hold up the rows).
collect(N, #{live := Live, pending := P, per := Per, seen := Seen} = St) ->
    case beamscale_load_intervals:complete(N, Per, maps:keys(Live), Seen) of
        true -> second(N, St);
        false ->
            Due = maps:get(start, St) + erlang:convert_time_unit(N * 1000 + ?LATE_MS,
                                                                 millisecond, native),
            Wait = erlang:convert_time_unit(Due - erlang:monotonic_time(), native, millisecond),
            receive
                {Kind, A, K, I} when Kind =:= tick; Kind =:= done ->
                    Key = beamscale_load_intervals:key(K, N, Per),
                    St1 = St#{pending := P#{Key => [{A, I} | maps:get(Key, P, [])]},
                              seen := Seen#{A => max(K, maps:get(A, Seen, 0))}},
                    collect(N, case Kind of
                                   done -> St1#{live := maps:remove(A, Live)};
                                   tick -> St1
                               end);
                {'DOWN', _, process, A, Reason} when is_map_key(A, Live) ->
                    collect(N, agent_down(A, Reason, St));
                interrupt when not is_map_key(interrupted_at, St) ->
                    collect(N, beamscale_load_control:stop_arrivals(N, St));
                %% A launcher that could not run for a while: an event of the run.
                {stall, Node, Stall} ->
                    collect(N, beamscale_load_control:stall(Node, Stall, St));
                {control, From, Ref, Command} ->
                    {Reply, St1} = beamscale_load_control:handle(Command, N, St),
                    From ! {Ref, Reply},
                    collect(N, St1)
            after max(Wait, 0) -> second(N, St)
            end
    end.

%% An agent's number (1..N, as `beamscale_load_agent:share/3' counts): its node's place.
index(Node, Nodes) -> length(lists:takewhile(fun(Nd) -> Nd =/= Node end, Nodes)) + 1.

%% An agent gone (its node died): the others go on; the figures it had not yet reported are lost.
agent_down(A, Reason, #{live := Live, start := Start, downs := Downs, opts := Opts} = St) ->
    {Node, _} = maps:get(A, Live),
    At = erlang:convert_time_unit(erlang:monotonic_time() - Start, native, millisecond) / 1000,
    Down = #{node => Node, at_s => At, reason => Reason},
    _ = (maps:get(on_load_node_down, Opts))(Down),
    St#{live := maps:remove(A, Live), downs := [Down | Downs]}.

second(N, #{live := Live, scenario := #{time_limit_s := Limit, drain_s := Drain}} = St) ->
    St1 = row(N, St),
    Interrupted = maps:get(interrupted_at, St, infinity),
    Check = maps:get(check, maps:get(opts, St), fun(_, _) -> continue end),
    case Check(N, maps:get(total, St1)) of
        continue -> next(N, St1, Live, Interrupted, Limit, Drain);
        %% No drain: what made it stop is the point, the users in flight are ended.
        {abort, Why} -> finish(aborted, St1#{aborted_by => Why})
    end.

next(N, St1, Live, Interrupted, Limit, Drain) ->
    if map_size(Live) =:= 0, Interrupted =:= infinity -> finish(done, St1);
       map_size(Live) =:= 0; N >= Interrupted + Drain -> finish(interrupted, St1);
       N >= Limit -> finish(time_limit, St1);
       true -> collect(N + 1, St1)
    end.

%% The second's intervals merged each (handed to `on_interval' under a second), then together.
row(N, #{scenario := Sc, opts := #{on_second := On}, pending := P, all := All, per := Per,
         empty := Empty} = St0) ->
    {Taken, P1} = beamscale_load_intervals:take(N, Per, P),
    Fine = [{K, beamscale_load_intervals:fold([I || {_, I} <- Rs], Empty)} || {K, Rs} <- Taken],
    St = fine_rows(Fine, St0),
    Reports = lists:append([Rs || {_, Rs} <- Taken]),
    Interval = beamscale_load_intervals:fold([I || {_, I} <- Fine], Empty),
    {Phase, Offered} = beamscale_load_control:offered(Sc, N - 0.5, maps:get(rate, St)),
    Row = Interval#{t_s => N, phase => Phase, offered_per_s => Offered},
    _ = On(Row),
    #{rows := Rows, total := Total, per_node := PerNode} = St,
    PerNode1 = lists:foldl(fun({A, I}, Acc) ->
                                   {Node, _} = maps:get(A, All),
                                   maps:update_with(Node, fun(C) -> add_counts(C, I) end, Acc)
                           end, PerNode, Reports),
    St#{rows := [Row | Rows], total := beamscale_load_metrics:merge(Total, Interval),
        pending := P1, per_node := PerNode1}.

%% Each interval a row of its own (its end, phase and offered rate), the first
%% `beamscale_load_intervals:max_rows/0' of the run.
fine_rows(_Fine, #{per := 1} = St) -> St;
fine_rows(Fine, #{scenario := Sc, opts := Opts, fine_left := Left} = St) ->
    Ms = maps:get(resolution_ms, Opts),
    On = maps:get(on_interval, Opts, fun(_) -> ok end),
    Kept = lists:sublist(Fine, Left),
    lists:foreach(fun({K, I}) ->
                          {Phase, Offered} = beamscale_load_control:offered(
                                               Sc, beamscale_load_intervals:mid_s(K, Ms),
                                               maps:get(rate, St)),
                          On(I#{t_s => beamscale_load_intervals:end_s(K, Ms), phase => Phase,
                                offered_per_s => Offered})
                  end, Kept),
    St#{fine_left := Left - length(Kept)}.

add_counts(Counts, Interval) ->
    lists:foldl(fun(K, Acc) -> Acc#{K => maps:get(K, Acc, 0) + maps:get(K, Interval)} end,
                Counts, beamscale_load_metrics:counter_names()).

finish(How, #{start := Start, rows := Rows, total := Total, per_node := PerNode} = St) ->
    finish_agents(St),
    Secs = erlang:convert_time_unit(erlang:monotonic_time() - Start, native, microsecond) / 1.0e6,
    #{rows => lists:reverse(Rows), total => Total, duration_s => Secs, stopped => How,
      load_nodes => [C#{node => Node} || {Node, C} <- maps:to_list(PerNode)],
      load_nodes_down => lists:reverse(maps:get(downs, St)),
      events => lists:reverse(maps:get(events, St)),
      aborted_by => maps:get(aborted_by, St, [])}.

finish_agents(#{live := Live}) ->
    beamscale_load_agent:stop([{Pid, Ref} || {Pid, {_, Ref}} <- maps:to_list(Live)]).
