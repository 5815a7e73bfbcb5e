%% `beamscale record': headless Chromium browses a few pages of a test nginx site through the
%% recording proxy; the recorded terms scenario and Tsung file, loaded against the same nginx,
%% send the same requests (nginx's access log says which).
-module(beamscale_record_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([browse_and_replay/1, writes_post_and_think/1]).
-export([browse_and_replay/0, writes_post_and_think/0]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [writes_post_and_think, browse_and_replay].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_record"),
    Www = filename:join(Dir, "www"),
    ok = filelib:ensure_path(Www),
    Page = fun(Title, Links) ->
                   ["<html><head><title>", Title, "</title><link rel=\"icon\" href=\"data:,\">"
                    "<link rel=\"stylesheet\" href=\"/style.css\"></head><body>",
                    [["<a href=\"", L, "\">", L, "</a>"] || L <- Links],
                    "<img src=\"/dot.svg\"></body></html>"]
           end,
    ok = file:write_file(filename:join(Www, "index.html"), Page("home", ["/a.html"])),
    ok = file:write_file(filename:join(Www, "a.html"), Page("a", ["/index.html"])),
    ok = file:write_file(filename:join(Www, "style.css"), "body { color: #333 }\n"),
    ok = file:write_file(filename:join(Www, "dot.svg"),
                         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"/>"),
    Port = beamscale_load_servers:free_port(),
    Stop = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Www, Port)),
    [{nginx, {Stop, Port, Dir}} | Config].

end_per_suite(Config) ->
    {Stop, _, _} = ?config(nginx, Config),
    Stop().

%% Two pages browsed (each with its stylesheet and image), a pause between them: the same
%% requests again from the recorded terms file and from the recorded Tsung file.
browse_and_replay() -> [{doc, "Chromium through the proxy; both recorded files replay it."}].
browse_and_replay(Config) ->
    Chromium = os:find_executable("chromium"),
    is_list(Chromium) orelse ct:fail("no chromium (scripts/install-deps.sh installs it)"),
    {_, Port, Dir} = ?config(nginx, Config),
    Base = filename:join(?config(priv_dir, Config), "beamscale_record_browse"),
    {ok, Proxy} = beamscale_record:start(#{port => 0, base => Base}),
    Via = ["--proxy-server=http://127.0.0.1:" ++ integer_to_list(beamscale_record:port(Proxy)),
           "--proxy-bypass-list=<-loopback>", "--dump-dom"],
    Url = fun(P) -> "http://127.0.0.1:" ++ integer_to_list(Port) ++ P end,
    Log0 = log(Dir),
    Dom = beamscale_test_chromium:run(Chromium, Config, Via ++ [Url("/index.html")]),
    ?assertNotEqual(nomatch, binary:match(Dom, <<"/a.html">>)),
    timer:sleep(300),
    _ = beamscale_test_chromium:run(Chromium, Config, Via ++ [Url("/a.html")]),
    N = beamscale_record:stop(Proxy),
    Browsed = lists:sort(log(Dir) -- Log0),
    ct:pal("recorded ~b requests: ~p", [N, Browsed]),
    ?assertEqual(N, length(Browsed)),
    [?assert(lists:member(R, Browsed)) || R <- ["GET /index.html", "GET /a.html",
                                                "GET /style.css", "GET /dot.svg"]],
    [begin
         Before = log(Dir),
         {ok, S} = beamscale_scenario_file:read(Base ++ Ext),
         {ok, _, _} = beamscale_loadtest:run(S, #{dir => Base ++ "_run" ++ Ext, quiet => true,
                                                seed => 1}),
         ?assertEqual({Ext, Browsed}, {Ext, lists:sort(log(Dir) -- Before)})
     end || Ext <- [".scenario", ".xml"]],
    {ok, Terms} = file:read_file(Base ++ ".scenario"),
    ?assertMatch({match, _}, re:run(Terms, "\\{think,[0-9]+\\}")).

%% A POST's body and content type, and a think time from a gap, in both files.
writes_post_and_think() -> [{doc, "POST body, kept headers and think times in both files."}].
writes_post_and_think(Config) ->
    Reqs = [#{method => get, host => "127.0.0.1", port => 8080, path => "/", headers => [],
              body => <<>>, status => 200, at => 1000},
            #{method => post, host => "127.0.0.1", port => 8080, path => "/f?a=1&b=2",
              headers => [{"content-type", "application/x-www-form-urlencoded"},
                          {"cookie", "s=1"}],
              body => <<"x=1&y=2">>, status => 302, at => 3500}],
    File = filename:join(?config(priv_dir, Config), "beamscale_record_post"),
    ok = file:write_file(File ++ ".scenario", beamscale_record_write:terms(Reqs)),
    ok = file:write_file(File ++ ".xml", beamscale_record_write:tsung(Reqs)),
    [begin
         {ok, #{sessions := [#{steps := Steps}], targets := Targets}} =
             beamscale_scenario_file:read(File ++ Ext),
         ct:pal("~ts: ~p", [Ext, Steps]),
         ?assertEqual(1, map_size(Targets)),
         ?assertEqual(3, length(Steps)),
         {think, {constant, Ms}} = lists:nth(2, Steps),
         ?assert(Ms == 2500),
         %% The POST's line, kept header and body (a Tsung session also manages cookies).
         Text = iolist_to_binary(io_lib:format("~0p", [lists:last(Steps)])),
         [?assertNotEqual(nomatch, binary:match(Text, Part))
          || Part <- [<<"POST /f?a=1&b=2 HTTP/1.1">>,
                      <<"content-type: application/x-www-form-urlencoded">>, <<"x=1&y=2">>]],
         %% A cookie is the server's to give again, not a recorded constant.
         ?assertEqual(nomatch, binary:match(Text, <<"s=1">>))
     end || Ext <- [".scenario", ".xml"]].

%%% Helpers

log(Dir) ->
    case file:read_file(filename:join(Dir, "access.log")) of
        {ok, Bin} -> [binary_to_list(L) || L <- binary:split(Bin, <<"\n">>, [global, trim])];
        {error, enoent} -> []
    end.

nginx_conf(Dir, Www, Port) ->
    Temps = [[T, "_temp_path ", Dir, ";\n"] || T <- ["client_body", "proxy", "fastcgi", "uwsgi",
                                                     "scgi"]],
    %% Workers as root when the test runs as root: the files are under the test's directories,
    %% which a fresh clone in `mktemp -d' (mode 0700) keeps from nginx's default user (403).
    io_lib:format("user root;\nerror_log ~ts/error.log;\nevents {}\n"
                  "http {\n log_format req '$request_method $request_uri';\n"
                  " access_log ~ts/access.log req;\n~ts"
                  " types { text/html html; text/css css; image/svg+xml svg; }\n"
                  " server {\n  listen 127.0.0.1:~b;\n  root ~ts;\n }\n}\n",
                  [Dir, Dir, Temps, Port, Www]).
