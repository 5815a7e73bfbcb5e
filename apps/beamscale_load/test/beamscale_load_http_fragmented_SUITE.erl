%% Plain HTTP from a well-behaved nginx whose bytes arrive one per TCP segment (issue 55): the
%% head, a Content-Length body and keep-alive read right however the bytes are cut. Over TLS
%% the record layer puts the pieces back together first, so only a plain connection hands the
%% HTTP reader one-byte pieces.
-module(beamscale_load_http_fragmented_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([plain_http/0, plain_http/1]).

-import(beamscale_load_servers, [scenario/1, run/1, tmp_dir/2, free_port/0]).

%% Bytes of the file served: its bytes cross the relay one per segment.
-define(BODY, 3000).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [plain_http].

plain_http() ->
    [{doc, "nginx's plain HTTP one byte per TCP segment: every reply read whole, 0 errors."}].
plain_http(Config) ->
    Dir = tmp_dir(Config, "http_fragmented"),
    Www = filename:join(Dir, "www"),
    ok = filelib:ensure_path(Www),
    ok = file:write_file(filename:join(Www, "body.txt"), binary:copy(<<"x">>, ?BODY)),
    Port = free_port(),
    Stop = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Port, Www)),
    try
        beamscale_load_trickle:with(Port, fun(Relay) ->
            S = scenario(io_lib:format(
                "{targets, [{w, #{address => \"127.0.0.1:~b\"}}]}.\n"
                "{phases, [{p, #{duration_s => 2, rate => 3}}]}.\n"
                "{sessions, [{s, #{steps => [{http, #{path => \"/hello\"}},"
                " {http, #{path => \"/body.txt\"}}, {http, #{path => \"/hello\"}}]}}]}.\n",
                [Relay])),
            #{total := T} = run(S),
            Done = maps:get(sessions_done, T),
            ct:pal("~b sessions, ~b bytes received", [Done, maps:get(bytes_received, T)]),
            ?assert(Done >= 2),
            ?assertEqual(#{}, maps:get(reasons, T)),
            ?assertEqual(0, maps:get(errors, T)),
            ?assertEqual(3 * Done, maps:get(requests, T)),
            %% Every body read whole: the file's bytes and two 5-byte replies a session, heads
            %% besides.
            ?assert(maps:get(bytes_received, T) > Done * (?BODY + 10))
        end)
    after
        Stop()
    end.

nginx_conf(Dir, Port, Www) ->
    Temps = [[T, "_temp_path ", Dir, ";\n"]
             || T <- ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]],
    %% Run as root, nginx gives its workers a user of their own, who cannot read a file under a
    %% private directory (a fresh clone in `mktemp -d': 403): they run as the test's user.
    io_lib:format("user root;\nerror_log ~ts/error.log;\nevents { worker_connections 64; }\n"
                  "http {\n  access_log off;\n~ts"
                  "  server {\n    listen 127.0.0.1:~b;\n    root ~ts;\n"
                  "    location = /hello { return 200 'hello'; }\n  }\n}\n",
                  [Dir, Temps, Port, Www]).
