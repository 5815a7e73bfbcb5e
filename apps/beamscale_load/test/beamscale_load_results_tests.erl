%% summary.json's additions for the report (issue 20): the latency distribution as a compact
%% percentile list, corrected and uncorrected, and each second's transactions; older keys kept.
-module(beamscale_load_results_tests).
-include_lib("eunit/include/eunit.hrl").

%% 1 000 sends of 1..1000 µs from the send; from the intended start each waited 1 s more.
hists() ->
    Sent = beamscale_stats_hist:new(),
    Corrected = beamscale_stats_hist:new(),
    [begin
         ok = beamscale_stats_hist:record(Sent, V),
         ok = beamscale_stats_hist:record(Corrected, V + 1000000)
     end || V <- lists:seq(1, 1000)],
    (beamscale_load_metrics:empty([login]))#{latency => beamscale_stats_hist:snapshot(Corrected),
                                             sent => beamscale_stats_hist:snapshot(Sent),
                                             {tx, login} => beamscale_stats_hist:snapshot(Sent)}.

distribution_test() ->
    Interval = hists(),
    Row = Interval#{t_s => 1, phase => main, offered_per_s => 10.0},
    Summary = beamscale_load_results:summary(#{rows => [Row], total => Interval,
                                               duration_s => 1.0, stopped => done}),
    #{latency_distribution := #{corrected := C, uncorrected := U}} = Summary,
    %% The tail is there, and values grow with the percentile.
    ?assert(lists:member(99.99, [P || [P, _] <- U])),
    ?assertEqual(lists:sort([Ms || [_, Ms] <- U]), [Ms || [_, Ms] <- U]),
    U50 = hd([Ms || [50, Ms] <- U]),
    ?assert(abs(U50 - 0.5) < 0.01),
    ?assert(hd([Ms || [50, Ms] <- C]) > 1000),
    %% The keys the page read before are unchanged; each second has its transactions.
    ?assertMatch(#{p99_ms := _, count := 1000}, maps:get(latency_uncorrected, Summary)),
    [#{transactions := #{<<"login">> := #{count := 1000}}}] = maps:get(per_second, Summary),
    {ok, _} = beamscale_format_json:decode(iolist_to_binary(
                                             beamscale_format_json:encode(Summary))).

%% Every key summary.json and each of its seconds has is in the run files' table
%% (`beamscale_format_load'), which the pages and the terminal read; load.csv's columns are
%% the table's, and a row has one value per column.
keys_in_the_table_test() ->
    Interval = hists(),
    Row = Interval#{t_s => 1, phase => main, offered_per_s => 10.0},
    Summary = beamscale_load_results:summary(#{rows => [Row], total => Interval,
                                               duration_s => 1.0, stopped => done}),
    Known = beamscale_format_load:keys(beamscale_format_load:summary()),
    ?assertEqual([], maps:keys(Summary) -- Known),
    [Second] = maps:get(per_second, Summary),
    ?assertEqual([], maps:keys(Second)
                     -- (Known ++ beamscale_format_load:keys(beamscale_format_load:load_csv()))),
    %% Each counter of the table is counted, in the totals and in each second.
    Counters = beamscale_format_load:keys(beamscale_format_load:counters()),
    ?assertEqual([], Counters -- maps:keys(Summary)),
    ?assertEqual([], Counters -- maps:keys(Second)),
    ?assertEqual(beamscale_format_load:keys(beamscale_format_load:load_csv()),
                 beamscale_load_results:csv_header()),
    ?assertEqual(length(beamscale_load_results:csv_header()),
                 length(beamscale_load_results:csv_row(Row#{session => maps:get(sent, Row)}))).

%% Replies by status: statuses.csv rows by code, the closing line, summary.json's text keys.
statuses_test() ->
    Interval = (hists())#{statuses => #{404 => 2, 200 => 7}},
    Row = Interval#{t_s => 3, phase => main, offered_per_s => 10.0},
    ?assertEqual([[3, 200, 7], [3, 404, 2]], beamscale_load_results:statuses_rows(Row)),
    Summary = beamscale_load_results:summary(#{rows => [Row], total => Interval,
                                               duration_s => 1.0, stopped => done}),
    ?assertEqual(#{<<"200">> => 7, <<"404">> => 2}, maps:get(statuses, Summary)),
    ?assertEqual(<<"replies by status: 200 7; 404 2\n">>,
                 iolist_to_binary(beamscale_load_results:statuses_line(
                                    maps:get(statuses, Summary)))),
    ?assertEqual(none, beamscale_load_results:statuses_line(#{})).

%% Each histogram has its stddev and min; the run has Tsung's highest and lowest 10 s means
%% (seconds 1 and 11 fall in two windows), and each second its connect time.
spread_and_ten_second_means_test() ->
    Interval = hists(),
    Empty = beamscale_stats_hist:empty(),
    Rows = [Interval#{t_s => 1, phase => main, offered_per_s => 10.0, requests => 30},
            Interval#{t_s => 11, phase => main, offered_per_s => 10.0, requests => 50,
                      latency => Empty}],
    Summary = beamscale_load_results:summary(#{rows => Rows, total => Interval,
                                               duration_s => 11.0, stopped => done}),
    #{latency_uncorrected := #{stddev_ms := Sd, min_ms := Min}} = Summary,
    %% 1..1000 µs, each in its own bucket: exact.
    ?assert(abs(Sd - math:sqrt((1000 * 1000 - 1) / 12) / 1000) < 1.0e-9),
    ?assertEqual(0.001, Min),
    #{ten_second_means := #{requests_per_s := R, latency_corrected_mean_ms := L} = Means} =
        Summary,
    ?assertEqual(#{highest => 50.0, lowest => 30.0}, R),
    %% The second window had no request with a latency: one window, its mean both ways.
    #{highest := Hi, lowest := Hi} = L,
    ?assert(abs(Hi - 1000.5005) < 1.0e-6),
    ?assertNot(is_map_key(connect_time_mean_ms, Means)),
    [#{connect_time := #{count := 0, min_ms := 0.0}} | _] = maps:get(per_second, Summary).

%% Tsung's page each second (its count and times), and its highest and lowest 10 s means.
page_per_second_test() ->
    Page = beamscale_stats_hist:new(),
    [ok = beamscale_stats_hist:record(Page, V) || V <- [2000, 4000]],
    Interval = (hists())#{page => beamscale_stats_hist:snapshot(Page)},
    Rows = [Interval#{t_s => T, phase => main, offered_per_s => 1.0} || T <- [1, 2]],
    Summary = beamscale_load_results:summary(#{rows => Rows, total => Interval,
                                               duration_s => 2.0, stopped => done}),
    [#{page_time := #{count := 2, mean_ms := M1}}, #{page_time := #{count := 2}}] =
        maps:get(per_second, Summary),
    ?assert(abs(M1 - 3.0) < 0.01),
    #{ten_second_means := #{page_time_mean_ms := #{highest := Hi, lowest := Lo}}} = Summary,
    ?assert(abs(Hi - 3.0) < 0.01 andalso Hi =:= Lo).

%% Tsung's `connected': each second's open connections, the opened less the closed so far.
connected_test() ->
    Interval = hists(),
    Rows = [Interval#{t_s => T, phase => main, offered_per_s => 1.0, connections_opened => O,
                      connections_closed => C} || {T, O, C} <- [{1, 3, 1}, {2, 4, 0}, {3, 0, 6}]],
    Summary = beamscale_load_results:summary(#{rows => Rows, total => Interval,
                                               duration_s => 3.0, stopped => done}),
    ?assertEqual([2, 6, 0], [N || #{connected := N} <- maps:get(per_second, Summary)]).
