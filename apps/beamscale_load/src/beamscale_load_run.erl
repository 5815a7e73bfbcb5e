%% @doc Runs one load: starts the launcher, takes the metrics once a second into a row (handed to
%% `on_second' for the live view), and stops everything at the end: when every user is done after
%% the last phase, or at the scenario's hard time limit, whichever comes first.
-module(beamscale_load_run).

-export([run/3, defaults/0]).
-export_type([row/0, result/0, opts/0]).

-type row() :: #{t_s := pos_integer(), phase := atom(), offered_per_s := float(),
                 atom() => term()}.
-type result() :: #{rows := [row()], total := beamscale_load_metrics:interval(),
                    duration_s := float(), stopped := done | time_limit}.
-type opts() :: #{on_second => fun((row()) -> term()), seed => integer()}.

-define(GRACE_MS, 10000).

%% @doc The options' defaults.
-spec defaults() -> opts().
defaults() -> #{on_second => fun(_) -> ok end, seed => erlang:unique_integer([positive])}.

%% @doc Run `Scenario' against resolved targets (name to `#{node}' or `#{host, port}').
-spec run(beamscale_load_scenario:scenario(), #{atom() => map()}, opts()) ->
    {ok, result()} | {error, {?MODULE, term()}}.
run(Scenario, Targets, Opts0) ->
    Opts = maps:merge(defaults(), Opts0),
    Caller = self(),
    {Pid, Ref} = spawn_monitor(fun() -> Caller ! {self(), control(Scenario, Targets, Opts)} end),
    Limit = round(maps:get(time_limit_s, Scenario) * 1000) + ?GRACE_MS,
    receive
        {Pid, Result} -> demonitor(Ref, [flush]), {ok, Result};
        {'DOWN', Ref, process, Pid, Reason} -> {error, {?MODULE, {crashed, Reason}}}
    after Limit ->
        exit(Pid, kill),
        {error, {?MODULE, not_stopped}}
    end.

control(#{transactions := Tx} = Scenario, Targets, #{seed := Seed} = Opts) ->
    Ctx = #{metrics => beamscale_load_metrics:new(Tx), targets => Targets},
    Start = erlang:monotonic_time(),
    Launcher = beamscale_load_launcher:start_link(Scenario, Ctx, Start,
                                                  rand:seed_s(exsss, Seed)),
    St = #{scenario => Scenario, ctx => Ctx, start => Start, launcher => Launcher,
           opts => Opts, rows => [], total => beamscale_load_metrics:empty(Tx)},
    tick(1, St).

tick(N, #{start := Start, launcher := L, scenario := #{time_limit_s := Limit}} = St) ->
    Due = Start + erlang:convert_time_unit(N, second, native),
    Wait = erlang:convert_time_unit(Due - erlang:monotonic_time(), native, millisecond),
    receive
        {users_done, L} -> finish(done, row(N, St))
    after max(Wait, 0) ->
        St1 = row(N, St),
        case N >= Limit of
            true -> finish(time_limit, St1);
            false -> tick(N + 1, St1)
        end
    end.

row(N, #{ctx := #{metrics := M}, scenario := Sc, opts := #{on_second := On}} = St) ->
    Interval = beamscale_load_metrics:take(M),
    {Phase, Offered} = case beamscale_load_scenario:phase_at(Sc, N - 0.5) of
                           drain -> {drain, 0.0};
                           #{name := Name, rate := Rate} -> {Name, Rate}
                       end,
    Row = Interval#{t_s => N, phase => Phase, offered_per_s => Offered},
    _ = On(Row),
    #{rows := Rows, total := Total} = St,
    St#{rows := [Row | Rows], total := beamscale_load_metrics:merge(Total, Interval)}.

finish(How, #{launcher := L, start := Start, rows := Rows, total := Total}) ->
    ok = beamscale_load_launcher:stop(L),
    Secs = erlang:convert_time_unit(erlang:monotonic_time() - Start, native, microsecond) / 1.0e6,
    #{rows => lists:reverse(Rows), total => Total, duration_s => Secs, stopped => How}.
