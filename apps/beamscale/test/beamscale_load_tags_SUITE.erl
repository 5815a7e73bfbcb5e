%% `beamscale load' of a scenario whose requests carry tags (issue 49), through the command
%% line: a server of a known service time (beamscale_target_workers, 50 ms a request) called by
%% a request tagged `flow => "slow"' and a quick call tagged `flow => "fast"' (both `team => "a"'
%% from their session). The figures by tag in summary.json and tags.csv, a threshold on each
%% tag (the slow one fails: exit 1; the fast one passes), and the `--metrics' endpoint scraped
%% while the load runs, its per-tag series labelled by the tag's key.
-module(beamscale_load_tags_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([by_tag/1, aborts/1, scraped/1]).
-export([by_tag/0, aborts/0, scraped/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [by_tag, aborts, scraped].

init_per_suite(Config) ->
    {ok, _} = application:ensure_all_started(inets),
    Config.

end_per_suite(_Config) ->
    ok = beamscale_test_cli:no_strays().

scenario(Config, Name, Seconds) ->
    File = filename:join(?config(priv_dir, Config), Name ++ ".scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{sut, #{start => #{erl => \"erl\", flags => \"+sbwt none\",~n"
        "    init => {beamscale_target_workers, start, [32, 50]}}}}]}.~n"
        "{phases, [{main, #{duration_s => ~b, rate => 10}}]}.~n"
        "{sessions, [{one, #{tags => #{team => \"a\"}, steps => [~n"
        "    {rpc, #{call => {beamscale_target_workers, request, []}, timeout_ms => 5000,~n"
        "            tags => #{flow => \"slow\"}}},~n"
        "    {rpc, #{call => {erlang, node, []}, tags => #{flow => \"fast\"}}}]}}]}.~n"
        "{drain_s, 1}.~n", [Seconds])),
    File.

by_tag() -> [{doc, "Each request is counted under its own tag and the session's: summary.json's "
              "requests_by_tag, tags.csv; p95{tag:flow=slow}<20ms fails (exit 1), "
              "p95{tag:flow=fast}<20ms passes."}].
by_tag(Config) ->
    Out = ?config(priv_dir, Config),
    Sc = scenario(Config, "by_tag", 3),
    {1, Text} = beamscale_test_cli:run(["load", Sc, "--name", "by_tag", "--out", Out, "--quiet",
                                        "--threshold", "p95{tag:flow=slow}<20ms",
                                        "--threshold", "p95{tag:flow=fast}<20ms"]),
    ct:log("~ts", [Text]),
    ?assertMatch({match, _}, re:run(Text, "FAIL  p95\\{tag:flow=slow\\}<20ms")),
    ?assertMatch({match, _}, re:run(Text, "pass  p95\\{tag:flow=fast\\}<20ms")),
    Dir = filename:join(Out, "by_tag"),
    {ok, Bin} = file:read_file(filename:join(Dir, "summary.json")),
    {ok, #{<<"requests_by_tag">> := ByTag, <<"requests">> := All,
           <<"thresholds">> := [Slow, Fast]}} = beamscale_format_json:decode(Bin),
    ?assertEqual([<<"flow=fast">>, <<"flow=slow">>, <<"team=a">>], lists:sort(maps:keys(ByTag))),
    Count = fun(T) -> maps:get(<<"requests">>, maps:get(T, ByTag)) end,
    %% 10 sessions a second for 3 s (Poisson arrivals, the target node starting), each a slow
    %% and a fast request: some counted; the equalities below are the check.
    ?assert(Count(<<"flow=slow">>) >= 5),
    ?assertEqual(Count(<<"flow=slow">>), Count(<<"flow=fast">>)),
    ?assertEqual(All, Count(<<"team=a">>)),
    ?assertEqual(All, Count(<<"flow=slow">>) + Count(<<"flow=fast">>)),
    ?assert(maps:get(<<"p50_ms">>, maps:get(<<"flow=slow">>, ByTag)) >= 50),
    ?assertMatch(#{<<"ok">> := false}, Slow),
    ?assertMatch(#{<<"ok">> := true}, Fast),
    {ok, Csv} = file:read_file(filename:join(Dir, "tags.csv")),
    [Header | Rows] = string:split(string:trim(Csv), "\n", all),
    ?assertMatch(<<"tag,requests,errors,", _/binary>>, Header),
    ?assertEqual(3, length(Rows)),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertMatch({match, _}, re:run(Html, "By tag.*flow=slow", [dotall])).

aborts() -> [{doc, "A tag's threshold is evaluated each second: p95{tag:flow=slow}<20ms:abort=1s "
              "stops a 10 s load early, exit 99."}].
aborts(Config) ->
    Out = ?config(priv_dir, Config),
    Sc = scenario(Config, "aborts", 10),
    {99, Text} = beamscale_test_cli:run(["load", Sc, "--name", "aborts", "--out", Out,
                                         "--quiet", "--threshold",
                                         "p95{tag:flow=slow}<20ms:abort=1s"]),
    ?assertMatch({match, _}, re:run(Text, "aborted by the threshold p95\\{tag:flow=slow\\}")),
    {ok, Bin} = file:read_file(filename:join([Out, "aborts", "summary.json"])),
    {ok, #{<<"stopped">> := <<"aborted">>, <<"duration_s">> := D}} =
        beamscale_format_json:decode(Bin),
    ?assert(D < 5.0).

scraped() -> [{doc, "With --metrics, /metrics has the per-tag counters and latency buckets, a "
               "series a declared pair labelled by the tag's key, while the load runs."}].
scraped(Config) ->
    Out = ?config(priv_dir, Config),
    Sc = scenario(Config, "scraped", 6),
    Port = free_port(),
    Load = beamscale_test_cli:open(["load", Sc, "--name", "scraped", "--out", Out, "--quiet",
                                    "--metrics", integer_to_list(Port)]),
    ok = wait_for(fun() -> tag_requests(Port, "flow=\"slow\"") >= 10 end, 60000),
    Text = metrics(Port),
    ct:log("~ts", [Text]),
    %% One scrape: the session's tag counts each of its requests, so team=a is slow + fast (a
    %% session in flight may have sent its slow request and not yet its fast one).
    [Slow, Fast, Team] = [count(Text, L) || L <- ["flow=\"slow\"", "flow=\"fast\"",
                                                    "team=\"a\""]],
    ?assert(Slow >= 10),
    ?assertEqual(Slow + Fast, Team),
    ?assertMatch({match, _}, re:run(Text, "^# TYPE beamscale_load_tag_latency_seconds histogram$",
                                    [multiline])),
    ?assertMatch({match, _}, re:run(Text, "^beamscale_load_tag_latency_seconds_bucket"
                                          "\\{flow=\"fast\",le=\"\\+Inf\"\\} [1-9]",
                                    [multiline])),
    ?assertMatch({match, _}, re:run(Text, "^beamscale_load_tag_errors_total\\{flow=\"slow\"\\} 0$",
                                    [multiline])),
    %% The run's own histogram has no tag label.
    ?assertMatch(nomatch, re:run(Text, "beamscale_load_latency_seconds_bucket\\{flow")),
    {0, _} = beamscale_test_cli:wait(Load, 60000).

tag_requests(Port, Label) -> count(metrics(Port), Label).

count(Text, Label) ->
    case re:run(Text, "^beamscale_load_tag_requests_total\\{" ++ Label ++ "\\} ([0-9]+)$",
                [multiline, {capture, all_but_first, list}]) of
        {match, [N]} -> list_to_integer(N);
        nomatch -> 0
    end.

metrics(Port) ->
    case httpc:request(get, {"http://127.0.0.1:" ++ integer_to_list(Port) ++ "/metrics", []},
                       [{timeout, 2000}], [{body_format, binary}]) of
        {ok, {{_, 200, _}, _, Body}} -> Body;
        _ -> <<>>
    end.

wait_for(_F, Ms) when Ms =< 0 -> timeout;
wait_for(F, Ms) ->
    case F() of
        true -> ok;
        false -> timer:sleep(500), wait_for(F, Ms - 500)
    end.

free_port() ->
    {ok, S} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, P} = inet:port(S),
    gen_tcp:close(S),
    P.
