%% The http2 kind against real servers on 127.0.0.1: nginx over h2 (TLS, ALPN) and h2c (prior
%% knowledge), and nghttpd (its echo of uploads for POST bodies past the flow-control windows).
%% The done-when load: a small file, 8 connections x 10 streams, 0 errors. Servers started in
%% throwaway directories and stopped by their OS pid (beamscale_load_servers).
-module(beamscale_load_h2_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([fragmented/0, fragmented/1]).
-export([nginx_h2c/1, nginx_h2_tls/1, nghttpd_upload/1, dynamic/1, nginx_stopped/1,
         http_version_2/1]).
-export([nginx_h2c/0, nginx_h2_tls/0, nghttpd_upload/0, dynamic/0, nginx_stopped/0,
         http_version_2/0]).

-import(beamscale_load_servers, [scenario/1, run/1, tmp_dir/2, free_port/0, certificate/1]).

%% Each user's loops: 8 users x 25 requests x 10 streams.
-define(LOOPS, 25).
-define(LOG_WAIT_MS, 5000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [nginx_h2c, nginx_h2_tls, nghttpd_upload, dynamic, http_version_2, fragmented,
          nginx_stopped].

init_per_suite(Config) ->
    {ok, _} = application:ensure_all_started(ssl),
    Config.

end_per_suite(_Config) -> ok.

nginx_h2c() -> [{doc, "h2c with prior knowledge to nginx: 8 users x 10 streams, 0 errors."}].
nginx_h2c(Config) ->
    with_h2c_nginx(Config, "h2_nginx_h2c", fun(Dir, Port) ->
        keep_alive_load(local(Port), Dir)
    end).

fragmented() -> [{doc, "nginx's h2c bytes one per TCP segment: 2 users x 2 x 10 streams read."}].
fragmented(Config) ->
    with_h2c_nginx(Config, "h2_fragmented", fun(Dir, Port) ->
        beamscale_load_trickle:with(Port, fun(Relay) ->
            T = load(local(Relay), 2, "[{loop, 2, [{http2, #{path => \"/small.txt\","
                                      " streams => 10}}]}]"),
            ?assertEqual(#{}, maps:get(reasons, T)),
            ?assertEqual(4, maps:get(requests, T)),
            ?assertEqual(40, ok_lines(filename:join(Dir, "access.log"), 40))
        end)
    end).

nginx_h2_tls() -> [{doc, "h2 over TLS (ALPN h2, verified) to nginx: 8 x 10 streams, 0 errors."}].
nginx_h2_tls(Config) ->
    Dir = tmp_dir(Config, "h2_nginx_tls"),
    {Ca, Cert, Key} = certificate(Dir),
    Port = free_port(),
    Tls = io_lib:format("ssl http2;\n    ssl_certificate ~ts; ssl_certificate_key ~ts",
                        [Cert, Key]),
    Stop = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Port, Tls, "")),
    try keep_alive_load(io_lib:format("#{address => \"127.0.0.1:~b\", tls => #{cacertfile => ~0p,"
                                      " server_name_indication => \"localhost\"}}", [Port, Ca]),
                        Dir)
    after Stop()
    end.

%% 8 users, each one connection, 25 requests of 10 concurrent streams: 2000 streams, each
%% answered with the file's 1000 bytes; one connect per user.
keep_alive_load(Target, Dir) ->
    T = load(Target, 8, io_lib:format("[{loop, ~b, [{http2, #{path => \"/small.txt\","
                                      " streams => 10}}]}]", [?LOOPS])),
    ?assertEqual(8, maps:get(sessions_done, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(8 * ?LOOPS, maps:get(requests, T)),
    ?assertEqual(8, beamscale_stats_hist:count(maps:get(connect, T))),
    ?assert(maps:get(bytes_received, T) > 8 * ?LOOPS * 10 * 1000),
    %% nginx saw every stream, over HTTP/2.
    ?assertEqual(8 * ?LOOPS * 10, ok_lines(filename:join(Dir, "access.log"), 8 * ?LOOPS * 10)).

%% The access log's "HTTP/2.0 200" lines once there are `N' (nginx logs a stream after its
%% response: the last lines may come a moment later), or what there are after ?LOG_WAIT_MS.
ok_lines(File, N) -> ok_lines(File, N, erlang:monotonic_time(millisecond) + ?LOG_WAIT_MS).

ok_lines(File, N, Deadline) ->
    {ok, B} = file:read_file(File),
    Got = length([L || L <- string:lexemes(binary_to_list(B), "\n"), L =:= "HTTP/2.0 200"]),
    case Got >= N orelse erlang:monotonic_time(millisecond) > Deadline of
        true -> Got;
        false -> timer:sleep(100), ok_lines(File, N, Deadline)
    end.

nginx_conf(Dir, Port, Listen, Extra) ->
    ok = file:write_file(filename:join(Dir, "small.txt"), binary:copy(<<"x">>, 1000)),
    io_lib:format(
      %% Workers as root: the suite's directory may be one only root traverses (a clone under
      %% `mktemp -d', 0700), and nginx's default worker user could not read the file (403).
      "user root;\nerror_log ~ts/error.log;\nevents { worker_connections 64; }\n"
      "http {\n"
      "  log_format proto '$server_protocol $status';\n"
      "  access_log ~ts/access.log proto;\n"
      "  client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
      "  uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
      "  keepalive_requests 100000;\n"
      "  server {\n"
      "    listen 127.0.0.1:~b ~ts;\n"
      "    root ~ts;\n"
      "    location = /hello { add_header Set-Cookie \"sid=abc42\"; return 200 'token=t-17'; }\n"
      "    location = /cookie { return 200 'got $cookie_sid'; }\n"
      "    location = /missing { return 404; }\n~ts"
      "  }\n}\n", [Dir, Dir, Dir, Dir, Dir, Dir, Dir, Port, Listen, Dir, Extra]).

nghttpd_upload() ->
    [{doc, "nghttpd (h2c) echoes a 300 KB POST: the body sent within the windows, read back."}].
nghttpd_upload(Config) ->
    Dir = tmp_dir(Config, "h2_nghttpd"),
    Port = free_port(),
    Stop = beamscale_load_servers:start_server(
             os:find_executable("nghttpd"),
             ["--no-tls", "-a", "127.0.0.1", "-d", Dir, "--echo-upload", integer_to_list(Port)],
             Port, Dir),
    try
        T = load(local(Port), 2, "[{loop, 3, [{http2, #{method => post, path => \"/\","
                                 " body => <<0:2400000>>, streams => 4}}]}]"),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(6, maps:get(requests, T)),
        %% 24 uploads of 300 000 bytes, each echoed.
        ?assert(maps:get(bytes_sent, T) > 24 * 300000),
        ?assert(maps:get(bytes_received, T) > 24 * 300000)
    after
        Stop()
    end.

dynamic() ->
    [{doc, "Variables, a cookie kept, a check and an unexpected status, as the http kind."}].
dynamic(Config) ->
    with_h2c_nginx(Config, "h2_dynamic", fun(Dir, Port) ->
        T = load(local(Port), 3,
                 "[{http2, #{path => \"/hello\", cookies => true,"
                 " extract => [{re, tok, \"token=([a-z0-9-]+)\"}]}},\n"
                 "  {http2, #{path => \"/cookie?t=%%_tok%%\", cookies => true,"
                 " match => [#{name => cookie, re => \"got abc42\", 'when' => nomatch,\n"
                 "             do => abort}]}},\n"
                 "  {http2, #{path => \"/missing\"}}]"),
        ?assertEqual(9, maps:get(requests, T)),
        %% Only the 404s fail: the cookie went back and the variable was filled.
        ?assertEqual(#{<<"http status 404">> => 3}, maps:get(reasons, T)),
        ?assertEqual(6, ok_lines(filename:join(Dir, "access.log"), 6))
    end).

http_version_2() ->
    [{doc, "A terms http step of version => 2 is HTTP/2: h2c to nginx, its streams each seen."}].
http_version_2(Config) ->
    with_h2c_nginx(Config, "h2_version", fun(Dir, Port) ->
        T = load(local(Port), 2, "[{loop, 3, [{http, #{version => 2, path => \"/small.txt\","
                                 " streams => 4}}]}]"),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(6, maps:get(requests, T)),
        %% 2 users x 3 steps x 4 streams, every one over HTTP/2 (an HTTP/1.1 request to this
        %% h2c-only listener would fail).
        ?assertEqual(24, ok_lines(filename:join(Dir, "access.log"), 24))
    end).

%% The totals of a one-second run of `Users' users (one each 0.1 s) of the session `Steps'
%% against the target `Target' (a terms map).
load(Target, Users, Steps) ->
    S = scenario(io_lib:format(
          "{targets, [{w, ~ts}]}.\n"
          "{phases, [{p, #{duration_s => 1, users_at => [~ts]}}]}.\n"
          "{sessions, [{s, #{steps => ~ts}}]}.\n",
          [Target, lists:join(", ", [io_lib:format("{0.~b, s}", [I])
                                     || I <- lists:seq(0, Users - 1)]), Steps])),
    #{total := T} = run(S),
    ct:pal("totals ~p", [maps:with([requests, errors, reasons, bytes_sent, bytes_received,
                                    sessions_done], T)]),
    T.

local(Port) -> io_lib:format("#{address => \"127.0.0.1:~b\"}", [Port]).

%% `Test(Dir, Port)' against an h2c nginx in a throwaway directory, stopped after it.
with_h2c_nginx(Config, Name, Test) ->
    Dir = tmp_dir(Config, Name),
    Port = free_port(),
    Stop = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Port, "http2", "")),
    try Test(Dir, Port)
    after Stop()
    end.

nginx_stopped() -> [{doc, "nginx stopped mid-load: errors by reason, the run ends in time."}].
nginx_stopped(Config) ->
    Dir = tmp_dir(Config, "h2_stopped"),
    Port = free_port(),
    Stop = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Port, "http2", "")),
    beamscale_load_servers:stopped_mid_load(
      Port, "[{loop, 20, [{http2, #{path => \"/small.txt\", streams => 2}}, {think, 50}]}]", Stop,
      #{duration_s => 3, stop_ms => 1500, min_done => 1, within_ms => 20000}).
