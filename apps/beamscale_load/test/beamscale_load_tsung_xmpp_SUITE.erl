%% Tsung's XMPP attributes read as Tsung reads them (issue #48), against an ejabberd of the
%% suite's own on 127.0.0.1: `<server type="bosh_ssl">' (BOSH over TLS, through nginx with TLS
%% in front of ejabberd's HTTP port; nginx's log shows the requests came that way) and
%% `<jabber ack="parse">' (acknowledged as `local' is, as Tsung 1.7 does).
-module(beamscale_load_tsung_xmpp_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([bosh_ssl/1, websocket_ssl/1, ack_parse/1]).
-export([bosh_ssl/0, websocket_ssl/0, ack_parse/0]).

-define(USERS, 10).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [bosh_ssl, websocket_ssl, ack_parse].

%% Fails, not skips, when ejabberd or nginx cannot start.
init_per_suite(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "tsung_xmpp_ejabberd"),
    {C2s, Http, Stop} = beamscale_load_xmpp_server:start(Dir, ?USERS, #{}),
    Nginx = beamscale_load_servers:tmp_dir(Config, "tsung_xmpp_nginx"),
    {_Ca, Cert, Key} = beamscale_load_servers:certificate(Nginx),
    Tls = beamscale_load_servers:free_port(),
    StopNginx = beamscale_load_servers:nginx(Nginx, Tls, nginx_conf(Nginx, Tls, Http, Cert, Key)),
    [{c2s, C2s}, {tls, Tls}, {nginx_dir, Nginx}, {stop, fun() -> StopNginx(), Stop() end}
     | Config].

end_per_suite(Config) ->
    (?config(stop, Config))(),
    Config.

%% TLS on 127.0.0.1:`Tls', BOSH and WebSocket passed on to ejabberd's HTTP port; each request
%% logged.
nginx_conf(Dir, Tls, Http, Cert, Key) ->
    io_lib:format(
      "error_log ~ts/error.log;\nevents { worker_connections 64; }\n"
      "http {\n"
      "  log_format seen '$https|$request_method|$request_uri|$status';\n"
      "  access_log ~ts/access.log seen;\n"
      "  client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
      "  uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
      "  server {\n"
      "    listen 127.0.0.1:~b ssl;\n"
      "    ssl_certificate ~ts; ssl_certificate_key ~ts;\n"
      "    location /http-bind { proxy_pass http://127.0.0.1:~b;\n"
      "      proxy_http_version 1.1; proxy_set_header Connection \"\"; }\n"
      "    location /ws { proxy_pass http://127.0.0.1:~b; proxy_http_version 1.1;\n"
      "      proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection upgrade; }\n"
      "  }\n}\n", [Dir, Dir, Dir, Dir, Dir, Dir, Dir, Tls, Cert, Key, Http, Http]).

bosh_ssl() ->
    [{doc, "<server type=\"bosh_ssl\">: XMPP over BOSH over TLS (nginx in front of ejabberd): "
           "SASL, roster, close with 0 errors; nginx logged the POSTs to /http-bind as HTTPS."}].
bosh_ssl(Config) ->
    {T, Lines} = over_tls(Config, "bosh_ssl", ""),
    Posts = [L || L <- Lines, L =:= <<"on|POST|/http-bind|200">>],
    %% Each user's session: a BOSH request at least for each of its 7 requests.
    ?assert(length(Posts) >= 7 * maps:get(sessions_done, T), Lines).

websocket_ssl() ->
    [{doc, "<server type=\"websocket_ssl\">, <jabber type=\"connect\" version=\"websocket\">: "
           "XMPP over WebSocket over TLS (nginx in front of ejabberd), 0 errors; nginx logged "
           "one upgrade (101) to /ws a session, as HTTPS."}].
websocket_ssl(Config) ->
    {T, Lines} = over_tls(Config, "websocket_ssl", " version=\"websocket\""),
    Upgrades = [L || L <- Lines, L =:= <<"on|GET|/ws|101">>],
    ?assertEqual(maps:get(sessions_done, T), length(Upgrades), Lines).

%% A run to nginx's TLS port with a server of `Type': its totals and nginx's log lines.
over_tls(Config, Type, Connect) ->
    Xml = xml(?config(tls, Config), Type, "local", Connect),
    {ok, S, _} = beamscale_load_tsung:from_text(Type ++ ".xml", Xml),
    ?assertMatch(#{server := #{tls := _}}, maps:get(targets, S)),
    T = run(S),
    {ok, Log} = file:read_file(filename:join(?config(nginx_dir, Config), "access.log")),
    {T, binary:split(Log, <<"\n">>, [global])}.

ack_parse() ->
    [{doc, "<jabber ack=\"parse\"> on every request but the presence: each awaited as local "
           "(0 errors; a match on the roster's reply counted) over c2s."}].
ack_parse(Config) ->
    Xml = xml(?config(c2s, Config), "tcp", "parse", ""),
    {ok, S, _} = beamscale_load_tsung:from_text("ack_parse.xml", Xml),
    T = run(S),
    Done = maps:get(sessions_done, T),
    %% Connect, SASL, connect, bind, session, presence, roster, close.
    ?assertEqual(8 * Done, maps:get(requests, T)),
    %% The roster's reply is what acknowledged its request: the match (refused on a no_ack
    %% request) found it.
    ?assertMatch(#{<<"match.r">> := Done}, maps:get(counts, T)).

run(S) ->
    #{total := T} = beamscale_load_servers:run(S),
    ct:pal("~p", [maps:with([requests, errors, reasons, sessions_done], T)]),
    ?assertEqual(0, maps:get(errors, T), maps:get(reasons, T)),
    ?assert(maps:get(sessions_done, T) >= 3),
    T.

%% Users user1..user5 (the server's own), one session each: SASL, roster (matched), close; `Ack'
%% on each request but the presence.
%% `Connect': attributes of the connects.
xml(Port, Type, Ack, Connect) ->
    Req = fun("connect") ->
                  io_lib:format("<request><jabber type=\"connect\" ack=\"~ts\"~ts/></request>\n",
                                [Ack, Connect]);
             ("iq:roster:get" = J) ->
                  io_lib:format("<request><match do=\"continue\" when=\"match\" name=\"r\">"
                                "jabber:iq:roster</match><jabber type=\"~ts\" ack=\"~ts\"/>"
                                "</request>\n", [J, Ack]);
             (J) -> io_lib:format("<request><jabber type=\"~ts\" ack=\"~ts\"/></request>\n",
                                  [J, Ack])
          end,
    lists:flatten(io_lib:format(
      "<?xml version=\"1.0\"?>\n<tsung>\n"
      "<clients><client host=\"localhost\" use_controller_vm=\"true\"/></clients>\n"
      "<servers><server host=\"127.0.0.1\" port=\"~b\" type=\"~ts\"/></servers>\n"
      "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
      "<users maxnumber=\"5\" interarrival=\"0.1\" unit=\"second\"/></arrivalphase></load>\n"
      "<options><option type=\"ts_jabber\" name=\"domain\" value=\"~ts\"/>"
      "<option type=\"ts_jabber\" name=\"username\" value=\"user\"/>"
      "<option type=\"ts_jabber\" name=\"passwd\" value=\"pass\"/>"
      "<option type=\"ts_jabber\" name=\"userid_max\" value=\"5\"/>"
      "<option name=\"bosh_path\" value=\"/http-bind\"/>"
      "<option name=\"websocket_path\" value=\"/ws\"/></options>\n"
      "<sessions><session probability=\"100\" name=\"x\" type=\"ts_jabber\">\n~ts"
      "<request><jabber type=\"presence:initial\" ack=\"no_ack\"/></request>\n~ts"
      "</session></sessions>\n</tsung>\n",
      [Port, Type, beamscale_load_xmpp_server:domain(),
       [Req(J) || J <- ["connect", "auth_sasl", "connect", "auth_sasl_bind",
                        "auth_sasl_session"]],
       [Req(J) || J <- ["iq:roster:get", "close"]]])).
