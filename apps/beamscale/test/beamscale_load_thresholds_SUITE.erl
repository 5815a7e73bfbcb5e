%% `beamscale load --threshold' through the command line, as a CI script runs it: a server of a
%% known service time (beamscale_target_workers, 50 ms a request, workers enough that requests
%% do not queue), loads that pass, fail at the end (exit 1) or abort (exit 99) on their
%% thresholds; the table on the console, in summary.json and on the page; bad ones: exit 2.
-module(beamscale_load_thresholds_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([fails/1, aborts/1, passes/1, from_scenario/1, refused/1]).
-export([fails/0, aborts/0, passes/0, from_scenario/0, refused/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [fails, aborts, passes, from_scenario, refused].

init_per_suite(Config) -> Config.

end_per_suite(_Config) ->
    ok = beamscale_test_cli:no_strays().

scenario(Config, Name, Seconds, Extra) ->
    File = filename:join(?config(priv_dir, Config), Name ++ ".scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{sut, #{start => #{erl => \"erl\", flags => \"+sbwt none\",~n"
        "    init => {beamscale_target_workers, start, [32, 50]}}}}]}.~n"
        "{phases, [{main, #{duration_s => ~b, rate => 20}}]}.~n"
        "{sessions, [{one, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []},~n"
        "                                      timeout_ms => 5000}}]}}]}.~n"
        "{drain_s, 1}.~n~ts", [Seconds, Extra])),
    File.

load(Config, Name, Scenario, Args) ->
    Out = ?config(priv_dir, Config),
    Result = beamscale_test_cli:run(["load", Scenario, "--name", Name, "--out", Out, "--quiet"
                                     | Args]),
    {Result, filename:join(Out, Name)}.

thresholds(Dir) ->
    {ok, Bin} = file:read_file(filename:join(Dir, "summary.json")),
    {ok, Summary} = beamscale_format_json:decode(Bin),
    Summary.

fails() -> [{doc, "p95<20ms of a 50 ms server: exit 1 at the end, the table says FAIL and "
             "the measured p95, summary.json and the page have it."}].
fails(Config) ->
    Sc = scenario(Config, "fails", 3, ""),
    {{1, Text}, Dir} = load(Config, "fails", Sc, ["--threshold", "p95<20ms"]),
    ct:log("~ts", [Text]),
    ?assertMatch({match, _}, re:run(Text, "FAIL  p95<20ms  [0-9]+\\.[0-9]+ ms")),
    ?assertMatch({match, _}, re:run(Text, "thresholds failed: p95<20ms")),
    #{<<"thresholds">> := [T], <<"stopped">> := <<"done">>} = thresholds(Dir),
    ?assertMatch(#{<<"threshold">> := <<"p95<20ms">>, <<"ok">> := false}, T),
    ?assert(maps:get(<<"value">>, T) >= 50),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertMatch({match, _}, re:run(Html, "<tr class=\"fail\"><td class=\"t\">FAIL</td>"
                                          "<td class=\"t\">"
                                          "p95&lt;20ms</td>")).

aborts() -> [{doc, "p95<20ms:abort=2s stops at the first evaluation after 2 s (a 10 s load), "
              "writes its summary and page, exits 99."}].
aborts(Config) ->
    Sc = scenario(Config, "aborts", 10, ""),
    {{99, Text}, Dir} = load(Config, "aborts", Sc, ["--threshold", "p95<20ms:abort=2s",
                                                   "--threshold", "p95<500ms"]),
    ?assertMatch({match, _}, re:run(Text, "aborted by the threshold p95<20ms:abort=2s")),
    ?assertMatch({match, _}, re:run(Text, "pass  p95<500ms ")),
    #{<<"stopped">> := <<"aborted">>, <<"duration_s">> := D,
      <<"aborted_by">> := [<<"p95<20ms:abort=2s">>]} = thresholds(Dir),
    %% The first failing evaluation is the one after second 2: within 2 s of it.
    ?assert(D >= 2.0 andalso D < 4.0),
    ?assert(filelib:is_regular(filename:join(Dir, "index.html"))).

passes() -> [{doc, "p95<500ms, errors<1%, rate>10/s of that server: exit 0, all pass."}].
passes(Config) ->
    Sc = scenario(Config, "passes", 3, ""),
    {{0, Text}, Dir} = load(Config, "passes", Sc, ["--threshold", "p95<500ms",
                                                   "--threshold", "errors<1%",
                                                   "--threshold", "rate>10/s"]),
    ?assertEqual(3, length(binary:matches(list_to_binary(Text), <<"pass  ">>))),
    #{<<"thresholds">> := Ts} = thresholds(Dir),
    ?assertEqual([true, true, true], [Ok || #{<<"ok">> := Ok} <- Ts]).

from_scenario() -> [{doc, "A scenario's thresholds key counts as the command line's."}].
from_scenario(Config) ->
    Sc = scenario(Config, "keyed", 2, "{thresholds, [\"mean<10ms\"]}.\n"),
    {{1, Text}, _Dir} = load(Config, "keyed", Sc, []),
    ?assertMatch({match, _}, re:run(Text, "FAIL  mean<10ms  [0-9]+\\.[0-9]+ ms")).

refused() -> [{doc, "A bad expression: one line naming the option or the file and line, exit "
               "2, before any load."}].
refused(Config) ->
    Sc = scenario(Config, "refused", 2, ""),
    {{2, Opt}, Dir} = load(Config, "refused", Sc, ["--threshold", "p95<3%"]),
    ?assertMatch({match, _}, re:run(Opt, "option --threshold \"p95<3%\": a latency is in us")),
    ?assertEqual(1, length(string:split(string:trim(Opt), "\n", all))),
    ?assertNot(filelib:is_dir(Dir)),
    Bad = scenario(Config, "refused_file", 2, "\n{thresholds, [\"p95<1s\", \"errors<1\"]}.\n"),
    {{2, File}, _} = load(Config, "refused_file", Bad, []),
    ?assertMatch({match, _}, re:run(File, "refused_file.scenario:8: key thresholds: threshold "
                                          "2, \"errors<1\": errors is a share")).
