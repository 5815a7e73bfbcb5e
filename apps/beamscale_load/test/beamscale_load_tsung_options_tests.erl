%% Tsung's `<option>'s that shape the load (beamscale_load_tsung_options and the think time
%% options of beamscale_load_tsung_xml): think times, User-Agent texts, Tsung's own examples.
-module(beamscale_load_tsung_options_tests).

-include_lib("eunit/include/eunit.hrl").

-import(beamscale_load_tsung_tests, [xml/1, session/3, req/1, load/1, ok/1, err/1,
                                     steps/1]).

-include("beamscale_load_code_first.hrl").

thinktime_option_test() ->
    Steps = fun(Opt) ->
                    steps(#{top => ["<options>", Opt, "</options>"],
                            sessions => session("ts_http", "100",
                                                [req("/"), "<thinktime value=\"1\"/>"])})
            end,
    ?assertMatch([_, {think, {exponential, 1000}}],
                 Steps("<option name=\"thinktime\" value=\"3\" random=\"true\"/>")),
    ?assertMatch([_, {think, {exponential, 3000}}],
                 Steps("<option name=\"thinktime\" value=\"3\" random=\"true\" "
                       "override=\"true\"/>")).

%% Tsung's thinks.xml and thinks2.xml (scripts/install-deps.sh installs tsung): a bare
%% `<thinktime/>' waits the `<option name="thinktime">' (3 s, random: exponential).
tsung_thinks_examples_test() ->
    Dir = "/usr/share/doc/tsung/examples/",
    ?assertMatch({ok, _, _}, beamscale_load_tsung:load(Dir ++ "thinks.xml")),
    {ok, S, _} = beamscale_load_tsung:load(Dir ++ "thinks2.xml"),
    [#{steps := Steps}] = maps:get(sessions, S),
    ?assertEqual({think, {exponential, 3000}}, lists:last(Steps)).

%% A <user_agent> on lines of its own (http_setdynvars.xml) is its text without the
%% indentation; a line break inside it is refused at its line.
user_agent_text_test() ->
    Top = fun(Text) -> "<options><option type=\"ts_http\" name=\"user_agent\">\n"
                       "<user_agent probability=\"100\">" ++ Text ++ "</user_agent>"
                       "</option></options>\n"
          end,
    S = ok(#{top => Top("\n   Some browser 42\n  ")}),
    [#{steps := [{setvars, {choice, [{_, Agent}]}, _} | _]}] = maps:get(sessions, S),
    ?assertEqual(<<"Some browser 42">>, Agent),
    ?assertMatch({error, "t.xml:5: <user_agent> holds a line break" ++ _},
                 load(xml(#{top => Top("a\nb")}))).

%% Tsung's timeouts: a reply awaited `idle_timeout' (10 minutes by default, not a terms file's
%% 5 s), the global barrier `global_ack_timeout', a connect `connect_timeout' (30 s by default).
timeouts_test() ->
    Opts = fun(O) -> #{top => ["<options>", O, "</options>"],
                       sessions => session("ts_raw", "100",
                                           ["<request><raw data=\"x\" ack=\"global\"/>"
                                            "</request><request><raw data=\"y\"/></request>"])}
           end,
    Timeouts = fun(O) ->
                       S = ok(Opts(O)),
                       [#{steps := [_, {rendezvous, _, _, Global},
                                    {request, _, _, _, Idle}]}] = maps:get(sessions, S),
                       #{server := #{connect_timeout_ms := Connect}} = maps:get(targets, S),
                       {Idle, Global, Connect}
               end,
    ?assertEqual({600000, 600000, 30000},
                 Timeouts("<option name=\"global_number\" value=\"2\"/>")),
    ?assertEqual({30000, 1500, 700},
                 Timeouts("<option name=\"global_number\" value=\"2\"/>"
                          "<option name=\"idle_timeout\" value=\"30000\"/>"
                          "<option name=\"global_ack_timeout\" value=\"1500\"/>"
                          "<option name=\"connect_timeout\" value=\"700\"/>")),
    ?assertMatch("t.xml:4: <option name=\"idle_timeout\"> value must be at most 4294967295 ms"
                 ++ _,
                 err(Opts("<option name=\"idle_timeout\" value=\"4294967296\"/>"))),
    %% Read, so not among the warnings.
    {#{}, Warnings} = load(xml(Opts("<option name=\"global_number\" value=\"2\"/>"
                                    "<option name=\"idle_timeout\" value=\"9\"/>"
                                    "<option name=\"global_ack_timeout\" value=\"9\"/>"))),
    ?assertEqual([], [W || W <- Warnings, string:find(W, "timeout") =/= nomatch]).

%% Options that change the load but are not applied are said so, not "ignored as they change
%% nothing"; ssl_disable_sni is applied; ssl_reuse_sessions="true" is beamscale's way.
not_applied_test() ->
    Warn = fun(O) ->
                   {_, W} = load(xml(#{top => ["<options>", O, "</options>"]})),
                   W -- ["<tsung loglevel>"]
           end,
    [?assertMatch(["not applied: <option name=\"" ++ _], Warn(O))
     || O <- ["<option name=\"rate_limit\" value=\"10\"/>",
              "<option name=\"ssl_reuse_sessions\" value=\"false\"/>",
              "<option type=\"ts_http\" name=\"http_use_server_as_proxy\" value=\"true\"/>"]],
    ?assertEqual([], Warn("<option name=\"ssl_reuse_sessions\" value=\"true\"/>")),
    S = ok(#{top => "<options><option name=\"ssl_disable_sni\" value=\"true\"/></options>",
             servers => "<server host=\"127.0.0.1\" port=\"8443\" type=\"ssl\"/>"}),
    #{server := #{tls := Tls}} = maps:get(targets, S),
    ?assertEqual({server_name_indication, disable},
                 lists:keyfind(server_name_indication, 1, Tls)).

%% Numbers read as Tsung's erl_scan reads them: the white space around them skipped
%% (bosh.xml:63 and jabber_starttls.xml:67 as shipped say value="2  ").
number_spaces_test() ->
    Think = fun(V) -> lists:last(steps(#{sessions => session("ts_http", "100",
                                                              [req("/"), "<thinktime value=\"",
                                                               V, "\"/>"])}))
            end,
    ?assertEqual({think, {constant, 2000}}, Think("2  ")),
    ?assertEqual({think, {constant, 2000}}, Think("\t2\n")),
    ?assertMatch("t.xml:" ++ _,
                 err(#{sessions => session("ts_http", "100",
                                           [req("/"), "<thinktime value=\"2 x\"/>"])})).

%% Nothing dropped silently: a <dyn_variable> in a session whose kind takes no variables from
%% replies, MySQL's and custom SNMP samples are said to be not applied; <jabber id> (Tsung 1.7
%% reads none) ignored; a <match> on <jabber> is applied, so nothing is said.
not_dropped_test() ->
    Jabber = fun(Body) ->
                     #{servers => "<server host=\"127.0.0.1\" port=\"5222\" type=\"tcp\"/>",
                       sessions => session("ts_jabber", "100", Body)}
             end,
    Warn = fun(Parts) -> element(2, load(xml(Parts))) -- ["<tsung loglevel>"] end,
    ?assertMatch(["not applied: <dyn_variable> in a session of type ts_jabber (xmpp replies "
                  "set no variable)"],
                 Warn(Jabber("<request><dyn_variable name=\"sid\" re=\"id='(.*)'\"/>"
                             "<jabber type=\"connect\" ack=\"local\"/></request>"))),
    ?assertEqual([], Warn(Jabber("<request><match do=\"continue\" when=\"match\">x</match>"
                                 "<jabber type=\"connect\" ack=\"local\"/></request>"))),
    ?assertEqual(["<jabber id> (Tsung 1.7 reads none)"],
                 Warn(Jabber("<request><jabber type=\"connect\" ack=\"local\" id=\"new\"/>"
                             "</request>"))),
    ?assertEqual([], Warn(Jabber("<request><jabber type=\"connect\" ack=\"local\"/>"
                                 "</request>"))),
    ?assertMatch(["not applied: <mysqladmin> " ++ _],
                 Warn(#{top => "<monitoring><monitor host=\"127.0.0.1\" type=\"erlang\">"
                               "<mysqladmin port=\"3306\" username=\"u\" password=\"p\"/>"
                               "</monitor></monitoring>"})),
    ?assertMatch(["not applied: <snmp><oid> " ++ _],
                 Warn(#{top => "<monitoring><monitor host=\"127.0.0.1\" type=\"snmp\">"
                               "<snmp port=\"161\" community=\"public\"><oid value=\"1.3.6\" "
                               "name=\"x\" type=\"sample\"/></snmp></monitor></monitoring>"})).

%% `dumptraffic': true is the whole dump; Tsung's other values are dumped the same, said so.
dumptraffic_test() ->
    Dump = fun(V) ->
                   Text = string:replace(xml(#{}), "<tsung loglevel=\"notice\">",
                                         ["<tsung loglevel=\"notice\" dumptraffic=\"", V, "\">"]),
                   {S, W} = load(lists:flatten(Text)),
                   {maps:get(dump, S, none), [X || "not applied: <tsung dump" ++ _ = X <- W]}
           end,
    ?assertEqual({none, []}, Dump("false")),
    ?assertEqual({20, []}, Dump("true")),
    {20, [Line]} = Dump("protocol_local"),
    ?assert(lists:prefix("not applied: <tsung dumptraffic=\"protocol_local\"> as Tsung", Line)),
    ?assertMatch({20, [_]}, Dump("light")).
