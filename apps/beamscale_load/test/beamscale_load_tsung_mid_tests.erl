%% Tsung elements read since issue #38's third part: Tsung's default connect retries, XPath list
%% variables, `<set_option>', `<interaction>' and `<change_type>', each translated into scenario
%% terms or refused at its line; and their terms forms checked.
-module(beamscale_load_tsung_mid_tests).

-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

%% A Tsung file of one `ts_http' session of `Body' against 127.0.0.1:8080, `Options' in
%% `<options>'.
file(Options, Body) ->
    lists:flatten(
      ["<?xml version=\"1.0\"?>\n<tsung>\n",
       "<servers><server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/></servers>\n",
       "<load><user session=\"s\"/></load>\n<options>", Options, "</options>\n<sessions>\n",
       "<session name=\"s\" probability=\"100\" type=\"ts_http\">\n", Body, "\n</session>\n",
       "</sessions>\n</tsung>\n"]).

read(Text) -> read("t.xml", Text).

read(File, Text) ->
    case beamscale_load_tsung:from_text(File, Text) of
        {ok, S, _} -> S;
        {error, {Mod, _} = E} -> {error, lists:flatten(Mod:format_error(E))}
    end.

steps(Body) ->
    #{sessions := [#{steps := Steps}]} = read(file("", Body)),
    Steps.

-define(GET(Url), "<request><http url=\"" Url "\" method=\"GET\"/></request>").

%% ---- Tsung's default of 3 connect retries ----

retries_default_test() ->
    #{targets := #{server := T}} = read(file("", ?GET("/"))),
    ?assertEqual(3, maps:get(max_retries, T)),
    #{targets := #{server := T0}} =
        read(file("<option name=\"max_retries\" value=\"0\"/>", ?GET("/"))),
    ?assertEqual(0, maps:get(max_retries, T0)),
    %% A terms target keeps its own default: tried once.
    {ok, Es} = beamscale_format_terms:parse(
                 "{targets, [{w, #{address => \"127.0.0.1:80\"}}]}.\n"
                 "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                 "{sessions, [{s, #{steps => [{http, #{path => \"/\"}}]}}]}.\n"),
    {ok, #{targets := #{w := W}}} = beamscale_load_scenario:check("t.config", Es),
    ?assertNot(is_map_key(max_retries, W)).

%% ---- XPath lists ----

xpath(Expr, Body) ->
    {ok, X} = beamscale_load_xpath:compile(Expr),
    beamscale_load_extract:apply([{xpath, <<"v">>, X}], #{body => Body}, #{}).

xpath_list_test() ->
    ?assertEqual(#{<<"v">> => <<"a">>, {list, <<"v">>} => [<<"a">>, <<"b">>, <<"c">>]},
                 xpath("//i/text()", <<"<r><i>a</i><i>b</i><x/><i>c</i></r>">>)),
    ?assertEqual(#{<<"v">> => <<"1">>, {list, <<"v">>} => [<<"1">>, <<"2">>]},
                 xpath("//i/@n", <<"<r><i n=\"1\"/><i n=\"2\"/></r>">>)),
    %% None selected: both unset; at most 1000 values kept.
    ?assertEqual(#{}, xpath("//none", <<"<r><i>a</i></r>">>)),
    Many = iolist_to_binary(["<r>", lists:duplicate(1500, "<i>x</i>"), "</r>"]),
    ?assertEqual(1000, length(maps:get({list, <<"v">>}, xpath("//i/text()", Many)))).

%% A Tsung `<dyn_variable xpath>' feeds a `<foreach>'.
xpath_foreach_read_test() ->
    ?assertMatch([{dyn, #{extract := [{xpath, <<"ids">>, _}]}, _},
                  {foreach, <<"id">>, <<"ids">>, _, [_]}],
                 steps("<request><dyn_variable name=\"ids\" xpath=\"//id/text()\"/>"
                       "<http url=\"/\" method=\"GET\"/></request>"
                       "<foreach name=\"id\" in=\"ids\">"
                       "<request subst=\"true\"><http url=\"/%%_id%%\" method=\"GET\"/>"
                       "</request></foreach>")).

%% ---- <set_option> ----

set_option_test() ->
    ?assertMatch([{set_option, #{connect_timeout_ms := 1000}}, _],
                 steps("<set_option name=\"connect_timeout\" value=\"1000\"/>" ?GET("/"))),
    ?assertMatch([{set_option, #{retry_timeout_ms := 50}}, {set_option, #{max_retries := 1}}],
                 lists:droplast(steps("<set_option name=\"retry_timeout\" value=\"50\"/>"
                                      "<set_option name=\"max_retries\" value=\"1\"/>"
                                      ?GET("/")))).

set_option_certificate_test() ->
    Dir = filename:join("/tmp", "beamscale_tsung_mid_tests_" ++ os:getpid()),
    ok = filelib:ensure_path(Dir),
    Xml = filename:join(Dir, "t.xml"),
    try
        ok = file:write_file(filename:join(Dir, "c.pem"), <<"x">>),
        Cert = fun(Attrs) ->
                       read(Xml, file("", "<set_option name=\"certificate\"><certificate "
                                      ++ Attrs ++ "/></set_option>" ?GET("/")))
               end,
        #{sessions := [#{steps := [{set_option, #{tls := Tls}}, _]}]} =
            Cert("certfile=\"c.pem\" keyfile=\"c.pem\" keypass=\"pw\""),
        ?assertEqual(lists:sort([{certfile, filename:join(Dir, "c.pem")},
                                 {keyfile, filename:join(Dir, "c.pem")}, {password, "pw"}]),
                     lists:sort(Tls)),
        ?assertMatch({error, "/tmp/" ++ _}, Cert("certfile=\"nope.pem\"")),
        {error, E} = Cert("certfile=\"nope.pem\""),
        ?assertMatch({match, _}, re:run(E, ":8: certfile=\"nope.pem\": no such file")),
        {error, E2} = Cert("certfile=\"%%_f%%\""),
        ?assertMatch({match, _}, re:run(E2, ":8: certfile=\"%%_f%%\": a fixed value"))
    after
        _ = file:del_dir_r(Dir)
    end.

set_option_refused_test() ->
    ?assertMatch({error, "t.xml:8: <set_option name=\"rate_limit\"> is not supported" ++ _},
                 read(file("", "<set_option name=\"rate_limit\" value=\"64\"/>" ?GET("/")))),
    ?assertMatch({error, "t.xml:8: attribute type of <set_option> is not supported: Tsung 1.7 "
                           "reads none" ++ _},
                 read(file("", "<set_option type=\"ts_http\" name=\"user_agent\"/>"
                           ?GET("/")))),
    ?assertMatch({error, "t.xml:8: <set_option name=\"nope\"> (connect_timeout" ++ _},
                 read(file("", "<set_option name=\"nope\" value=\"1\"/>" ?GET("/")))).

%% The terms form: each setting checked as on a target.
set_option_terms_test() ->
    Check = fun(Step) -> terms("[" ++ Step ++ ", {http, #{path => \"/\"}}]") end,
    ?assertMatch({ok, _}, Check("{set_option, #{connect_timeout_ms => 100}}")),
    ?assertEqual("t.config:3: key sessions.s.steps.set_option.connect_timeout_ms: expected "
                 "milliseconds from 1 to 600000",
                 error_text(Check("{set_option, #{connect_timeout_ms => 0}}"))),
    ?assertMatch("t.config:3: key sessions.s.steps.set_option.nope: unknown key" ++ _,
                 error_text(Check("{set_option, #{nope => 1}}"))),
    ?assertMatch("t.config:3: key sessions.s.steps.set_option.certificate.certfile: expected"
                 ++ _, error_text(Check("{set_option, #{certificate => #{certfile => 1}}}"))).

terms(Steps) ->
    {ok, Es} = beamscale_format_terms:parse(
                 "{targets, [{w, #{address => \"127.0.0.1:80\"}}]}.\n"
                 "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                 "{sessions, [{s, #{steps => " ++ Steps ++ "}}]}.\n"),
    beamscale_load_scenario:check("t.config", Es).

error_text({error, E}) -> lists:flatten(beamscale_load_scenario:format_error(E)).

%% ---- <interaction> ----

interaction_test() ->
    S = read(file("", "<interaction action=\"send\" id=\"x\"/>" ?GET("/")
                  "<interaction action=\"receive\" id=\"x\"/>")),
    ?assertMatch(#{sessions := [#{steps := [{interaction, send, <<"tr_x">>}, _,
                                            {interaction, 'receive', <<"tr_x">>}]}]}, S),
    %% Its time is a transaction of the run.
    ?assert(lists:member(<<"tr_x">>, maps:get(transactions, S))),
    ?assertMatch({error, "t.xml:8: action=\"later\" (send or receive)"},
                 read(file("", "<interaction action=\"later\" id=\"x\"/>" ?GET("/")))),
    ?assertMatch({ok, #{transactions := [i]}},
                 terms("[{interaction, send, i}, {http, #{path => \"/\"}}]")).

%% The coordinator: a receive before any send records nothing; after one, the time since it.
interaction_coordinator_test() ->
    R = beamscale_load_rendezvous:start_link(),
    ?assertEqual(none, beamscale_load_rendezvous:interaction(R, 'receive', <<"a">>)),
    none = beamscale_load_rendezvous:interaction(R, send, <<"a">>),
    timer:sleep(20),
    {ok, Native} = beamscale_load_rendezvous:interaction(R, 'receive', <<"a">>),
    ?assert(erlang:convert_time_unit(Native, native, millisecond) >= 20),
    unlink(R),
    exit(R, kill).

%% ---- <change_type> ----

change_type_test() ->
    #{targets := Targets, sessions := [#{steps := Steps}]} =
        read(file("", ?GET("/")
                  "<change_type new_type=\"ts_websocket\" host=\"127.0.0.1\" port=\"9000\" "
                  "server_type=\"tcp\" store=\"true\"/>"
                  "<request><websocket type=\"connect\" path=\"/\"/></request>"
                  "<change_type new_type=\"ts_http\" host=\"127.0.0.1\" port=\"8080\" "
                  "server_type=\"tcp\" restore=\"true\"/>" ?GET("/again"))),
    ?assertMatch(#{server := #{port := 8080}, server_9000 := #{port := 9000}}, Targets),
    %% store="true": nothing closed on leaving HTTP; restore="false": websocket anew; back to
    %% HTTP, store="false" closes the websocket and restore="true" keeps HTTP's connection.
    ?assertMatch([{dyn, _, {request, beamscale_load_http, server, _, _}},
                  {disconnect, beamscale_load_websocket},
                  {request, beamscale_load_websocket, server_9000, _, _},
                  {disconnect, beamscale_load_websocket},
                  {dyn, _, {request, beamscale_load_http, server, _, _}}], Steps).

change_type_refused_test() ->
    Change = fun(Attrs) ->
                     read(file("", ?GET("/") "<change_type new_type=\"ts_websocket\" "
                                   ++ Attrs ++ "/>"))
             end,
    ?assertMatch({error, "t.xml:8: new_type=\"ts_shell\" is not supported" ++ _},
                 read(file("", ?GET("/") "<change_type new_type=\"ts_shell\" host=\"h\" "
                               "port=\"1\" server_type=\"tcp\"/>"))),
    ?assertMatch({error, "t.xml:8: host=\"%%_h%%\": a fixed value" ++ _},
                 Change("host=\"%%_h%%\" port=\"1\" server_type=\"tcp\"")),
    ?assertMatch({error, "t.xml:8: server_type=\"sctp\" (tcp, ssl or udp)"},
                 Change("host=\"h\" port=\"1\" server_type=\"sctp\"")),
    ?assertMatch({error, "t.xml:8: bidi=\"true\" on <change_type>" ++ _},
                 Change("host=\"h\" port=\"1\" server_type=\"tcp\" bidi=\"true\"")).
