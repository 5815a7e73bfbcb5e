%% @doc The files of a load run described once: the keys of `summary.json' (its totals, which
%% each second and each load node also have as counts, its histograms and their percentiles),
%% the columns of `load.csv' and `errors.csv', and the live page's figures, each with a label,
%% a unit and a format. `beamscale_load_metrics' counts and `beamscale_load_results' writes by
%% these lists; the final page (`beamscale_report_load'), the live page (`beamscale_report_live')
%% and the terminal's closing lines (`beamscale_loadtest') read them. A new figure of a run is a
%% line here, where it is counted, and nothing else to be shown. Data only, in the lowest app,
%% so that the load app and the report app both read it.
-module(beamscale_format_load).

-export([counters/0, by_name/0, totals/0, histograms/0, percentiles/0, summary/0, load_csv/0,
         errors_csv/0, requests_csv/0, ten_second_means/0, live/0, keys/1, find/2, heading/1]).
-export_type([entry/0, format/0, source/0]).

%% How a value reads: a count, a rate per second, seconds, milliseconds, bytes, text; a
%% histogram (`percentiles/0'), a map of names to counts or to histograms, or a list.
-type format() :: count | rate | seconds | ms | bytes | text | percentiles | counts_by_name
                | percentiles_by_name | list.
%% Where a live figure comes from: a path into the latest second of `summary.json', the
%% latest sample of the first sampled target (a `samples.csv' column), or the users started
%% and not yet done over the seconds so far.
-type source() :: {second, [atom()]} | {target, atom()} | in_flight.
%% `percentile': of a histogram's key, the percentile it holds; `from': of a live figure;
%% `by_name': of a counter, kept by request name as well (`by_name/0').
-type entry() :: #{key := atom(), label := binary(), unit := binary(), format := format(),
                   percentile => number(), from => source(), by_name => true}.

%% @doc The counters of a run: in its totals, in each second and for each load node.
-spec counters() -> [entry()].
counters() ->
    [e(sessions_started, "sessions started", "", count),
     e(sessions_done, "sessions done", "", count),
     %% Users in flight ended by `beamscale ctl DIR users -N': started, never done.
     e(sessions_stopped, "sessions stopped (ctl users -N)", "", count),
     %% Users due while their launcher could not run (its node stopped): counted, not started.
     e(sessions_late, "sessions not started, due over 1 s ago (a stalled load node)", "", count),
     n(e(requests, "requests", "", count)),
     n(e(errors, "errors", "", count)),
     e(timeouts, "timeouts", "", count),
     %% What the stream kinds wrote and read.
     n(e(bytes_sent, "bytes sent", "B", bytes)),
     n(e(bytes_received, "bytes received", "B", bytes)),
     %% Rows database queries returned (the mysql and pgsql kinds).
     e(rows, "rows returned", "", count),
     %% Connections the kinds opened and closed (the server's closes included): their
     %% difference over the seconds is `connected', Tsung's open connections.
     e(connections_opened, "connections opened", "", count),
     e(connections_closed, "connections closed", "", count)].

%% @doc The counters also kept by request name (`beamscale_load_byname'), in their order:
%% `requests_csv/0' has a column for each.
-spec by_name() -> [atom()].
by_name() -> [K || #{key := K, by_name := true} <- counters()].

%% @doc The single figures of `summary.json': the counters, the rate and the duration.
-spec totals() -> [entry()].
totals() ->
    counters() ++ [e(requests_per_s, "requests", "/s", rate),
                   e(duration_s, "duration", "s", seconds)].

%% @doc The histograms of `summary.json' (each second has them too).
-spec histograms() -> [entry()].
histograms() ->
    [e(latency_corrected, "latency, from the intended start (corrected)", "ms", percentiles),
     e(latency_uncorrected, "latency, from the send (uncorrected)", "ms", percentiles),
     e(session_duration, "session duration", "ms", percentiles),
     e(connect_time, "connect (TCP, and the TLS handshake)", "ms", percentiles),
     %% Tsung's `page': a user's requests between two think times, from the first one's send
     %% to the last one's reply.
     e(page_time, "page (requests between think times)", "ms", percentiles)].

%% @doc The keys of one histogram, in the order the pages show them.
-spec percentiles() -> [entry()].
percentiles() ->
    %% The deviation is over the buckets' midpoints (`beamscale_stats_hist:stddev/1').
    [e(count, "count", "", count), e(mean_ms, "mean", "ms", ms),
     e(stddev_ms, "stddev", "ms", ms), e(min_ms, "min", "ms", ms),
     p(p50_ms, "p50", 50), p(p90_ms, "p90", 90), p(p99_ms, "p99", 99), p(p999_ms, "p99.9", 99.9),
     e(max_ms, "max", "ms", ms)].

%% @doc Every key of `summary.json': the totals, the histograms, and the rest.
-spec summary() -> [entry()].
summary() ->
    totals() ++ histograms()
        ++ [e(stopped, "stopped", "", text),
            %% The scenario's, and the histograms its kinds declare (`measures/0': a broker's
            %% `delivery_time' and `confirm_time', xmpp's `xmpp_delivery').
            e(transactions, "transactions", "ms", percentiles_by_name),
            e(errors_by_reason, "errors by reason", "", counts_by_name),
            %% Replies by status code (the http kind), the code as text.
            e(statuses, "replies by status", "", counts_by_name),
            %% Counters the scenario names (checks' outcomes, unset variables).
            e(counts, "counts", "", counts_by_name),
            %% By request name: `requests_csv/0''s figures (each second has them too).
            e(requests_by_name, "by request name", "", list),
            %% By tag pair `key=value' (`beamscale_load_tags'): the same figures.
            e(requests_by_tag, "by tag", "", list),
            %% `[Percentile, Milliseconds]' pairs, corrected and uncorrected.
            e(latency_distribution, "latency by percentile", "ms", list),
            %% Tsung's highest and lowest 10 s means (`ten_second_means/0' names them).
            e(ten_second_means, "highest and lowest 10 s means", "", list),
            e(per_second, "per second", "", list),
            %% Each second's: the connections open at its end (Tsung's `connected').
            e(connected, "connections open", "", count),
            e(load_nodes, "per load node", "", list),
            %% An amoc scenario's throttles and coordinators (beamscale_amoc_figures).
            e(amoc, "amoc throttles and coordinators", "", list),
            %% Resident memory at the peak (`beamscale_loadtest_memory').
            e(memory, "memory", "B", list)].

%% @doc The figures of `summary.json''s `ten_second_means', each a highest and a lowest.
-spec ten_second_means() -> [entry()].
ten_second_means() ->
    [e(latency_corrected_mean_ms, "latency, from the intended start", "ms", ms),
     e(latency_uncorrected_mean_ms, "latency, from the send", "ms", ms),
     e(connect_time_mean_ms, "connect", "ms", ms),
     e(page_time_mean_ms, "page", "ms", ms),
     e(session_duration_mean_ms, "session duration", "ms", ms),
     e(requests_per_s, "requests", "/s", rate), e(errors_per_s, "errors", "/s", rate)].

%% @doc The columns of `load.csv', a row a second (latency from the intended start).
-spec load_csv() -> [entry()].
load_csv() ->
    [e(t_s, "second", "s", seconds), e(phase, "phase", "", text),
     e(offered_per_s, "offered", "users/s", rate),
     e(sessions_started, "sessions started", "", count),
     e(sessions_done, "sessions done", "", count),
     e(requests, "requests", "", count), e(errors, "errors", "", count),
     p(p50_ms, "p50", 50), p(p90_ms, "p90", 90), p(p99_ms, "p99", 99), p(p999_ms, "p99.9", 99.9),
     e(max_ms, "max", "ms", ms), e(mean_session_ms, "mean session", "ms", ms)].

%% @doc The columns of `errors.csv': a row a second and reason.
-spec errors_csv() -> [entry()].
errors_csv() ->
    [e(t_s, "second", "s", seconds), e(reason, "reason", "", text),
     e(count, "count", "", count)].

%% @doc The columns of `requests.csv' (Tsung's per-request table), a row a request name: the
%% latency from the intended start (a request without a reply has none: see `errors').
-spec requests_csv() -> [entry()].
requests_csv() ->
    [e(name, "request", "", text), e(requests, "requests", "", count),
     e(errors, "errors", "", count), e(mean_ms, "mean", "ms", ms),
     e(stddev_ms, "stddev", "ms", ms), e(min_ms, "min", "ms", ms),
     p(p50_ms, "p50", 50), p(p90_ms, "p90", 90), p(p99_ms, "p99", 99),
     e(max_ms, "max", "ms", ms), e(bytes_sent, "bytes sent", "B", bytes),
     e(bytes_received, "bytes received", "B", bytes)].

%% @doc The live page's figures, in the order shown, each with where it comes from.
-spec live() -> [entry()].
live() ->
    [l(t_s, "second", "", seconds, {second, [t_s]}),
     l(phase, "phase", "", text, {second, [phase]}),
     l(offered_per_s, "offered users", "/s", rate, {second, [offered_per_s]}),
     l(achieved_per_s, "sessions started", "/s", rate, {second, [sessions_started]}),
     l(requests_per_s, "requests", "/s", rate, {second, [requests]}),
     l(errors_per_s, "errors", "/s", rate, {second, [errors]}),
     l(users_in_flight, "users in flight", "", count, in_flight),
     l(bytes_sent_per_s, "bytes sent", "B/s", rate, {second, [bytes_sent]}),
     l(bytes_received_per_s, "bytes received", "B/s", rate, {second, [bytes_received]}),
     l(p50_ms, "p50 (corrected)", "ms", ms, {second, [latency_corrected, p50_ms]}),
     l(p99_ms, "p99 (corrected)", "ms", ms, {second, [latency_corrected, p99_ms]}),
     l(p99_uncorrected_ms, "p99 (from the send)", "ms", ms,
       {second, [latency_uncorrected, p99_ms]}),
     l(os_cpu_pct, "target OS CPU", "%", rate, {target, os_cpu_pct}),
     l(util_pct, "scheduler utilisation", "%", rate, {target, util_pct}),
     l(busy_wait_pct, "busy-wait", "%", rate, {target, busy_wait_pct})].

%% @doc The keys of a list, in order.
-spec keys([entry()]) -> [atom()].
keys(Entries) -> [K || #{key := K} <- Entries].

%% @doc The entry of `Key' in a list.
-spec find(atom(), [entry()]) -> {ok, entry()} | error.
find(Key, Entries) ->
    case [E || #{key := K} = E <- Entries, K =:= Key] of
        [E | _] -> {ok, E};
        [] -> error
    end.

%% @doc A column's heading: the label and its unit ("requests/s", "p50 (ms)").
-spec heading(entry()) -> binary().
heading(#{label := L, unit := <<>>}) -> L;
heading(#{label := L, unit := <<"/", _/binary>> = U}) -> <<L/binary, U/binary>>;
heading(#{label := L, unit := U}) -> <<L/binary, " (", U/binary, ")">>.

%%% Internals

e(Key, Label, Unit, Format) ->
    #{key => Key, label => list_to_binary(Label), unit => list_to_binary(Unit), format => Format}.

%% A counter kept by request name too.
n(Entry) -> Entry#{by_name => true}.

p(Key, Label, Percentile) -> (e(Key, Label, "ms", ms))#{percentile => Percentile}.

l(Key, Label, Unit, Format, From) -> (e(Key, Label, Unit, Format))#{from => From}.
