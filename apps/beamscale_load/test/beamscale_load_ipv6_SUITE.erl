%% IPv6 end to end (issue #48): `<iprange version="v6">', `<ip value>' with an IPv6 address,
%% `<client host="::1">', `<server host="::1">' of types `tcp6', `ssl6' and `udp6', and terms
%% scenarios' bracketed targets, against nginx (plain and TLS) and TCP and UDP echoes on ::1.
%% Source addresses other than ::1 live on `lo' of a network namespace made here (nothing is
%% added outside it), where a peer node runs the load; nginx's access log and the echoes'
%% records say which source each request came from. The namespace is removed after, with
%% anything left in it (beamscale_load_test_netns).
-module(beamscale_load_ipv6_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([tsung_iprange_v6/1, tsung_ip_v6/1, terms_bracketed/1, tsung_ssl6/1, tsung_udp6/1]).
-export([tsung_iprange_v6/0, tsung_ip_v6/0, terms_bracketed/0, tsung_ssl6/0, tsung_udp6/0]).

-define(CALL_TIMEOUT, 30000).
-define(SOURCES, ["fd77::2", "fd77::3"]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [tsung_iprange_v6, tsung_ip_v6, terms_bracketed, tsung_ssl6, tsung_udp6].

init_per_suite(Config) ->
    Ns = "bs_v6_" ++ os:getpid(),
    try
        beamscale_load_test_netns:add(Ns),
        %% nodad: the addresses are usable at once, not after duplicate address detection.
        lists:foreach(fun(C) -> beamscale_load_test_netns:ip(["-n", Ns | C]) end,
                      [["link", "set", "lo", "up"]
                       | [["-6", "addr", "add", A ++ "/128", "dev", "lo", "nodad"]
                          || A <- ?SOURCES]]),
        Peer = beamscale_load_test_netns:peer(Ns),
        Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_ipv6_SUITE"),
        [HttpPort, TlsPort, EchoPort, UdpPort] =
            [beamscale_load_servers:free_port() || _ <- [http, tls, echo, udp]],
        Nginx = nginx(Ns, Dir, HttpPort, TlsPort),
        [Rec, UdpRec] = [peer:call(Peer, beamscale_load_test_netns, F,
                                   [{0, 0, 0, 0, 0, 0, 0, 1}, P], ?CALL_TIMEOUT)
                         || {F, P} <- [{recorder, EchoPort}, {udp_recorder, UdpPort}]],
        ?assert(is_pid(Rec), Rec),
        ?assert(is_pid(UdpRec), UdpRec),
        [{ns, Ns}, {peer, Peer}, {nginx, Nginx}, {dir, Dir}, {http_port, HttpPort},
         {tls_port, TlsPort}, {echo_port, EchoPort}, {recorder, Rec}, {udp_port, UdpPort},
         {udp_recorder, UdpRec} | Config]
    catch C:R:St -> beamscale_load_test_netns:remove(Ns), erlang:raise(C, R, St)
    end.

end_per_suite(Config) ->
    catch beamscale_load_test_netns:stop(?config(nginx, Config)),
    catch peer:stop(?config(peer, Config)),
    Ns = ?config(ns, Config),
    beamscale_load_test_netns:remove(Ns),
    ?assertNot(lists:member(Ns, beamscale_load_test_netns:list())).

%% nginx in the namespace on [::1]:Port and, over TLS (a certificate made here), [::1]:TlsPort,
%% each request's client address logged.
nginx(Ns, Dir, Port, TlsPort) ->
    {_Ca, Cert, Key} = beamscale_load_servers:certificate(Dir),
    Conf = io_lib:format(
             "error_log ~ts/error.log;\nevents { worker_connections 64; }\n"
             "http {\n"
             "  log_format seen '$remote_addr $request_uri';\n"
             "  access_log ~ts/access.log seen;\n"
             "  client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
             "  uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
             "  server {\n"
             "    listen [::1]:~b;\n"
             "    location / { return 200 \"ok\\n\"; }\n"
             "  }\n"
             "  server {\n"
             "    listen [::1]:~b ssl;\n"
             "    ssl_certificate ~ts;\n    ssl_certificate_key ~ts;\n"
             "    location / { return 200 \"tls\\n\"; }\n"
             "  }\n}\n", [Dir, Dir, Dir, Dir, Dir, Dir, Dir, Port, TlsPort, Cert, Key]),
    File = filename:join(Dir, "nginx.conf"),
    ok = file:write_file(File, Conf),
    beamscale_load_test_netns:start(
      Ns, os:find_executable("nginx"),
      ["-p", Dir, "-c", File, "-g", "daemon off; pid " ++ Dir ++ "/nginx.pid;"], Port).

%% The client addresses nginx logged for requests to `Path'.
logged(Config, Path) ->
    {ok, Log} = file:read_file(filename:join(?config(dir, Config), "access.log")),
    lists:usort([binary_to_list(A)
                 || L <- binary:split(Log, <<"\n">>, [global]),
                    [A, P] <- [binary:split(L, <<" ">>)], P =:= list_to_binary(Path)]).

%% The sources the echo (on the peer) accepted since it was last asked.
accepted(Peer, Rec) -> peer:call(Peer, beamscale_load_test_netns, accepted, [Rec], ?CALL_TIMEOUT).

tsung(Client, Server, {Type, Request}) ->
    Text = io_lib:format(
             "<?xml version=\"1.0\"?>\n<tsung>\n"
             "<clients>~ts</clients>\n<servers>~ts</servers>\n"
             "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
             "<users interarrival=\"0.1\" unit=\"second\"/></arrivalphase></load>\n"
             "<sessions><session name=\"s\" probability=\"100\" type=\"~ts\">"
             "<request>~ts</request></session></sessions>\n</tsung>\n",
             [Client, Server, Type, Request]),
    {ok, S, _} = beamscale_load_tsung:from_text("v6.xml", lists:flatten(Text)),
    S.

run(Config, S) ->
    {ok, #{total := T}} =
        peer:call(?config(peer, Config), beamscale_load_run, run,
                  [S#{time_limit_s := 20}, maps:get(targets, S), #{seed => 1}], ?CALL_TIMEOUT),
    ct:pal("~p", [maps:with([sessions_done, requests, errors, reasons], T)]),
    ?assert(maps:get(sessions_done, T) >= 3),
    ?assertEqual(0, maps:get(errors, T)),
    T.

tsung_iprange_v6() ->
    [{doc, "<iprange version=\"v6\" value=\"fd77::2-3\"> on a client here, an HTTP server "
           "host=\"::1\" type=\"tcp6\": nginx logs requests from both sources, from no other."}].
tsung_iprange_v6(Config) -> range_v6(Config, http_port, "tcp6", "/range").

%% An HTTP request to `<server host="::1" type=Type>' from each source of an `<iprange>'.
range_v6(Config, PortKey, Type, Path) ->
    S = tsung("<client host=\"localhost\"><iprange version=\"v6\" value=\"fd77::2-3\"/></client>",
              io_lib:format("<server host=\"::1\" port=\"~b\" type=\"~ts\"/>",
                            [?config(PortKey, Config), Type]),
              {"ts_http", "<http url=\"" ++ Path ++ "\" method=\"GET\"/>"}),
    T = run(Config, S),
    ?assertEqual(maps:get(sessions_done, T), maps:get(requests, T)),
    ?assertEqual(#{200 => maps:get(requests, T)}, maps:get(statuses, T)),
    ?assertEqual(?SOURCES, logged(Config, Path)).

tsung_ip_v6() ->
    [{doc, "<client host=\"::1\"> (this machine) with <ip value=\"fd77::3\">, a raw TCP server "
           "host=\"::1\" type=\"tcp6\": the echo accepts every connection from fd77::3."}].
tsung_ip_v6(Config) -> echo_v6(Config, recorder, echo_port, "tcp6", "fd77::3").

%% A ts_raw session from `<ip value=Source>' to `<server host="::1" type=Type>', an echo whose
%% recorder is `RecKey': it saw `Source' alone, and answered every send.
echo_v6(Config, RecKey, PortKey, Type, Source) ->
    P = ?config(peer, Config),
    Rec = ?config(RecKey, Config),
    _ = accepted(P, Rec),
    S = tsung("<client host=\"::1\"><ip value=\"" ++ Source ++ "\"/></client>",
              io_lib:format("<server host=\"::1\" port=\"~b\" type=\"~ts\"/>",
                            [?config(PortKey, Config), Type]),
              {"ts_raw", "<raw data=\"hello\" ack=\"local\"/>"}),
    T = run(Config, S),
    ?assertEqual(maps:get(sessions_done, T), maps:get(requests, T)),
    ?assertEqual([Source], accepted(P, Rec)).

terms_bracketed() ->
    [{doc, "A terms scenario with source_ips fd77::2 and fd77::3, targets \"http://[::1]:PORT\" "
           "and \"[::1]:PORT\": both servers see both sources, nginx a bracketed Host."}].
terms_bracketed(Config) ->
    P = ?config(peer, Config),
    Rec = ?config(recorder, Config),
    _ = accepted(P, Rec),
    S = beamscale_load_servers:scenario(
          io_lib:format(
            "{source_ips, [\"fd77::2\", \"fd77::3\"]}.\n"
            "{targets, [{web, #{address => \"http://[::1]:~b/\"}},"
            " {echo, #{address => \"[::1]:~b\"}}]}.\n"
            "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
            "{sessions, [{s, #{steps => [{http, #{target => web, path => \"/terms\"}},"
            " {tcp, #{target => echo, send => <<\"hi\">>, reply => {length, 2}}}]}}]}.\n",
            [?config(http_port, Config), ?config(echo_port, Config)])),
    T = run(Config, S),
    ?assertEqual(2 * maps:get(sessions_done, T), maps:get(requests, T)),
    ?assertEqual(?SOURCES, logged(Config, "/terms")),
    ?assertEqual(?SOURCES, accepted(P, Rec)).

tsung_ssl6() ->
    [{doc, "<server host=\"::1\" type=\"ssl6\">: HTTP over TLS to nginx on [::1], from both "
           "sources of <iprange version=\"v6\">, 0 errors."}].
tsung_ssl6(Config) -> range_v6(Config, tls_port, "ssl6", "/tls").

tsung_udp6() ->
    [{doc, "<server host=\"::1\" type=\"udp6\">, a ts_raw session from <ip value=\"fd77::2\">: "
           "the UDP echo on ::1 answers every datagram, each sent from fd77::2."}].
tsung_udp6(Config) -> echo_v6(Config, udp_recorder, udp_port, "udp6", "fd77::2").
