%% Tsung's ts_webdav sessions (HTTP with RFC 4918's methods and headers) read onto the http kind
%% and run against a real WebDAV server on 127.0.0.1: nginx with its dav module (PUT, DELETE,
%% MKCOL, COPY, MOVE) and dav_ext (PROPFIND, OPTIONS, LOCK, UNLOCK; Debian's
%% libnginx-mod-http-dav-ext), in a throwaway directory, stopped by its OS pid. The file is
%% examples/webdav.xml, with only its port rewritten.
-module(beamscale_load_webdav_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([webdav_example/0, webdav_example/1, webdav_refused/0, webdav_refused/1]).

-define(MODULE_SO, "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so").

suite() -> [{timetrap, {minutes, 2}}].

all() -> [webdav_example, webdav_refused].

%% Fails, not skips, when nginx or its dav_ext module is missing (start_server/4 names it).
init_per_suite(Config) ->
    ?assert(filelib:is_regular(?MODULE_SO), "install libnginx-mod-http-dav-ext"),
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_webdav_SUITE"),
    %% nginx's workers write the files and their temporary bodies. Run as root, nginx gives
    %% them a user of its own, who cannot reach a directory under a private one (a fresh
    %% clone in `mktemp -d': 403 and 500 on every write): they run as the test's user.
    [Www, Tmp] = [filename:join(Dir, D) || D <- ["www", "tmp"]],
    _ = [ok = file:make_dir(D) || D <- [Www, Tmp]],
    User = case string:trim(os:cmd("id -u")) of
               "0" -> "user root;\n";
               _ -> ""
           end,
    Port = beamscale_load_servers:free_port(),
    Conf = io_lib:format(
             "~tsload_module ~ts;\nerror_log ~ts/error.log;\nevents { worker_connections 64; }\n"
             "http {\n"
             "  access_log ~ts/access.log;\n"
             "  client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
             "  uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
             "  dav_ext_lock_zone zone=bs:1m;\n"
             "  server {\n"
             "    listen 127.0.0.1:~b;\n"
             "    location / {\n"
             "      root ~ts;\n"
             "      dav_methods PUT DELETE MKCOL COPY MOVE;\n"
             "      dav_ext_methods PROPFIND OPTIONS LOCK UNLOCK;\n"
             "      dav_ext_lock zone=bs;\n"
             "    }\n"
             "  }\n}\n", [User, ?MODULE_SO, Dir, Dir, Tmp, Dir, Dir, Dir, Dir, Port, Www]),
    Stop = beamscale_load_servers:nginx(Dir, Port, Conf),
    [{port, Port}, {stop, Stop}, {dir, Dir} | Config].

end_per_suite(Config) ->
    (proplists:get_value(stop, Config))(),
    Config.

%% The example against the server: every WebDAV request answered as RFC 4918 says (201, 204,
%% 207, 200 for LOCK), no variable unset (the counts `unset.*' 0): the lock token taken from
%% LOCK's header is sent back by UNLOCK; nginx has no PROPPATCH, whose 405 is each session's one
%% error, named by its status. What nginx logged shows the methods sent.
webdav_example() ->
    [{doc, "examples/webdav.xml (ts_webdav) against nginx's dav: answered, PROPPATCH's 405 "
           "named."}].
webdav_example(Config) ->
    S = example(Config),
    #{total := T} = beamscale_load_servers:run(S),
    ct:pal("~p", [maps:with([sessions_done, requests, errors, reasons, statuses, counts], T)]),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(9 * Done, maps:get(requests, T)),
    %% MKCOL and PUT 201; PROPFIND 207; LOCK 200; COPY, MOVE (nginx's), UNLOCK and DELETE 204.
    ?assertEqual(#{201 => 2 * Done, 207 => Done, 200 => Done, 204 => 4 * Done, 405 => Done},
                 maps:get(statuses, T)),
    ?assertEqual([<<"http status 405">>], maps:keys(maps:get(reasons, T))),
    ?assertEqual(Done, maps:get(errors, T)),
    ?assertEqual([0], lists:usort(maps:values(maps:get(counts, T)))),
    {ok, Log} = file:read_file(filename:join(proplists:get_value(dir, Config), "access.log")),
    [?assertNotEqual(nomatch, binary:match(Log, <<"\"", M/binary, " /d">>), M)
     || M <- [<<"MKCOL">>, <<"PROPFIND">>, <<"COPY">>, <<"MOVE">>, <<"LOCK">>, <<"UNLOCK">>]],
    %% Every collection made was deleted: nothing is left in the server's root.
    ?assertEqual({ok, []}, file:list_dir(filename:join(proplists:get_value(dir, Config), "www"))).

%% A WebDAV method's name that is no HTTP token is refused at its line, the element named.
webdav_refused() ->
    [{doc, "A ts_webdav request with a method that is no HTTP token: refused at its line."}].
webdav_refused(Config) ->
    Text = rewrite(Config, [{"method=\"MKCOL\"", "method=\"MK COL\""}]),
    {error, E} = beamscale_load_tsung:from_text("webdav.xml", Text),
    Msg = lists:flatten(beamscale_load_tsung:format_error(E)),
    ?assertMatch("webdav.xml:" ++ _, Msg),
    ?assertNotEqual(nomatch, string:find(Msg, "method \"MK COL\" is not an HTTP method name")).

example(Config) ->
    {ok, S, _Ignored} = beamscale_load_tsung:from_text("webdav.xml", rewrite(Config, [])),
    S.

%% The example with its port the suite's server's, and `Rewrites' ({From, To}) applied.
rewrite(Config, Rewrites) ->
    {ok, Bin} = file:read_file(filename:join(root(), "examples/webdav.xml")),
    Port = integer_to_list(proplists:get_value(port, Config)),
    lists:foldl(fun({From, To}, Text) ->
                        Next = lists:flatten(string:replace(Text, From, To, all)),
                        ?assertNotEqual(Text, Next, {rewrite, From}),
                        Next
                end, unicode:characters_to_list(Bin), [{"port=\"8090\"", "port=\"" ++ Port ++ "\""}
                                                       | Rewrites]).

root() -> lists:foldl(fun(_, D) -> filename:dirname(D) end, ?FILE, [1, 2, 3, 4]).
