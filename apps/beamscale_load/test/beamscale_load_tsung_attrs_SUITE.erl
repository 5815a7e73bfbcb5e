%% Tsung attributes read as Tsung reads them (issue #48), against servers on 127.0.0.1 started
%% here: `<arrivalphase wait_all_sessions_end>' (nginx's access log says the next phase's first
%% request came after the phase's last), `<http_header encoding="base64">' (nginx logs the
%% header as received) and `<websocket ack="parse">' (websocketd echoing: the reply awaited).
-module(beamscale_load_tsung_attrs_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([wait_all_sessions_end/1, header_base64/1, header_encoding_refused/1,
         websocket_ack_parse/1]).
-export([wait_all_sessions_end/0, header_base64/0, header_encoding_refused/0,
         websocket_ack_parse/0]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [wait_all_sessions_end, header_base64, header_encoding_refused, websocket_ack_parse].

%% The access log keeps each request's URI and its X-Token header as received, in the order
%% nginx answered them.
init_per_suite(Config) ->
    beamscale_load_servers:nginx_suite(Config, "tsung_attrs_nginx",
                                       "$status|$request_uri|$http_x_token",
                                       "    location / { return 200 'hello'; }\n").

end_per_suite(Config) ->
    (?config(nginx, Config))(),
    ok.

wait_all_sessions_end() ->
    [{doc, "Phase 1 waits for its users' end (each thinks 1.5 s between two requests): every "
           "request of phase 2's session is answered after every phase 1 session's last."}].
wait_all_sessions_end(Config) ->
    Sessions =
        "<session name=\"a\" probability=\"50\" type=\"ts_http\">"
        "<request><http url=\"/a1\"/></request><thinktime value=\"1.5\"/>"
        "<request><http url=\"/a2\"/></request></session>"
        "<session name=\"b\" probability=\"50\" type=\"ts_http\">"
        "<request><http url=\"/b\"/></request></session>",
    Load = "<arrivalphase phase=\"1\" duration=\"1\" unit=\"second\" "
           "wait_all_sessions_end=\"true\">"
           "<users interarrival=\"0.2\" unit=\"second\"/>"
           "<session_setup name=\"a\" probability=\"100\"/></arrivalphase>"
           "<arrivalphase phase=\"2\" duration=\"1\" unit=\"second\">"
           "<users interarrival=\"0.2\" unit=\"second\"/>"
           "<session_setup name=\"b\" probability=\"100\"/></arrivalphase>",
    {ok, S, _} = beamscale_load_tsung:from_text("wait.xml", xml(Config, Load, Sessions)),
    ?assertMatch([#{wait_sessions_end := true}, #{name := phase2}], maps:get(phases, S)),
    ?assertNot(maps:is_key(wait_sessions_end, lists:last(maps:get(phases, S)))),
    #{total := T} = beamscale_load_servers:run(S),
    ?assertEqual(0, maps:get(errors, T), maps:get(reasons, T)),
    Log = log(Config, maps:get(requests, T)),
    Uris = [U || {_, U, _} <- Log],
    A2 = [I || {I, "/a2"} <- lists:enumerate(Uris)],
    B = [I || {I, "/b"} <- lists:enumerate(Uris)],
    ?assertEqual(length(A2), length([U || U <- Uris, U =:= "/a1"])),
    ?assert(A2 =/= [] andalso B =/= [], Uris),
    %% Not one of phase 2's requests before phase 1's last session ended.
    ?assert(lists:max(A2) < lists:min(B), Uris).

header_base64() ->
    [{doc, "<http_header encoding=\"base64\">: nginx receives the Base64 of the value's UTF-8 "
           "bytes, 0 errors."}].
header_base64(Config) ->
    Value = "user one:p\x{e4}ss",
    Sessions = "<session name=\"s\" probability=\"100\" type=\"ts_http\">"
               "<request><http url=\"/h\"><http_header name=\"X-Token\" encoding=\"base64\" "
               "value=\"" ++ Value ++ "\"/></http></request></session>",
    %% As read from a file: UTF-8 bytes.
    Xml = binary_to_list(unicode:characters_to_binary(xml(Config, one_phase(), Sessions))),
    {ok, S, _} = beamscale_load_tsung:from_text("h.xml", Xml),
    #{total := T} = beamscale_load_servers:run(S),
    ?assertEqual(0, maps:get(errors, T), maps:get(reasons, T)),
    Want = base64:encode_to_string(unicode:characters_to_binary(Value)),
    Sent = [H || {_, "/h", H} <- log(Config, maps:get(requests, T))],
    ?assertEqual(lists:duplicate(maps:get(requests, T), Want), Sent).

header_encoding_refused() ->
    [{doc, "A placeholder under encoding=\"base64\" (Tsung would send it encoded, unfilled) and "
           "an encoding Tsung does not know are refused at the header's line."}].
header_encoding_refused(Config) ->
    Refused = fun(Header) ->
                      Sessions = "<session name=\"s\" probability=\"100\" type=\"ts_http\">"
                                 "<request subst=\"true\"><http url=\"/h\">\n" ++ Header ++
                                 "</http></request></session>",
                      beamscale_load_tsung:from_text("h.xml", xml(Config, one_phase(), Sessions))
              end,
    {error, E1} = Refused("<http_header name=\"X\" encoding=\"base64\" value=\"%%_u%%\"/>"),
    Msg1 = lists:flatten(beamscale_load_tsung:format_error(E1)),
    ?assertMatch({match, _}, re:run(Msg1, "^h\\.xml:[0-9]+: <http_header encoding=\"base64\"> "
                                          "with %% in its value")),
    {error, E2} = Refused("<http_header name=\"X\" encoding=\"hex\" value=\"a\"/>"),
    Msg2 = lists:flatten(beamscale_load_tsung:format_error(E2)),
    ?assertMatch({match, _}, re:run(Msg2,
                                    "^h\\.xml:[0-9]+: <http_header encoding=\"hex\"> \\(Tsung "
                                    "knows base64 only\\)")).

websocket_ack_parse() ->
    [{doc, "<websocket type=\"message\" ack=\"parse\">, Tsung's default: the echoed reply is "
           "awaited and matched (websocketd running cat), 0 errors."}].
websocket_ack_parse(Config) ->
    Port = beamscale_load_servers:free_port(),
    Stop = beamscale_load_servers:websocketd(
             beamscale_load_servers:tmp_dir(Config, "attrs_websocketd"), Port, [], ["cat"]),
    Sessions = "<session name=\"s\" probability=\"100\" type=\"ts_websocket\">"
               "<request><websocket type=\"connect\" path=\"/\"/></request>"
               "<request><match do=\"abort\" when=\"nomatch\" name=\"e\">hello</match>"
               "<websocket type=\"message\" ack=\"parse\">hello</websocket></request>"
               "</session>",
    try
        Xml = xml(Port, one_phase(), Sessions),
        {ok, S, _} = beamscale_load_tsung:from_text("ws.xml", Xml),
        #{total := T} = beamscale_load_servers:run(S),
        ?assertEqual(2, maps:get(sessions_done, T)),
        ?assertEqual(0, maps:get(errors, T), maps:get(reasons, T)),
        ?assertMatch(#{<<"match.e">> := 2}, maps:get(counts, T))
    after
        Stop()
    end.

one_phase() ->
    "<arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
    "<users maxnumber=\"2\" interarrival=\"0.1\" unit=\"second\"/></arrivalphase>".

%% A Tsung file to nginx (or to 127.0.0.1:`Port').
xml(Port, Load, Sessions) when is_integer(Port) ->
    lists:flatten(io_lib:format(
      "<?xml version=\"1.0\"?>\n<tsung>\n"
      "<clients><client host=\"localhost\" use_controller_vm=\"true\"/></clients>\n"
      "<servers><server host=\"127.0.0.1\" port=\"~b\" type=\"tcp\"/></servers>\n"
      "<load>~ts</load>\n<sessions>~ts</sessions>\n</tsung>\n", [Port, Load, Sessions]));
xml(Config, Load, Sessions) -> xml(?config(port, Config), Load, Sessions).

%% The access log's last `N' lines as `{Status, Uri, XToken}' (nginx writes each line once it
%% answered, the run is over then).
log(Config, N) ->
    {ok, Bin} = file:read_file(filename:join(?config(dir, Config), "access.log")),
    Lines = [list_to_tuple(string:split(L, "|", all))
             || L <- string:split(unicode:characters_to_list(Bin), "\n", all), L =/= ""],
    lists:nthtail(max(0, length(Lines) - N), Lines).
