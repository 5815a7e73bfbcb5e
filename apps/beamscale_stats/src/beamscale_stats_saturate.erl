%% @doc One level of `beamscale saturate' as figures and a row of `levels.csv', and back. Pure:
%% the load run's per-second rows in (`beamscale_load_metrics:row()') with the level's sample
%% summary of the target (`beamscale_stats_samples'), figures out. Only the level's measured
%% seconds count: those after the warm-up and up to the end of the level's phase (the drain that
%% follows lets sessions finish but adds no arrivals); the backlog (sessions started and not
%% done by the level's end) counts every second.
-module(beamscale_stats_saturate).

-export([figures/2, columns/0, row/1, from_row/1, summary/4]).
-export_type([figures/0]).

-type figures() :: #{offered_per_s := float() | null, started_per_s := float(),
                     achieved_per_s := float(), achieved_ratio := float(),
                     requests := non_neg_integer(), errors := non_neg_integer(),
                     error_ratio := float(), seconds := non_neg_integer(),
                     p50_ms := float(), p90_ms := float(), p99_ms := float(),
                     p999_ms := float(), p50_sent_ms := float(), p99_sent_ms := float(),
                     p999_sent_ms := float(), held => boolean(), broken => [binary()],
                     atom() => term()}.

-define(COLUMNS, [offered_per_s, users, started_per_s, achieved_per_s, requests_per_s,
                  requests_per_s_sd, p50_ms, p99_ms, p999_ms,
                  p50_sent_ms, p99_sent_ms, p999_sent_ms, requests, errors, error_pct,
                  errors_by_reason, cpu_pct, util_pct, busy_wait_pct, held, broken, limited_by,
                  backlog, seconds, wall_s, idle_wait_s, idle_timeout]).
%% The columns read back as text; the others are numbers (or empty).
-define(TEXT, [errors_by_reason, held, broken, limited_by, idle_timeout]).
%% The sample summary's figures kept, as columns (busy-wait and CPU over all schedulers).
-define(SAMPLED, [{cpu_pct, os_cpu_all_pct}, {util_pct, util_pct},
                  {busy_wait_pct, busy_wait_all_pct}]).

%% @doc The figures of a level run at `rate' per second for `hold_s' seconds, dropping the
%% first `warmup_s' (a closed level: `users' in a loop instead of a rate); `samples' is the
%% target's sample summary over the level (if sampled).
-spec figures([map()], #{rate => number(), users => pos_integer(), hold_s := pos_integer(),
                         warmup_s := non_neg_integer(), samples => map() | undefined}) ->
    figures().
figures(Rows, #{hold_s := Hold, warmup_s := Warm} = Opts) ->
    Measured = [R || #{t_s := T} = R <- Rows, T > Warm, T =< Hold],
    Secs = length(Measured),
    Sum = fun(K) -> lists:sum([maps:get(K, R) || R <- Measured]) end,
    Hist = fun(K) -> beamscale_stats_hist:merge([maps:get(K, R) || R <- Measured]) end,
    Lat = Hist(latency),
    Sent = Hist(sent),
    Per = fun(N) -> N / max(Secs, 1) end,
    Requests = Sum(requests),
    PerSecond = [maps:get(requests, R) || R <- Measured],
    Errors = Sum(errors),
    Started = Sum(sessions_started),
    Done = Sum(sessions_done),
    %% Completed against started rather than against the nominal rate: Poisson arrivals make
    %% the count started over a few seconds differ from the rate by several % at low rates.
    All = fun(K) -> lists:sum([maps:get(K, R) || R <- Rows]) end,
    Sampled = maps:from_list([{C, sample(K, maps:get(samples, Opts, undefined))}
                              || {C, K} <- ?SAMPLED]),
    Sampled#{offered_per_s => offered(Opts), users => maps:get(users, Opts, null),
             started_per_s => Per(Started), achieved_per_s => Per(Done),
             achieved_ratio => Done / max(Started, 1), requests => Requests,
             requests_per_s => r(Per(Requests)), requests_per_s_sd => sd(PerSecond),
             errors => Errors, error_ratio => Errors / max(Requests, 1), seconds => Secs,
             errors_by_reason => reasons(Measured),
             backlog => All(sessions_started) - All(sessions_done),
             p50_ms => ms(Lat, 50), p90_ms => ms(Lat, 90), p99_ms => ms(Lat, 99),
             p999_ms => ms(Lat, 99.9), p50_sent_ms => ms(Sent, 50),
             p99_sent_ms => ms(Sent, 99), p999_sent_ms => ms(Sent, 99.9)}.

offered(#{rate := Rate}) -> float(Rate);
offered(_ClosedLevel) -> null.

ms(Hist, P) -> r(beamscale_stats_hist:percentile(Hist, P) / 1000).

%% The sample standard deviation (null under two values).
sd(Xs) when length(Xs) < 2 -> null;
sd(Xs) ->
    N = length(Xs),
    Mean = lists:sum(Xs) / N,
    r(math:sqrt(lists:sum([(X - Mean) * (X - Mean) || X <- Xs]) / (N - 1))).

sample(K, #{} = Samples) ->
    case maps:get(K, Samples, null) of
        V when is_number(V) -> r(V);
        _ -> null
    end;
sample(_K, undefined) -> null.

%% The errors by reason over the seconds, most frequent first: "N reason; N reason".
reasons(Rows) ->
    Counts = lists:foldl(fun(R, Acc) ->
                                 maps:fold(fun(K, N, A) -> maps:update_with(K, fun(M) -> M + N end,
                                                                            N, A)
                                           end, Acc, maps:get(reasons, R, #{}))
                         end, #{}, Rows),
    Sorted = lists:sort([{-N, K} || {K, N} <- maps:to_list(Counts)]),
    iolist_to_binary(lists:join("; ", [[integer_to_binary(N), " ", K] || {N0, K} <- Sorted,
                                                                         N <- [-N0]])).

%% @doc The columns of `levels.csv'.
-spec columns() -> [atom()].
columns() -> ?COLUMNS.

%% @doc A level's row: its figures with `held', `broken' (the terms, `;'-separated),
%% `limited_by', `wall_s' (how long the level took, drain included), `idle_wait_s' (how long
%% it waited for the target nodes to be idle before it started) and `idle_timeout' (`true':
%% it started with a node still busy; empty: no node polled).
-spec row(figures()) -> [term()].
row(#{broken := Broken} = F) ->
    All = F#{broken => iolist_to_binary(lists:join(";", Broken)),
             limited_by => case maps:get(limited_by, F, none) of
                               none -> <<>>;
                               By -> By
                           end,
             error_pct => r(100 * maps:get(error_ratio, F)),
             started_per_s => r(maps:get(started_per_s, F)),
             achieved_per_s => r(maps:get(achieved_per_s, F))},
    [case maps:get(K, All, <<>>) of
         null -> <<>>;
         V -> V
     end || K <- ?COLUMNS].

%% @doc A row of `levels.csv' read back (`beamscale_store:read_rows/1') as figures: numbers
%% where numbers were written (`null' where empty), `held' a boolean, `broken' a list.
-spec from_row(#{atom() => binary()}) -> figures().
from_row(Row) ->
    Nums = maps:from_list([{K, number(maps:get(K, Row, <<>>))} || K <- ?COLUMNS,
                                                                  not lists:member(K, ?TEXT)]),
    Broken = [B || B <- binary:split(maps:get(broken, Row, <<>>), <<";">>, [global]), B =/= <<>>],
    Nums#{held => maps:get(held, Row, <<>>) =:= <<"true">>, broken => Broken,
          limited_by => case maps:get(limited_by, Row, <<>>) of
                            <<>> -> none;
                            By -> By
                        end,
          errors_by_reason => maps:get(errors_by_reason, Row, <<>>),
          idle_timeout => maps:get(idle_timeout, Row, <<>>),
          error_ratio => ratio(maps:get(error_pct, Nums))}.

ratio(null) -> null;
ratio(Pct) -> Pct / 100.

number(<<>>) -> null;
number(B) ->
    try binary_to_float(B)
    catch error:badarg ->
            try binary_to_integer(B)
            catch error:badarg -> null
            end
    end.

%% @doc `summary.json' of a search: the objective, the bracket, the capacity (the highest rate
%% held), which term limited it (that broken at the level not held just above the capacity,
%% `beamscale_stats_search:limited_at/2') and why the search stopped.
-spec summary(binary(), beamscale_stats_search:outcome(), [figures()], map()) -> map().
summary(Slo, #{low := Low, high := High, why := Why}, Levels, Extra) ->
    Verdicts = [{maps:get(offered_per_s, L, null), Held, L} || #{held := Held} = L <- Levels],
    {LimitedBy, Broken} = case beamscale_stats_search:limited_at(High, Verdicts) of
                              none -> {none, []};
                              Edge -> {maps:get(limited_by, Edge), maps:get(broken, Edge)}
                          end,
    Extra#{slo => Slo, capacity_per_s => opt(Low), capacity_low_per_s => opt(Low),
           capacity_high_per_s => opt(High), limited_by => opt(LimitedBy),
           broken_first => Broken, stopped => Why, levels => length(Levels)}.

opt(none) -> null;
opt(V) when is_float(V) -> r(V);
opt(V) -> V.

r(V) -> round(V * 1000) / 1000.
