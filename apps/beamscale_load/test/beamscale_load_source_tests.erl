%% Source addresses: any unicast address (the load node checks it has them:
%% beamscale_load_sources_SUITE), interfaces and ranges, named with file and line in both
%% scenario formats, and users taking them in turn.
-module(beamscale_load_source_tests).

-include_lib("eunit/include/eunit.hrl").

-define(BASE, "{targets, [{web, #{address => \"127.0.0.1:80\"}}]}.\n"
              "{phases, [{p1, #{duration_s => 2, rate => 10}}]}.\n"
              "{sessions, [{s, #{steps => [{http, #{}}]}}]}.\n").

check(Text) ->
    {ok, Entries} = beamscale_format_terms:parse(Text),
    case beamscale_load_scenario:check("s.scenario", Entries) of
        {ok, S} -> {ok, S};
        {error, E} -> {error, lists:flatten(beamscale_load_scenario:format_error(E))}
    end.

parse_test_() ->
    [?_assertEqual({ok, {127, 0, 0, 2}}, beamscale_load_source:parse("127.0.0.2")),
     ?_assertEqual({ok, {127, 1, 2, 3}}, beamscale_load_source:parse(<<"127.1.2.3">>)),
     ?_assertEqual({ok, {0, 0, 0, 0, 0, 0, 0, 1}}, beamscale_load_source:parse("::1")),
     ?_assertEqual({ok, {10, 0, 0, 1}}, beamscale_load_source:parse("10.0.0.1"))]
    ++ [?_assertMatch({error, _}, beamscale_load_source:parse(A))
        || A <- ["0.0.0.0", "::", "224.0.0.1", "127.0.0", "localhost", "", 127, [300]]].

range_test_() ->
    [?_assertEqual({ok, [{10, 0, 0, 1}, {10, 0, 0, 2}]},
                   beamscale_load_source:range("10.0.0.1-2")),
     ?_assertEqual({ok, [{10, 0, 1, 7}, {10, 0, 2, 7}]},
                   beamscale_load_source:range("10.0.1-2.7")),
     ?_assertMatch({error, "65536 addresses" ++ _},
                   beamscale_load_source:range("10.0.0-255.0-255"))]
    ++ [?_assertMatch({error, _}, beamscale_load_source:range(R))
        || R <- ["10.0.0", "10.0.0.2-1", "10.0.0.1-300", "a.b.c.d", "10.0.0.-1", "::1"]].

range6_test_() ->
    [?_assertEqual({ok, [{16#fd77, 0, 0, 0, 0, 0, 0, 2}, {16#fd77, 0, 0, 0, 0, 0, 0, 3}]},
                   beamscale_load_source:range6("fd77::2-3")),
     ?_assertEqual({ok, [{16#fd77, 0, 0, 0, 0, 0, 0, 9}, {16#fd77, 0, 0, 0, 0, 0, 0, 10},
                         {16#fd77, 1, 0, 0, 0, 0, 0, 9}, {16#fd77, 1, 0, 0, 0, 0, 0, 10}]},
                   beamscale_load_source:range6("fd77:0-1::9-a")),
     ?_assertEqual({ok, [{0, 0, 0, 0, 0, 0, 0, 1}]}, beamscale_load_source:range6("::1")),
     ?_assertMatch({error, "257 addresses" ++ _}, beamscale_load_source:range6("fd77::0-100")),
     ?_assertMatch({error, "fd77::3-2: a range From-To with From above To"},
                   beamscale_load_source:range6("fd77::3-2"))]
    ++ [?_assertMatch({error, "" ++ _}, beamscale_load_source:range6(R))
        || R <- ["10.0.0.1-2", "fd77::1-2-3", "fd77::g", "fd77:::1", "", "fd77::1-"]].

%% A bracketed IPv6 address in a target, as in a URL: the host without its brackets.
bracketed_test_() ->
    Targets = fun(Address) ->
                      check("{targets, [{t, #{address => \"" ++ Address ++ "\"}}]}.\n"
                            "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
                            "{sessions, [{s, #{steps => [{http, #{path => \"/\"}}]}}]}.\n")
              end,
    [?_assertMatch({ok, #{targets := #{t := #{host := H, port := P}}}}, Targets(A))
     || {A, H, P} <- [{"[::1]:8080", "::1", 8080}, {"http://[::1]:8080/", "::1", 8080},
                      {"http://[::1]/", "::1", 80}, {"https://[fd77::2]", "fd77::2", 443},
                      {"::1:8080", "::1", 8080}]]
    ++ [?_assertMatch({error, "s.scenario:1: " ++ _}, Targets(A))
        || A <- ["[::1]", "[::1]8080", "[]:80", "http://[::1"]].

terms_test() ->
    {ok, #{source_ips := []}} = check(?BASE),
    {ok, #{source_ips := [{127, 0, 0, 2}, {127, 0, 0, 3}]}} =
        check(?BASE ++ "{source_ips, [\"127.0.0.2\", \"127.0.0.3\"]}.\n").

terms_errors_test_() ->
    Err = fun(Value) -> check(?BASE ++ "\n{source_ips, " ++ Value ++ "}.\n") end,
    [?_assertMatch({error, "s.scenario:5: key source_ips: 0.0.0.0: the unspecified" ++ _},
                   Err("[\"127.0.0.2\", \"0.0.0.0\"]")),
     ?_assertMatch({error, "s.scenario:5: key source_ips: {interface, Name}" ++ _},
                   Err("[{interface, \"\"}]")),
     ?_assertMatch({error, "s.scenario:5: key source_ips: expected a list" ++ _}, Err("[]")),
     ?_assertMatch({error, "s.scenario:5: key source_ips: " ++ _}, Err("[nohost]")),
     ?_assertMatch({error, "s.scenario:5: key source_ips: IPv4 and IPv6" ++ _},
                   Err("[\"127.0.0.2\", \"::1\"]"))].

tsung_test_() ->
    Xml = fun(Ips) ->
                  "<?xml version=\"1.0\"?>\n<tsung>\n<clients><client host=\"localhost\">\n"
                  ++ Ips ++ "</client></clients>\n"
                  "<servers><server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/></servers>\n"
                  "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
                  "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n"
                  "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\">"
                  "<request><http url=\"/\" method=\"GET\"/></request></session></sessions>\n"
                  "</tsung>\n"
          end,
    Load = fun(Ips) ->
                   case beamscale_load_tsung:from_text("t.xml", Xml(Ips)) of
                       {ok, S, _} -> {ok, maps:get(source_ips, S)};
                       {error, E} -> {error, lists:flatten(beamscale_load_tsung:format_error(E))}
                   end
           end,
    [?_assertEqual({ok, [{127, 0, 0, 2}, {127, 0, 0, 3}]},
                   Load("<ip value=\"127.0.0.2\"/>\n<ip value=\"127.0.0.3\"/>\n")),
     ?_assertEqual({ok, []}, Load("")),
     ?_assertEqual({ok, [{127, 0, 0, 2}, {192, 168, 2, 223}]},
                   Load("<ip value=\"127.0.0.2\"/>\n<ip value=\"192.168.2.223\"/>\n")),
     ?_assertMatch({error, "t.xml:5: <ip value>: 0.0.0.0: the unspecified" ++ _},
                   Load("<ip value=\"127.0.0.2\"/>\n<ip value=\"0.0.0.0\"/>\n")),
     ?_assertEqual({ok, [{interface, "eth0"}]}, Load("<ip value=\"eth0\" scan=\"true\"/>\n")),
     ?_assertEqual({ok, [{127, 0, 0, 2}, {127, 0, 0, 3}]},
                   Load("<iprange value=\"127.0.0.2-3\"/>\n")),
     ?_assertMatch({error, "t.xml:4: <iprange value>: " ++ _},
                   Load("<iprange value=\"127.0.0.300\"/>\n")),
     ?_assertEqual({ok, [{16#fd77, 0, 0, 0, 0, 0, 0, 2}, {16#fd77, 0, 0, 0, 0, 0, 0, 3}]},
                   Load("<iprange version=\"v6\" value=\"fd77::2-3\"/>\n")),
     ?_assertEqual({ok, [{16#fd77, 0, 0, 0, 0, 0, 0, 2}]}, Load("<ip value=\"fd77::2\"/>\n")),
     ?_assertMatch({error, "t.xml:4: <iprange value>: 127.0.0.2-3: expected an IPv6" ++ _},
                   Load("<iprange version=\"v6\" value=\"127.0.0.2-3\"/>\n")),
     ?_assertEqual({error, "t.xml:4: <iprange version=\"v5\"> (expected v4 or v6)"},
                   Load("<iprange version=\"v5\" value=\"127.0.0.2\"/>\n"))].

%% Users of one agent take the addresses in turn; with none, sockets bind nothing.
round_robin_test() ->
    Self = self(),
    Sources = beamscale_load_source:new([{127, 0, 0, 2}, {127, 0, 0, 3}]),
    Pick = fun(S) ->
                   spawn(fun() -> ok = beamscale_load_source:choose(S),
                                  Self ! {opts, beamscale_load_source:opts()} end),
                   receive {opts, O} -> O end
           end,
    ?assertMatch([[{ip, {127, 0, 0, 2}} | _], [{ip, {127, 0, 0, 3}} | _],
                  [{ip, {127, 0, 0, 2}} | _]], [Pick(Sources) || _ <- [1, 2, 3]]),
    ?assertEqual([], Pick(beamscale_load_source:new([]))),
    ?assertMatch([inet6, {ip, {0, 0, 0, 0, 0, 0, 0, 1}} | _],
                 Pick(beamscale_load_source:new([{0, 0, 0, 0, 0, 0, 0, 1}]))).

%% The users of an address take turns: one binds a port (the kernel's odd ones first), the
%% next the address alone (IP_BIND_ADDRESS_NO_PORT, Linux's 24 at level 0: even ports first,
%% picked at connect).
address_without_port_test() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, P} = inet:port(L),
    Sources = beamscale_load_source:new([{127, 0, 0, 2}]),
    %% This process is each user in turn (eunit runs each test in a process of its own).
    Conns = [begin
                 ok = beamscale_load_source:choose(Sources),
                 {ok, {S, _}} = beamscale_load_tcp:connect(#{host => "127.0.0.1", port => P}),
                 {ok, {{127, 0, 0, 2}, Port}} = inet:sockname(S),
                 {ok, [{raw, 0, 24, <<Bit:32/native>>}]} = inet:getopts(S, [{raw, 0, 24, 4}]),
                 {S, Port rem 2, Bit}
             end || _ <- [1, 2, 3, 4]],
    ?assertEqual([{1, 0}, {0, 1}, {1, 0}, {0, 1}], [{Odd, Bit} || {_, Odd, Bit} <- Conns]),
    [gen_tcp:close(X) || X <- [L | [S || {S, _, _} <- Conns]]].
