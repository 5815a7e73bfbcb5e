%% `compare --threshold' on a stored summary.json: a tag's threshold reads `requests_by_tag'
%% (issue 49), as a name's reads `requests_by_name'.
-module(beamscale_compare_thresholds_tests).
-include_lib("eunit/include/eunit.hrl").

tag_test() ->
    Summary = #{<<"duration_s">> => 2.0,
                <<"requests_by_tag">> =>
                    #{<<"flow=slow">> => #{<<"requests">> => 10, <<"errors">> => 1,
                                           <<"p99_ms">> => 55.0, <<"mean_ms">> => 50.0}}},
    {ok, Ths} = beamscale_compare_thresholds:parse(["p99{tag:flow=slow}<20ms",
                                                    "errors{tag:flow=slow}<20%",
                                                    "rate{tag:flow=slow}>4/s",
                                                    "mean{tag:flow=fast}<1s"]),
    ?assertMatch([#{ok := false, value := 55.0}, #{ok := true}, #{ok := true, value := 5.0},
                  #{ok := false, value := none}],
                 beamscale_compare_thresholds:verdicts(Ths, Summary)).
