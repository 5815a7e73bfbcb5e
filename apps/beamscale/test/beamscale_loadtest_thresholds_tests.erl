-module(beamscale_loadtest_thresholds_tests).
-include_lib("eunit/include/eunit.hrl").

-define(M, beamscale_loadtest_thresholds).

verdicts() ->
    [#{threshold => <<"p95<20ms">>, ok => false, value => 52.1, measured => <<"52.100 ms">>,
       abort => false},
     #{threshold => <<"p99{name=checkout}<1s">>, ok => true, value => none,
       measured => <<"no data">>, abort => true}].

table_test() ->
    Lines = string:split(iolist_to_binary(?M:table(verdicts())), "\n", all),
    ?assertEqual([<<"thresholds:">>,
                  <<"  FAIL  p95<20ms               52.100 ms">>,
                  <<"  pass  p99{name=checkout}<1s  no data">>, <<>>], Lines),
    ?assertEqual([], ?M:table([])).

json_and_failed_test() ->
    ?assertMatch([#{value := 52.1}, #{value := null}], ?M:json(verdicts())),
    ?assertEqual([<<"p95<20ms">>], ?M:failed(verdicts())).

of_run_test() ->
    {ok, A} = beamscale_stats_threshold:parse("p95<1s"),
    {ok, B} = beamscale_stats_threshold:parse("errors<1%"),
    ?assertEqual([A, B], ?M:of_run(#{thresholds => [A]}, #{thresholds => [B]})),
    ?assertEqual([], ?M:of_run(#{}, #{})),
    ?assertEqual(#{}, ?M:run_opts([])),
    ?assertMatch(#{check := F} when is_function(F, 2), ?M:run_opts([A])).
