%% @doc One share of a load run, on one node (beamscale's own or a load node): its own launcher,
%% users and metrics, and once a second (or every `resolution_ms') the interval's figures (counts
%% and histogram snapshots, plain terms) sent to the controller, which merges every agent's into
%% one row a second (`beamscale_load_intervals'). The agent ends
%% when its users are done, when told to stop, or when the controller goes.
-module(beamscale_load_agent).

-export([start/3, stop/1, share/3, split/3, init/1]).
-export_type([report/0]).

%% What an agent sends: interval `N''s figures (second `N' at the default resolution); `done'
%% ends its reports.
-type report() :: {tick | done, pid(), pos_integer(), beamscale_load_metrics:interval()}.

-define(STOP_TIMEOUT, 10000).

%% @doc Start an agent on `Node' for scenario share `Scenario' (see `share/3'), starting at
%% system time `StartUs' (microseconds, the same clock on every node of the host). `Cookies' are
%% those of the node targets, so that a load node can reach them. Returns the agent, monitored.
-spec start(node(), beamscale_load_scenario:scenario(),
            #{targets := #{atom() => map()}, cookies := [{node(), atom()}],
              start_us := integer(), seed := integer(),
              dump => {pid(), non_neg_integer()}, resolution_ms => pos_integer()}) ->
    {pid(), reference()}.
start(Node, Scenario, Args) ->
    spawn_monitor(Node, ?MODULE, init, [Args#{controller => self(), scenario => Scenario}]).

%% @doc Stop agents (their users are killed, their figures since the last report dropped): all
%% told at once, then awaited within one time limit. One after the other, the 4 agents of a
%% 62 500-user run (15 625 users each to kill) outlasted the run's grace.
-spec stop([{pid(), reference()}]) -> ok.
stop(Agents) ->
    [Pid ! stop || {Pid, _} <- Agents],
    Deadline = erlang:monotonic_time(millisecond) + ?STOP_TIMEOUT,
    lists:foreach(fun({Pid, Ref}) ->
                          Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
                          receive {'DOWN', Ref, process, Pid, _} -> ok
                          after Left -> exit(Pid, kill), demonitor(Ref, [flush]), ok
                          end
                  end, Agents).

%% @doc Share `I' of a scenario whose shares weigh `Weights' (equal weights: equal shares):
%% every phase's rate times share `I''s weight over the sum, `max_users' split so (the remainder
%% to the first shares), so the shares together offer the whole load.
-spec share(beamscale_load_scenario:scenario(), pos_integer(), [number()]) ->
    beamscale_load_scenario:scenario().
share(#{phases := Phases} = Scenario, I, Weights) ->
    W = lists:nth(I, Weights),
    Sum = lists:sum(Weights),
    Scenario#{phases := [exec(at(P#{rate := R * W / Sum, max_users := split(Max, I, Weights)},
                                 I, length(Weights)), I, Weights)
                         || #{rate := R, max_users := Max} = P <- Phases]}.

%% An executor's users, iterations and in-flight bound are split as `max_users', its rates as
%% `rate'.
exec(#{executor := E} = P, I, Weights) ->
    Part = lists:nth(I, Weights) / lists:sum(Weights),
    Counts = maps:map(fun(_, N) -> split(N, I, Weights) end,
                      maps:with([users, iterations, max_in_flight], E)),
    Rates = case E of
                #{start_rate := R0, stages := S} ->
                    #{start_rate => R0 * Part, stages => [{D, R * Part} || {D, R} <- S]};
                _ -> #{}
            end,
    P#{executor := maps:merge(E, maps:merge(Counts, Rates))};
exec(P, _I, _Weights) -> P.

%% Users at fixed times are dealt to the shares in turn (share `I' of `N' starts every Nth).
at(#{users_at := At} = P, I, N) ->
    P#{users_at := [U || {K, U} <- lists:enumerate(At), K rem N =:= I rem N]};
at(P, _I, _N) -> P.

%% @doc The part of agent number I of Max users, split by the weights (infinity stays so).
-spec split(non_neg_integer() | infinity, pos_integer(), [number()]) ->
    non_neg_integer() | infinity.
split(infinity, _I, _Weights) -> infinity;
split(Max, I, Weights) ->
    Sum = lists:sum(Weights),
    Bases = [floor(Max * W / Sum) || W <- Weights],
    lists:nth(I, Bases) + case I =< Max - lists:sum(Bases) of true -> 1; false -> 0 end.

%% @doc The agent process (spawned by `start/3').
-spec init(map()) -> ok.
init(#{controller := C, scenario := #{transactions := Tx} = Scenario0, targets := Targets,
       cookies := Cookies, start_us := StartUs, seed := Seed} = Args) ->
    CRef = monitor(process, C),
    Scenario = prepare(Scenario0),
    [connect(Node, Cookie) || {Node, Cookie} <- Cookies],
    Start = erlang:convert_time_unit(StartUs, microsecond, native) - erlang:time_offset(),
    Metrics = beamscale_load_metrics:new(Tx, maps:get(counts, Scenario, [])),
    Ctx0 = #{metrics => Metrics, targets => beamscale_load_source:port_counters(Targets),
            controller => C,
            sources => beamscale_load_source:new(maps:get(source_ips, Scenario, [])),
            vars => beamscale_load_vars_source:new_ctx(maps:get(files, Scenario, #{}))},
    Ctx = case Args of
              #{dump := {Writer, N}} -> Ctx0#{dump => beamscale_load_dump:handle(Writer, N)};
              _ -> Ctx0
          end,
    Every = erlang:convert_time_unit(maps:get(resolution_ms, Args, 1000), millisecond, native),
    tick(1, #{controller => C, cref => CRef, start => Start, metrics => Metrics, every => Every,
              launchers => launchers(Scenario, Ctx, Start, Seed)}).

%% One launcher for the phases, one after another; or one a scenario, side by side, each with
%% its sessions (tagged by its name) and its own seed.
launchers(#{scenarios := [_ | _], phases := Phases} = Sc, Ctx, Start, Seed) ->
    [beamscale_load_launcher:start_link(
       Sc#{phases := [P], sessions := beamscale_load_scenario_many:sessions(Sc, Name)}, Ctx,
       Start, rand:seed_s(exsss, {Seed, K, 0}))
     || {K, #{name := Name} = P} <- lists:enumerate(Phases)];
launchers(Sc, Ctx, Start, Seed) ->
    [beamscale_load_launcher:start_link(Sc, Ctx, Start, rand:seed_s(exsss, Seed))].

%% Every request runs under its name, the names capped over the sessions of every scenario.
prepare(#{scenarios := [_ | _] = Many} = Sc) ->
    All = lists:append([Ss || {_, Ss} <- Many]),
    #{sessions := Named} = beamscale_load_reqname:prepare(Sc#{sessions := All}),
    {Each, []} = lists:mapfoldl(fun({Name, Ss}, Left) ->
                                        {Mine, Rest} = lists:split(length(Ss), Left),
                                        {{Name, Mine}, Rest}
                                end, Named, Many),
    Sc#{scenarios := Each};
prepare(Sc) -> beamscale_load_reqname:prepare(Sc).

connect(Node, _Cookie) when Node =:= node() -> ok;
connect(Node, Cookie) ->
    true = erlang:set_cookie(Node, Cookie),
    _ = net_kernel:connect_node(Node),
    ok.

tick(N, #{controller := C, cref := CRef, start := Start, launchers := Ls, metrics := M,
          every := Every} = St) ->
    Due = Start + N * Every,
    Wait = erlang:convert_time_unit(Due - erlang:monotonic_time(), native, millisecond),
    receive
        {users_done, L} when Ls =:= [L] ->
            C ! {done, self(), N, beamscale_load_metrics:take(M)},
            ok = beamscale_load_launcher:stop(L);
        %% One of several scenarios over: its launcher goes, the others go on.
        {users_done, L} ->
            ok = beamscale_load_launcher:stop(L),
            tick(N, St#{launchers := lists:delete(L, Ls)});
        {arrivals_done, _} -> tick(N, St);
        stop_arrivals ->
            lists:foreach(fun beamscale_load_launcher:stop_arrivals/1, Ls),
            tick(N, St);
        %% `beamscale ctl': a new rate (this agent's share), users added or ended.
        {ctl, Msg} -> lists:foreach(fun(L) -> L ! Msg end, Ls), tick(N, St);
        stop -> stop_all(Ls);
        {'DOWN', CRef, process, _, _} -> stop_all(Ls)
    after max(Wait, 0) ->
        C ! {tick, self(), N, beamscale_load_metrics:take(M)},
        tick(N + 1, St)
    end.

stop_all(Ls) -> lists:foreach(fun beamscale_load_launcher:stop/1, Ls).
