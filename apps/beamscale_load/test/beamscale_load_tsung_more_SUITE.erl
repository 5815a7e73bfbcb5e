%% Tsung's remaining features against one nginx started here on 127.0.0.1 (issue #38): replies
%% counted by status and statuses a request expects, the User-Agent header, HTTP methods beyond
%% the common ones. nginx's access log says what it received.
-module(beamscale_load_tsung_more_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([statuses/1, tsung_match_status/1, user_agents/1, methods/1, max_restart/1,
         abort_test/1, think_from_variable/1, abort_element/1, fixed_users/1,
         foreach/1, rendezvous/1, relations/1]).
-export([statuses/0, tsung_match_status/0, user_agents/0, methods/0, max_restart/0,
         abort_test/0, think_from_variable/0, abort_element/0, fixed_users/0,
         foreach/0, rendezvous/0, relations/0]).

-import(beamscale_load_servers, [scenario/1, run/1]).

%% nginx logs a request after its reply: the last lines may come a moment later.
-define(LOG_WAIT_MS, 5000).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [statuses, tsung_match_status, user_agents, methods, max_restart, abort_test,
          think_from_variable, abort_element, fixed_users, foreach,
          rendezvous, relations].

init_per_suite(Config) ->
    beamscale_load_servers:nginx_suite(
      Config, "tsung_more_nginx", "$request_method|$http_user_agent|$uri",
      "    location / { return 200 'hello'; }\n"
      "    location /missing { return 404; }\n"
      "    location /teapot { return 418; }\n"
      "    location /list { return 200 '{\"items\": [\"e1\", \"e2\", \"x3\"]}'; }\n").

end_per_suite(Config) ->
    (?config(nginx, Config))(),
    ok.

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

user_agents() ->
    [{doc, "User-Agent: beamscale's by default; Tsung's weighted list, one pick per session."}].
user_agents(Config) ->
    S = scenario([target(Config), "{phases, [{p, #{duration_s => 1, rate => 5}}]}.\n"
                  "{sessions, [{s, #{steps => [{http, #{path => \"/default-ua\"}}]}}]}.\n"]),
    #{total := #{sessions_done := D}} = run(S),
    Default = seen(Config, "/default-ua", D),
    _ = application:load(beamscale_load),
    {ok, Vsn} = application:get_key(beamscale_load, vsn),
    ?assertEqual(D, length([L || [_, UA, _] = L <- Default, UA =:= "beamscale/" ++ Vsn])),
    Xml = tsung_file(Config,
                     "<option type=\"ts_http\" name=\"user_agent\">"
                     "<user_agent probability=\"70\">Mozilla/5.0 (a)</user_agent>"
                     "<user_agent probability=\"30\">Other/1.0</user_agent></option>",
                     "<request><http url=\"/ua1\" method=\"GET\"/></request>"
                     "<request><http url=\"/ua2\" method=\"GET\"/></request>"),
    #{total := #{sessions_done := D2, errors := 0} = T2} = run(Xml),
    %% The variable the agent is drawn into is beamscale's own: no `unset.' count for it.
    ?assertEqual([], [K || K <- maps:keys(maps:get(counts, T2, #{})),
                           binary:match(K, <<"unset.">>) =/= nomatch]),
    [One, Two] = [[UA || [_, UA, _] <- seen(Config, U, D2)] || U <- ["/ua1", "/ua2"]],
    ?assertEqual([], [UA || UA <- One, UA =/= "Mozilla/5.0 (a)", UA =/= "Other/1.0"]),
    %% One pick per session: a session's two requests name the same agent.
    ?assertEqual(lists:sort(One), lists:sort(Two)).

methods() -> [{doc, "Methods beyond GET and POST reach the server as named: PATCH, OPTIONS, "
                    "WebDAV's PROPFIND and MKCOL, from a terms and a Tsung file."}].
methods(Config) ->
    S = scenario([target(Config), "{phases, [{p, #{duration_s => 1, rate => 5}}]}.\n"
                  "{sessions, [{s, #{steps => [{http, #{path => \"/m1\", method => patch}},"
                  " {http, #{path => \"/m1\", method => \"PROPFIND\"}}]}}]}.\n"]),
    #{total := #{sessions_done := D, errors := 0}} = run(S),
    ?assertEqual(lists:sort(lists:append(lists:duplicate(D, ["PATCH", "PROPFIND"]))),
                 lists:sort([M || [M, _, _] <- seen(Config, "/m1", 2 * D)])),
    Xml = tsung_file(Config, "<request><http url=\"/m2\" method=\"MKCOL\"/></request>"
                             "<request><http url=\"/m2\" method=\"OPTIONS\"/></request>"),
    #{total := #{sessions_done := D2, errors := 0}} = run(Xml),
    ?assertEqual(lists:sort(lists:append(lists:duplicate(D2, ["MKCOL", "OPTIONS"]))),
                 lists:sort([M || [M, _, _] <- seen(Config, "/m2", 2 * D2)])).

max_restart() -> [{doc, "<match do=\"restart\" max_restart=\"1\">: one restart per session, "
                        "not Tsung's default 3."}].
max_restart(Config) ->
    Xml = tsung_file(Config,
                     "<request><match do=\"restart\" max_restart=\"1\" when=\"match\">"
                     "HTTP/1.1 404</match><http url=\"/missing\" method=\"GET\"/></request>"),
    #{total := T} = run(Xml),
    D = maps:get(sessions_done, T),
    ?assert(D >= 3),
    ?assertEqual({2 * D, 0}, {maps:get(requests, T), maps:get(errors, T)}).

abort_test() -> [{doc, "<match do=\"abort_test\">: the first match stops the whole run early, "
                       "as an interrupt."}].
abort_test(Config) ->
    Xml = tsung_file(Config,
                     "<request><match do=\"abort_test\" when=\"match\">HTTP/1.1 418</match>"
                     "<http url=\"/teapot\" method=\"GET\"/></request>"),
    %% Phases of 30 s: the run ends within seconds of the first reply.
    [P] = maps:get(phases, Xml),
    {ok, R} = beamscale_load_run:run(Xml#{phases := [P#{duration_s := 30}], time_limit_s := 60},
                                     maps:get(targets, Xml), #{seed => 1}),
    ct:pal("~p", [maps:with([stopped, duration_s], R)]),
    ?assertEqual(interrupted, maps:get(stopped, R)),
    ?assert(maps:get(duration_s, R) < 15).

think_from_variable() -> [{doc, "<thinktime value=\"%%_t%%\">: the user's variable, seconds."}].
think_from_variable(Config) ->
    Xml = tsung_file(Config,
                     "<setdynvars sourcetype=\"value\" value=\"0.4\"><var name=\"t\"/>"
                     "</setdynvars><request><http url=\"/\" method=\"GET\"/></request>"
                     "<thinktime value=\"%%_t%%\"/>"
                     "<request><http url=\"/\" method=\"GET\"/></request>"),
    #{total := T} = run(Xml),
    ?assert(maps:get(sessions_done, T) >= 3),
    %% Microseconds: the think's 400 ms, plus two replies from nginx on 127.0.0.1.
    Min = beamscale_stats_hist:percentile(maps:get(session, T), 0),
    ct:pal("shortest session ~b us", [Min]),
    ?assert(Min >= 390000 andalso Min < 3000000).

relations() ->
    [{doc, "Tsung's gt, gte, lt and lte compare numbers: 10 is above 9 (as text it is below), "
           "a loop's counter against a bound, a text is no number."}].
relations(Config) ->
    If = fun(Var, Op, V, Url) ->
                 ["<if var=\"", Var, "\" ", Op, "=\"", V, "\"><request><http url=\"", Url,
                  "\" method=\"GET\"/></request></if>"]
         end,
    Xml = tsung_file(Config, lists:flatten(
                       ["<setdynvars sourcetype=\"value\" value=\"10\"><var name=\"n\"/>"
                        "</setdynvars>", If("n", "gt", "9", "/r-gt"), If("n", "lt", "9", "/r-lt"),
                        If("n", "gte", "10", "/r-gte"), If("n", "lte", "9.5", "/r-lte"),
                        "<setdynvars sourcetype=\"value\" value=\"x\"><var name=\"n\"/>"
                        "</setdynvars>", If("n", "lt", "9", "/r-text"),
                        "<for from=\"1\" to=\"5\" var=\"i\">", If("i", "lte", "3", "/r-loop"),
                        "</for>"])),
    #{total := #{sessions_done := D, errors := 0}} = run(Xml),
    ?assert(D >= 3),
    ?assertEqual(D, length(seen(Config, "/r-gt", D))),
    ?assertEqual(D, length(seen(Config, "/r-gte", D))),
    ?assertEqual(3 * D, length(seen(Config, "/r-loop", 3 * D))),
    ?assertEqual([], [U || [_, _, U] <- all_seen(Config),
                           lists:member(U, ["/r-lt", "/r-lte", "/r-text"])]).

all_seen(Config) ->
    {ok, Bin} = file:read_file(filename:join(?config(dir, Config), "access.log")),
    [string:split(L, "|", all)
     || L <- string:split(unicode:characters_to_list(Bin), "\n", all), L =/= ""].

abort_element() -> [{doc, "<abort/> ends the session there: the request after it is not sent."}].
abort_element(Config) ->
    Xml = tsung_file(Config, "<request><http url=\"/a1\" method=\"GET\"/></request><abort/>"
                             "<request><http url=\"/a2\" method=\"GET\"/></request>"),
    #{total := T} = run(Xml),
    D = maps:get(sessions_done, T),
    ?assert(D >= 3),
    ?assertEqual({D, 0}, {maps:get(requests, T), maps:get(errors, T)}).

fixed_users() -> [{doc, "<user session start_time>: one user each, beside the arrivals and after "
                        "them (a session of probability 0 started only so)."}].
fixed_users(Config) ->
    Load = "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
           "<users interarrival=\"0.2\" unit=\"second\"/></arrivalphase>"
           "<user session=\"late\" start_time=\"300\" unit=\"millisecond\"/>"
           "<user session=\"late\" start_time=\"1.5\"/></load>",
    Sessions = "<session name=\"s\" probability=\"100\" type=\"ts_http\">"
               "<request><http url=\"/arrived\" method=\"GET\"/></request></session>"
               "<session name=\"late\" probability=\"0\" type=\"ts_http\">"
               "<request><http url=\"/fixed\" method=\"GET\"/></request></session>",
    Xml = tsung_text(Config, Load, "", Sessions),
    ?assertMatch([{phase1, #{users_at := [{0.3, <<"late">>}]}},
                  {users, #{rate := 0.0, users_at := [{_, <<"late">>}]}}],
                 [{N, maps:with([rate, users_at], P)}
                  || #{name := N} = P <- maps:get(phases, Xml)]),
    #{total := T} = run(Xml),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(2, length(seen(Config, "/fixed", 2))),
    ?assertEqual(maps:get(sessions_done, T) - 2, length(seen(Config, "/arrived", 1))).

foreach() -> [{doc, "<foreach> over a JSONPath list variable, one value excluded; a "
                     "setdynvars of sourcetype jsonpath."}].
foreach(Config) ->
    Xml = tsung_file(Config,
                     "<request><dyn_variable name=\"items\" jsonpath=\"$.items[*]\"/>"
                     "<http url=\"/list\" method=\"GET\"/></request>"
                     "<foreach name=\"u\" in=\"items\" exclude=\"x\">"
                     "<request subst=\"true\"><http url=\"/%%_u%%\" method=\"GET\"/></request>"
                     "</foreach>"
                     "<setdynvars sourcetype=\"value\" value=\"{&quot;u&quot;: &quot;j1&quot;}\">"
                     "<var name=\"j\"/></setdynvars>"
                     "<setdynvars sourcetype=\"jsonpath\" from=\"j\" jsonpath=\"u\">"
                     "<var name=\"v\"/></setdynvars>"
                     "<request subst=\"true\"><http url=\"/%%_v%%\" method=\"GET\"/></request>"),
    #{total := T} = run(Xml),
    D = maps:get(sessions_done, T),
    ?assert(D >= 3),
    ?assertEqual({4 * D, 0}, {maps:get(requests, T), maps:get(errors, T)}),
    [?assertEqual(D, length(seen(Config, U, D))) || U <- ["/e1", "/e2", "/j1"]],
    ?assertEqual([], seen(Config, "/x3", 0)).

rendezvous() -> [{doc, "{rendezvous, ...}: the first 5 users, started 0.2 s apart, wait for "
                        "the fifth; a rendezvous of more users than come times out."}].
rendezvous(Config) ->
    At = "[{0, s}, {0.2, s}, {0.4, s}, {0.6, s}, {0.8, s}]",
    S = scenario([target(Config),
                  "{phases, [{p, #{duration_s => 1, users_at => ", At, "}}]}.\n"
                  "{sessions, [{s, #{weight => 0, steps => [{http, #{path => \"/r1\"}},"
                  " {rendezvous, \"five\", #{users => 5, timeout_ms => 10000}},"
                  " {http, #{path => \"/r2\"}},"
                  " {rendezvous, \"more\", #{users => 6, timeout_ms => 300}}]}}]}.\n"]),
    #{total := T} = run(S),
    ?assertEqual({5, 10}, {maps:get(sessions_done, T), maps:get(requests, T)}),
    ?assertEqual(#{<<"rendezvous more: 6 users not there within 300 ms">> => 5},
                 maps:get(reasons, T)),
    %% Microseconds: the first user waited for the fifth (0.8 s later), the last for none.
    Session = maps:get(session, T),
    {Min, Max} = {beamscale_stats_hist:percentile(Session, 0),
                  beamscale_stats_hist:percentile(Session, 100)},
    ct:pal("sessions from ~b to ~b us", [Min, Max]),
    ?assert(Max >= 1000000 andalso Min >= 290000 andalso Max - Min >= 600000).

%% The access log's lines for `Uri' ([Method, UserAgent, Uri]), once `N' are there.
seen(Config, Uri, N) ->
    seen(Config, Uri, N, erlang:monotonic_time(millisecond) + ?LOG_WAIT_MS).

seen(Config, Uri, N, Deadline) ->
    {ok, Bin} = file:read_file(filename:join(?config(dir, Config), "access.log")),
    Lines = [string:split(L, "|", all)
             || L <- string:split(unicode:characters_to_list(Bin), "\n", all), L =/= ""],
    case [L || [_, _, U] = L <- Lines, U =:= Uri] of
        Got when length(Got) >= N -> Got;
        Got ->
            erlang:monotonic_time(millisecond) < Deadline
                orelse ct:fail("~b lines for ~ts, ~b expected", [length(Got), Uri, N]),
            timer:sleep(50),
            seen(Config, Uri, N, Deadline)
    end.

%% A Tsung file of one HTTP session against this suite's nginx.
tsung_file(Config, Requests) ->
    tsung_file(Config, "", Requests).

tsung_file(Config, Options, Requests) ->
    tsung_text(Config, "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
                       "<users interarrival=\"0.1\" unit=\"second\"/></arrivalphase></load>",
               Options, "<session name=\"s\" probability=\"100\" type=\"ts_http\">"
                        ++ Requests ++ "</session>").

tsung_text(Config, Load, Options, Sessions) ->
    Text = io_lib:format(
             "<?xml version=\"1.0\"?>\n<tsung>\n"
             "<clients><client host=\"localhost\" use_controller_vm=\"true\"/></clients>\n"
             "<servers><server host=\"127.0.0.1\" port=\"~b\" type=\"tcp\"/></servers>\n"
             "~ts\n<options>~ts</options>\n<sessions>~ts</sessions>\n</tsung>\n",
             [?config(port, Config), Load, Options, Sessions]),
    case beamscale_load_tsung:from_text("more.xml", lists:flatten(Text)) of
        {ok, S, _Ignored} -> S;
        {error, E} -> ct:fail("~ts", [beamscale_load_tsung:format_error(E)])
    end.
