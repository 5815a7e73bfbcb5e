%% Request names (issue 39, the per-request table): a label names a request; without, an HTTP
%% request is its method and path as written, another kind its kind and type; beyond the
%% bound, `other'. And the figures a user records under the name it runs.
-module(beamscale_load_reqname_tests).

-include_lib("eunit/include/eunit.hrl").

-define(HEAD, "{targets, [{sut, #{node => 'a@127.0.0.1'}},\n"
              " {web, #{address => \"127.0.0.1:80\"}}]}.\n"
              "{phases, [{p1, #{duration_s => 2, rate => 10}}]}.\n").

prepared(Steps) ->
    {ok, Entries} = beamscale_format_terms:parse(
                      ?HEAD ++ "{sessions, [{s, #{steps => [" ++ Steps ++ "]}}]}.\n"),
    {ok, S} = beamscale_load_scenario:check("s.scenario", Entries),
    beamscale_load_reqname:prepare(S).

names_test() ->
    S = prepared("{http, #{target => web, path => \"/a?q=1\"}}, "
                 "{http, #{target => web, method => post, path => \"/item/%%_id%%\"}}, "
                 "{loop, 2, [{http, #{target => web, label => \"login\"}}]}, "
                 "{rpc, #{target => sut, call => {m, f, []}}}, "
                 "{http, #{target => web, path => \"/a?q=1\"}}"),
    ?assertEqual([<<"GET /a?q=1">>, <<"POST /item/%%_id%%">>, <<"login">>, <<"rpc call">>],
                 beamscale_load_reqname:names(S)),
    %% Each request once in a name: a dynamic request keeps its `dyn' inside the name.
    #{sessions := [#{steps := [_, {named, _, {dyn, _, {request, _, _, _, _}}},
                               {loop, 2, [{named, <<"login">>, {request, _, _, _, _}}]}, _, _]}]}
        = S.

bound_test() ->
    Max = beamscale_load_reqname:max_names(),
    Steps = lists:join(", ", [io_lib:format("{http, #{target => web, path => \"/~b\"}}", [I])
                              || I <- lists:seq(1, Max + 5)]),
    Names = beamscale_load_reqname:names(prepared(lists:flatten(Steps))),
    ?assertEqual(Max + 1, length(Names)),
    ?assertEqual(<<"other">>, lists:last(Names)),
    ?assertEqual(<<"GET /1">>, hd(Names)).

long_and_bad_labels_test() ->
    Long = lists:duplicate(100, $x),
    [<<"GET /", _/binary>> = N] = beamscale_load_reqname:names(
                                    prepared("{http, #{target => web, path => \"/" ++ Long ++
                                                 "\"}}")),
    ?assertEqual(60, string:length(N)),
    {ok, Entries} = beamscale_format_terms:parse(
                      ?HEAD ++ "{sessions, [{s, #{steps => [{http, #{target => web, label => "
                      "\"" ++ Long ++ "\"}}]}}]}.\n"),
    {error, E} = beamscale_load_scenario:check("s.scenario", Entries),
    ?assertMatch({match, _}, re:run(lists:flatten(beamscale_load_scenario:format_error(E)),
                                    "label.*1 to 60 characters")).

%% What a user records while a name runs is counted under it: requests, errors, bytes and the
%% latency; outside a name only the run's figures. Merged over two agents, the counts add.
metrics_test() ->
    M = beamscale_load_metrics:new([]),
    ok = beamscale_load_metrics:start_request(M, <<"a">>),
    [beamscale_load_metrics:record(M, latency, erlang:convert_time_unit(Us, microsecond, native))
     || Us <- [1000, 2000, 30000]],
    ok = beamscale_load_metrics:add(M, bytes_received, 500),
    ok = beamscale_load_metrics:error(M, timeout),
    ok = beamscale_load_metrics:stop_request(),
    ok = beamscale_load_metrics:error(M, timeout),
    ok = beamscale_load_metrics:add(M, bytes_received, 7),
    #{by_name := #{<<"a">> := A} = ByName, errors := 2, bytes_received := 507} = I =
        beamscale_load_metrics:take(M),
    ?assertEqual([<<"a">>], maps:keys(ByName)),
    #{requests := 1, errors := 1, bytes_received := 500, bytes_sent := 0, latency := L} = A,
    ?assertEqual(3, beamscale_stats_hist:count(L)),
    ?assert(abs(beamscale_stats_hist:percentile(L, 99) - 30000) =< 30),
    ?assert(abs(beamscale_stats_hist:max(L) - 30000) =< 30),
    ?assertEqual(11000.0, beamscale_stats_hist:mean(L)),
    %% Taken: the next interval starts empty.
    ?assertEqual(#{}, maps:get(by_name, beamscale_load_metrics:take(M))),
    #{by_name := #{<<"a">> := #{requests := 2, latency := L2}}} =
        beamscale_load_metrics:merge(I, I),
    ?assertEqual(6, beamscale_stats_hist:count(L2)).

%% A Tsung file's HTTP requests are named by method and URL as written, the substituted ones by
%% their template (as Tsung's per-request table groups them by URL).
tsung_test() ->
    Xml = "<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">"
          "<servers><server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/></servers>"
          "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
          "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load><sessions>"
          "<session name=\"s\" probability=\"100\" type=\"ts_http\">"
          "<setdynvars sourcetype=\"random_number\" start=\"1\" end=\"9\">"
          "<var name=\"id\"/></setdynvars>"
          "<request subst=\"true\"><http url=\"/item/%%_id%%\" method=\"GET\"/></request>"
          "<request><http url=\"/login\" method=\"POST\" contents=\"a=1\"/></request>"
          "</session></sessions></tsung>\n",
    {ok, S, _} = beamscale_load_tsung:from_text("t.xml", Xml),
    ?assertEqual([<<"GET /item/%%_id%%">>, <<"POST /login">>],
                 beamscale_load_reqname:names(beamscale_load_reqname:prepare(S))).
