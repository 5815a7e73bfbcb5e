%% CR or LF written into a request line or header is refused where it is written (terms or Tsung
%% XML, FILE:LINE and key), and a variable holding one is refused when the head is filled.
-module(beamscale_load_injection_tests).

-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

-define(HEAD, "{targets, [{t, #{address => \"127.0.0.1:8080\"}}]}.\n"
              "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n").

terms(Step) ->
    {ok, Entries} = beamscale_format_terms:parse(?HEAD ++ "{sessions, [{s, #{steps =>\n[" ++
                                                     Step ++ "]}}]}.\n"),
    beamscale_load_scenario:check("s.scenario", Entries).

refused({error, {beamscale_load_scenario, {File, Line, Path, Msg}}}) ->
    {File, Line, lists:last(Path), string:find(Msg, "CR or LF") =/= nomatch}.

terms_path_test() ->
    ?assertEqual({"s.scenario", 4, path, true},
                 refused(terms("{http, #{path => \"/a\\r\\nX-Evil: 1\"}}"))).

terms_header_test() ->
    ?assertEqual({"s.scenario", 4, headers, true},
                 refused(terms("{http, #{headers => [{\"X\", \"b\\nGET /x HTTP/1.1\"}]}}"))).

terms_websocket_path_test() ->
    ?assertEqual({"s.scenario", 4, path, true},
                 refused(terms("{websocket, #{type => connect, path => \"/\\r\\n\"}}"))).

%% Only where it splits a line: a body may hold any byte.
terms_body_accepted_test() ->
    ?assertMatch({ok, _}, terms("{http, #{method => post, body => <<\"a\\r\\nb\">>}}")).

tsung_path_test() ->
    Xml = "<?xml version=\"1.0\"?>\n<tsung>\n"
          "<servers><server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/></servers>\n"
          "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
          "<users arrivalrate=\"1\" unit=\"second\"/></arrivalphase></load>\n"
          "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\">\n"
          "<request><http url=\"/a&#13;&#10;X-Evil: 1\" method=\"GET\"/></request>\n"
          "</session></sessions></tsung>\n",
    %% The request's line, or its session's (line 5) where the converter names that.
    {File, Line, Key, Said} = refused(beamscale_load_tsung:from_text("t.xml", Xml)),
    ?assertEqual({"t.xml", path, true}, {File, Key, Said}),
    ?assert(lists:member(Line, [5, 6])).

%% A value from a reply (a hostile server's) with CR LF: the head is not filled.
variable_test() ->
    {dynamic, _} = T = beamscale_load_vars:compile(<<"GET %%_p%% HTTP/1.1\r\n">>),
    ?assertEqual({crlf, <<"p">>},
                 beamscale_load_vars:fill_head(T, #{<<"p">> => <<"/a\r\nGET /smuggled">>})),
    ?assertMatch({_, []}, beamscale_load_vars:fill_head(T, #{<<"p">> => <<"/a">>})).
