%% @doc Parts of the load page (pure) kept apart from `beamscale_report_load' so its own list
%% of graphs stays short: the latency distribution plot, phase boundaries for the time charts,
%% the run's events, the transactions over time, the intervals under a second
%% (`--resolution'), and the axis kind of each chart.
%%
%% The distribution plot is the HdrHistogram one: percentile on x, on a log scale of
%% 1 / (1 - p) so that 50, 90, 99, 99.9 and 99.99 are evenly spaced, against latency on a log
%% y axis; corrected (from the intended start) beside uncorrected (from the send). It reads
%% `latency_distribution' of `summary.json' (`beamscale_load_results').
-module(beamscale_report_load_extra).

-export([thresholds/1, distribution/1, distribution_series/1, phase_markers/1, transaction_graphs/1,
         flow_graphs/1, events/1,
         y_scale/1, cut_short_summary/3, fine_seconds/1, fine_graphs/1]).

%% Five minutes at 100 ms.
-define(FINE_DRAWN, 3000).
-define(X_TICKS, [{2, "50"}, {10, "90"}, {100, "99"}, {1000, "99.9"}, {10000, "99.99"},
                  {100000, "99.999"}]).

%% @doc The distribution chart, or a line saying the run's summary has none (older runs).
-spec distribution(beamscale_format_json:object()) -> iodata().
distribution(Summary) ->
    case distribution_series(Summary) of
        [] -> beamscale_report_html:el(p, "No latency distribution in summary.json (a run made "
                                          "before it was stored, or cut short).");
        Series ->
            beamscale_report_svg:line_chart(
              Series, #{title => "latency by percentile", x_label => "percentile",
                        y_label => "latency (ms)", unit => " ms", x_scale => log,
                        y_scale => log, x_ticks => ?X_TICKS, width => 600})
    end.

%% @doc The distribution's series: x = 1 / (1 - p), y = milliseconds; percentile 100 (x
%% infinite) and empty histograms (0 ms) are left out.
-spec distribution_series(beamscale_format_json:object()) -> [beamscale_report_svg:series()].
distribution_series(Summary) ->
    Dist = get(Summary, <<"latency_distribution">>),
    [#{name => Name, dashed => Dashed, points => Points}
     || {Key, Name, Dashed} <- [{<<"corrected">>, <<"from the intended start (corrected)">>,
                                 false},
                                {<<"uncorrected">>, <<"from the send (uncorrected)">>, true}],
        Points <- [points(get(Dist, Key))], Points =/= []].

%% @doc Vertical lines where the phase changes: at the end of a phase's last second, labelled
%% with the phase that starts there; and where `beamscale ctl' changed the load (`events':
%% `rate 50', `users +10', `stop').
-spec phase_markers(beamscale_format_json:object()) -> [{number(), binary()}].
phase_markers(Summary) ->
    Secs = [{T, P} || S <- list(get(Summary, <<"per_second">>)),
                      T <- [get(S, <<"t_s">>)], is_number(T), P <- [get(S, <<"phase">>)]],
    %% An event in the first second (`rate 40' at 0.6 s) is drawn where the graphs start, at
    %% its end: the seconds are numbered by their ends, from 1.
    changes(Secs) ++ [{max(T, 1), marker(Ev, E)} || Ev <- list(get(Summary, <<"events">>)),
                                                    T <- [get(Ev, <<"t_s">>)], is_number(T),
                                                    E <- [get(Ev, <<"event">>)], is_binary(E)].

%% A stalled launcher's mark is short (its node and late users are in the events' table).
marker(#{<<"lasted_s">> := L}, _Text) when is_number(L) ->
    iolist_to_binary(["stall ", float_to_binary(float(L), [{decimals, 1}]), " s"]);
marker(_Event, Text) -> Text.

%% @doc The run's events by time (`beamscale ctl''s changes, stalled launchers), as a section
%% of a table; nothing when there are none.
-spec events(beamscale_format_json:object()) -> iodata().
events(Summary) ->
    case lists:sort([{T, E} || Ev <- list(get(Summary, <<"events">>)),
                               T <- [get(Ev, <<"t_s">>)], is_number(T),
                               E <- [get(Ev, <<"event">>)], is_binary(E)]) of
        [] -> [];
        Evs -> beamscale_report_html:section(
                 "Events", beamscale_report_html:table(
                             ["at (s)", "event"],
                             [[float_to_binary(float(T), [{decimals, 1}]), E] || {T, E} <- Evs]))
    end.

%% @doc Users in flight at the end of each second (sessions started so far less those done) and
%% bytes sent and received per second (the latter only when a kind counted bytes).
-spec flow_graphs(beamscale_format_json:object()) ->
          [{binary(), binary(), binary(), [beamscale_report_svg:series()]}].
flow_graphs(Summary) ->
    Secs = [{T, S} || S <- list(get(Summary, <<"per_second">>)), T <- [get(S, <<"t_s">>)],
                      is_number(T)],
    N = fun(S, K) -> case get(S, K) of V when is_number(V) -> V; _ -> 0 end end,
    {InFlight, _} = lists:mapfoldl(
                      fun({T, S}, Acc) ->
                              A = Acc + N(S, <<"sessions_started">>) - N(S, <<"sessions_done">>)
                                  - N(S, <<"sessions_stopped">>),
                              {{T, A}, A}
                      end, 0, Secs),
    Bytes = fun(K) -> [{T, N(S, K)} || {T, S} <- Secs] end,
    Counted = lists:any(fun({_, S}) -> N(S, <<"bytes_sent">>) + N(S, <<"bytes_received">>) > 0
                        end, Secs),
    [{<<"users in flight">>, <<"users">>, <<" users">>,
      [#{name => <<"in flight">>, points => InFlight}]} || Secs =/= []]
        ++ [{<<"bytes per second">>, <<"bytes/s">>, <<" B/s">>,
             [#{name => <<"sent">>, points => Bytes(<<"bytes_sent">>)},
              #{name => <<"received">>, points => Bytes(<<"bytes_received">>)}]} || Counted].

%% @doc Transactions over time: per second, how many of each ended, and their p99.
-spec transaction_graphs(beamscale_format_json:object()) ->
          [{binary(), binary(), binary(), [beamscale_report_svg:series()]}].
transaction_graphs(Summary) ->
    Secs = list(get(Summary, <<"per_second">>)),
    Names = lists:usort([N || S <- Secs, N <- maps:keys(map(get(S, <<"transactions">>)))]),
    Per = fun(Name, K) -> [{T, V} || S <- Secs, T <- [get(S, <<"t_s">>)], is_number(T),
                                     H <- [get(map(get(S, <<"transactions">>)), Name)],
                                     is_map(H), V <- [get(H, K)], is_number(V)] end,
    [{<<"transactions">>, <<"per second">>, <<"/s">>,
      [#{name => N, points => Per(N, <<"count">>)} || N <- Names]} || Names =/= []]
        ++ [{<<"transactions: p99 duration">>, <<"ms">>, <<" ms">>,
             [#{name => N, points => [P || {_, V} = P <- Per(N, <<"p99_ms">>), V > 0]}
              || N <- Names]} || Names =/= []].

%% @doc The rows of `load_fine.csv' (`--resolution') as `summary.json''s seconds are, for
%% `fine_graphs/1' (the writer puts them in the summary as `per_interval'): the first
%% ?FINE_DRAWN, so a long run's page stays light.
-spec fine_seconds([#{atom() => binary()}]) -> [beamscale_format_json:object()].
fine_seconds(Rows) ->
    [S || Row <- lists:sublist(Rows, ?FINE_DRAWN), S <- [second(Row, #{})], S =/= skip].

%% @doc Under a second (`per_interval'): requests and p99 latency of each interval.
-spec fine_graphs(beamscale_format_json:object()) ->
          [{binary(), binary(), binary(), [beamscale_report_svg:series()]}].
fine_graphs(Summary) ->
    case list(get(Summary, <<"per_interval">>)) of
        [First | _] = Fine ->
            Every = iolist_to_binary(io_lib:format("every ~b ms",
                                                   [round(get(First, <<"t_s">>) * 1000)])),
            Pts = fun(F) -> [{T, V} || S <- Fine, T <- [get(S, <<"t_s">>)], V <- [F(S)],
                                       is_number(T), is_number(V)] end,
            [{<<"requests ", Every/binary>>, <<"requests">>, <<>>,
              [#{name => <<"requests">>, points => Pts(fun(S) -> get(S, <<"requests">>) end)}]},
             {<<"latency p99 ", Every/binary>>, <<"ms">>, <<" ms">>,
              [#{name => <<"p99 corrected">>,
                 points => Pts(fun(S) -> get(get(S, <<"latency_corrected">>), <<"p99_ms">>)
                               end)}]}];
        [] -> []
    end.

%% @doc The y axis of a time chart: latencies (unit ms) go logarithmic when they span decades.
-spec y_scale(binary()) -> linear | auto.
y_scale(<<" ms">>) -> auto;
y_scale(_) -> linear.

%%% Internals

points(Pairs) ->
    [{1 / (1 - P / 100), Ms} || [P, Ms] <- list(Pairs), is_number(P), is_number(Ms), P < 100,
                                Ms > 0].

changes([{T, P}, {_, P1} = Next | Rest]) when P1 =/= P -> [{T, label(P1)} | changes([Next | Rest])];
changes([_ | Rest]) -> changes(Rest);
changes([]) -> [].

label(P) when is_binary(P) -> P;
label(P) -> beamscale_report_html:escape(P).

%% @doc The thresholds' table (`summary.json''s `thresholds'), for the top of the page: each
%% one's verdict, text and measured value, a failed one's row shaded; nothing without any.
-spec thresholds(beamscale_format_json:object()) -> iodata().
thresholds(Summary) ->
    case [T || T <- list(get(Summary, <<"thresholds">>)), is_map(T)] of
        [] -> [];
        Ths ->
            Rows = [case get(T, <<"ok">>) of
                        true -> {"pass", ["pass" | cells(T)]};
                        _ -> {"fail", ["FAIL" | cells(T)]}
                    end || T <- Ths],
            beamscale_report_html:section(
              "Thresholds", beamscale_report_html:table(["", "threshold", "measured", "abort"],
                                                        Rows))
    end.

cells(T) ->
    [shown(get(T, <<"threshold">>)), shown(get(T, <<"measured">>)),
     case get(T, <<"abort">>) of true -> "yes"; _ -> "" end].

shown(B) when is_binary(B) -> B;
shown(_) -> "".

get(M, K) when is_map(M) -> maps:get(K, M, null);
get(_, _) -> null.

list(L) when is_list(L) -> L;
list(_) -> [].

map(M) when is_map(M) -> M;
map(_) -> #{}.

%% @doc The summary of a load cut short (killed: no `summary.json'), from what it wrote as it
%% went: the rows of `load.csv' and `errors.csv' (`beamscale_store:read_rows/1') as its seconds,
%% and their sums. Whole-run percentiles cannot be rebuilt from a second's, so there are none.
%% `Stopped' says what is missing.
-spec cut_short_summary([#{atom() => binary()}], [#{atom() => binary()}], binary()) ->
    beamscale_format_json:object().
cut_short_summary(LoadRows, ErrorRows, Stopped) ->
    Reasons = lists:foldl(fun(Row, Acc) -> add_reason(Row, Acc) end, #{}, ErrorRows),
    Secs = [S || Row <- LoadRows, S <- [second(Row, Reasons)], S =/= skip],
    Sum = fun(K) -> lists:sum([maps:get(K, S) || S <- Secs]) end,
    Total = lists:foldl(fun(S, Acc) -> add_counts(maps:get(<<"errors_by_reason">>, S), Acc) end,
                        #{}, Secs),
    maps:merge(maps:from_list([{atom_to_binary(K), Sum(atom_to_binary(K))}
                               || K <- load_counts(count)]),
               #{<<"per_second">> => Secs, <<"errors_by_reason">> => Total,
                 <<"duration_s">> => lists:max([0 | [maps:get(<<"t_s">>, S) || S <- Secs]]),
                 <<"stopped">> => Stopped}).

%% One second as `summary.json' has it, or `skip' for a row that does not read.
second(#{t_s := T, phase := Phase, mean_session_ms := Mean} = Row, Reasons) ->
    try
        Counts = maps:from_list([{atom_to_binary(K), number(maps:get(K, Row))}
                                 || K <- load_counts(rate) ++ load_counts(count)]),
        Pcts = maps:from_list([{atom_to_binary(K), number(maps:get(K, Row))}
                               || K <- load_pcts()]),
        Second = number(T),
        Counts#{<<"t_s">> => Second, <<"phase">> => Phase,
                <<"latency_corrected">> => Pcts#{<<"count">> => maps:get(<<"requests">>, Counts)},
                <<"session_duration">> => #{<<"mean_ms">> => number(Mean),
                                            <<"count">> => maps:get(<<"sessions_done">>, Counts)},
                <<"errors_by_reason">> => maps:get(Second, Reasons, #{})}
    catch error:_ -> skip
    end;
second(_Row, _Reasons) -> skip.

%% The columns of `load.csv' (`beamscale_format_load') of one format: `count', the counters
%% summed over the run; `rate', the offered rate.
load_counts(Format) ->
    [K || #{key := K, format := F} <- beamscale_format_load:load_csv(), F =:= Format].

%% Its latency columns (from the intended start): those that are a histogram's keys.
load_pcts() ->
    Hist = beamscale_format_load:keys(beamscale_format_load:percentiles()),
    [K || K <- beamscale_format_load:keys(beamscale_format_load:load_csv()), lists:member(K, Hist)].

add_reason(#{t_s := T, reason := R, count := C}, Acc) ->
    try maps:update_with(number(T), fun(M) -> add_counts(#{R => number(C)}, M) end,
                         #{R => number(C)}, Acc)
    catch error:_ -> Acc
    end;
add_reason(_Row, Acc) -> Acc.

add_counts(Counts, Acc) ->
    maps:fold(fun(R, N, A) -> maps:update_with(R, fun(X) -> X + N end, N, A) end, Acc, Counts).

number(B) ->
    try binary_to_integer(B)
    catch error:badarg -> binary_to_float(B)
    end.
