%% Dynamic scenarios against a real nginx on 127.0.0.1 (a configuration written here, a port
%% picked here, stopped by its pid): the values substituted per user, a file's lines, cookies
%% and checks are read back from nginx's own access log; Tsung's HTTP examples run with only
%% host, port and durations rewritten.
-module(beamscale_load_dyn_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([vars_at_server/1, cookie_and_restart/1, tsung_examples/1, setdynvars/1,
         distributed/1]).
-export([vars_at_server/0, cookie_and_restart/0, tsung_examples/0, setdynvars/0,
         distributed/0]).

-define(NGINX, "/usr/sbin/nginx").
-define(START_TIMEOUT_MS, 5000).
-define(EXAMPLES, "/usr/share/doc/tsung/examples/").

suite() -> [{timetrap, {minutes, 2}}].

all() -> [vars_at_server, cookie_and_restart, tsung_examples, setdynvars, distributed].

init_per_suite(Config) ->
    Dir = string:trim(os:cmd("mktemp -d /tmp/beamscale-nginx-XXXXXX")),
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    ok = gen_tcp:close(L),
    ok = file:write_file(filename:join(Dir, "nginx.conf"), conf(Dir, Port)),
    PortRef = open_port({spawn_executable, ?NGINX},
                        [{args, ["-p", Dir, "-c", filename:join(Dir, "nginx.conf"),
                                 "-e", filename:join(Dir, "error.log")]}, exit_status,
                         stderr_to_stdout]),
    Pid = wait_pid(filename:join(Dir, "nginx.pid"), Port, ?START_TIMEOUT_MS div 50),
    [{dir, Dir}, {port, Port}, {nginx_pid, Pid}, {nginx_port, PortRef} | Config].

end_per_suite(Config) ->
    _ = os:cmd("kill -TERM " ++ ?config(nginx_pid, Config)),
    receive {_, {exit_status, _}} -> ok after ?START_TIMEOUT_MS -> ok end,
    file:del_dir_r(?config(dir, Config)).

%% The pid once nginx listens; a server that does not start fails the suite.
wait_pid(_File, Port, 0) -> ct:fail("nginx did not start on port ~b", [Port]);
wait_pid(File, Port, N) ->
    case {file:read_file(File), gen_tcp:connect({127, 0, 0, 1}, Port, [], 100)} of
        {{ok, Pid}, {ok, S}} -> gen_tcp:close(S), string:trim(binary_to_list(Pid));
        _ -> timer:sleep(50), wait_pid(File, Port, N - 1)
    end.

conf(Dir, Port) ->
    io_lib:format(
      "daemon off;\nworker_processes 1;\npid ~ts/nginx.pid;\nerror_log ~ts/error.log;\n"
      "events { worker_connections 256; }\n"
      "http {\n client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
      " uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
      " log_format dyn '$request_uri|$http_cookie|$http_authorization|$http_x_user';\n"
      " log_format body '$server_protocol|$http_soapaction|$request_body';\n"
      " server {\n  listen 127.0.0.1:~b;\n  access_log ~ts/access.log dyn;\n"
      "  location /login { add_header Set-Cookie \"sid=s3cr3t; Path=/\"; return 200 \"in\"; }\n"
      "  location /again { return 200 \"please restart\"; }\n"
      %% The body is read (and logged) only when nginx passes it on: to /sink, not logged.
      "  location /axis/ { access_log ~ts/body.log body; proxy_pass http://127.0.0.1:~b/sink; }\n"
      "  location /sink { access_log off; return 200 \"ok\"; }\n"
      "  location / { default_type text/html;\n"
      "   return 200 \"<html><head><title>beamscale</title></head></html>\"; }\n }\n}\n",
      [Dir, Dir, Dir, Dir, Dir, Dir, Dir, Port, Dir, Dir, Port]).

%% The access log's lines since `From' bytes, split at `|'.
log(Config, From) ->
    {ok, B} = file:read_file(filename:join(?config(dir, Config), "access.log")),
    <<_:From/binary, New/binary>> = B,
    [binary:split(L, <<"|">>, [global]) || L <- binary:split(New, <<"\n">>, [global]), L =/= <<>>].

log_size(Config) ->
    filelib:file_size(filename:join(?config(dir, Config), "access.log")).

scenario(Config, Text) ->
    File = filename:join(?config(dir, Config), "s.scenario"),
    ok = file:write_file(File, Text),
    {ok, S} = beamscale_load_scenario:load(File),
    S.

run(Config, S) ->
    Target = #{host => "127.0.0.1", port => ?config(port, Config)},
    {ok, R} = beamscale_load_run:run(S, #{w => Target}, #{seed => 42}),
    R.

vars_at_server() -> [{doc, "Random numbers, user numbers and file lines reach nginx per user."}].
vars_at_server(Config) ->
    ok = file:write_file(filename:join(?config(dir, Config), "users.csv"),
                         <<"alice;pw1\nbob;pw2\ncarol;pw3\n">>),
    From = log_size(Config),
    S = scenario(Config, io_lib:format(
        "{targets, [{w, #{address => \"127.0.0.1:~b\"}}]}.\n"
        "{phases, [{p, #{duration_s => 1, rate => 20, max_users => 12}}]}.\n"
        "{files, [{users, \"users.csv\"}]}.\n"
        "{sessions, [{s, #{steps => [{setvars, [n], {random_number, 1000, 9999}},\n"
        "  {setvars, [u], user_number}, {setvars, [name, pw], {file, users, #{}}},\n"
        "  {http, #{path => \"/v?n=%%_n%%&u=%%_u%%&name=%%_name%%\",\n"
        "           headers => [{\"X-User\", \"%%_name%%:%%_pw%%\"}]}},\n"
        "  {http, #{path => \"/w?missing=%%_nothere%%\"}}]}}]}.\n",
        [?config(port, Config)])),
    #{total := T} = run(Config, S),
    Lines = [L || [<<"/v?", _/binary>> | _] = L <- log(Config, From)],
    ?assertEqual(maps:get(sessions_done, T), length(Lines)),
    ?assert(length(Lines) >= 10),
    Ns = [N || [Uri | _] <- Lines, {match, [N]} <- [field(Uri, "n")]],
    ?assertEqual(length(Lines), length(Ns)),
    ?assert(length(lists:usort(Ns)) > length(Ns) div 2),
    Us = lists:sort([binary_to_integer(U)
                     || [Uri | _] <- Lines, {match, [U]} <- [field(Uri, "u")]]),
    ?assertEqual(lists:seq(1, length(Lines)), Us),
    Users = lists:usort([X || [_, _, _, X] <- Lines]),
    ?assertEqual([<<"alice:pw1">>, <<"bob:pw2">>, <<"carol:pw3">>], Users),
    %% The unset variable is counted once per session, under its name.
    ?assertEqual(maps:get(sessions_done, T),
                 maps:get(<<"unset.nothere">>, maps:get(counts, T))),
    %% ... and as an error under a reason that names it.
    ?assertEqual(#{<<"variable nothere unset (no value when the request was sent)">> =>
                       maps:get(sessions_done, T)},
                 maps:get(reasons, T)).

field(Uri, Name) -> re:run(Uri, Name ++ "=(\\d+)", [{capture, all_but_first, binary}]).

cookie_and_restart() -> [{doc, "A cookie set by nginx comes back; a match restarts sessions."}].
cookie_and_restart(Config) ->
    From = log_size(Config),
    S = scenario(Config, io_lib:format(
        "{targets, [{w, #{address => \"127.0.0.1:~b\"}}]}.\n"
        "{phases, [{p, #{duration_s => 1, rate => 10, max_users => 5}}]}.\n"
        "{sessions, [{s, #{steps => [{http, #{path => \"/login\", cookies => true}},\n"
        "  {http, #{path => \"/after\", cookies => true, basic_auth => {\"u\", \"p\"},\n"
        "           extract => [{re, title, \"<title>(.*)</title>\"}]}},\n"
        "  {http, #{path => \"/t?title=%%_title%%\"}},\n"
        "  {http, #{path => \"/again\", match => [#{name => again, re => \"restart\",\n"
        "                                          do => restart, text => body}]}}]}}]}.\n",
        [?config(port, Config)])),
    #{total := T} = run(Config, S),
    Done = maps:get(sessions_done, T),
    ?assertEqual(5, Done),
    Lines = log(Config, From),
    After = [L || [<<"/after">> | _] = L <- Lines],
    %% Each session runs once and restarts 3 times: 4 rounds.
    ?assertEqual(4 * Done, length(After)),
    [?assertEqual([<<"/after">>, <<"sid=s3cr3t">>, <<"Basic dTpw">>, <<"-">>], L) || L <- After],
    ?assertEqual(4 * Done, length([L || [<<"/t?title=beamscale">> | _] = L <- Lines])),
    ?assertEqual(#{<<"match.again">> => 4 * Done, <<"nomatch.again">> => 0,
                   <<"unset.title">> => 0},
                 maps:get(counts, T)),
    ?assertEqual(0, maps:get(errors, T)).

tsung_examples() -> [{doc, "Tsung's http_simple.xml and http_tag.xml run against nginx."}].
tsung_examples(Config) ->
    [begin
         {ok, Bin} = file:read_file(?EXAMPLES ++ Name),
         Xml = rewrite(Bin, ?config(port, Config)),
         File = filename:join(?config(dir, Config), Name),
         ok = file:write_file(File, Xml),
         From = log_size(Config),
         {ok, S0, _} = beamscale_load_tsung:load(File),
         S = S0#{time_limit_s := 3},
         {ok, #{total := T}} = beamscale_load_run:run(S, maps:get(targets, S), #{seed => 1}),
         ct:pal("~ts: ~b requests, ~b errors", [Name, maps:get(requests, T), maps:get(errors, T)]),
         ?assert(maps:get(requests, T) > 0),
         ?assertEqual(0, maps:get(errors, T)),
         ?assertEqual(maps:get(requests, T), length(log(Config, From)))
     end || Name <- ["http_simple.xml", "http_tag.xml"]].

%% Only the server's host and port, the phase's duration and the think times' length change.
rewrite(Bin, Port) -> rewrite(Bin, Port, []).

rewrite(Bin, Port, Extra) ->
    R = Extra ++ [{<<"host=\"(myserver|localhost)\" port=\"80\"">>,
          iolist_to_binary(["host=\"127.0.0.1\" port=\"", integer_to_list(Port), "\""])},
         {<<"duration=\"10\" unit=\"minute\"">>, <<"duration=\"1\" unit=\"second\"">>},
         {<<"interarrival=\"2\" unit=\"second\"">>, <<"interarrival=\"0.2\" unit=\"second\"">>},
         {<<"thinktime value=\"20\"">>, <<"thinktime value=\"0.1\"">>},
         {<<"duration=\"1\" unit=\"(minute|hour)\"">>,
          <<"duration=\"500\" unit=\"millisecond\"">>},
         {<<"interarrival=\"1\" unit=\"second\"">>, <<"interarrival=\"0.1\" unit=\"second\"">>},
         {<<"(thinktime|option name=\"thinktime\") value=\"[0-9]+\"">>, <<"\\1 value=\"0.05\"">>},
         {<<"thinktime min=\"2\" max=\"4\"">>, <<"thinktime min=\"0.02\" max=\"0.04\"">>}],
    lists:foldl(fun({A, B}, X) -> re:replace(X, A, B, [global, {return, binary}]) end, Bin, R).

setdynvars() ->
    [{doc, "Tsung's http_setdynvars.xml: file lines, a title taken and the phase mixes."}].
setdynvars(Config) ->
    Dir = ?config(dir, Config),
    ok = filelib:ensure_dir(filename:join(Dir, "src/test/x")),
    ok = file:write_file(filename:join(Dir, "src/test/test_file_server.csv"),
                         <<"user1;pass1\nuser2;pass2\nuser3;pass3\n">>),
    From = log_size(Config),
    T = run_example(Config, "http_setdynvars.xml", ?EXAMPLES ++ "http_setdynvars.xml", []),
    ?assertEqual(0, maps:get(errors, T)),
    Lines = log(Config, From),
    ?assertEqual(maps:get(requests, T), length(Lines)),
    Index = [U || [<<"/index.html?", _/binary>> = U | _] <- Lines],
    ?assert(length(Index) >= 3),
    [?assertMatch({match, _}, re:run(U, "^/index.html\\?toto=beamscale&user=user(\\d)&password=pass"
                                        "\\1&id=[a-zA-Z0-9]{5}&id2=\\d+$")) || U <- Index],
    Tests = [U || [<<"/test.html", _/binary>> = U | _] <- Lines],
    Rnd = [list_to_integer(N)
           || U <- Tests, {match, [N]} <- [re:run(U, "^/test.html(\\d+)&id=\\d+$",
                                                  [{capture, all_but_first, list}])]],
    ?assertEqual(length(Tests), length(Rnd)),
    ?assert(Rnd =/= [] andalso lists:min(Rnd) >= 3 andalso lists:max(Rnd) =< 32),
    %% Phases 3 (loop 2: 3 of 6 phases) mix in the session "fake", which sends nothing.
    ?assert(maps:get(sessions_done, T) > length(Index)).

distributed() -> [{doc, "Tsung's http_distributed.xml: refused as Tsung refuses it (the "
                        "probabilities add up to 60); at 50/50 its HTTP/1.0 SOAP call arrives."}].
distributed(Config) ->
    Dir = ?config(dir, Config),
    {ok, Gz} = file:read_file(?EXAMPLES ++ "http_distributed.xml.gz"),
    Plain = filename:join(Dir, "http_distributed.src.xml"),
    ok = file:write_file(Plain, zlib:gunzip(Gz)),
    %% The `%%symbol:new%%' the example calls: a module the test puts on the code path for the
    %% case only, in a directory of its own. This node's path is the later suites' too, and a
    %% path entry named `beamscale-nginx-...' was taken for the app `beamscale' by
    %% code:lib_dir/2 (beamscale_test_cli then started `beamscale' without its code).
    Code = filename:join(Dir, "symbol_code"),
    ok = filelib:ensure_path(Code),
    ok = file:write_file(filename:join(Code, "symbol.erl"),
                         <<"-module(symbol).\n-export([new/1]).\nnew(_) -> <<\"sym42\">>.\n">>),
    {ok, symbol} = compile:file(filename:join(Code, "symbol.erl"), [{outdir, Code}]),
    true = code:add_patha(Code),
    try distributed(Config, Dir, Plain)
    after
        true = code:del_path(Code)
    end.

distributed(Config, Dir, Plain) ->
    Port = ?config(port, Config),
    %% The client machines' addresses are rewritten to loopback ones, as hosts and ports are: this
    %% machine sends load to 127.0.0.0/8 only (from several source addresses, as Tsung would).
    Hosts = [{<<"http://(linuxit02|localhost:8080)/">>,
              iolist_to_binary(["http://127.0.0.1:", integer_to_list(Port), "/"])},
             {<<"192\\.168\\.2\\.22([345])">>, <<"127.0.0.\\1">>},
             %% Its client machines become this one: another host would be reached by ssh.
             {<<"<client host=\"myhost2?\"">>, <<"<client host=\"localhost\"">>}],
    File = filename:join(Dir, "http_distributed.xml"),
    ok = file:write_file(File, rewrite(rewrite(file(Plain), Port, Hosts), Port, [])),
    {error, E} = beamscale_load_tsung:load(File),
    ?assertEqual(iolist_to_binary(File ++ ":92: the sessions' probabilities add up to 60, not 100"),
                 iolist_to_binary(beamscale_error:format(E))),
    From = log_size(Config),
    BodyFrom = filelib:file_size(filename:join(Dir, "body.log")),
    T = run_example(Config, "http_distributed.xml", Plain,
                    Hosts ++ [{<<"probability=\"30\"">>, <<"probability=\"50\"">>}]),
    ?assertEqual(0, maps:get(errors, T)),
    {ok, BodyLog} = file:read_file(filename:join(Dir, "body.log")),
    <<_:BodyFrom/binary, New/binary>> = BodyLog,
    Soap = [L || L <- binary:split(New, <<"\n">>, [global]), L =/= <<>>],
    ?assert(Soap =/= []),
    [?assertMatch({match, _}, re:run(L, "^HTTP/1.0\\|EchoService\\|.*<symbol>sym42</symbol>"))
     || L <- Soap],
    ?assertEqual(maps:get(requests, T), length(log(Config, From)) + length(Soap)).

file(F) -> {ok, B} = file:read_file(F), B.

%% Run a Tsung example with host, port, durations and `Extra' rewritten; the run's totals.
run_example(Config, Name, Src, Extra) ->
    Xml = rewrite(file(Src), ?config(port, Config), Extra),
    File = filename:join(?config(dir, Config), Name),
    ok = file:write_file(File, Xml),
    {ok, S0, _} = beamscale_load_tsung:load(File),
    {ok, #{total := T}} = beamscale_load_run:run(S0#{time_limit_s := 10}, maps:get(targets, S0),
                                                 #{seed => 1}),
    ct:pal("~ts: ~p", [Name, maps:with([requests, errors, sessions_done, reasons], T)]),
    T.
