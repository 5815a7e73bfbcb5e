%% Tsung's remaining features against one nginx started here on 127.0.0.1 (issue #38): replies
%% counted by status and statuses a request expects, the User-Agent header, HTTP methods beyond
%% the common ones. nginx's access log says what it received.
-module(beamscale_load_tsung_more_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([statuses/1, tsung_match_status/1]).
-export([statuses/0, tsung_match_status/0]).

-import(beamscale_load_servers, [scenario/1, run/1, tmp_dir/2, free_port/0]).

%% nginx logs a request after its reply: the last lines may come a moment later.
-define(LOG_WAIT_MS, 5000).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [statuses, tsung_match_status].

init_per_suite(Config) ->
    Dir = tmp_dir(Config, "tsung_more_nginx"),
    Port = free_port(),
    Stop = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Port)),
    [{nginx, Stop}, {port, Port}, {dir, Dir} | Config].

end_per_suite(Config) ->
    (?config(nginx, Config))(),
    ok.

nginx_conf(Dir, Port) ->
    io_lib:format(
      "error_log ~ts/error.log;\nevents { worker_connections 64; }\n"
      "http {\n"
      "  log_format seen '$request_method|$http_user_agent|$uri';\n"
      "  access_log ~ts/access.log seen;\n"
      "  client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
      "  uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
      "  server {\n"
      "    listen 127.0.0.1:~b;\n"
      "    location / { return 200 'hello'; }\n"
      "    location /missing { return 404; }\n"
      "    location /teapot { return 418; }\n"
      "  }\n}\n", [Dir, Dir, Dir, Dir, Dir, Dir, Dir, Port]).

target(Config) -> io_lib:format("{targets, [{w, #{address => \"127.0.0.1:~b\"}}]}.\n",
                                [?config(port, Config)]).

statuses() -> [{doc, "Every reply counted by status, per second and in total; a status a "
                     "request names is not an error, another is."}].
statuses(Config) ->
    S = scenario([target(Config),
                  "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
                  "{sessions, [{s, #{steps => [{http, #{path => \"/\"}},"
                  " {http, #{path => \"/missing\", status => [200, 404]}},"
                  " {http, #{path => \"/teapot\"}}]}}]}.\n"]),
    #{total := T, rows := Rows} = R = run(S),
    D = maps:get(sessions_done, T),
    ?assert(D >= 3),
    ?assertEqual(#{200 => D, 404 => D, 418 => D}, maps:get(statuses, T)),
    ?assertEqual(D, maps:get(errors, T)),
    ?assertEqual(#{<<"http status 418">> => D}, maps:get(reasons, T)),
    %% The seconds add up to the total, and summary.json names codes as text.
    ?assertEqual(3 * D, lists:sum([N || Row <- Rows, {_, N} <- maps:to_list(
                                                                  maps:get(statuses, Row))])),
    Summary = beamscale_load_results:summary(R),
    ?assertEqual(#{<<"200">> => D, <<"404">> => D, <<"418">> => D}, maps:get(statuses, Summary)),
    ?assertMatch([_ | _], [Sec || #{statuses := #{<<"418">> := _}} = Sec
                                      <- maps:get(per_second, Summary)]).

tsung_match_status() ->
    [{doc, "A Tsung <match> on a status line makes that status expected: 0 errors."}].
tsung_match_status(Config) ->
    Xml = tsung_file(Config,
                     "<request><match do=\"continue\" when=\"match\">HTTP/1.1 404</match>"
                     "<http url=\"/missing\" method=\"GET\"/></request>"
                     "<request><http url=\"/teapot\" method=\"GET\"/></request>"),
    #{total := T} = run(Xml),
    D = maps:get(sessions_done, T),
    ?assert(D >= 3),
    ?assertEqual(#{404 => D, 418 => D}, maps:get(statuses, T)),
    ?assertEqual(#{<<"http status 418">> => D}, maps:get(reasons, T)).

%% A Tsung file of one HTTP session against this suite's nginx.
tsung_file(Config, Requests) ->
    tsung_file(Config, "", Requests).

tsung_file(Config, Options, Requests) ->
    Text = io_lib:format(
             "<?xml version=\"1.0\"?>\n<tsung>\n"
             "<clients><client host=\"localhost\" use_controller_vm=\"true\"/></clients>\n"
             "<servers><server host=\"127.0.0.1\" port=\"~b\" type=\"tcp\"/></servers>\n"
             "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
             "<users interarrival=\"0.1\" unit=\"second\"/></arrivalphase></load>\n"
             "<options>~ts</options>\n"
             "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\">~ts"
             "</session></sessions>\n</tsung>\n", [?config(port, Config), Options, Requests]),
    case beamscale_load_tsung:from_text("more.xml", lists:flatten(Text)) of
        {ok, S, _Ignored} -> S;
        {error, E} -> ct:fail("~ts", [beamscale_load_tsung:format_error(E)])
    end.
