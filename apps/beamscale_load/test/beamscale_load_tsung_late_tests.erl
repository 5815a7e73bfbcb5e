%% Tsung elements read since issue #38's second part: `<user>' (users at fixed times) and the
%% elements after it, each translated into scenario terms or refused at its line.
-module(beamscale_load_tsung_late_tests).

-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

%% A Tsung file of `Load' and sessions `s' (probability 100) and `late' (0), each one request.
file(Load) -> file(Load, "<request><http url=\"/\" method=\"GET\"/></request>").

file(Load, Body) ->
    lists:flatten(
      ["<?xml version=\"1.0\"?>\n<tsung>\n",
       "<servers><server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/></servers>\n",
       Load, "\n<sessions>\n",
       "<session name=\"s\" probability=\"100\" type=\"ts_http\">", Body, "</session>\n",
       "<session name=\"late\" probability=\"0\" type=\"ts_http\">",
       "<request><http url=\"/late\" method=\"GET\"/></request></session>\n",
       "</sessions>\n</tsung>\n"]).

read(Text) ->
    case beamscale_load_tsung:from_text("t.xml", Text) of
        {ok, S, _} -> S;
        {error, {Mod, _} = E} -> {error, lists:flatten(Mod:format_error(E))}
    end.

phases(Load) -> [{N, maps:with([duration_s, rate, users_at], P)}
                 || #{name := N} = P <- maps:get(phases, read(file(Load)))].

-define(PHASE(D), "<arrivalphase phase=\"1\" duration=\"" D "\" unit=\"second\">"
                  "<users arrivalrate=\"2\" unit=\"second\"/></arrivalphase>").

users_only_test() ->
    [{users, #{duration_s := D, rate := 0.0, users_at := At}}] =
        phases("<load><user session=\"late\" start_time=\"2\" unit=\"minute\"/>"
               "<user session=\"s\"/><user session=\"late\" start_time=\"250\" "
               "unit=\"millisecond\"/></load>"),
    ?assertEqual([{0, <<"s">>}, {0.25, <<"late">>}, {120, <<"late">>}], At),
    ?assert(D > 120 andalso D < 121).

users_in_and_after_phases_test() ->
    ?assertMatch([{phase1, #{rate := 2.0, users_at := [{1.5, <<"late">>}]}},
                  {users, #{users_at := [{Late, <<"late">>}]}}] when Late == 1.0,
                 phases("<load>" ?PHASE("2") "<user session=\"late\" start_time=\"1.5\"/>"
                        "<user session=\"late\" start_time=\"3\"/></load>")),
    ?assertMatch([{phase1, #{rate := 2.0}}], phases("<load>" ?PHASE("2") "</load>")).

users_refused_test() ->
    ?assertEqual({error, "t.xml:4: session=\"nope\": no <session> of that name"},
                 read(file("<load><user session=\"nope\"/></load>"))),
    ?assertMatch({error, "t.xml:4: unit \"day\"" ++ _},
                 read(file("<load><user session=\"s\" start_time=\"1\" unit=\"day\"/></load>"))),
    ?assertMatch({error, "t.xml:4: start_time must not be negative"},
                 read(file("<load><user session=\"s\" start_time=\"-1\"/></load>"))),
    ?assertMatch({error, "t.xml:4: <load> needs an <arrivalphase> or a <user>"},
                 read(file("<load></load>"))).

%% The terms format's own check of `users_at'.
users_at_terms_test() ->
    Phase = fun(P) -> beamscale_load_scenario:check("t.config", entries(P)) end,
    {ok, #{phases := [#{rate := 0.0, users_at := [{0, s}, {1, s}]}]}} =
        Phase(#{duration_s => 2, users_at => [{1, s}, {0, s}]}),
    {error, E1} = Phase(#{duration_s => 2, users_at => [{2, s}]}),
    ?assertMatch("t.config:1: key phases.p.users_at: expected a list" ++ _,
                 lists:flatten(beamscale_load_scenario:format_error(E1))),
    {error, E2} = Phase(#{duration_s => 2, users_at => [{1, nope}]}),
    ?assertMatch("t.config:1: key phases.p.users_at: no session nope",
                 lists:flatten(beamscale_load_scenario:format_error(E2))).

entries(Phase) ->
    {ok, Es} = beamscale_format_terms:parse(
                 lists:flatten(io_lib:format(
                                 "{phases, [{p, ~0p}]}.\n{targets, [{w, #{node => a@b}}]}.\n"
                                 "{sessions, [{s, #{steps => [{think, 1}]}}]}.\n", [Phase]))),
    Es.

%% ---- <foreach> and list variables ----

steps(Body) ->
    case read(file("<load><user session=\"s\"/></load>", Body)) of
        #{sessions := [#{steps := Steps} | _]} -> Steps;
        Error -> Error
    end.

foreach_read_test() ->
    [{foreach, <<"u">>, <<"items">>, {[_], []}, [{dyn, _, _}]}] =
        steps("<foreach name=\"u\" in=\"items\" include=\"^a\">"
              "<request subst=\"true\"><http url=\"/%%_u%%\" method=\"GET\"/></request>"
              "</foreach>"),
    ?assertMatch({error, "t.xml:6: <foreach> needs the attribute in"},
                 steps("<foreach name=\"u\"><thinktime value=\"1\"/></foreach>")),
    ?assertMatch({error, "t.xml:6: exclude=\"(\": missing ) at 1"},
                 steps("<foreach name=\"u\" in=\"l\" exclude=\"(\"><thinktime value=\"1\"/>"
                       "</foreach>")).

jsonpath_source_test() ->
    [{setvars, {jsonpath, <<"j">>, [{key, <<"a">>}, {index, 0}]}, [<<"v">>]}] =
        steps("<setdynvars sourcetype=\"jsonpath\" from=\"j\" jsonpath=\"a[0]\">"
              "<var name=\"v\"/></setdynvars>"),
    ?assertMatch({error, "t.xml:6: <setdynvars> needs the attribute from"},
                 steps("<setdynvars sourcetype=\"jsonpath\" jsonpath=\"a\"><var name=\"v\"/>"
                       "</setdynvars>")),
    Src = {jsonpath, <<"j">>, [{key, <<"a">>}, {index, 1}]},
    Ctx = beamscale_load_vars_source:new_ctx(#{}),
    R = rand:seed_s(exsss, 1),
    J = #{<<"j">> => <<"{\"a\": [1, 2]}">>},
    ?assertMatch({[<<"2">>], _}, beamscale_load_vars_source:source(Src, 1, {J, 1, Ctx}, R)),
    ?assertMatch({[<<>>], _}, beamscale_load_vars_source:source(Src, 1, {#{}, 1, Ctx}, R)).

list_variables_test() ->
    {ok, MP} = re:compile(<<"id=(\\d+)">>),
    Resp = #{body => <<"id=1 id=22 id=3">>},
    V1 = beamscale_load_extract:apply([{re_all, <<"i">>, MP}], Resp, #{}),
    ?assertEqual(#{<<"i">> => <<"1">>, {list, <<"i">>} => [<<"1">>, <<"22">>, <<"3">>]}, V1),
    {ok, Path} = beamscale_load_jsonpath:parse("$.a[*].n"),
    V2 = beamscale_load_extract:apply([{jsonpath, <<"n">>, Path}],
                                      #{body => <<"{\"a\": [{\"n\": \"x\"}, {\"n\": 2}]}">>}, V1),
    ?assertEqual([<<"x">>, <<"2">>], maps:get({list, <<"n">>}, V2)),
    %% A reply without them unsets both.
    ?assertEqual(#{}, beamscale_load_extract:apply([{re_all, <<"i">>, MP}], #{body => <<>>}, V1)),
    {ok, Two} = re:compile(<<"2">>),
    ?assertEqual([<<"1">>, <<"3">>], beamscale_load_vars:list(<<"i">>, {[], [Two]}, V1)),
    ?assertEqual([<<"22">>], beamscale_load_vars:list(<<"i">>, {[Two], []}, V1)),
    ?assertEqual([<<"x">>], beamscale_load_vars:list(<<"x">>, {[], []}, #{<<"x">> => <<"x">>})),
    ?assertEqual([], beamscale_load_vars:list(<<"y">>, {[], []}, V1)).

re_all_terms_test() ->
    {ok, Es} = beamscale_format_terms:parse(
                 "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                 "{targets, [{w, #{address => \"127.0.0.1:80\"}}]}.\n"
                 "{sessions, [{s, #{steps => [{http, #{path => \"/\", extract => "
                 "[{re, \"i\", \"id=(\\\\d+)\", all}]}}, {foreach, \"u\", #{in => \"i\"}, "
                 "[{http, #{path => \"/%%_u%%\"}}]}]}}]}.\n"),
    {ok, #{sessions := [#{steps := [{dyn, #{extract := [{re_all, <<"i">>, _}]}, _},
                                    {foreach, <<"u">>, <<"i">>, {[], []}, [_]}]}]}} =
        beamscale_load_scenario:check("t.config", Es).

%% ---- contents_from_file ----

contents_from_file_test() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    ok = file:write_file(filename:join(Dir, "body.json"), <<"{\"a\": 1}\n">>),
    Xml = filename:join(Dir, "t.xml"),
    Body = fun(Attrs) ->
                   Text = file("<load><user session=\"s\"/></load>",
                               ["<request><http url=\"/\" method=\"POST\" ", Attrs,
                                "/></request>"]),
                   case beamscale_load_tsung:from_text(Xml, Text) of
                       {ok, #{sessions := [#{steps := [{dyn, _, {request, _, _, Spec, _}}]}
                                           | _]}, _} -> {ok, maps:get(bytes, Spec)};
                       {error, {Mod, _} = E} ->
                           {error, lists:nthtail(length(Xml) + 1,
                                                 lists:flatten(Mod:format_error(E)))}
                   end
           end,
    try
        {ok, Bytes} = Body("contents_from_file=\"body.json\""),
        ?assertMatch({_, _}, binary:match(Bytes, <<"\r\n\r\n{\"a\": 1}\n">>)),
        ?assertMatch({error, "6: contents_from_file=\"../x\": a path inside" ++ _},
                     Body("contents_from_file=\"../x\"")),
        ?assertMatch({error, "6: contents_from_file=\"/etc/passwd\": a path inside" ++ _},
                     Body("contents_from_file=\"/etc/passwd\"")),
        ?assertMatch({error, "6: contents_from_file=\"none\": " ++ _},
                     Body("contents_from_file=\"none\"")),
        ?assertEqual({error, "6: give contents or contents_from_file, not both"},
                     Body("contents=\"x\" contents_from_file=\"body.json\""))
    after
        file:del_dir_r(Dir)
    end.

%% ---- rendezvous ----

%% The first three meet; the fourth passes at once; a point of more users times out.
rendezvous_test() ->
    C = beamscale_load_rendezvous:start_link(),
    Self = self(),
    Arrive = fun(Name, N, Ms) ->
                     spawn(fun() -> Self ! {self(), beamscale_load_rendezvous:arrive(C, Name, N,
                                                                                    Ms)} end)
             end,
    [P1, P2] = [Arrive(<<"a">>, 3, 10000) || _ <- [1, 2]],
    receive {_, _} = Early -> ?assert(Early =:= none) after 100 -> ok end,
    ?assertEqual(ok, beamscale_load_rendezvous:arrive(C, <<"a">>, 3, 10000)),
    [receive {P, R} -> ?assertEqual(ok, R) after 5000 -> ?assert(false) end || P <- [P1, P2]],
    ?assertEqual(ok, beamscale_load_rendezvous:arrive(C, <<"a">>, 3, 10)),
    ?assertEqual(timeout, beamscale_load_rendezvous:arrive(C, <<"b">>, 2, 50)),
    %% The late release of the one that timed out leaves nothing in its mailbox.
    ?assertEqual(ok, beamscale_load_rendezvous:arrive(C, <<"b">>, 2, 1000)),
    ?assertEqual({messages, []}, process_info(self(), messages)),
    unlink(C),
    exit(C, kill).

raw_global_test() ->
    Raw = fun(Opts) ->
                  Text = lists:flatten(
                           ["<?xml version=\"1.0\"?>\n<tsung>\n",
                            "<servers><server host=\"127.0.0.1\" port=\"7\" type=\"tcp\"/>",
                            "</servers>\n",
                            "<load><user session=\"r\"/></load>\n<options>", Opts, "</options>\n",
                            "<sessions><session name=\"r\" probability=\"100\" type=\"ts_raw\">\n",
                            "<request><raw data=\"x\" ack=\"global\"/></request>",
                            "</session></sessions>\n</tsung>\n"]),
                  case read(Text) of
                      #{sessions := [#{steps := Steps}]} -> Steps;
                      Error -> Error
                  end
          end,
    ?assertMatch([{request, beamscale_load_raw, server, #{ack := no_ack}, _},
                  {rendezvous, <<"global">>, 4, _}],
                 Raw("<option name=\"global_number\" value=\"4\"/>")),
    ?assertMatch({error, "t.xml:7: ack=\"global\" needs <option name=\"global_number\"" ++ _},
                 Raw("")).

rendezvous_terms_test() ->
    Check = fun(R) ->
                    {ok, Es} = beamscale_format_terms:parse(lists:flatten(io_lib:format(
                        "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                        "{targets, [{w, #{node => a@b}}]}.\n"
                        "{sessions, [{s, #{steps => [~0p]}}]}.\n", [R]))),
                    case beamscale_load_scenario:check("t.config", Es) of
                        {ok, #{sessions := [#{steps := [S]}]}} -> S;
                        {error, E} -> lists:flatten(beamscale_load_scenario:format_error(E))
                    end
            end,
    ?assertEqual({rendezvous, <<"p">>, 3, 60000}, Check({rendezvous, "p", #{users => 3}})),
    ?assertMatch("t.config:3: key sessions.s.steps.rendezvous: expected" ++ _,
                 Check({rendezvous, "p", #{users => 0}})),
    ?assertMatch("t.config:3: key sessions.s.steps.rendezvous.timeout_ms: expected" ++ _,
                 Check({rendezvous, "p", #{users => 2, timeout_ms => 0}})).

%% ---- options and elements read since ----

%% A file of one ssl server, the given options.
ssl_file(Options) ->
    lists:flatten(
      ["<?xml version=\"1.0\"?>\n<tsung>\n<information><name>n</name></information>\n",
       "<servers><server host=\"127.0.0.1\" port=\"8443\" type=\"ssl\"/></servers>\n",
       "<monitoring><monitor host=\"db\" type=\"mysqladmin\"/></monitoring>\n",
       "<load><user session=\"s\"/></load>\n<options>", Options, "</options>\n",
       "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\">",
       "<request><http url=\"/\" method=\"GET\"/></request></session></sessions>\n</tsung>\n"]).

ssl_options_test() ->
    {ok, #{targets := #{server := #{tls := Tls}}}, Warnings} =
        beamscale_load_tsung:from_text("t.xml", ssl_file(
            "<option name=\"ssl_versions\" value=\"tlsv1.2\"/>"
            "<option name=\"ssl_ciphers\" value=\"ECDHE-RSA-AES256-GCM-SHA384\"/>")),
    ?assertEqual(['tlsv1.2'], proplists:get_value(versions, Tls)),
    ?assertMatch([#{cipher := aes_256_gcm}], proplists:get_value(ciphers, Tls)),
    ?assertEqual(verify_none, proplists:get_value(verify, Tls)),
    %% <information> describes the test; a mysqladmin monitor is said to be unsampled.
    ?assertEqual(["<monitor type=\"mysqladmin\"> (not sampled)"], Warnings),
    ?assertEqual({error, "t.xml:7: ssl_versions \"sslv3\" (tlsv1.3, tlsv1.2, tlsv1.1 or tlsv1)"},
                 read(ssl_file("<option name=\"ssl_versions\" value=\"sslv3\"/>"))),
    ?assertEqual({error, "t.xml:7: ssl_ciphers: unknown cipher suite NOPE"},
                 read(ssl_file("<option name=\"ssl_ciphers\" value=\"NOPE\"/>"))).

%% ---- max_retries ----

%% A connect refused twice, then a server listens: with retries the request gets through, after
%% the back-off (40 then 80 ms); without, it fails at once.
max_retries_test() ->
    Port = beamscale_load_servers:free_port(),
    Target = #{host => "127.0.0.1", port => Port, max_retries => 5, retry_timeout_ms => 40},
    Send = fun(T) ->
                   M = beamscale_load_metrics:new([]),
                   beamscale_load_request:run(beamscale_load_raw, T, closed,
                                              {#{send => <<"x">>, ack => no_ack}, 1000}, M)
           end,
    ?assertMatch({error, _, closed}, Send(maps:without([max_retries], Target))),
    Server = beamscale_load_servers:late_listener(Port, 60),
    T0 = erlang:monotonic_time(millisecond),
    Result = Send(Target),
    Ms = erlang:monotonic_time(millisecond) - T0,
    receive {listening, Server} -> ok after 5000 -> ?assert(false) end,
    Server ! stop,
    {ok, Conn} = Result,
    beamscale_load_request:close(beamscale_load_raw, Conn),
    ?assert(Ms >= 60).

%% The `server' target of a file of one tcp server and the given options, read without warning.
option_target(Options) ->
    {ok, #{targets := #{server := T}}, []} =
        beamscale_load_tsung:from_text("t.xml", lists:flatten(
            ["<?xml version=\"1.0\"?>\n<tsung>\n",
             "<servers><server host=\"127.0.0.1\" port=\"80\" type=\"tcp\"/></servers>\n",
             "<load><user session=\"s\"/></load>\n<options>", Options, "</options>\n",
             "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\"><request>",
             "<http url=\"/\" method=\"GET\"/></request></session></sessions>\n</tsung>\n"])),
    T.

max_retries_read_test() ->
    ?assertMatch(#{max_retries := 4, retry_timeout_ms := 20},
                 option_target("<option name=\"max_retries\" value=\"4\"/>"
                               "<option name=\"retry_timeout\" value=\"20\"/>")).

%% ---- ports_range ----

%% Connections of a target with `ports' bind local ports of the range in turn; past its end the
%% first port again, here still held: that connect fails (a range must hold the connections).
ports_range_test() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    Min = two_free_ports(20),
    #{t := T} = beamscale_load_source:port_counters(
                  #{t => #{host => "127.0.0.1", port => Port, ports => {Min, Min + 1}}}),
    {ok, {S1, _}} = beamscale_load_tcp:connect(T),
    {ok, {S2, _}} = beamscale_load_tcp:connect(T),
    try
        ?assertEqual([{ok, Min}, {ok, Min + 1}],
                     [case inet:sockname(S) of {ok, {_, P}} -> {ok, P} end || S <- [S1, S2]]),
        ?assertMatch({error, {connect, _}}, beamscale_load_tcp:connect(T))
    after
        [gen_tcp:close(S) || S <- [S1, S2, L]]
    end.

%% A port P with P and P + 1 both free just now (other processes of the host take ephemeral
%% ports too: one free port alone made this test fail beside busy builds).
two_free_ports(0) -> error(no_two_free_ports);
two_free_ports(Tries) ->
    {ok, L1} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, P} = inet:port(L1),
    case gen_tcp:listen(P + 1, [{ip, {127, 0, 0, 1}}]) of
        {ok, L2} -> [ok = gen_tcp:close(L) || L <- [L1, L2]], P;
        {error, _} -> ok = gen_tcp:close(L1), two_free_ports(Tries - 1)
    end.

ports_range_read_test() ->
    ?assertEqual({20000, 20100},
                 maps:get(ports, option_target("<option name=\"ports_range\" min=\"20000\" "
                                               "max=\"20100\" value=\"on\"/>"))).

%% ---- servers by name ----

%% A relative url after an absolute one goes to that one's server, as Tsung's reader sends it
%% (http_distributed.xml); in the other session (and before any absolute one), to `<server>'.
relative_after_absolute_test() ->
    Get = fun(U) -> ["<request><http url=\"", U, "\" method=\"GET\"/></request>"] end,
    #{sessions := [#{steps := Steps}, #{steps := Late}]} =
        read(file("<load><user session=\"s\"/></load>",
                  [Get("/first"), Get("http://web1/"), "<transaction name=\"t\">",
                   Get("/in"), Get("http://web2:8081/x"), "</transaction>", Get("/out")])),
    Targets = [T || {dyn, _, {request, _, T, _, _}} <- beamscale_load_steps:all(Steps)],
    ?assertEqual([server, 'web1:80', 'web1:80', 'web2:8081', 'web2:8081'], Targets),
    ?assertEqual([server], [T || {dyn, _, {request, _, T, _, _}} <- Late]).
