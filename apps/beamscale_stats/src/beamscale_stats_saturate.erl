%% @doc One level of `beamscale saturate' as figures and a row of `levels.csv'. Pure: the load
%% run's per-second rows in (`beamscale_load_metrics:row()'), figures out. Only the level's
%% measured seconds count: those after the warm-up and up to the end of the level's phase
%% (the drain that follows lets sessions finish but adds no arrivals).
-module(beamscale_stats_saturate).

-export([figures/2, columns/0, row/1, summary/4]).
-export_type([figures/0]).

-type figures() :: #{offered_per_s := float(), started_per_s := float(),
                     achieved_per_s := float(), achieved_ratio := float(),
                     requests := non_neg_integer(), errors := non_neg_integer(),
                     error_ratio := float(), seconds := non_neg_integer(),
                     p50_ms := float(), p90_ms := float(), p99_ms := float(),
                     p999_ms := float(), p50_sent_ms := float(), p99_sent_ms := float(),
                     p999_sent_ms := float(), held => boolean(), broken => [binary()],
                     atom() => term()}.

-define(COLUMNS, [offered_per_s, started_per_s, achieved_per_s, p50_ms, p99_ms, p999_ms,
                  p50_sent_ms, p99_sent_ms, p999_sent_ms, requests, errors, error_pct, held,
                  broken, seconds, wall_s]).

%% @doc The figures of a level run at `rate' per second for `hold_s' seconds, dropping the
%% first `warmup_s'.
-spec figures([map()], #{rate := number(), hold_s := pos_integer(),
                         warmup_s := non_neg_integer()}) -> figures().
figures(Rows, #{rate := Rate, hold_s := Hold, warmup_s := Warm}) ->
    Measured = [R || #{t_s := T} = R <- Rows, T > Warm, T =< Hold],
    Secs = length(Measured),
    Sum = fun(K) -> lists:sum([maps:get(K, R) || R <- Measured]) end,
    Hist = fun(K) -> beamscale_stats_hist:merge([maps:get(K, R) || R <- Measured]) end,
    Lat = Hist(latency),
    Sent = Hist(sent),
    Per = fun(N) -> N / max(Secs, 1) end,
    Requests = Sum(requests),
    Errors = Sum(errors),
    Started = Sum(sessions_started),
    Done = Sum(sessions_done),
    %% Completed against started rather than against the nominal rate: Poisson arrivals make
    %% the count started over a few seconds differ from the rate by several % at low rates.
    #{offered_per_s => float(Rate), started_per_s => Per(Started),
      achieved_per_s => Per(Done), achieved_ratio => Done / max(Started, 1),
      requests => Requests, errors => Errors, error_ratio => Errors / max(Requests, 1),
      seconds => Secs,
      p50_ms => ms(Lat, 50), p90_ms => ms(Lat, 90), p99_ms => ms(Lat, 99), p999_ms => ms(Lat, 99.9),
      p50_sent_ms => ms(Sent, 50), p99_sent_ms => ms(Sent, 99), p999_sent_ms => ms(Sent, 99.9)}.

ms(Hist, P) -> r(beamscale_stats_hist:percentile(Hist, P) / 1000).

%% @doc The columns of `levels.csv'.
-spec columns() -> [atom()].
columns() -> ?COLUMNS.

%% @doc A level's row: its figures with `held', `broken' (the terms, `;'-separated) and
%% `wall_s' (how long the level took, drain included).
-spec row(figures()) -> [term()].
row(#{broken := Broken} = F) ->
    All = F#{broken => iolist_to_binary(lists:join(";", Broken)),
             error_pct => r(100 * maps:get(error_ratio, F)),
             started_per_s => r(maps:get(started_per_s, F)),
             achieved_per_s => r(maps:get(achieved_per_s, F))},
    [maps:get(K, All, <<>>) || K <- ?COLUMNS].

%% @doc `summary.json' of a search: the objective, the bracket, the capacity (the highest rate
%% held), which term limited it (that broken at the first level not held while rising) and why
%% the search stopped.
-spec summary(binary(), beamscale_stats_search:outcome(), [figures()], map()) -> map().
summary(Slo, #{low := Low, high := High, why := Why}, Levels, Extra) ->
    NotHeld = [L || #{held := false} = L <- Levels],
    {LimitedBy, Broken} = case NotHeld of
                              [] -> {none, []};
                              [First | _] -> {maps:get(limited_by, First),
                                              maps:get(broken, First)}
                          end,
    Extra#{slo => Slo, capacity_per_s => opt(Low), capacity_low_per_s => opt(Low),
           capacity_high_per_s => opt(High), limited_by => opt(LimitedBy),
           broken_first => Broken, stopped => Why, levels => length(Levels)}.

opt(none) -> null;
opt(V) when is_float(V) -> r(V);
opt(V) -> V.

r(V) -> round(V * 1000) / 1000.
