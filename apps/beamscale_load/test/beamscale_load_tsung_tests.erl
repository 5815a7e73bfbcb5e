%% Tsung XML to scenario: every supported element, the errors and the warnings.
-module(beamscale_load_tsung_tests).

-include_lib("eunit/include/eunit.hrl").

%% The file builders beamscale_load_tsung_options_tests and _clients_tests use too.
-export([xml/1, session/3, req/1, load/1, ok/1, err/1, steps/1]).

-include("beamscale_load_code_first.hrl").

%% A whole file around the given parts; the defaults make a valid scenario.
xml(Parts) ->
    P = maps:merge(#{top => "",
                     servers => "<server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/>",
                     load => "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
                             "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>",
                     sessions => session("ts_http", "100", req("/"))}, Parts),
    lists:flatten(["<?xml version=\"1.0\"?>\n<!DOCTYPE tsung SYSTEM \"tsung-1.0.dtd\">\n",
                   "<tsung loglevel=\"notice\">\n", maps:get(top, P),
                   "<servers>", maps:get(servers, P), "</servers>\n",
                   maps:get(load, P), "\n<sessions>", maps:get(sessions, P),
                   "</sessions>\n</tsung>\n"]).

session(Type, Prob, Body) -> session("s", Type, Prob, Body).

session(Name, Type, Prob, Body) ->
    ["<session name=\"", Name, "\" probability=\"", Prob, "\" type=\"", Type, "\">", Body,
     "</session>"].

req(Url) -> ["<request><http url=\"", Url, "\" method=\"GET\"/></request>"].

rpc(Attrs) -> ["<request><rpc ", Attrs, "/></request>"].

load(Text) ->
    case beamscale_load_tsung:from_text("t.xml", Text) of
        {ok, S, Warnings} -> {S, Warnings};
        {error, E} -> {error, lists:flatten(beamscale_load_tsung:format_error(E))}
    end.

ok(Parts) ->
    {S, _} = load(xml(Parts)),
    S.

err(Parts) ->
    {error, Msg} = load(xml(Parts)),
    Msg.

steps(Parts) ->
    #{sessions := [#{steps := Steps} | _]} = ok(Parts),
    Steps.

phases(Load) -> maps:get(phases, ok(#{load => Load})).

http_session_test() ->
    S = ok(#{}),
    %% Tsung's default of 3 connect retries.
    ?assertEqual(#{server => #{host => "127.0.0.1", port => 8080, max_retries => 3,
                                   connect_timeout_ms => 30000}},
                 maps:get(targets, S)),
    %% Tsung keeps cookies: every http request may add a Cookie header, so it is dynamic. Its
    %% reply is awaited Tsung's idle_timeout, 10 minutes.
    [#{name := <<"s">>, weight := 100,
       steps := [{dyn, #{cookies := true, template := static},
                  {request, beamscale_load_http, server, Spec, 600000}}]}] = maps:get(sessions, S),
    ?assertMatch(<<"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n", _/binary>>,
                 maps:get(bytes, Spec)),
    ?assertEqual([], maps:get(sample, S)).

units_test() ->
    Phase = fun(Unit, Users) ->
                    Load = ["<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"", Unit, "\">",
                            Users, "</arrivalphase></load>"],
                    [P] = phases(Load),
                    P
            end,
    ?assertMatch(#{duration_s := 120, rate := 0.5},
                 Phase("minute", "<users arrivalrate=\"30\" unit=\"minute\"/>")),
    ?assertMatch(#{duration_s := 7200}, Phase("hour", "<users arrivalrate=\"1\"/>")),
    ?assertMatch(#{duration_s := 2, rate := 10.0, max_users := 7},
                 Phase("second", "<users interarrival=\"100\" unit=\"millisecond\" "
                                 "maxnumber=\"7\"/>")),
    #{rate := R} = Phase("millisecond", "<users interarrival=\"0.5\" unit=\"second\"/>"),
    ?assert(abs(R - 2.0) < 1.0e-9),
    ?assertMatch(#{duration_s := 0.002}, Phase("millisecond", "<users arrivalrate=\"1\"/>")),
    ?assertMatch("t.xml:5: unit \"week\"" ++ _,
                 err(#{load => "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"week\">"
                                "<users arrivalrate=\"1\"/></arrivalphase></load>"})).

phases_sorted_and_loop_test() ->
    P = fun(N, D) -> ["<arrivalphase phase=\"", N, "\" duration=\"", D, "\">"
                      "<users arrivalrate=\"1\"/></arrivalphase>"] end,
    S = ok(#{load => ["<load duration=\"2\" unit=\"minute\" loop=\"1\">", P("2", "3"), P("1", "4"),
                      "</load>"]}),
    ?assertEqual([{phase1, 4}, {phase2, 3}, {phase1, 4}, {phase2, 3}],
                 [{N, D} || #{name := N, duration_s := D} <- maps:get(phases, S)]),
    ?assertEqual(120, maps:get(time_limit_s, S)),
    ?assertMatch("t.xml:5: phase 1 is given twice",
                 err(#{load => ["<load>", P("1", "1"), P("1", "2"), "</load>"]})),
    %% Without a duration the limit is the scenario's default: phases and drain.
    #{time_limit_s := Default, drain_s := Drain} = ok(#{}),
    ?assertEqual(2 + Drain, Default),
    %% Tsung waits for the sessions in flight: the drain covers the longest one's think times.
    Thinks = ok(#{sessions => session("ts_http", "100",
                                      [req("/"), "<for from=\"1\" to=\"3\" var=\"i\">"
                                       "<thinktime value=\"5\"/>", req("/"), "</for>"])}),
    ?assertMatch(#{drain_s := 25, time_limit_s := 27}, Thinks),
    ?assertMatch(#{drain_s := 10},
                 ok(#{load => ["<load duration=\"1\" unit=\"minute\">"
                               "<arrivalphase phase=\"1\" duration=\"2\"><users "
                               "arrivalrate=\"1\"/></arrivalphase></load>"],
                      sessions => session("ts_http", "100", ["<thinktime value=\"50\"/>",
                                                             req("/")])})).

users_errors_test() ->
    Load = fun(U) -> ["<load><arrivalphase phase=\"1\" duration=\"2\">", U,
                      "</arrivalphase></load>"] end,
    ?assertMatch("t.xml:5: <users> needs arrivalrate or interarrival",
                 err(#{load => Load("<users unit=\"second\"/>")})),
    ?assertMatch("t.xml:5: <users> has both" ++ _,
                 err(#{load => Load("<users arrivalrate=\"1\" interarrival=\"2\"/>")})),
    ?assertMatch("t.xml:5: arrivalrate must be above 0",
                 err(#{load => Load("<users arrivalrate=\"0\"/>")})),
    ?assertMatch("t.xml:5: duration=\"x\" is not a number",
                 err(#{load => "<load><arrivalphase phase=\"1\" duration=\"x\">"
                                "<users arrivalrate=\"1\"/></arrivalphase></load>"})).

probabilities_test() ->
    S = ok(#{sessions => [session("a", "ts_http", "70", req("/a")),
                          session("b", "ts_http", "30", req("/b")),
                          session("c", "ts_http", "0", req("/c"))]}),
    %% A session of probability 0 is kept at weight 0: a phase's <session_setup> may name it.
    ?assertEqual([{<<"a">>, 70}, {<<"b">>, 30}, {<<"c">>, 0}],
                 [{N, W} || #{name := N, weight := W} <- maps:get(sessions, S)]),
    ?assertMatch("t.xml:6: the sessions' probabilities add up to 90, not 100",
                 err(#{sessions => [session("a", "ts_http", "60", req("/a")),
                                    session("b", "ts_http", "30", req("/b"))]})),
    ?assertEqual([33.3, 33.3, 33.4],
                 [W || #{weight := W} <- maps:get(sessions, ok(#{sessions =>
                     [session(N, "ts_http", P, req("/")) || {N, P} <- [{"a", "33.3"}, {"b", "33.3"},
                                                                      {"c", "33.4"}]]}))]),
    Weighted = ok(#{sessions => ["<session name=\"w\" weight=\"3\" type=\"ts_http\">", req("/"),
                                 "</session>"]}),
    ?assertMatch([#{weight := 3}], maps:get(sessions, Weighted)).

thinktime_test() ->
    Think = fun(T) ->
                    [_, {think, D}] = steps(#{sessions => session("ts_http", "100",
                                                                  [req("/"), T])}),
                    D
            end,
    ?assertEqual({constant, 2000}, Think("<thinktime value=\"2\"/>")),
    ?assertEqual({constant, 2000}, Think("<thinktime value=\"2\" random=\"false\"/>")),
    ?assertEqual({exponential, 500.0}, Think("<thinktime value=\"0.5\" random=\"true\"/>")),
    ?assertEqual({uniform, 1000, 3000}, Think("<thinktime min=\"1\" max=\"3\" random=\"true\"/>")),
    ?assertMatch("t.xml:7: min is above max" ++ _,
                 err(#{sessions => session("ts_http", "100",
                                           [req("/"), "\n<thinktime min=\"3\" max=\"1\"/>"])})),
    %% A variable's value (issue #38); a placeholder not closed is refused.
    ?assertEqual({var, <<"t">>, 1000, constant}, Think("<thinktime value=\"%%_t%%\"/>")),
    ?assertMatch("t.xml:7: value=\"%%_abc\": expected %%_name%%",
                 err(#{sessions => session("ts_http", "100",
                                           [req("/"), "\n<thinktime value=\"%%_abc\"/>"])})).

transaction_and_for_test() ->
    Body = ["<transaction name=\"t1\"><for from=\"1\" to=\"10\" incr=\"3\" var=\"i\">", req("/"),
            "</for></transaction><for from=\"5\" to=\"1\" var=\"j\">", req("/"), "</for>"],
    S = ok(#{sessions => session("ts_http", "100", Body)}),
    #{sessions := [#{steps := Steps}], transactions := Tx} = S,
    ?assertMatch([{transaction, <<"t1">>, [{for, <<"i">>, 1, 10, 3, [_]}]},
                  {for, <<"j">>, 5, 1, 1, [_]}], Steps),
    ?assertEqual([<<"t1">>], Tx).

repeat_test() ->
    Repeat = fun(Cond, Max) ->
                     session("ts_http", "100",
                             ["<for from=\"1\" to=\"3\" var=\"i\"><repeat name=\"r\"", Max, ">",
                              req("/"), Cond, "</repeat></for>"])
             end,
    Rep = fun(Cond, Max) ->
                  [{for, _, _, _, _, [{repeat, N, _, C}]}] =
                      steps(#{sessions => Repeat(Cond, Max)}),
                  {N, C}
          end,
    ?assertEqual({7, {while, {<<"i">>, neq, <<"9">>}}},
                 Rep("<while var=\"i\" neq=\"9\"/>", " max_repeat=\"7\"")),
    ?assertEqual({20, {until, {<<"i">>, eq, <<"9">>}}}, Rep("<until var=\"i\" eq=\"9\"/>", "")),
    %% Tsung's numeric relations: gt (the variable above the value) and its kin.
    ?assertEqual({20, {while, {<<"x">>, gt, <<"2 ">>}}},
                 Rep("<while var=\"x\" gt=\"2 \"/>", "")),
    ?assertMatch("t.xml:7: lte=\"a\" is not a number" ++ _,
                 err(#{sessions => Repeat("\n<until var=\"x\" lte=\"a\"/>", "")})),
    ?assertMatch("t.xml:7: <while> needs one of eq, neq, gt, gte, lt, lte" ++ _,
                 err(#{sessions => Repeat("\n<while var=\"x\" eq=\"1\" gt=\"2\"/>", "")})),
    ?assertMatch("t.xml:7: <repeat> must end with <while> or <until>",
                 err(#{sessions => session("ts_http", "100",
                                           ["\n<repeat name=\"r\">", req("/"), "</repeat>"])})).

http_attributes_test() ->
    Body = ["<request><http url=\"/p?q=1\" method=\"POST\" version=\"1.1\" contents=\"a=1\" "
            "content_type=\"text/plain\" if_modified_since=\"Fri, 1 Jan 2010 00:00:00 GMT\">"
            "<http_header name=\"X-A\" value=\"b\"/></http></request>",
            "<request><http url=\"http://127.0.0.1:9000/x\" method=\"GET\"/></request>",
            "<request><http url=\"http://localhost\" method=\"HEAD\"/></request>"],
    S = ok(#{sessions => session("ts_http", "100", Body)}),
    #{sessions := [#{steps := [{dyn, _, {request, _, server, #{bytes := Post}, _}},
                               {dyn, _, {request, _, '127.0.0.1:9000', #{bytes := Get}, _}},
                               {dyn, _, {request, _, 'localhost:80', #{head := true}, _}}]}]} = S,
    ?assertEqual(<<"POST /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: beamscale/0.1.0\r\n"
                   "Content-Type: text/plain\r\n"
                   "If-Modified-Since: Fri, 1 Jan 2010 00:00:00 GMT\r\nX-A: b\r\n"
                   "Content-Length: 3\r\n\r\na=1">>, Post),
    ?assertMatch(<<"GET /x HTTP/1.1\r\nHost: 127.0.0.1:9000\r\n", _/binary>>, Get),
    ?assertEqual(3, map_size(maps:get(targets, S))),
    ?assertMatch("t.xml:7: version \"2\"" ++ _,
                 err(#{sessions => session("ts_http", "100",
                     "\n<request><http url=\"/\" version=\"2\"/></request>")})),
    ?assertMatch("t.xml:7: url \"ftp://x/\" is not supported" ++ _,
                 err(#{sessions => session("ts_http", "100", ["\n", req("ftp://x/")])})),
    ?assertMatch("t.xml:7: <http> needs a <server> (or an absolute url)",
                 err(#{servers => "", sessions => session("ts_http", "100", ["\n", req("/")])})),
    ?assertMatch("t.xml:4: several <server> elements" ++ _,
                 err(#{servers => "<server host=\"a\" port=\"1\" type=\"tcp\"/>"
                                  "<server host=\"b\" port=\"1\" type=\"tcp\"/>"})),
    ?assertMatch("t.xml:4: server type \"udp\" is not supported for <http>" ++ _,
                 err(#{servers => "<server host=\"a\" port=\"1\" type=\"udp\"/>"})).

rpc_test() ->
    Body = [rpc("type=\"call\" module=\"m\" function=\"write\" arguments=\"500\" "
                "node=\"erisa@dcr1b\""),
            rpc("type=\"cast\" module=\"m\" function=\"f\" "
                "arguments=\"a, {b, &quot;c&quot;}, [1]\" "
                "node=\"erisa@dcr1b\""),
            rpc("type=\"call\" module=\"m\" function=\"g\" node=\"other@h\"")],
    {S, Warnings} = load(xml(#{sessions => session("ts_rpc", "100", Body),
                               top => "<monitoring><monitor host=\"dcr1b\" type=\"erlang\"/>"
                                      "<monitor host=\"snmphost\" type=\"snmp\"/></monitoring>"})),
    ?assertEqual(#{'erisa@dcr1b' => #{node => 'erisa@dcr1b'}, 'other@h' => #{node => 'other@h'}},
                 maps:get(targets, S)),
    #{sessions := [#{steps := [{request, beamscale_load_rpc, 'erisa@dcr1b', Write, _},
                               {request, _, _, Cast, _}, {request, _, 'other@h', G, _}]}]} = S,
    ?assertEqual(#{type => call, module => m, function => write, args => [500]}, Write),
    ?assertEqual(#{type => cast, module => m, function => f, args => [a, {b, "c"}, [1]]}, Cast),
    ?assertMatch(#{args := []}, G),
    ?assertEqual(['erisa@dcr1b'], maps:get(sample, S)),
    ?assertMatch([#{host := "snmphost", type := snmp}], maps:get(monitors, S)),
    ?assert(lists:member("<server> (no request uses it)", Warnings)),
    Bad = fun(Attrs) -> err(#{sessions => session("ts_rpc", "100", ["\n", rpc(Attrs)])}) end,
    ?assertMatch("t.xml:7: arguments \"a b\" are not Erlang terms" ++ _,
                 Bad("type=\"call\" module=\"m\" function=\"f\" arguments=\"a b\" node=\"n@h\"")),
    ?assertMatch("t.xml:7: node \"n\" is not name@host",
                 Bad("type=\"call\" module=\"m\" function=\"f\" node=\"n\"")),
    ?assertMatch("t.xml:7: type \"multicall\"" ++ _,
                 Bad("type=\"multicall\" module=\"m\" function=\"f\" node=\"n@h\"")),
    ?assertMatch("t.xml:7: <rpc> needs the attribute module",
                 Bad("type=\"call\" function=\"f\" node=\"n@h\"")).

rpc_expect_test() ->
    Call = fun(Expect) -> ["\n", rpc(["type=\"call\" module=\"m\" function=\"f\" node=\"n@h\" ",
                                      "expect=\"", Expect, "\""])] end,
    #{sessions := [#{steps := [{request, beamscale_load_rpc, 'n@h', Spec, _}]}]} =
        ok(#{sessions => session("ts_rpc", "100", Call("{ok, _, #{k := [a | _]}}"))}),
    ?assertEqual(#{type => call, module => m, function => f, args => [],
                   expect => {pattern, {ok, '_', #{k => [a | '_']}}}}, Spec),
    %% An atom the node does not know is kept as a name, not made.
    New = "tsung_tests_" ++ integer_to_list(erlang:unique_integer([positive])),
    #{sessions := [#{steps := [{request, _, _, #{expect := {pattern, P}}, _}]}]} =
        ok(#{sessions => session("ts_rpc", "100", Call(["{ok, ", New, "}"]))}),
    ?assertError(badarg, list_to_existing_atom(New)),
    ?assert(beamscale_load_expect:match(P, {ok, list_to_atom(New)})),
    Bad = fun(Body) -> err(#{sessions => session("ts_rpc", "100", Body)}) end,
    ?assertMatch("t.xml:7: expect \"{ok, \": not an Erlang pattern" ++ _, Bad(Call("{ok, "))),
    ?assertEqual("t.xml:7: expect \"fun() -> x end\": a fun cannot be a pattern",
                 Bad(Call("fun() -&gt; x end"))),
    ?assertMatch("t.xml:7: expect \"{X, X}\": variable X appears twice" ++ _,
                 Bad(Call("{X, X}"))),
    ?assertMatch("t.xml:7: expect on a cast" ++ _,
                 Bad(["\n", rpc("type=\"cast\" module=\"m\" function=\"f\" node=\"n@h\" "
                                "expect=\"ok\"")])).

started_target_test() ->
    Top = "<?beamscale target {sut, #{start => #{init => {m, f, []}}}}?>\n"
          "<monitoring><monitor host=\"localhost\"/></monitoring>",
    Body = rpc("type=\"call\" module=\"m\" function=\"f\" node=\"sut@127.0.0.1\""),
    {S, _} = load(xml(#{top => Top, sessions => session("ts_rpc", "100", Body)})),
    ?assertMatch(#{sut := #{start := #{init := {m, f, []}}}}, maps:get(targets, S)),
    ?assertMatch([#{steps := [{request, beamscale_load_rpc, sut, _, _}]}], maps:get(sessions, S)),
    ?assertEqual([sut], maps:get(sample, S)),
    ?assertMatch("t.xml:4: expected <?beamscale target {Name, Target}?> or" ++ _,
                 err(#{top => "<?beamscale start sut?>"})).

%% `<?beamscale threshold EXPR?>': `load''s thresholds, a bad one named by its own line.
thresholds_test() ->
    Top = "<?beamscale threshold p95<300ms?>\n<?beamscale threshold errors < 1%:abort=5s ?>",
    {S, _} = load(xml(#{top => Top})),
    ?assertMatch([#{text := <<"p95<300ms">>, bound := 300.0},
                  #{text := <<"errors < 1%:abort=5s">>, abort := {true, 5.0}}],
                 maps:get(thresholds, S)),
    ?assertMatch("t.xml:5: <?beamscale threshold?>: errors is a share" ++ _,
                 err(#{top => "<?beamscale threshold p95<1s?>\n<?beamscale threshold errors<1?>"})).

%% Every element or attribute that would change the load and is not supported is one error
%% naming it and its line.
unsupported_test_() ->
    InReq = fun(X) -> #{sessions => session("ts_http", "100",
                                            ["\n<request>", X, "<http url=\"/\"/></request>"])}
            end,
    Cases = [{InReq("<dyn_variable name=\"x\"/>"), "<dyn_variable> needs re, header"},
             {InReq("<dyn_variable name=\"x\" pgsql_expr=\"a\"/>"),
              "pgsql_expr of <dyn_variable> is not supported: re, regexp"},
             {InReq("<match do=\"stop\">x</match>"), "do=\"stop\" is not supported"},
             {InReq("<match do=\"restart\" max_restart=\"-1\">x</match>"),
              "max_restart below 0"},
             {#{sessions => session("ts_http", "100", ["\n<setdynvars sourcetype=\"random_number\""
                                                       "><var name=\"v\"/></setdynvars>",
                                                       req("/")])},
              "needs the attribute start"},
             {#{sessions => session("ts_http", "100", ["\n<setdynvars sourcetype=\"erlang\" "
                                                       "callback=\"no_such_mod:f\"><var name="
                                                       "\"v\"/></setdynvars>", req("/")])},
              "no module no_such_mod"},
             {#{sessions => session("ts_http", "100", ["\n<change_type new_type=\"ts_raw\"/>",
                                                       req("/")])},
              "<change_type> needs the attribute host"},
             {#{sessions => session("ts_http", "100", "\n<request><tcp/></request>")},
              "<tcp> is not supported"},
             {#{sessions => session("ts_http", "100", "\n<request><job type=\"submit\"/>"
                                                      "</request>")},
              "<job> is not supported"},
             {#{sessions => ["\n", session("ts_job", "100", req("/"))]},
              "session type \"ts_job\" is not supported"},
             {#{sessions => session("ts_http", "100", ["\n<request subst=\"all_except_body\">"
                                                       "<http url=\"/\"/></request>"])},
              "subst=\"all_except_body\" is not supported"},
             {#{sessions => session("ts_http", "100", ["\n<request><http url=\"/%%_x%%\"/>"
                                                       "</request>"])},
              "holds %%_ but the request has no subst"},
             {#{sessions => session("ts_rpc", "100", ["\n", req("/")])},
              "<http> in a session of type ts_rpc"},
             {#{sessions => session("ts_http", "100", ["\n<request><http url=\"/\" "
                                                       "contents_from_file=\"f\"/></request>"])},
              "contents_from_file=\"f\": "}],
    [?_assertMatch("t.xml:7: " ++ _, err(P)) || {P, _} <- Cases]
    ++ [?_assert(string:find(err(P), Text) =/= nomatch) || {P, Text} <- Cases].

ignored_settings_test() ->
    Top = "<clients><client host=\"localhost\" use_controller_vm=\"true\" maxusers=\"100\"/>"
          "<client host=\"127.0.0.1\" cpu=\"2\"><ip value=\"127.0.0.2\"/></client></clients>"
          "<monitoring><monitor host=\"m\" type=\"snmp\"><snmp version=\"v1\"/></monitor>"
          "</monitoring><options><option type=\"ts_http\" name=\"user_agent\"><user_agent "
          "probability=\"100\">x</user_agent></option><option name=\"seed\" value=\"1\"/>"
          "<option name=\"rate_limit\" value=\"10\"/></options><?xml-stylesheet href=\"x\"?>",
    {Terms, Warnings} = load(xml(#{top => Top})),
    ?assertEqual(["<?xml-stylesheet?>", "<client maxusers>",
                  "<client use_controller_vm>", "<snmp version>",
                  "<tsung loglevel>",
                  "not applied: <option name=\"rate_limit\"> (Tsung caps each user's receiving "
                  "rate; beamscale reads at full speed)"],
                 Warnings),
    %% The file's seed is the run's when --seed gives none.
    ?assertEqual(1, maps:get(seed, Terms)),
    %% cpu="2" on this machine: two load nodes on 127.0.0.1, as Tsung's two emulators.
    ?assertEqual(2, maps:get(load_nodes, Terms)),
    Line = lists:flatten(beamscale_load_tsung:warning_line("t.xml", Warnings)),
    %% The settings that change nothing on one line, the one not applied on its own.
    [Ignored, NotApplied] = string:split(string:trim(Line), "\n", all),
    ?assertEqual(nomatch, string:find(Ignored, "rate_limit")),
    ?assert(lists:prefix("beamscale load: t.xml: not applied: <option name=\"rate_limit\">",
                         NotApplied)),
    ?assertEqual([], beamscale_load_tsung:warning_line("t.xml", [])).

malformed_test() ->
    ?assertMatch({error, "t.xml:2: element a is not one of Tsung's" ++ _},
                 load("<tsung>\n<a></b></tsung>")),
    ?assertMatch({error, "t.xml:2: not well-formed XML" ++ _},
                 load("<tsung>\n<http></request></tsung>")),
    ?assertMatch({error, "t.xml:1: the root element is <http>" ++ _}, load("<http/>")),
    Colored = lists:flatten(string:replace(xml(#{}), "<tsung ", "<tsung weight='2' ")),
    ?assertMatch({error, "t.xml:3: attribute weight of <tsung>" ++ _}, load(Colored)),
    ?assertMatch("t.xml:3: <tsung> needs a <load> element", err(#{load => ""})),
    ?assertMatch("t.xml:6: unexpected text in <session>",
                 err(#{sessions => session("ts_http", "100", ["\nhello", req("/")])})),
    ?assert(beamscale_load_tsung:is_tsung("a/b.XML")),
    ?assertNot(beamscale_load_tsung:is_tsung("a/b.scenario")).

%% An Erlang monitor of a host that is no Erlang target is a host sampled (scenario `monitors'),
%% with no warning; munin and snmp monitors are read through their protocols.
host_monitor_test() ->
    Top = "<monitoring><monitor host=\"db.example\" type=\"erlang\"/>"
          "<monitor host=\"db.example\" type=\"erlang\"/><monitor host=\"w1\"/>"
          "<monitor host=\"m\" type=\"munin\"><munin port=\"4950\"/></monitor>"
          "<monitor host=\"m2\" type=\"munin\"/><monitor host=\"s\" type=\"snmp\">"
          "<snmp port=\"1161\" community=\"lab\" version=\"v2\"/></monitor></monitoring>",
    {S, Warnings} = load(xml(#{top => Top})),
    Host = fun(H) -> #{host => H, type => erlang, processes => [], ssh => none, erl => "erl"} end,
    ?assertEqual([Host("db.example"), Host("w1"),
                  (Host("m"))#{type => munin, port => 4950},
                  (Host("m2"))#{type => munin, port => 4949},
                  (Host("s"))#{type => snmp, port => 1161, community => "lab"}],
                 maps:get(monitors, S)),
    ?assertEqual(["<snmp version>", "<tsung loglevel>"], Warnings).
