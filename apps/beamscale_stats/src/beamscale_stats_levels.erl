%% @doc One load level of a study as a row of `levels.csv', and whether the configuration held
%% it. Pure: the load run's totals and the sample summary in, a row out.
%%
%% A level is held when every session it started finished before its time limit, errors were
%% at most 1 % of the requests, and the sessions finished at least at 80 % of the rate they were
%% started at (`achieved_per_s' counts the drain after the hold: a target that falls behind
%% drains slowly). Below that the session duration keeps growing through the level, the
%% thesis's sign that a VM "could not handle that load".
-module(beamscale_stats_levels).

-export([columns/0, row/4, skipped/2, held/1, is_held/1, capacity_columns/0, capacity_row/3]).
-export_type([level/0, cell/0, verdict/0]).

-type level() :: #{rate := number(), hold_s := number(), ops := pos_integer()}.
%% What a row is about: strings for the CSV's first columns and the level's number.
-type cell() :: #{target := iodata(), op := iodata(), config := iodata(), level := pos_integer()}.
-type verdict() :: {true, ok} | {false, unfinished | errors | slow | no_sessions}.

-define(MIN_ACHIEVED, 0.8).
-define(MAX_ERROR_RATIO, 0.01).
-define(COLUMNS, [target, op, config, level, offered_per_s, ops_per_session, hold_s, started,
                  done, achieved_per_s, requests, requests_per_s, errors, mean_session_ms,
                  p50_session_ms, p99_session_ms, p50_ms, p99_ms, held, why, cpu_pct, util_pct,
                  busy_wait_pct, host_cpu_pct, seconds]).

%% @doc The columns of `levels.csv'.
-spec columns() -> [atom()].
columns() -> ?COLUMNS.

%% @doc The row of a level that ran: `Total' is the load run's merged interval (counters and
%% histogram snapshots), `Run' its `duration_s' and `stopped', `Samples' the sample summary of
%% the target node over the level (or `undefined').
-spec row(cell(), level(), #{total := map(), duration_s := number(), stopped := atom(),
                             atom() => term()}, map() | undefined) -> [term()].
row(Cell, #{rate := Rate, hold_s := Hold, ops := Ops}, #{total := T} = Run, Samples) ->
    #{duration_s := Secs, stopped := Stopped} = Run,
    Started = maps:get(sessions_started, T),
    Done = maps:get(sessions_done, T),
    Requests = maps:get(requests, T),
    Errors = maps:get(errors, T),
    Session = maps:get(session, T),
    Latency = maps:get(latency, T),
    Figures = #{stopped => Stopped, started => Started, done => Done, requests => Requests,
                errors => Errors, started_per_s => Started / Hold,
                achieved_per_s => Done / max(Hold, Secs)},
    {Held, Why} = held(Figures),
    S = fun(K) -> sample(K, Samples) end,
    Values = #{offered_per_s => float(Rate), ops_per_session => Ops, hold_s => Hold,
               started => Started, done => Done, achieved_per_s => r(Done / max(Hold, Secs)),
               requests => Requests, requests_per_s => r(Requests / max(Secs, 1.0e-9)),
               errors => Errors, mean_session_ms => ms(beamscale_stats_hist:mean(Session)),
               p50_session_ms => ms(beamscale_stats_hist:percentile(Session, 50)),
               p99_session_ms => ms(beamscale_stats_hist:percentile(Session, 99)),
               p50_ms => ms(beamscale_stats_hist:percentile(Latency, 50)),
               p99_ms => ms(beamscale_stats_hist:percentile(Latency, 99)),
               held => Held, why => Why, cpu_pct => S(os_cpu_all_pct), util_pct => S(util_pct),
               busy_wait_pct => S(busy_wait_all_pct), host_cpu_pct => S(host_cpu_pct),
               seconds => r(Secs)},
    fields(Cell, Values).

%% @doc The row of a level not run because a lower one was not held (or the cell failed):
%% `Why' says which.
-spec skipped(cell(), {level(), atom()}) -> [term()].
skipped(Cell, {#{rate := Rate, hold_s := Hold, ops := Ops}, Why}) ->
    fields(Cell, #{offered_per_s => float(Rate), ops_per_session => Ops, hold_s => Hold,
                   held => false, why => Why}).

%% @doc Whether a level was held, and if not the first reason why.
-spec held(#{stopped := atom(), started := non_neg_integer(), done := non_neg_integer(),
             requests := non_neg_integer(), errors := non_neg_integer(),
             started_per_s := number(), achieved_per_s := number()}) -> verdict().
held(#{started := 0}) -> {false, no_sessions};
held(#{stopped := Stopped, started := Started, done := Done}) when Stopped =/= done;
                                                                   Done < Started ->
    {false, unfinished};
held(#{errors := E, requests := R}) when E > ?MAX_ERROR_RATIO * R -> {false, errors};
held(#{started_per_s := In, achieved_per_s := Out}) when Out < ?MIN_ACHIEVED * In ->
    {false, slow};
held(_) -> {true, ok}.

%% @doc Whether a `levels.csv' row (a map of binaries) is of a held level.
-spec is_held(#{atom() => binary()}) -> boolean().
is_held(Row) -> maps:get(held, Row, <<>>) =:= <<"true">>.

%% @doc The columns of `capacity.csv': one row per cell whose capacity search ended (the
%% capacity is the highest rate held, `capacity_high_per_s' the lowest not held above it).
-spec capacity_columns() -> [atom()].
capacity_columns() ->
    [target, op, config, capacity_per_s, capacity_low_per_s, capacity_high_per_s, limited_by,
     stopped, levels].

%% @doc A cell's `capacity.csv' row from its search's outcome and its levels, `{Rate, Held, Why}'
%% in the order they ran; `limited_by' is why the level at `capacity_high_per_s' was not
%% held. `why' is the search's (`beamscale_stats_search:outcome()'), or `failed' for a cell
%% whose node failed.
-spec capacity_row(#{target := iodata(), op := iodata(), config := iodata(), atom() => term()},
                   #{low := number() | none, high := number() | none, why := atom()},
                   [{number(), boolean(), term()}]) -> [term()].
capacity_row(#{target := T, op := O, config := C}, #{low := Low, high := High, why := Why},
             Levels) ->
    LimitedBy = case beamscale_stats_search:limited_at(High, Levels) of
                    none -> <<>>;
                    W -> W
                end,
    Opt = fun(none) -> <<>>; (V) -> r(V) end,
    [T, O, C, Opt(Low), Opt(Low), Opt(High), LimitedBy, Why, length(Levels)].

fields(#{target := T, op := O, config := C, level := L}, Values) ->
    All = Values#{target => T, op => O, config => C, level => L},
    [maps:get(K, All, <<>>) || K <- ?COLUMNS].

sample(_K, undefined) -> <<>>;
sample(K, Samples) ->
    case maps:get(K, Samples, undefined) of
        V when is_number(V) -> r(V);
        _ -> <<>>
    end.

ms(Micros) -> r(Micros / 1000).

r(V) -> round(V * 1000) / 1000.
