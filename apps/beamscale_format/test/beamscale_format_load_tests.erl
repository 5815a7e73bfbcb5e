%% The run files' table: keys unique in each list, a histogram's percentiles named by the
%% percentile they hold, headings with their unit, and every live figure from a source.
-module(beamscale_format_load_tests).
-include_lib("eunit/include/eunit.hrl").

-define(M, beamscale_format_load).

unique_test_() ->
    [?_assertEqual(length(L), length(lists:usort(?M:keys(L))))
     || L <- [?M:summary(), ?M:percentiles(), ?M:load_csv(), ?M:errors_csv(), ?M:live()]].

percentiles_test() ->
    ?assertEqual([{p50_ms, 50}, {p90_ms, 90}, {p99_ms, 99}, {p999_ms, 99.9}],
                 [{K, P} || #{key := K, percentile := P} <- ?M:percentiles()]),
    %% The counters are the totals' first keys, each labelled.
    ?assertEqual(?M:counters(), lists:sublist(?M:totals(), length(?M:counters()))),
    ?assertEqual([], [E || #{label := <<>>} = E <- ?M:summary() ++ ?M:live()]).

heading_test() ->
    {ok, Rate} = ?M:find(requests_per_s, ?M:totals()),
    {ok, Bytes} = ?M:find(bytes_sent, ?M:counters()),
    {ok, Count} = ?M:find(requests, ?M:counters()),
    ?assertEqual(<<"requests/s">>, ?M:heading(Rate)),
    ?assertEqual(<<"bytes sent (B)">>, ?M:heading(Bytes)),
    ?assertEqual(<<"requests">>, ?M:heading(Count)),
    ?assertEqual(error, ?M:find(no_such_key, ?M:totals())).

live_sources_test() ->
    ?assertEqual([], [E || E <- ?M:live(), not is_map_key(from, E)]).

%% The counters kept by request name are requests.csv's columns that are counters.
by_name_test() ->
    Counters = ?M:keys(?M:counters()),
    ?assertEqual([K || K <- ?M:keys(?M:requests_csv()), lists:member(K, Counters)],
                 ?M:by_name()),
    ?assert(lists:member(bytes_received, ?M:by_name())),
    ?assertNot(lists:member(rows, ?M:by_name())).
