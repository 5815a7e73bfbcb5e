%% Tags (issue 49): a request's and a session's `tags' checked when the scenario is read (type,
%% key, count, named by file, line and key), kept as `key=value' pairs, a session's inherited by
%% its requests, and a tagged request's figures counted under each of its pairs.
-module(beamscale_load_tags_tests).

-include_lib("eunit/include/eunit.hrl").

-define(HEAD, "{targets, [{web, #{address => \"127.0.0.1:80\"}}]}.\n"
              "{phases, [{p1, #{duration_s => 2, rate => 10}}]}.\n").

checked(Sessions) ->
    {ok, Entries} = beamscale_format_terms:parse(?HEAD ++ "{sessions, " ++ Sessions ++ "}.\n"),
    beamscale_load_scenario:check("s.scenario", Entries).

error_text(Sessions) ->
    {error, {M, E}} = checked(Sessions),
    lists:flatten(M:format_error(E)).

request_tags_test() ->
    {ok, #{sessions := [#{steps := Steps}]}} =
        checked("[{s, #{steps => [{http, #{target => web, label => \"pay\", "
                "tags => #{flow => \"checkout\", \"tier\" => \"gold\"}}}, "
                "{http, #{target => web}}]}}]"),
    ?assertMatch([{tagged, [<<"flow=checkout">>, <<"tier=gold">>],
                   {named, <<"pay">>, {request, _, _, _, _}}},
                  {request, _, _, _, _}], Steps).

session_tags_test() ->
    {ok, #{sessions := [#{steps := Steps}]}} =
        checked("[{s, #{tags => #{flow => \"browse\", team => \"a\"}, steps => ["
                "{http, #{target => web, tags => #{flow => \"checkout\"}}}, "
                "{loop, 2, [{http, #{target => web}}]}]}}]"),
    %% The request's own value of `flow' wins; the loop's request inherits both.
    ?assertMatch([{tagged, [<<"flow=checkout">>, <<"team=a">>], {request, _, _, _, _}},
                  {loop, 2, [{tagged, [<<"flow=browse">>, <<"team=a">>],
                              {request, _, _, _, _}}]}], Steps).

refused_test_() ->
    Req = fun(Tags) -> "[{s, #{steps => [{http, #{target => web, tags => " ++ Tags
                           ++ "}}]}}]" end,
    [?_assertMatch({match, _}, re:run(error_text(S), Re))
     || {S, Re} <- [{Req("[flow]"), "s.scenario:3: key sessions.s.steps.http.tags: expected #"},
                    {Req("#{flow => checkout}"), "tags.flow: a tag's value is a string"},
                    {Req("#{\"9x\" => \"a\"}"), "tags.\"9x\": a tag's key is a label name"},
                    {Req("#{le => \"a\"}"), "a tag's key is a label name"},
                    {Req("#{flow => \"\"}"), "tags.flow: expected printable text"},
                    {Req(many(9)), "at most 8 tags a request"},
                    {Req("#{flow => \"a\", \"flow\" => \"b\"}"), "a key given twice"},
                    {"[{s, #{tags => " ++ many(5) ++ ", steps => [{http, #{target => web, "
                     "tags => #{a => \"1\", b => \"2\", c => \"3\", d => \"4\"}}}]}}]",
                     "sessions.s.tags: at most 8 tags a request, the session's with"},
                    {"[{s, #{tags => x, steps => []}}]", "sessions.s.tags: expected #"}]].

%% 65 distinct pairs over the run's requests: refused, the bound named.
run_bound_test() ->
    Steps = lists:join(", ", [io_lib:format("{http, #{target => web, tags => #{k => \"~b\"}}}",
                                            [I]) || I <- lists:seq(1, 65)]),
    ?assertMatch({match, _}, re:run(error_text(lists:flatten(["[{s, #{steps => [", Steps,
                                                              "]}}]"])),
                                    "65 distinct tag pairs, at most 64 a run")).

many(N) ->
    lists:flatten(["#{", lists:join(", ", [io_lib:format("k~b => \"v\"", [I])
                                           || I <- lists:seq(1, N)]), "}"]).

%% A tagged request is counted under its name and each pair; an untagged one under its name.
figures_test() ->
    M = beamscale_load_metrics:new([]),
    ok = beamscale_load_metrics:start_request(M, <<"a">>, [<<"flow=x">>, <<"tier=1">>]),
    ok = beamscale_load_metrics:record(M, latency, erlang:convert_time_unit(
                                                     3000, microsecond, native)),
    ok = beamscale_load_metrics:error(M, timeout),
    ok = beamscale_load_metrics:stop_request(),
    ok = beamscale_load_metrics:start_request(M, <<"a">>),
    ok = beamscale_load_metrics:stop_request(),
    #{by_name := ByName, by_tag := ByTag} = beamscale_load_metrics:take(M),
    ?assertMatch(#{<<"a">> := #{requests := 2, errors := 1}}, ByName),
    ?assertEqual([<<"flow=x">>, <<"tier=1">>], lists:sort(maps:keys(ByTag))),
    #{requests := 1, errors := 1, latency := L} = maps:get(<<"flow=x">>, ByTag),
    ?assertEqual(1, beamscale_stats_hist:count(L)),
    ?assertEqual({<<"flow">>, <<"a=b">>}, beamscale_load_tags:split(<<"flow=a=b">>)).
