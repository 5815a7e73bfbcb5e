%% Test helper (not a suite) for the load kinds' suites: real servers on 127.0.0.1 started in
%% throwaway directories and stopped by their OS pid (nginx, websocketd), TCP and TLS echoes in
%% this node, certificates made with the openssl command, and Tsung's examples and terms
%% scenarios read and run.
-module(beamscale_load_servers).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([tmp_dir/2, free_port/0, late_listener/2, certificate/1, start_server/4, nginx/3,
         websocketd/4, tcp_echo/0, tls_echo/2]).
-export([start_server/6, broker/1, nginx_suite/4, counters_in_files/3,
         counted/2]).
-export([tsung_example/2, scenario/1, run/1, run_sampled/1, stopped_mid_load/4]).

-define(EXAMPLES, "/usr/share/doc/tsung/examples/").
%% How long a started server gets to listen: nginx and websocketd start in milliseconds; a loaded
%% machine (other developers' tests) may take a few hundred.
-define(LISTEN_WAIT_MS, 5000).
%% openssl makes a 2048-bit key in well under a second; a loaded machine may take several.
-define(OPENSSL_TIMEOUT_S, 60).
%% How long the sessions of a test run get after the arrivals end: three times the suites' 10 s
%% drain (beside a CPU hog per core a TLS session seems to have overrun it once: a pgsql run
%% counted one row more than sessions done), and within the suites' timetraps.
-define(DRAIN_LIMIT_S, 30).
%% How often `run_sampled/1' reads this node's memory.
-define(SAMPLE_MS, 10).

%% ---- scenarios ----

%% @doc Tsung's example `Name' with only the `{From, To}' rewrites (each must apply: a rewrite
%% that no longer matches the shipped file would leave it talking to its original server).
tsung_example(Name, Rewrites) ->
    Bin = example(Name),
    Text = lists:foldl(fun({From, To}, T) ->
                               Next = lists:flatten(string:replace(T, From, To, all)),
                               ?assertNotEqual(T, Next, {rewrite, From}),
                               Next
                       end, unicode:characters_to_list(Bin), Rewrites),
    case beamscale_load_tsung:from_text(Name, Text) of
        {ok, S, _Ignored} -> S;
        {error, E} -> ct:fail("~ts", [beamscale_load_tsung:format_error(E)])
    end.

%% Debian ships the larger examples (amqp.xml) gzipped.
example(Name) ->
    case file:read_file(?EXAMPLES ++ Name) of
        {ok, Bin} -> Bin;
        {error, enoent} ->
            {ok, Gz} = file:read_file(?EXAMPLES ++ Name ++ ".gz"),
            zlib:gunzip(Gz)
    end.

%% @doc A terms scenario from its text (it must be valid).
scenario(Text) ->
    {ok, Entries} = beamscale_format_terms:parse(lists:flatten(Text)),
    {ok, S} = beamscale_load_scenario:check("test", Entries),
    S.

%% @doc Run a scenario in this node against its targets, seeded, until every session has ended.
%%
%% The suites compare counts with the sessions done, so a session cut by the time limit would make
%% them disagree. The run ends as soon as its users are done, so a longer limit costs
%% nothing when they end in time; a run that still reaches it fails here, saying so.
run(S) ->
    Limit = max(maps:get(time_limit_s, S), beamscale_load_scenario:duration_s(S) + ?DRAIN_LIMIT_S),
    {ok, R} = beamscale_load_run:run(S#{time_limit_s := Limit}, maps:get(targets, S),
                                     #{seed => 42}),
    ?assertEqual(done, maps:get(stopped, R), {sessions_cut_at_time_limit_s, Limit}),
    R.

%% @doc The sessions `Sessions' (terms text) 10 a second for a second against 127.0.0.1:`Port',
%% run to their end without an error: the whole scenario's text, the totals and the sessions
%% done (5 at least, beside a CPU hog).
counted(Port, Sessions) ->
    Text = io_lib:format("{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
                         "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n~ts", [Port, Sessions]),
    #{total := T} = run(scenario(Text)),
    ct:pal("~p", [maps:with([sessions_done, requests, errors, reasons, counts], T)]),
    ?assertEqual(#{}, maps:get(reasons, T)),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    {Text, T, Done}.

%% @doc The terms scenario `Text' run by the command (`beamscale load', its files in priv_dir):
%% each counter of `Keys' counted in summary.json's `counts', a row of counters.csv with the
%% same count, and a cell of the page.
counters_in_files(Config, Text, Keys) ->
    Dir = proplists:get_value(priv_dir, Config),
    File = filename:join(Dir, "counters.terms"),
    ok = file:write_file(File, Text),
    Name = "counters" ++ integer_to_list(erlang:unique_integer([positive])),
    {Code, Out} = beamscale_test_cli:run(["load", File, "--out", Dir, "--name", Name]),
    ?assertEqual(0, Code, Out),
    Run = filename:join(Dir, Name),
    {ok, Json} = file:read_file(filename:join(Run, "summary.json")),
    {ok, #{<<"counts">> := Counts}} = beamscale_format_json:decode(Json),
    {ok, Csv} = file:read_file(filename:join(Run, "counters.csv")),
    {ok, Page} = file:read_file(filename:join(Run, "index.html")),
    [begin
         N = maps:get(K, Counts, 0),
         ?assert(N > 0, {K, Counts}),
         ?assertNotEqual(nomatch, binary:match(Csv, <<K/binary, ",", (integer_to_binary(N))/binary,
                                                      "\n">>), {K, Csv}),
         ?assertNotEqual(nomatch, binary:match(Page, K), K)
     end || K <- Keys],
    ok.

%% @doc `run/1' watched, for the hostile suites' bounds: the result, the run's milliseconds and
%% the largest `erlang:memory(total)' seen during it (read each ?SAMPLE_MS).
run_sampled(S) ->
    Base = erlang:memory(total),
    Sampler = spawn_link(fun() -> sample(Base) end),
    T0 = erlang:monotonic_time(millisecond),
    R = run(S),
    Elapsed = erlang:monotonic_time(millisecond) - T0,
    Sampler ! {peak, self()},
    receive {peak, Peak} -> {R, Elapsed, Peak} end.

sample(Peak) ->
    receive
        {peak, From} -> From ! {peak, max(Peak, erlang:memory(total))}
    after ?SAMPLE_MS -> sample(max(Peak, erlang:memory(total)))
    end.

%% @doc A server stopped mid-load, the check of every kind's suite: `Steps' (a terms list, as
%% text) run by 20 users a second for `duration_s' against 127.0.0.1:`Port', `Stop()' called
%% `stop_ms' in. Errors by reason (5 at least, "connection refused" among them), at least
%% `min_done' sessions done, the run ended within `within_ms'. The totals.
stopped_mid_load(Port, Steps, Stop, #{duration_s := D, stop_ms := StopMs, min_done := MinDone,
                                      within_ms := WithinMs}) ->
    S = scenario(io_lib:format(
                   "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
                   "{phases, [{p, #{duration_s => ~b, rate => 20}}]}.\n"
                   "{sessions, [{s, #{steps => ~ts}}]}.\n", [Port, D, Steps])),
    %% Not linked: it stops the server even if the run fails first.
    _ = spawn(fun() -> timer:sleep(StopMs), Stop() end),
    Start = erlang:monotonic_time(millisecond),
    #{total := T} = run(S),
    Elapsed = erlang:monotonic_time(millisecond) - Start,
    Reasons = maps:get(reasons, T),
    ct:pal("errors ~p, reasons ~p, ~b ms", [maps:get(errors, T), Reasons, Elapsed]),
    ?assert(maps:get(errors, T) >= 5),
    ?assert(maps:is_key(<<"connection refused">>, Reasons)),
    ?assert(maps:get(sessions_done, T) >= MinDone),
    ?assert(Elapsed < WithinMs),
    T.

%% ---- servers ----

%% @doc `Name' under the run's priv_dir, made (CT shares priv_dir among a run's suites: the
%% name should start with the suite's).
tmp_dir(Config, Name) ->
    Dir = filename:join(?config(priv_dir, Config), Name),
    ok = filelib:ensure_path(Dir),
    Dir.

%% @doc A port free on 127.0.0.1 a moment ago.
free_port() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    ok = gen_tcp:close(L),
    Port.

%% @doc A listener on 127.0.0.1:`Port' from `AfterMs' on (a server slow to start): it sends its
%% caller `{listening, Pid}' then, and closes on `stop'.
late_listener(Port, AfterMs) ->
    Self = self(),
    spawn_link(fun() ->
                       timer:sleep(AfterMs),
                       {ok, L} = gen_tcp:listen(Port, [{ip, {127, 0, 0, 1}}, {reuseaddr, true}]),
                       Self ! {listening, self()},
                       receive stop -> gen_tcp:close(L) end
               end).

%% @doc A certificate authority and a server certificate for localhost and 127.0.0.1 signed by
%% it, made in `Dir' with the openssl command: the CA's file (to trust), the server's certificate
%% and key (readable by its owner only, as PostgreSQL requires).
certificate(Dir) ->
    F = fun(Name) -> filename:join(Dir, Name) end,
    ok = file:write_file(F("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n"),
    Cmds = [["openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=beamscale-test-ca"
             " -keyout ", F("ca.key"), " -out ", F("ca.pem")],
            ["openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout ", F("key.pem"),
             " -out ", F("server.csr")],
            ["openssl x509 -req -days 1 -in ", F("server.csr"), " -CA ", F("ca.pem"), " -CAkey ",
             F("ca.key"), " -CAcreateserial -extfile ", F("san.ext"), " -out ", F("cert.pem")]],
    %% `timeout' bounds each command (os:cmd has no limit of its own).
    [begin
         Out = os:cmd(lists:flatten(["timeout ", integer_to_list(?OPENSSL_TIMEOUT_S), " ", C,
                                     " 2>&1; echo \"exit=$?\""])),
         string:find(Out, "exit=0") =/= nomatch orelse ct:fail("openssl failed: ~ts", [Out])
     end || C <- Cmds],
    ok = file:change_mode(F("key.pem"), 8#600),
    {F("ca.pem"), F("cert.pem"), F("key.pem")}.

%% @doc Start `Exe' in the foreground under a port, wait until it listens on `Port'; the fun
%% returned stops it by its OS pid. Its output goes to `Dir'/server_output.log (keep/2).
start_server(Exe, Args, Port, Dir) -> start_server(Exe, Args, Port, Dir, [], ?LISTEN_WAIT_MS).

%% @doc As `start_server/4', with environment variables `Env' and `WaitMs' to start listening
%% (RabbitMQ boots in seconds).
start_server(false, _Args, _Port, _Dir, _Env, _WaitMs) ->
    ct:fail("server executable not found (scripts/install-deps.sh installs it)");
start_server(Exe, Args, Port, Dir, Env, WaitMs) ->
    P = open_port({spawn_executable, Exe}, [{args, Args}, {cd, Dir}, {env, Env},
                                            stderr_to_stdout, exit_status, binary]),
    {os_pid, Pid} = erlang:port_info(P, os_pid),
    Stop = fun() -> os:cmd("kill " ++ integer_to_list(Pid)), catch port_close(P), ok end,
    case wait_listening(Port, P, erlang:monotonic_time(millisecond) + WaitMs, []) of
        ok -> keep(P, filename:join(Dir, "server_output.log")), Stop;
        {error, Why} -> Stop(), ct:fail("~ts did not start: ~ts", [Exe, Why])
    end.

%% The port handed to a process of its own that writes the server's output to `Log' until the
%% port closes. A port closes when its owner ends, and the starter is often a suite's
%% init_per_suite, whose process ends at once: the server's stdout and stderr were then a
%% closed pipe, and websocketd (Go) died of SIGPIPE at its first log line (#38: the WebSocket
%% connects after `<change_type>' refused once a session's program had ended).
keep(P, Log) ->
    Keeper = spawn(fun() ->
                           Ref = erlang:monitor(port, P),
                           receive go -> keep_output(P, Ref, Log) end
                   end),
    true = erlang:port_connect(P, Keeper),
    unlink(P),
    Keeper ! go,
    ok.

keep_output(P, Ref, Log) ->
    receive
        {P, {data, D}} -> _ = file:write_file(Log, D, [append]), keep_output(P, Ref, Log);
        {P, {exit_status, _}} -> ok;
        {'DOWN', Ref, port, P, _} -> ok
    end.

wait_listening(Port, P, Deadline, Out) ->
    case gen_tcp:connect("127.0.0.1", Port, []) of
        {ok, S} -> gen_tcp:close(S), ok;
        {error, _} ->
            receive
                {P, {data, D}} -> wait_listening(Port, P, Deadline, [Out, D]);
                {P, {exit_status, St}} ->
                    {error, io_lib:format("exit status ~b: ~ts", [St, Out])}
            after 50 ->
                case erlang:monotonic_time(millisecond) > Deadline of
                    true -> {error, ["not listening: ", Out]};
                    false -> wait_listening(Port, P, Deadline, Out)
                end
            end
    end.

%% @doc nginx in the foreground with the configuration `Conf' (written into `Dir'), listening on
%% `Port'; the fun returned stops it.
nginx(Dir, Port, Conf) ->
    File = filename:join(Dir, "nginx.conf"),
    ok = file:write_file(File, Conf),
    start_server(os:find_executable("nginx"),
                 ["-p", Dir, "-c", File, "-g", "daemon off; pid " ++ Dir ++ "/nginx.pid;"],
                 Port, Dir).

%% @doc nginx for a suite on 127.0.0.1, in a directory `Name' of its own: each request logged
%% in `access.log' as `Format' (nginx's `log_format'), `Locations' its server's `location'
%% blocks. `Config' with `nginx' (the fun that stops it), `port' and `dir'.
nginx_suite(Config, Name, Format, Locations) ->
    Dir = tmp_dir(Config, Name),
    Port = free_port(),
    Conf = io_lib:format(
             "error_log ~ts/error.log;\nevents { worker_connections 64; }\n"
             "http {\n"
             "  log_format seen '~ts';\n"
             "  access_log ~ts/access.log seen;\n"
             "  client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
             "  uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
             "  server {\n"
             "    listen 127.0.0.1:~b;\n~ts"
             "  }\n}\n", [Dir, Format, Dir, Dir, Dir, Dir, Dir, Dir, Port, Locations]),
    [{nginx, nginx(Dir, Port, Conf)}, {port, Port}, {dir, Dir} | Config].

%% @doc websocketd on 127.0.0.1:`Port' with the `Extra' options, running `Command' per
%% connection in `Dir'; the fun returned stops it.
websocketd(Dir, Port, Extra, Command) ->
    start_server(os:find_executable("websocketd"),
                 ["--port", integer_to_list(Port), "--address", "127.0.0.1", "--loglevel", "error"]
                 ++ Extra ++ Command, Port, Dir).

%% @doc A server in this node that hands each connection (a passive binary socket) to
%% `Serve(Socket)' in a process of its own: `{Listener, Port, Acceptor}'.
broker(Serve) ->
    {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false},
                                 {reuseaddr, true}]),
    {ok, Port} = inet:port(L),
    Acceptor = spawn(fun() -> serve(L, Serve) end),
    ok = gen_tcp:controlling_process(L, Acceptor),
    {L, Port, Acceptor}.

serve(L, Serve) ->
    case gen_tcp:accept(L) of
        {ok, S} -> spawn(fun() -> Serve(S) end), serve(L, Serve);
        _ -> ok
    end.

%% @doc A TCP echo in this node: its port and the fun that stops it.
tcp_echo() ->
    {ok, L} = gen_tcp:listen(0, [binary, {active, false}, {ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    Acceptor = spawn(fun() -> accept(L, fun gen_tcp:recv/2, fun gen_tcp:send/2) end),
    ok = gen_tcp:controlling_process(L, Acceptor),
    {Port, fun() -> exit(Acceptor, kill), gen_tcp:close(L) end}.

%% @doc A TLS echo in this node with the certificate and key given: its port and the fun that
%% stops it.
tls_echo(Cert, Key) ->
    {ok, L} = ssl:listen(0, [binary, {active, false}, {ip, {127, 0, 0, 1}},
                             {certfile, Cert}, {keyfile, Key}]),
    {ok, {_, Port}} = ssl:sockname(L),
    Acceptor = spawn(fun() -> accept(L, fun ssl:recv/2, fun ssl:send/2) end),
    ok = ssl:controlling_process(L, Acceptor),
    {Port, fun() -> exit(Acceptor, kill), ssl:close(L) end}.

accept(L, Recv, Send) ->
    case accept_one(L) of
        {ok, S} ->
            Pid = spawn(fun() -> receive go -> echo(S, Recv, Send) end end),
            ok = controlling(S, Pid),
            Pid ! go,
            accept(L, Recv, Send);
        %% A client that refused the certificate ends its handshake, not the server.
        handshake_failed -> accept(L, Recv, Send);
        {error, _} -> ok
    end.

accept_one(L) when is_port(L) -> gen_tcp:accept(L);
accept_one(L) ->
    case ssl:transport_accept(L) of
        {ok, S} ->
            case ssl:handshake(S) of
                {ok, _} = Ok -> Ok;
                {error, _} -> handshake_failed
            end;
        Error -> Error
    end.

controlling(S, Pid) when is_port(S) -> gen_tcp:controlling_process(S, Pid);
controlling(S, Pid) -> ssl:controlling_process(S, Pid).

echo(S, Recv, Send) ->
    case Recv(S, 0) of
        {ok, Data} -> ok = Send(S, Data), echo(S, Recv, Send);
        {error, _} -> ok
    end.
