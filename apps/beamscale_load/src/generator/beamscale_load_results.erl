%% @doc The figures of a load run as text, pure: the live line, `load.csv' rows (header of
%% DESIGN.md) and `summary.json', their keys as the run files' table (`beamscale_format_load')
%% lists them.
-module(beamscale_load_results).

-export([live_line/1, csv_header/0, csv_row/1, errors_header/0, errors_rows/1, summary/1,
         threshold_source/2, distribution_percentiles/0, checks/1,
         top_reasons/2, statuses_header/0, statuses_rows/1, statuses_line/1,
         requests_header/0, requests_rows/1, tags_header/0, tags_rows/1]).
-export_type([csv_row/0, percentiles/0, second/0, summary/0]).

%% A `load.csv' line's values, in the order of `csv_header/0'.
-type csv_row() :: [number() | atom()].
%% A histogram in milliseconds, as `summary.json' holds it.
-type percentiles() :: #{p50_ms := float(), p90_ms := float(), p99_ms := float(),
                         p999_ms := float(), count := non_neg_integer(), mean_ms := float(),
                         stddev_ms := float(), min_ms := float(), max_ms := float()}.
%% One entry of `summary.json''s `per_second': a second's counts and histograms.
-type second() :: #{t_s := pos_integer(), phase := atom() | binary(), offered_per_s := float(),
                    sessions_started := non_neg_integer(), sessions_done := non_neg_integer(),
                    requests := non_neg_integer(), errors := non_neg_integer(),
                    timeouts := non_neg_integer(), errors_by_reason := reasons(),
                    latency_corrected := percentiles(),
                    latency_uncorrected := percentiles(), session_duration := percentiles(),
                    connect_time := percentiles(), page_time := percentiles(),
                    connected := non_neg_integer(),
                    transactions := #{binary() => percentiles()}, statuses := statuses(),
                    requests_by_name := by_name()}.
%% By request name (`beamscale_load_reqname'): the latency from the intended start, with the
%% requests, errors and bytes of the name.
-type by_name() :: #{binary() => #{atom() => number()}}.
%% Replies by status code (HTTP's), the code as text: a JSON object's key.
-type statuses() :: #{binary() => pos_integer()}.
%% The latency distribution of the whole run: `[Percentile, Milliseconds]' pairs at the
%% percentiles of ?DISTRIBUTION, from the intended start (corrected) and from the send.
-type distribution() :: #{corrected := [[number()]], uncorrected := [[number()]]}.
%% `summary.json': the run's totals (counts as in `second()'), its seconds and its load nodes.
-type summary() :: #{per_second := [second()], load_nodes := [#{node := binary(),
                                                                atom() => non_neg_integer()}],
                     duration_s := float(), stopped := done | time_limit | interrupted | aborted,
                     requests_per_s := float(), latency_corrected := percentiles(),
                     latency_uncorrected := percentiles(), session_duration := percentiles(),
                     connect_time := percentiles(), page_time := percentiles(),
                     transactions := #{binary() => percentiles()},
                     errors_by_reason := reasons(),
                     latency_distribution := distribution(),
                     ten_second_means := #{atom() => beamscale_stats_windows:extremes()},
                     counts := #{binary() => non_neg_integer()}, statuses := statuses(),
                     requests_by_name := by_name(), requests_by_tag := by_name(),
                     atom() => non_neg_integer()}.

%% Errors by reason (bounded text, `beamscale_load_reasons').
-type reasons() :: beamscale_load_reasons:counts().

%% The percentiles of the distribution plot: a compact list rather than the whole histogram
%% (2048 sub-buckets per power of two), dense where the tail is.
-define(DISTRIBUTION, [0, 25, 50, 75, 90, 95, 98, 99, 99.5, 99.8, 99.9, 99.95, 99.98, 99.99,
                       99.995, 99.999, 100]).

%% @doc The checks' outcomes in a run's counts, `{Matched, All}': a check's counts are under
%% `match.NAME' and `nomatch.NAME'. Values other than integers are skipped (`compare' gives
%% the counts of a decoded `summary.json').
-spec checks(map()) -> {non_neg_integer(), non_neg_integer()}.
checks(Counts) ->
    maps:fold(fun(<<"match.", _/binary>>, N, {H, A}) when is_integer(N) -> {H + N, A + N};
                 (<<"nomatch.", _/binary>>, N, {H, A}) when is_integer(N) -> {H, A + N};
                 (_, _, Acc) -> Acc
              end, {0, 0}, Counts).

%% @doc The percentiles of `summary.json''s `latency_distribution' (what `compare' can judge).
-spec distribution_percentiles() -> [number()].
distribution_percentiles() -> ?DISTRIBUTION.

%% @doc One line per second: phase, offered and achieved rate, latency, errors, sessions.
-spec live_line(beamscale_load_metrics:row()) -> iolist().
live_line(#{t_s := T, phase := P, offered_per_s := O, sessions_started := S, requests := R,
            errors := E, latency := L, session := Sess}) ->
    io_lib:format("~4bs ~-10ts offered ~8.1f/s started ~6b/s req ~7b/s p50 ~8.3f ms "
                  "p99 ~8.3f ms err ~5b session ~9.3f ms~n",
                  [T, P, O, S, R | [ms(V) || V <- beamscale_stats_hist:percentiles(L, [50, 99])]]
                  ++ [E, beamscale_stats_hist:mean(Sess) / 1000]).

%% @doc The columns of `load.csv'.
-spec csv_header() -> [atom()].
csv_header() -> beamscale_format_load:keys(beamscale_format_load:load_csv()).

%% @doc One row of `load.csv' (latency from the intended start), for `beamscale_format_csv:line/1'.
-spec csv_row(beamscale_load_metrics:row() | beamscale_load_metrics:fine_row()) -> csv_row().
csv_row(#{latency := L, session := S} = Row) ->
    Values = maps:merge(Row, maps:from_list(keyed_ms(L))),
    All = Values#{max_ms => ms(beamscale_stats_hist:max(L)),
                  mean_session_ms => beamscale_stats_hist:mean(S) / 1000},
    [maps:get(K, All) || K <- csv_header()].

ms(Micros) -> Micros / 1000.

%% Each percentile key's value in `H', in ms (the buckets sorted once for all).
keyed_ms(H) ->
    Keys = percentile_keys(),
    lists:zipwith(fun({K, _}, V) -> {K, ms(V)} end, Keys,
                  beamscale_stats_hist:percentiles(H, [P || {_, P} <- Keys])).

%% A histogram's percentile keys and the percentile each holds.
percentile_keys() ->
    [{K, P} || #{key := K, percentile := P} <- beamscale_format_load:percentiles()].

%% @doc The columns of `errors.csv' (basho_bench's errors file, a row per second and reason).
-spec errors_header() -> [atom()].
errors_header() -> beamscale_format_load:keys(beamscale_format_load:errors_csv()).

%% @doc A second's rows of `errors.csv', the most frequent reason first.
-spec errors_rows(beamscale_load_metrics:row()) -> [[pos_integer() | binary()]].
errors_rows(#{t_s := T, reasons := Reasons}) ->
    [[T, R, N] || {R, N} <- top_reasons(Reasons, infinity)].

%% @doc The columns of `statuses.csv' (Tsung's table of HTTP return codes, per second).
-spec statuses_header() -> [atom()].
statuses_header() -> [t_s, status, count].

%% @doc A second's rows of `statuses.csv', by code.
-spec statuses_rows(beamscale_load_metrics:row()) -> [[non_neg_integer()]].
statuses_rows(#{t_s := T} = Row) ->
    [[T, C, N] || {C, N} <- lists:sort(maps:to_list(maps:get(statuses, Row, #{})))].

%% @doc The closing line of the replies by status (`summary.json''s `statuses'), `none' without.
-spec statuses_line(statuses()) -> iodata() | none.
statuses_line(S) when map_size(S) =:= 0 -> none;
statuses_line(S) ->
    io_lib:format("replies by status: ~ts~n",
                  [lists:join("; ", [[C, " ", integer_to_list(N)]
                                     || {C, N} <- lists:sort(maps:to_list(S))])]).

statuses(S) -> maps:from_list([{integer_to_binary(C), N} || {C, N} <- maps:to_list(S)]).

%% @doc The `N' most frequent reasons (all: `infinity'), most frequent first, ties by text.
-spec top_reasons(reasons(), pos_integer() | infinity) -> [{binary(), pos_integer()}].
top_reasons(Reasons, N) ->
    Sorted = lists:sort(fun({R1, N1}, {R2, N2}) -> {-N1, R1} =< {-N2, R2} end,
                        maps:to_list(Reasons)),
    case N of
        infinity -> Sorted;
        _ -> lists:sublist(Sorted, N)
    end.

%% @doc The run's totals as JSON terms: counts, latency percentiles corrected (from the intended
%% start) and uncorrected (from the send), session duration and transactions; the counts of each
%% load node; and `per_second', the figures of every second (more than `load.csv' holds: the
%% report's graphs are drawn from it).
-spec summary(beamscale_load_run:result()) -> summary().
summary(#{rows := Rows} = Result) ->
    Secs = connected([second(R) || R <- Rows]),
    (totals(Result))#{per_second => Secs, ten_second_means => ten_second_means(Secs),
                      load_nodes => [C#{node := atom_to_binary(N)}
                                     || #{node := N} = C <- maps:get(load_nodes, Result, [])]}.

%% One second: counts, latency corrected and uncorrected, session duration, transactions.
second(#{latency := L, sent := S, session := Sess} = Row) ->
    Counts = maps:with([t_s, phase, offered_per_s | beamscale_load_metrics:counter_names()], Row),
    [Connect, Page] = [maps:get(H, Row, beamscale_stats_hist:empty()) || H <- [connect, page]],
    Counts#{latency_corrected => percentiles(L), latency_uncorrected => percentiles(S),
            session_duration => percentiles(Sess), connect_time => percentiles(Connect),
            page_time => percentiles(Page),
            errors_by_reason => maps:get(reasons, Row),
            transactions => transactions(Row), statuses => statuses(maps:get(statuses, Row, #{})),
            requests_by_name => by_name(maps:get(by_name, Row, #{}))}.

%% Tsung's `connected': the connections open at the end of each second, the opened less the
%% closed since the start (a user killed by `ctl users -N' leaves its own counted open).
connected(Secs) ->
    {Out, _} = lists:mapfoldl(fun(S, Open0) ->
                                      Open = Open0 + maps:get(connections_opened, S, 0)
                                          - maps:get(connections_closed, S, 0),
                                      {S#{connected => max(Open, 0)}, Open}
                              end, 0, Secs),
    Out.

%% Tsung's highest and lowest 10 s means: of the latencies (weighted by their requests) and
%% of the request rate. A figure no window has (no request) is left out.
ten_second_means(Secs) ->
    Mean = fun(K) -> [{T, C, C * M} || #{t_s := T} = S <- Secs,
                                       #{count := C, mean_ms := M} <- [maps:get(K, S, #{})]]
           end,
    Figures = [{latency_corrected_mean_ms, Mean(latency_corrected)},
               {latency_uncorrected_mean_ms, Mean(latency_uncorrected)},
               {connect_time_mean_ms, Mean(connect_time)},
               {page_time_mean_ms, Mean(page_time)},
               {session_duration_mean_ms, Mean(session_duration)},
               {requests_per_s, [{T, 1, N} || #{t_s := T, requests := N} <- Secs]},
               {errors_per_s, [{T, 1, N} || #{t_s := T, errors := N} <- Secs]}],
    maps:from_list([{K, E} || {K, Points} <- Figures,
                              E <- [beamscale_stats_windows:extremes(10, Points)], E =/= none]).

%% Each name's latency percentiles and its counts.
by_name(ByName) ->
    maps:map(fun(_, #{latency := L} = F) ->
                     maps:merge(percentiles(L), maps:without([latency], F))
             end, ByName).

%% @doc The columns of `requests.csv' (Tsung's per-request table): a row a request name.
-spec requests_header() -> [atom()].
requests_header() -> beamscale_format_load:keys(beamscale_format_load:requests_csv()).

%% @doc The rows of `requests.csv' from the summary's `requests_by_name', by name.
-spec requests_rows(summary()) -> [[number() | binary()]].
requests_rows(#{requests_by_name := ByName}) ->
    [[maps:get(K, F#{name => N}) || K <- requests_header()]
     || {N, F} <- lists:sort(maps:to_list(ByName))].

%% @doc The columns of `tags.csv': a row a tag pair (`key=value'), as `requests.csv''s.
-spec tags_header() -> [atom()].
tags_header() -> [tag | tl(requests_header())].

%% @doc The rows of `tags.csv' from the summary's `requests_by_tag', by pair.
-spec tags_rows(summary()) -> [[number() | binary()]].
tags_rows(#{requests_by_tag := ByTag}) ->
    [[maps:get(K, F#{tag => T}) || K <- tags_header()]
     || {T, F} <- lists:sort(maps:to_list(ByTag))].

%% A terms file names transactions with atoms, a Tsung file with binaries (no atom from it).
transactions(Hists) ->
    maps:from_list([{if is_atom(N) -> atom_to_binary(N); true -> N end, percentiles(H)}
                    || {{tx, N}, H} <- maps:to_list(Hists)]).

distribution(H) ->
    lists:zipwith(fun(P, V) -> [P, ms(V)] end, ?DISTRIBUTION,
                  beamscale_stats_hist:percentiles(H, ?DISTRIBUTION)).

percentiles(H) ->
    Ps = maps:from_list(keyed_ms(H)),
    Ps#{count => beamscale_stats_hist:count(H), mean_ms => ms(beamscale_stats_hist:mean(H)),
        stddev_ms => ms(beamscale_stats_hist:stddev(H)), min_ms => ms(lowest(H)),
        max_ms => ms(beamscale_stats_hist:max(H))}.

%% An empty histogram has no minimum: 0 as its other figures.
lowest(H) ->
    case beamscale_stats_hist:min(H) of
        undefined -> 0;
        M -> M
    end.

totals(#{total := T, duration_s := D, stopped := How}) ->
    Tx = transactions(T),
    Counts = maps:from_list([{K, maps:get(K, T)} || K <- beamscale_load_metrics:counter_names()]),
    Counts#{duration_s => D, stopped => How,
            requests_per_s => maps:get(requests, T) / max(D, 1.0e-9),
            latency_corrected => percentiles(maps:get(latency, T)),
            latency_uncorrected => percentiles(maps:get(sent, T)),
            session_duration => percentiles(maps:get(session, T)),
            connect_time => percentiles(maps:get(connect, T, beamscale_stats_hist:empty())),
            page_time => percentiles(maps:get(page, T, beamscale_stats_hist:empty())),
            transactions => Tx, errors_by_reason => maps:get(reasons, T),
            latency_distribution => #{corrected => distribution(maps:get(latency, T)),
                                      uncorrected => distribution(maps:get(sent, T))},
            counts => maps:get(counts, T, #{}), statuses => statuses(maps:get(statuses, T, #{})),
            requests_by_name => by_name(maps:get(by_name, T, #{})),
            requests_by_tag => by_name(maps:get(by_tag, T, #{}))}.

%% @doc A run's figures so far (its merged intervals, `Seconds' long) as thresholds read them
%% (`beamscale_stats_threshold'): a check's outcome counts as matched under `match.NAME'.
-spec threshold_source(beamscale_load_metrics:interval(), number()) ->
    beamscale_stats_threshold:source().
threshold_source(T, Seconds) ->
    Checks = checks(maps:get(counts, T, #{})),
    (maps:with([latency, requests, errors, sessions_started, sessions_done], T))#{
        duration_s => Seconds, checks => Checks, by_name => maps:get(by_name, T, #{}),
        by_tag => maps:get(by_tag, T, #{}),
        tx => maps:from_list([{if is_atom(N) -> atom_to_binary(N); true -> N end, H}
                              || {{tx, N}, H} <- maps:to_list(T)])}.
