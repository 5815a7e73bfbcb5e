%% @doc `index.html' of a load run directory, as a pure formatter: one self-contained page (inline
%% style and SVG, no script, no external file) with the run's metadata and phases; latency over
%% time (p50/p90/p99/p99.9 from the intended start, p99 from the send beside them; a log axis
%% when they span decades) with the phase boundaries; the latency distribution; session
%% duration over time; users offered against started and done; requests per second; errors and
%% timeouts, and errors by reason (the most frequent, when there are errors); replies by status
%% code (HTTP's, when there are); transactions over
%% time; each request name's p99 and requests over time, and its table
%% (`beamscale_report_load_names', as an amoc scenario's throttles and coordinators); the
%% target's CPU, scheduler utilisation and busy-wait
%% (`beamscale_report_cpu'); and
%% the summary tables; with `--profile', each target node's profile (flame graph, categories,
%% top functions: `beamscale_report_profile'). Input is the stored files decoded: `run.json',
%% `summary.json' (binary keys) and the rows of `samples.csv' and `lcnt.csv'.
-module(beamscale_report_load).

-export([index/1, graphs/1]).
-export_type([data/0]).

%% summary: `summary.json' decoded, `beamscale_load_results:summary()' with binary keys (its
%% `per_second' entries are the rows drawn); samples, lcnt: rows of samples.csv and lcnt.csv;
%% profiles: the target nodes' (`beamscale_profile:read_levels/1').
-type data() :: #{run := beamscale_format_json:object(), summary := beamscale_format_json:object(),
                  samples := [#{atom() => binary()}], lcnt := [#{atom() => binary()}],
                  profiles => [beamscale_report_profile:point()]}.
%% A chart: title, y axis label, unit and series (for `beamscale_report_svg:line_chart/2').
-type graph() :: {binary(), binary(), binary(), [beamscale_report_svg:series()]}.

%% Reasons drawn apart in the errors-by-reason chart; the others are summed as one series.
-define(CHART_REASONS, 6).
%% The keys and labels of the figures are the run files' table (`beamscale_format_load').
-define(T, beamscale_format_load).

%% @doc The whole page.
-spec index(data()) -> iodata().
index(#{run := Run, summary := Summary, samples := Samples, lcnt := Lcnt} = Data) ->
    %% One profile per node: nothing grew from one point to another.
    {_Lead, Profiles} = beamscale_report_profile:sections(maps:get(profiles, Data, []), none),
    Title = ["beamscale load run ", text(case get(Run, <<"label">>) of
                                             null -> get(Run, <<"scenario">>);
                                             Label -> Label
                                         end)],
    beamscale_report_html:page(Title, <<"tr.fail td{background:#fde0e0}">>,
                        [beamscale_report_html:el(h1, Title),
                         beamscale_report_load_extra:thresholds(Summary),
                         %% The totals first: what a reader looks for, on the first screen.
                         beamscale_report_html:section("Totals", totals(Summary)),
                         warnings(list(Run, <<"warnings">>)),
                         beamscale_report_load_extra:events(Summary),
                         beamscale_report_html:section("Run", metadata(Run, Summary)),
                         beamscale_report_html:section("Phases", phases(Run)),
                         beamscale_report_html:section("Over time", charts(Summary)),
                         beamscale_report_html:section(
                           "Latency distribution",
                           beamscale_report_load_extra:distribution(Summary)),
                         beamscale_report_html:section("Summary", summary_tables(Summary)),
                         beamscale_report_html:section("The target: CPU, schedulers, msacc",
                                                target(Run, Samples, Lcnt)),
                         [beamscale_report_html:section(T, H) || {T, H} <- Profiles]]).

%% @doc The charts drawn, in order. Exposed so tests can tell how many series each must have.
-spec graphs(beamscale_format_json:object()) -> [graph()].
graphs(Summary) ->
    Secs = list(Summary, <<"per_second">>),
    %% A load cut short has no session percentiles (load.csv holds the mean only): no line.
    Lat = fun(K, P) -> [{T, num(get(S, K), P)} || {T, S} <- timed(Secs), count(S, K) > 0,
                                                  is_number(get(get(S, K), P))] end,
    Count = fun(K) -> [{T, num(S, K)} || {T, S} <- timed(Secs)] end,
    Pcts = [{bin(K), L} || #{key := K, label := L, percentile := _} <- ?T:percentiles()],
    Named = fun(K) -> #{name => label(K, ?T:counters()), points => Count(bin(K))} end,
    [{<<"latency (from the intended start; p99 from the send dashed)">>, <<"ms">>, <<" ms">>,
      [#{name => [N, " corrected"], points => Lat(<<"latency_corrected">>, K)}
       || {K, N} <- Pcts]
      ++ [#{name => <<"p99 uncorrected">>, dashed => true,
            points => Lat(<<"latency_uncorrected">>, <<"p99_ms">>)}]},
     {<<"session duration">>, <<"ms">>, <<" ms">>,
      [#{name => label(K, ?T:percentiles()), points => Lat(<<"session_duration">>, bin(K))}
       || K <- [mean_ms, p50_ms, p99_ms]]},
     {<<"users: offered vs achieved">>, <<"users/s">>, <<"/s">>,
      [#{name => <<"offered">>, dashed => true, points => Count(<<"offered_per_s">>)},
       Named(sessions_started), Named(sessions_done)]},
     {<<"requests">>, <<"requests/s">>, <<"/s">>, [Named(requests)]},
     {<<"errors and timeouts">>, <<"per second">>, <<"/s">>, [Named(errors), Named(timeouts)]}]
        ++ hist_graph(Summary, Lat, <<"connect_time">>,
                      <<"connect time (TCP, and the TLS handshake)">>)
        ++ hist_graph(Summary, Lat, <<"page_time">>,
                      <<"page time (Tsung's page: requests between think times)">>)
        ++ [{<<"pages (Tsung's page)">>, <<"pages/s">>, <<"/s">>,
             [#{name => <<"pages">>,
                points => [{T, count(S, <<"page_time">>)} || {T, S} <- timed(Secs)]}]}
            || count(Summary, <<"page_time">>) > 0]
        ++ [{<<"connections open (Tsung's connected)">>, <<"connections">>, <<"">>,
             [#{name => <<"open">>, points => Count(<<"connected">>)}]}
            || num(Summary, <<"connections_opened">>) > 0]
        ++ reasons_graph(map(Summary, <<"errors_by_reason">>), timed(Secs))
        ++ beamscale_report_load_extra:flow_graphs(Summary)
        ++ statuses_graph(map(Summary, <<"statuses">>), timed(Secs))
        ++ beamscale_report_load_extra:transaction_graphs(Summary)
        ++ beamscale_report_load_names:graphs(Summary)
        ++ beamscale_report_load_extra:fine_graphs(Summary).

%% A histogram's mean, p50 and p99 per second: connect time (Tsung's `connect'), when the run
%% opened connections, and Tsung's `page'; a run stored before seconds kept it draws none.
hist_graph(Summary, Lat, Key, Title) ->
    case count(Summary, Key) > 0 of
        true ->
            [{Title, <<"ms">>, <<" ms">>,
              [#{name => label(K, ?T:percentiles()), points => Lat(Key, bin(K))}
               || K <- [mean_ms, p50_ms, p99_ms]]}];
        false -> []
    end.

%% Errors per second of the most frequent reasons, the rest summed; no chart without errors.
reasons_graph(Total, _Secs) when map_size(Total) =:= 0 -> [];
reasons_graph(Total, Secs) ->
    Sorted = lists:sort(fun({R1, N1}, {R2, N2}) -> {-N1, R1} =< {-N2, R2} end,
                        maps:to_list(Total)),
    {Top, Rest} = lists:split(min(?CHART_REASONS, length(Sorted)), Sorted),
    At = fun(S, Rs) -> lists:sum([num(map(S, <<"errors_by_reason">>), R) || R <- Rs]) end,
    Series = [#{name => text(R), points => [{T, At(S, [R])} || {T, S} <- Secs]}
              || {R, _} <- Top]
        ++ [#{name => <<"other reasons">>, points => [{T, At(S, [R || {R, _} <- Rest])}
                                                   || {T, S} <- Secs]}
            || Rest =/= []],
    [{<<"errors by reason">>, <<"errors/s">>, <<"/s">>, Series}].

%% Replies per second by status code (Tsung's HTTP return codes); none without replies.
statuses_graph(Total, _Secs) when map_size(Total) =:= 0 -> [];
statuses_graph(Total, Secs) ->
    [{<<"replies by status">>, <<"replies/s">>, <<"/s">>,
      [#{name => C, points => [{T, num(map(S, <<"statuses">>), C)} || {T, S} <- Secs]}
       || C <- lists:sort(maps:keys(Total))]}].

%%% Internals

charts(Summary) ->
    Phases = beamscale_report_load_extra:phase_markers(Summary),
    Charts = [beamscale_report_svg:line_chart(Series, #{title => T, x_label => "seconds",
                                                 y_label => Y, unit => U, x_ticks => auto,
                                                 markers => Phases,
                                                 y_scale => beamscale_report_load_extra:y_scale(U)})
              || {T, Y, U, Series} <- graphs(Summary)],
    beamscale_report_html:el(section, [{class, "charts"}], {safe, Charts}).

metadata(Run, Summary) ->
    %% Load node RSS over users in flight, at the busiest second (beamscale_loadtest_memory).
    Mem = get(Summary, <<"memory">>),
    Facts = [{"Scenario", get(Run, <<"scenario">>)}, {"Label", get(Run, <<"label">>)},
             {"Host", get(Run, <<"host">>)}, {"Logical cores", get(Run, <<"logical_cores">>)},
             {"OTP release", get(Run, <<"otp_release">>)}, {"Started", get(Run, <<"started">>)},
             {"Ended", get(Run, <<"ended">>)}, {"Time limit (s)", get(Run, <<"time_limit_s">>)},
             {"Duration (s)", get(Summary, <<"duration_s">>)},
             {"Stopped", get(Summary, <<"stopped">>)},
             {"Targets down", join([down(D) || D <- list(Run, <<"targets_down">>)], "none")},
             {"Load nodes down", join([load_down(D) || D <- list(Run, <<"load_nodes_down">>)],
                                      "none")},
             {"Load nodes", join(list(Run, <<"load_nodes">>), "none (users ran in beamscale)")},
             {"Sampled targets", join(list(Run, <<"sampled">>), "none")},
             {"Users in flight (peak)", get(Mem, <<"users_in_flight">>)},
             {"Resident memory at the peak (MB)", mb(get(Mem, <<"rss_bytes">>))},
             {"Memory per user (KB)", kb(get(Mem, <<"bytes_per_user">>))},
             {"Memory per user above the start (KB)",
              kb(get(Mem, <<"marginal_bytes_per_user">>))}],
    beamscale_report_html:table(["", ""], [[K, cell(V)] || {K, V} <- Facts]).

down(D) ->
    iolist_to_binary([text(get(D, <<"target">>)), " (", text(get(D, <<"node">>)), ") at ",
                      cell(get(D, <<"at_s">>)), " s"]).

%% A load node gone: its users (its share of the load) stopped there.
load_down(D) ->
    iolist_to_binary([text(get(D, <<"node">>)), " at ", cell(get(D, <<"at_s">>)), " s (",
                      text(get(D, <<"reason">>)), "): its users stopped"]).

%% Several scenarios side by side: each one's start too.
phases(Run) ->
    Phases = list(Run, <<"phases">>),
    {Start, StartHead} = case [P || P <- Phases, get(P, <<"start_s">>) =/= null] of
                             [] -> {[], []};
                             _ -> {[<<"start_s">>], ["start (s)"]}
                         end,
    Cols = [<<"name">>] ++ Start ++ [<<"duration_s">>, <<"rate">>, <<"max_users">>],
    beamscale_report_html:table(["phase"] ++ StartHead ++ ["duration (s)", "users/s",
                                                           "max users"],
                                [[cell(get(P, C)) || C <- Cols] || P <- Phases]).

summary_tables(Summary) ->
    Tx = maps:to_list(map(Summary, <<"transactions">>)),
    %% Runs stored before connect times (or bytes) were recorded have no such entry: no empty
    %% row (or column).
    Rows = [[Name | hist_cells(map(Summary, bin(K)))]
            || #{key := K, label := Name} <- ?T:histograms(), is_map_key(bin(K), Summary)]
        ++ [[["transaction ", T] | hist_cells(H)] || {T, H} <- lists:sort(Tx)],
    ByReason = map(Summary, <<"errors_by_reason">>),
    Reasons = beamscale_report_html:table(
                ["error reason", "count"],
                [[R, cell(N)]
                 || {R, N} <- lists:reverse(lists:keysort(2, maps:to_list(ByReason)))]),
    Statuses = map(Summary, <<"statuses">>),
    [beamscale_report_html:table(["" | [?T:heading(E) || E <- ?T:percentiles()]], Rows),
     ten_second_means(map(Summary, <<"ten_second_means">>)),
     [Reasons || map_size(ByReason) > 0],
     [beamscale_report_html:table(["status", "replies"],
                                  [[C, cell(N)] || {C, N} <- lists:sort(maps:to_list(Statuses))])
      || map_size(Statuses) > 0],
     beamscale_report_load_names:table(Summary),
     beamscale_report_load_names:amoc(Summary),
     counters(map(Summary, <<"counts">>)),
     load_nodes(list(Summary, <<"load_nodes">>))].

%% Tsung's highest and lowest 10 s means; a run stored before they were kept has none.
ten_second_means(Means) when map_size(Means) =:= 0 -> [];
ten_second_means(Means) ->
    Rows = [[?T:heading(E), cell(get(M, <<"highest">>)), cell(get(M, <<"lowest">>))]
            || #{key := K} = E <- ?T:ten_second_means(), M <- [map(Means, bin(K))],
               map_size(M) > 0],
    beamscale_report_html:table(["10 s mean", "highest", "lowest"], Rows).

%% The named counts (counters.csv): match/nomatch, request_noack, a kind's own.
counters(Counts) when map_size(Counts) =:= 0 -> [];
counters(Counts) ->
    beamscale_report_html:table(["counter", "count"],
                                [[K, cell(N)] || {K, N} <- lists:sort(maps:to_list(Counts))]).

totals(Summary) ->
    Totals = [E || #{key := K} = E <- ?T:totals(), is_map_key(bin(K), Summary)],
    beamscale_report_html:table([?T:heading(E) || E <- Totals],
                                [[cell(get(Summary, bin(K))) || #{key := K} <- Totals]]).

%% What the scenario's reader said (a Tsung file's settings ignored or not applied): kept in
%% run.json and shown, not only on the terminal that started the run.
warnings([]) -> [];
warnings(Ws) ->
    Items = [beamscale_report_html:el(li, text(W)) || W <- Ws],
    beamscale_report_html:section("Warnings of the scenario",
                                  beamscale_report_html:el(ul, {safe, Items})).

hist_cells(H) -> [cell(get(H, bin(K))) || #{key := K} <- ?T:percentiles()].

load_nodes(Nodes) when length(Nodes) > 1 ->
    Counts = [E || #{key := K} = E <- ?T:counters(),
                   lists:any(fun(N) -> is_map_key(bin(K), N) end, Nodes)],
    [beamscale_report_html:el(h3, "Per load node"),
     beamscale_report_html:table(["node" | [?T:heading(E) || E <- Counts]],
                          [[cell(get(N, <<"node">>)) | [cell(get(N, bin(K)))
                                                        || #{key := K} <- Counts]]
                           || N <- Nodes])];
load_nodes(_) -> [].

target(Run, Samples, Lcnt) ->
    Notes = [[esc(get(N, <<"target">>)), ": ", esc(get(N, <<"reason">>))]
             || N <- list(Run, <<"not_sampled">>)],
    NotesHtml = [beamscale_report_html:el(p, {safe, ["Not sampled: ", lists:join("; ", Notes)]})
                 || Notes =/= []],
    case Samples of
        [] -> [NotesHtml, beamscale_report_html:el(p, "No samples (no node target was sampled).")];
        _ -> [NotesHtml, beamscale_report_cpu:section(Samples, Lcnt, get(Run, <<"msacc">>))]
    end.

timed(Secs) -> [{num(S, <<"t_s">>), S} || S <- Secs].

bin(K) -> atom_to_binary(K).

label(K, Entries) ->
    {ok, #{label := L}} = ?T:find(K, Entries),
    L.

count(S, K) -> num(get(S, K), <<"count">>).

esc(V) -> beamscale_report_html:escape(text(V)).

cell(null) -> "";
cell(V) when is_number(V) -> beamscale_report_svg:fmt(V);
cell(V) -> V.

kb(B) when is_number(B) -> B / 1024;
kb(_) -> null.

mb(B) when is_number(B) -> B / 1.0e6;
mb(_) -> null.

join([], None) -> None;
join(L, _) -> lists:join(", ", [text(X) || X <- L]).

text(null) -> <<>>;
text(V) when is_binary(V); is_number(V); is_atom(V) -> V;
text(V) -> iolist_to_binary(io_lib:format("~0tp", [V])).

num(M, K) ->
    case get(M, K) of
        V when is_number(V) -> V;
        _ -> 0
    end.

get(M, K) when is_map(M) -> maps:get(K, M, null);
get(_, _) -> null.

list(M, K) ->
    case get(M, K) of
        L when is_list(L) -> L;
        _ -> []
    end.

map(M, K) ->
    case get(M, K) of
        V when is_map(V) -> V;
        _ -> #{}
    end.
