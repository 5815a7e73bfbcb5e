%% A run directory's figures for a history, read generically: a load's and a saturate's
%% summary.json (the shapes beamscale_load_results and beamscale_stats_saturate write), a field
%% nobody knew of kept, intervals paired, the better way told by the name.
-module(beamscale_history_metrics_tests).
-include_lib("eunit/include/eunit.hrl").

-define(M, beamscale_history_metrics).

dir(Files) ->
    Dir = filename:join("/tmp", "beamscale-history-metrics-" ++ os:getpid() ++ "-"
                        ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = filelib:ensure_path(Dir),
    [ok = file:write_file(filename:join(Dir, N), beamscale_format_json:encode(J))
     || {N, J} <- Files],
    Dir.

by_metric(Entries) -> maps:from_list([{M, E} || #{metric := M} = E <- Entries]).

load_test() ->
    Dir = dir([{"run.json", #{kind => load, label => <<"shop">>, otp_release => <<"25">>}},
               {"summary.json", #{requests_per_s => 812.5, errors => 3, duration_s => 10.0,
                                  latency_corrected => #{p50_ms => 1.5, p99_ms => 9.0,
                                                         count => 8125},
                                  per_second => [#{t_s => 1, requests => 800}],
                                  stopped => done}}]),
    try
        {ok, #{kind := <<"load">>, entries := Es}} = ?M:read(Dir),
        By = by_metric(Es),
        ?assertMatch(#{benchmark := <<"shop">>, primary := true, better := <<"higher">>,
                       environment := #{<<"release">> := <<"25">>}},
                     maps:get(<<"requests_per_s">>, By)),
        ?assertMatch(#{primary := true, better := <<"lower">>, value := 9.0},
                     maps:get(<<"latency_corrected.p99_ms">>, By)),
        ?assertMatch(#{primary := false}, maps:get(<<"latency_corrected.count">>, By)),
        %% Arrays (the per-second rows) and texts are not figures.
        ?assertEqual([], [K || K <- maps:keys(By), binary:match(K, <<"per_second">>) =/= nomatch])
    after os:cmd("rm -rf '" ++ Dir ++ "'")
    end.

saturate_interval_test() ->
    Dir = dir([{"run.json", #{kind => saturate, scenario => <<"/x/echo.scenario">>}},
               {"summary.json", #{capacity_per_s => 400, capacity_low_per_s => 380,
                                  capacity_high_per_s => 420, levels => 6,
                                  instructions_per_call => 1234.0}}]),
    try
        {ok, #{kind := <<"saturate">>, entries := Es}} = ?M:read(Dir),
        By = by_metric(Es),
        ?assertMatch(#{benchmark := <<"echo.scenario">>, low := 380, high := 420,
                       primary := true, better := <<"higher">>},
                     maps:get(<<"capacity_per_s">>, By)),
        ?assertNot(maps:is_key(<<"capacity_low_per_s">>, By)),
        %% A field added later is kept as it is.
        ?assertMatch(#{value := 1234.0, better := <<"lower">>},
                     maps:get(<<"instructions_per_call">>, By))
    after os:cmd("rm -rf '" ++ Dir ++ "'")
    end.

refusals_test() ->
    Empty = dir([]),
    NotObj = dir([{"summary.json", [1, 2]}]),
    try
        ?assertMatch({error, {?M, {no_summary, _}}}, ?M:read(Empty)),
        ?assertMatch({error, {?M, {bad_json, _}}}, ?M:read(NotObj)),
        ?assertMatch({error, {?M, {not_a_directory, _}}}, ?M:read(Empty ++ "/none")),
        ?assertMatch({match, _}, re:run(?M:format_error({no_summary, "f"}), "missing"))
    after [os:cmd("rm -rf '" ++ D ++ "'") || D <- [Empty, NotObj]]
    end.
