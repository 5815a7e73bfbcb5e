%% Tsung XML of the raw and websocket session types and of TLS servers, to scenario steps; and
%% the terms format's tls and transport target keys.
-module(beamscale_load_tsung_kinds_tests).

-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

xml(Server, Type, Body) ->
    lists:flatten(["<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">\n",
                   "<servers>", Server, "</servers>\n",
                   "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
                   "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n",
                   "<sessions><session name=\"s\" probability=\"100\" type=\"", Type, "\">\n",
                   Body, "</session></sessions>\n</tsung>\n"]).

server(Type) -> "<server host=\"127.0.0.1\" port=\"7\" type=\"" ++ Type ++ "\"/>".

load(Text) ->
    case beamscale_load_tsung:from_text("t.xml", Text) of
        {ok, S, _} -> S;
        {error, {Mod, _} = E} -> {error, lists:flatten(Mod:format_error(E))}
    end.

steps(#{sessions := [#{steps := Steps}]}) -> Steps.

raw_test() ->
    S = load(xml(server("tcp"), "ts_raw",
                 "<request><raw data=\"HELO\" ack=\"local\"/></request>\n"
                 "<request><raw datasize=\"3\" ack=\"no_ack\"/></request>\n"
                 "<request><raw data=\"x\"/></request>")),
    ?assertMatch([{request, beamscale_load_raw, server, #{send := <<"HELO">>, ack := local}, _},
                  {request, beamscale_load_raw, server, #{send := <<0, 0, 0>>, ack := no_ack}, _},
                  {request, beamscale_load_raw, server, #{send := <<"x">>, ack := local}, _}],
                 steps(S)),
    ?assertEqual(#{server => #{host => "127.0.0.1", port => 7, max_retries => 3,
                                   connect_timeout_ms => 30000}},
                 maps:get(targets, S)).

raw_udp_and_ssl_test() ->
    Body = "<request><raw data=\"a\"/></request>",
    ?assertMatch(#{server := #{transport := udp}}, maps:get(targets, load(xml(server("udp"),
                                                                               "ts_raw", Body)))),
    #{server := #{tls := Tls}} = maps:get(targets, load(xml(server("ssl"), "ts_raw", Body))),
    %% Tsung does not check the server's certificate.
    ?assertEqual(verify_none, proplists:get_value(verify, Tls)).

raw_errors_test() ->
    Err = fun(Server, Body) -> load(xml(server(Server), "ts_raw", Body)) end,
    ?assertEqual({error, "t.xml:6: ack=\"global\" needs <option name=\"global_number\" "
                         "value=\"N\">: how many users meet there"},
                 Err("tcp", "<request><raw data=\"a\" ack=\"global\"/></request>")),
    ?assertEqual({error, "t.xml:6: <raw> needs data or datasize"},
                 Err("tcp", "<request><raw ack=\"local\"/></request>")),
    ?assertEqual({error, "t.xml:6: <raw> has both data and datasize"},
                 Err("tcp", "<request><raw data=\"a\" datasize=\"2\"/></request>")),
    ?assertMatch({error, "t.xml:6: datasize: expected a size above 0; at most 16777216 bytes"},
                 Err("tcp", "<request><raw datasize=\"999999999\"/></request>")),
    ?assertMatch({error, "t.xml:6: data: at most 65507 bytes"},
                 Err("udp", ["<request><raw data=\"", lists:duplicate(70000, $a),
                             "\"/></request>"])),
    ?assertMatch({error, "t.xml:3: server type \"quic\" is not supported for <raw>" ++ _},
                 Err("quic", "<request><raw data=\"a\"/></request>")),
    ?assertMatch({error, "t.xml:6: <http> in a session of type ts_raw"},
                 Err("tcp", "<request><http url=\"/\"/></request>")).

https_url_test() ->
    S = load(xml(server("tcp"), "ts_http",
                 "<request><http url=\"https://example.org/a\"/></request>")),
    %% Tsung keeps cookies: an http request is a dynamic one around the request itself.
    ?assertMatch([{dyn, _, {request, beamscale_load_http, 'https://example.org:443', _, _}}],
                 steps(S)),
    #{'https://example.org:443' := #{host := "example.org", port := 443, tls := _}}
        = maps:get(targets, S).

terms_tls_test_() ->
    Check = fun(Target) ->
                    Text = lists:flatten(["{targets, [{t, ", Target, "}]}.\n"
                                          "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                                          "{sessions, [{s, #{steps => "
                                          "[{raw, #{data => <<\"a\">>}}]}}]}.\n"]),
                    {ok, Entries} = beamscale_format_terms:parse(Text),
                    case beamscale_load_scenario:check("s", Entries) of
                        {ok, #{targets := #{t := T}}} -> T;
                        {error, E} -> lists:flatten(beamscale_load_scenario:format_error(E))
                    end
            end,
    [?_assertMatch(#{host := "h", port := 443, tls := [{verify, verify_peer} | _]},
                   Check("#{address => \"https://h:443\"}")),
     ?_assertMatch(#{tls := [{verify, verify_peer}, {cacertfile, "/ca.pem"},
                             {server_name_indication, "n"}]},
                   Check("#{address => \"h:1\", tls => #{cacertfile => \"/ca.pem\", "
                         "server_name_indication => \"n\"}}")),
     ?_assertEqual("s:1: key targets.t.tls.verify: expected verify_peer or verify_none",
                   Check("#{address => \"h:1\", tls => #{verify => maybe}}")),
     ?_assertEqual("s:1: key targets.t.tls.pin: unknown key (known: verify, cacertfile, "
                   "server_name_indication, versions, ciphers)",
                   Check("#{address => \"h:1\", tls => #{pin => 1}}")),
     ?_assertEqual("s:1: key targets.t.tls: TLS over udp is not supported",
                   Check("#{address => \"h:1\", tls => true, transport => udp}")),
     ?_assertEqual("s:1: key targets.t.transport: expected tcp or udp",
                   Check("#{address => \"h:1\", transport => sctp}"))].

%% The examples of each kind are valid scenarios (rebar3 runs EUnit from the repository's root).
examples_test_() ->
    [?_assertMatch({ok, _}, beamscale_load_scenario:load("examples/" ++ F))
     || F <- ["raw_echo.scenario", "websocket_echo.scenario", "https_nginx.scenario"]].

websocket_xml_test() ->
    S = load(xml(server("tcp"), "ts_websocket",
                 "<request subst=\"true\"><websocket type=\"connect\" path=\"/chat\" "
                 "subprotocols=\"a,b\"/></request>\n"
                 "<request><websocket type=\"message\">{\"k\":1}</websocket></request>\n"
                 "<request><websocket type=\"message\" frame=\"binary\" ack=\"no_ack\">x"
                 "</websocket></request>\n"
                 "<request><websocket type=\"close\"/></request>")),
    ?assertMatch([{request, beamscale_load_websocket, server,
                   #{type := connect, path := "/chat", subprotocols := ["a", "b"]}, _},
                  {request, _, _, #{type := message, data := <<"{\"k\":1}">>, frame := text,
                                    ack := reply}, _},
                  {request, _, _, #{type := message, data := <<"x">>, frame := binary,
                                    ack := no_ack}, _},
                  {request, _, _, #{type := close}, _}], steps(S)),
    Err = fun(Body) -> load(xml(server("tcp"), "ts_websocket", Body)) end,
    ?assertMatch([{dyn, #{extract := [{jsonpath, <<"uid">>, _}], match := [_]},
                   {request, _, _, #{type := message, respond := true}, _}}],
                 steps(Err("<request subst=\"true\"><dyn_variable name=\"uid\" jsonpath=\"uid\"/>"
                           "<match do=\"log\" when=\"nomatch\">ok</match>"
                           "<websocket type=\"message\">%%_uid%%</websocket></request>"))),
    ?assertEqual({error, "t.xml:6: <websocket>'s text holds %%_ but the request has no "
                         "subst=\"true\""},
                 Err("<request><websocket type=\"message\">%%_uid%%</websocket></request>")),
    ?assertEqual({error, "t.xml:6: <dyn_variable> and <match> need a reply: not on a close or a "
                         "message with ack=\"no_ack\""},
                 Err("<request><dyn_variable name=\"u\" re=\"(a)\"/>"
                     "<websocket type=\"close\"/></request>")),
    ?assertEqual({error, "t.xml:6: type=\"open\" (expected connect, message or close)"},
                 Err("<request><websocket type=\"open\"/></request>")),
    ?assertEqual({error, "t.xml:6: frame=\"utf8\" (expected text or binary)"},
                 Err("<request><websocket type=\"message\" frame=\"utf8\">a</websocket>"
                     "</request>")).

%% Tsung's untyped `<option name="bosh_path">' is where a bosh server's BOSH requests go; a
%% path that would change the request line's shape is refused with its line.
bosh_path_test() ->
    Xml = fun(Path) ->
                  Opt = "<options><option name=\"bosh_path\" value=\"" ++ Path
                      ++ "\"/></options>\n<sessions>",
                  Text = xml(server("bosh"), "ts_jabber",
                             "<request><jabber type=\"connect\" ack=\"local\"/></request>"),
                  load(lists:flatten(string:replace(Text, "<sessions>", Opt)))
          end,
    [{request, beamscale_load_xmpp, server, Connect, _}] = steps(Xml("/xmpp/bind")),
    ?assertMatch(#{type := connect, bosh := <<"/xmpp/bind">>}, Connect),
    [{request, _, _, Default, _}] =
        steps(load(xml(server("bosh"), "ts_jabber",
                       "<request><jabber type=\"connect\" ack=\"local\"/></request>"))),
    ?assertMatch(#{bosh := <<"/http-bind">>}, Default),
    [?assertEqual({error, "t.xml:7: type=\"connect\": bosh: expected a path of visible ASCII"
                          " (no space or control byte)"}, Xml(P))
     || P <- ["/a HTTP/1.1", "/a&#9;b", "/a&#127;"]],
    ?assertMatch({error, "t.xml:7: type=\"connect\": bosh: expected a path starting with /"
                         ++ _},
                 Xml("http-bind")).
