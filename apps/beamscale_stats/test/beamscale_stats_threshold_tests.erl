-module(beamscale_stats_threshold_tests).
-include_lib("eunit/include/eunit.hrl").

-define(T, beamscale_stats_threshold).

parsed_test() ->
    {ok, A} = ?T:parse("p95<300ms"),
    ?assertMatch(#{metric := {pct, 95.0}, scope := all, op := '<', bound := 300.0,
                   abort := false}, A),
    {ok, B} = ?T:parse(<<"p(99.9){name=checkout} <= 2s : abort=10s">>),
    ?assertMatch(#{metric := {pct, 99.9}, scope := {name, <<"checkout">>}, op := '=<',
                   bound := 2000.0, abort := {true, 10.0}}, B),
    ?assertMatch({ok, #{metric := errors, bound := 0.01, abort := {true, 0.0}}},
                 ?T:parse("errors<1%:abort")),
    ?assertMatch({ok, #{metric := rate, op := '>=', bound := 45.0}}, ?T:parse("rate>=45/s")),
    ?assertMatch({ok, #{metric := mean, bound := 0.5}}, ?T:parse("avg<500us")),
    ?assertMatch({ok, #{metric := {pct, 99.9}}}, ?T:parse("p999<5ms")),
    ?assertMatch({ok, #{metric := max, scope := {tx, <<"login">>}}},
                 ?T:parse("max{tx=login}<1s")),
    ?assertMatch({ok, #{metric := checks, op := '>', bound := 0.99}}, ?T:parse("checks>99%")),
    ?assertMatch({ok, #{metric := {pct, 95.0}, scope := {tag, <<"flow=check out">>}}},
                 ?T:parse("p95{ tag : flow = check out }<300ms")),
    ?assertMatch({ok, #{metric := errors, scope := {tag, <<"tier=gold">>}}},
                 ?T:parse("errors{tag:tier=gold}<1%")).

%% A tag's threshold reads that pair's figures: none measured is `none' (fails).
tag_value_test() ->
    H = hist([1000]),
    Slow = #{latency => hist([50000, 60000]), requests => 2, errors => 1},
    Source = #{latency => H, requests => 2, errors => 1, duration_s => 1, sessions_started => 1,
               sessions_done => 1, checks => {0, 0}, by_name => #{}, tx => #{},
               by_tag => #{<<"flow=slow">> => Slow}},
    {ok, P} = ?T:parse("p95{tag:flow=slow}<20ms"),
    {ok, E} = ?T:parse("errors{tag:flow=slow}<60%"),
    {ok, None} = ?T:parse("p95{tag:flow=fast}<20ms"),
    ?assertMatch([#{ok := false}, #{ok := true}, #{ok := false, value := none}],
                 ?T:verdicts([P, E, None], Source)),
    ?assert(?T:value(P, Source) >= 50.0).

%% `{scenario=NAME}' is the tag every request of that scenario carries (`scenarios').
scenario_scope_test() ->
    ?assertMatch({ok, #{scope := {tag, <<"scenario=checkout">>}}},
                 ?T:parse("p95{scenario=checkout}<300ms")),
    ?assertMatch({ok, #{scope := {tag, <<"scenario=checkout">>}}},
                 ?T:parse("p95{tag:scenario=checkout}<300ms")).

hist(Values) ->
    R = beamscale_stats_hist:new(),
    [beamscale_stats_hist:record(R, V) || V <- Values],
    beamscale_stats_hist:take(R).

refused_test_() ->
    [?_assertMatch({error, _}, ?T:parse(T))
     || T <- ["", "p95", "p95<", "p95<3kg", "p0<3ms", "p101<3ms", "errors<1", "errors<101%",
              "rate<3ms", "achieved{name=a}>90%", "errors{tx=a}<1%", "checks>99%:abortt",
              "achieved{tag:a=b}>90%", "p95{tag:9a=b}<1s", "p95{tag=a}<1s",
              "latency<3ms", "p95<3ms:abort=3", lists:duplicate(400, $p), atom, [1, 2]]].

parse_list_test() ->
    ?assertMatch({ok, [_, _]}, ?T:parse_list(["p95<1s", "errors<1%"])),
    ?assertMatch({error, {2, _}}, ?T:parse_list(["p95<1s", "p95<"])).

source(LatUs, Requests, Errors) ->
    H = lists:foldl(fun(_, Acc) -> beamscale_stats_hist:merge(Acc, one(LatUs)) end,
                    beamscale_stats_hist:empty(), lists:seq(1, Requests)),
    #{latency => H, requests => Requests, errors => Errors, duration_s => 2.0,
      sessions_started => 10, sessions_done => 9, checks => {3, 4},
      by_name => #{<<"a">> => #{latency => H, requests => Requests, errors => 0}},
      tx => #{}}.

one(Us) ->
    Ref = beamscale_stats_hist:new(),
    ok = beamscale_stats_hist:record(Ref, Us),
    beamscale_stats_hist:take(Ref).

verdicts_test() ->
    S = source(50000, 10, 1),
    {ok, Ths} = ?T:parse_list(["p95<20ms", "p95<500ms", "errors<5%", "rate>4/s",
                               "achieved>=90%", "checks>80%", "mean{name=a}<60ms",
                               "p50{name=b}<1s", "p50{tx=t}<1s"]),
    Vs = ?T:verdicts(Ths, S),
    ?assertEqual([false, true, false, true, true, false, true, false, false],
                 [Ok || #{ok := Ok} <- Vs]),
    [#{value := P95, measured := M} | _] = Vs,
    ?assert(abs(P95 - 50.0) < 0.1),
    ?assertEqual(<<"no data">>, maps:get(measured, lists:nth(8, Vs))),
    ?assertMatch(<<"50.0", _/binary>>, M).

check_test() ->
    S = source(50000, 10, 0),
    {ok, Ths} = ?T:parse_list(["p95<20ms:abort=3s", "p95<500ms:abort", "p95<10ms"]),
    ?assertEqual(continue, ?T:check(Ths, 2, S)),
    ?assertEqual({abort, [<<"p95<20ms:abort=3s">>]}, ?T:check(Ths, 3, S)),
    %% Nothing measured yet: no abort.
    ?assertEqual(continue, ?T:check(Ths, 5, source(50000, 0, 0))).
