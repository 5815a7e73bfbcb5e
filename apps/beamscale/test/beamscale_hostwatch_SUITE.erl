%% Host rows (docs/samples.md): a load against a real nginx (a master and two workers) with its
%% host sampled, here and through a node started over a real sshd on 127.0.0.1; the rows of the
%% host and of nginx's processes in samples.csv, on the page, and no reading node left after.
-module(beamscale_hostwatch_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("kernel/include/file.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([local_host/1, host_over_ssh/1, munin_host/1, munin_bounded/1, snmp_host/1]).
-export([local_host/0, host_over_ssh/0, munin_host/0, munin_bounded/0, snmp_host/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [local_host, host_over_ssh, munin_host, munin_bounded, snmp_host].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_hostwatch"),
    Port = beamscale_load_servers:free_port(),
    Nginx = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Port)),
    try beamscale_test_sshd:start(filename:join(Dir, "")) of
        {Sshd, Args} -> [{nginx, {Nginx, Port, Dir}}, {sshd, Sshd}, {ssh_args, Args} | Config]
    catch C:R:St -> Nginx(), erlang:raise(C, R, St)
    end.

end_per_suite(Config) ->
    {Stop, _, _} = ?config(nginx, Config),
    Stop(),
    beamscale_test_sshd:stop(?config(sshd, Config)).

%% The web target named in `sample' and nginx's processes by name and by pid file: host rows with
%% CPU by mode, memory and network bytes, nginx's three pids with their memory.
local_host() -> [{doc, "nginx's host and processes sampled here during a load."}].
local_host(Config) ->
    {_, Port, NginxDir} = ?config(nginx, Config),
    Monitor = io_lib:format("#{host => \"127.0.0.1\", processes => [\"nginx\", "
                            "{pidfile, ~0tp}]}", [filename:join(NginxDir, "nginx.pid")]),
    Dir = run(Config, "local", Port, Monitor),
    Rows = ok_rows(Dir),
    Host = by_node(<<"host:127.0.0.1">>, Rows),
    ?assert(length(Host) >= 2),
    [?assert(num(K, R) > 0) || R <- Host, K <- [host_mem_total, host_mem_used, load1]],
    ?assert(lists:sum([num(net_rx_bytes, R) || R <- Host]) > 0),
    ?assert(lists:all(fun(R) -> num(cpu_idle_pct, R) + num(host_cpu_pct, R) =< 100.5 end, Host)),
    Workers = by_node(<<"nginx@127.0.0.1">>, Rows),
    %% By name: this suite's nginx, and any other suite's beside it.
    ?assertEqual(3, length(own_nginx(NginxDir))),
    ?assert(lists:all(fun(R) -> num(pids, R) >= 3 end, Workers)),
    ?assert(lists:all(fun(R) -> num(rss_bytes, R) > 1000000 end, Workers)),
    ?assert(lists:sum([num(os_cpu_pct, R) || R <- Workers]) > 0),
    Master = by_node(iolist_to_binary([filename:join(NginxDir, "nginx.pid"), "@127.0.0.1"]),
                     Rows),
    ?assertEqual([1], lists:usort([num(pids, R) || R <- Master])),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertNotEqual(nomatch, binary:match(Html, <<"nginx@127.0.0.1">>)),
    #{<<"sampled">> := Sampled} = beamscale_test_load:json(Dir, "run.json"),
    ?assertEqual([<<"host:127.0.0.1">>], Sampled).

%% The same host named with ssh options: read by a node started through sshd, which is gone after.
host_over_ssh() -> [{doc, "The host read through a node over ssh; the node gone after."}].
host_over_ssh(Config) ->
    {_, Port, NginxDir} = ?config(nginx, Config),
    %% This suite's nginx by pid (master and workers), as other suites may run an nginx beside.
    Own = own_nginx(NginxDir),
    ?assertEqual(3, length(Own)),
    Monitor = io_lib:format("#{host => \"127.0.0.1\", args => ~0tp, processes => ~0tp}",
                            [?config(ssh_args, Config), [{pid, P} || P <- Own]]),
    ok = net_kernel:monitor_nodes(true),
    Dir = try run(Config, "ssh", Port, Monitor)
          after net_kernel:monitor_nodes(false)
          end,
    Rows = ok_rows(Dir),
    ?assert(length(by_node(<<"host:127.0.0.1">>, Rows)) >= 2),
    [begin
         PidRows = by_node(iolist_to_binary(["pid ", integer_to_list(P), "@127.0.0.1"]), Rows),
         ?assert(length(PidRows) >= 2),
         ?assertEqual([1], lists:usort([num(pids, R) || R <- PidRows]))
     end || P <- Own],
    #{<<"not_sampled">> := []} = beamscale_test_load:json(Dir, "run.json"),
    %% The reading node this run started (its name from its nodeup) is gone from epmd; other
    %% suites' runs may have watch nodes of their own.
    [Watch] = [N || {nodeup, N} <- flush_nodeups(), lists:prefix("bs_watch", atom_to_list(N))],
    ?assertNot(lists:member(Watch, nodes())),
    [Name, _] = string:split(atom_to_list(Watch), "@"),
    ?assertNot(lists:member(Name, beamscale_test_load:epmd_names())).

flush_nodeups() ->
    receive
        {nodeup, _} = Up -> [Up | flush_nodeups()];
        {nodedown, _} -> flush_nodeups()
    after 0 -> []
    end.

%% This suite's nginx: the master in its pid file and the processes whose parent it is.
own_nginx(NginxDir) ->
    {ok, B} = file:read_file(filename:join(NginxDir, "nginx.pid")),
    Master = binary_to_integer(string:trim(B)),
    {ok, Entries} = file:list_dir("/proc"),
    [Master | [P || E <- Entries, P <- [catch list_to_integer(E)], is_integer(P),
                    ppid(P) =:= Master]].

%% The parent pid in /proc/PID/stat (after the command name in parentheses and the state).
ppid(Pid) ->
    case file:read_file("/proc/" ++ integer_to_list(Pid) ++ "/stat") of
        {ok, Stat} ->
            [_, After] = string:split(Stat, ")", trailing),
            [_State, PPid | _] = string:lexemes(After, " "),
            binary_to_integer(PPid);
        {error, _} -> none
    end.

%% Tsung's munin monitor: Debian's munin-node started here (own config, port, pid and log
%% files; its plugins are /etc/munin/plugins, which this munin-node cannot be told otherwise),
%% its cpu, load and memory plugins as host rows.
munin_host() -> [{doc, "Host rows read from a munin-node started by the test."}].
munin_host(Config) ->
    {_, WebPort, _} = ?config(nginx, Config),
    %% Not under priv_dir: munin-node cannot open a file whose path has an `@' (the node's name).
    Dir = filename:join("/tmp", "beamscale_hostwatch_munin_" ++ os:getpid()),
    ok = filelib:ensure_path(Dir),
    Port = beamscale_load_servers:free_port(),
    Conf = filename:join(Dir, "munin-node.conf"),
    ok = file:write_file(Conf, io_lib:format(
                                 "log_level 4\nlog_file ~ts/munin-node.log\n"
                                 "pid_file ~ts/munin-node.pid\nbackground 0\nsetsid 0\n"
                                 "host 127.0.0.1\nport ~b\nallow ^127\\.0\\.0\\.1$\n",
                                 [Dir, Dir, Port])),
    Stop = beamscale_load_servers:start_server(os:find_executable("munin-node"),
                                               ["--config", Conf, "--foreground"], Port, Dir),
    try
        %% Its first answers are slow (it forks a plugin per fetch): ready when one comes.
        ok = munin_up(Port, 20),
        Monitor = io_lib:format("#{host => \"127.0.0.1\", type => munin, port => ~b}", [Port]),
        Rows = by_node(<<"host:127.0.0.1">>, ok_rows(run(Config, "munin", WebPort, Monitor))),
        ct:pal("~b munin rows", [length(Rows)]),
        ?assert(length(Rows) >= 2),
        [?assert(num(K, R) > 0) || R <- Rows, K <- [load5, host_mem_total, host_mem_available]],
        ?assert(lists:sum([num(host_cpu_pct, R) || R <- Rows]) > 0),
        ?assertEqual([<<>>], lists:usort([maps:get(net_rx_bytes, R) || R <- Rows]))
    after Stop(), file:del_dir_r(Dir)
    end.

%% A munin-node that never ends its answer, or sends a line without end: an error, not a hang
%% or a heap grown without bound.
munin_bounded() -> [{doc, "An endless munin answer or line is an error within the deadline."}].
munin_bounded(_Config) ->
    Endless = fun(S) -> gen_tcp:send(S, "# munin node at x\ncpu load\n"),
                        [gen_tcp:send(S, "user.value 1\n") || _ <- lists:seq(1, 2000)] end,
    Long = fun(S) -> gen_tcp:send(S, ["# munin node at x\n", lists:duplicate(8192, $a)]) end,
    Silent = fun(S) -> gen_tcp:send(S, "# munin node at x\n") end,
    [begin
         {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}, {active, false}]),
         {ok, Port} = inet:port(L),
         Server = spawn_link(fun() -> {ok, S} = gen_tcp:accept(L), Send(S),
                                      receive stop -> ok end end),
         T0 = erlang:monotonic_time(millisecond),
         ?assertMatch({Want, {error, {beamscale_munin, Want}}},
                      {Want, beamscale_munin:read("127.0.0.1", Port, 1500)}),
         ?assert(erlang:monotonic_time(millisecond) - T0 < 3000),
         unlink(Server), exit(Server, kill), gen_tcp:close(L)
     end || {Send, Want} <- [{Endless, {answer_over, 1000, lines}}, {Long, {line_over, 4096}},
                             {Silent, timeout}]].

%% Tsung's snmp monitor: Debian's snmpd started here (own config, read-only community, a
%% loopback UDP port, its persistent files in the test's directory), read through OTP's SNMP
%% manager: load averages and memory as host rows.
snmp_host() -> [{doc, "Host rows read from an snmpd started by the test, through snmpm."}].
snmp_host(Config) ->
    {_, WebPort, _} = ?config(nginx, Config),
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_hostwatch_snmp"),
    {ok, U} = gen_udp:open(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(U),
    ok = gen_udp:close(U),
    Conf = filename:join(Dir, "snmpd.conf"),
    ok = file:write_file(Conf, "rocommunity public 127.0.0.1\n"),
    Exe = os:find_executable("snmpd", "/usr/sbin:/usr/bin"),
    is_list(Exe) orelse ct:fail("no snmpd (scripts/install-deps.sh installs it)"),
    P = open_port({spawn_executable, Exe},
                  [{args, ["-f", "-Lo", "-C", "-c", Conf, "-p", filename:join(Dir, "snmpd.pid"),
                           "udp:127.0.0.1:" ++ integer_to_list(Port)]},
                   {env, [{"MIBS", ""}, {"SNMP_PERSISTENT_DIR", Dir}]}, {cd, Dir},
                   stderr_to_stdout, exit_status, binary]),
    {os_pid, OsPid} = erlang:port_info(P, os_pid),
    try
        ok = snmp_up(Port, 50),
        Monitor = io_lib:format("#{host => \"127.0.0.1\", type => snmp, port => ~b}", [Port]),
        Rows = by_node(<<"host:127.0.0.1">>, ok_rows(run(Config, "snmp", WebPort, Monitor))),
        ct:pal("~b snmp rows", [length(Rows)]),
        ?assert(length(Rows) >= 2),
        [?assert(num(K, R) > 0) || R <- Rows, K <- [load1, load15, host_mem_total,
                                                    host_mem_available]],
        %% The manager's files are in a directory only this user can enter (issue 55).
        {ok, Manager} = application:get_env(snmp, manager),
        MDir = proplists:get_value(dir, proplists:get_value(config, Manager)),
        {ok, #file_info{mode = Mode}} = file:read_file_info(MDir),
        ?assertEqual(8#700, Mode band 8#777)
    after
        os:cmd("kill " ++ integer_to_list(OsPid)), catch port_close(P)
    end.

munin_up(_Port, 0) -> {error, munin_node_not_answering};
munin_up(Port, N) ->
    case beamscale_munin:read("127.0.0.1", Port, 5000) of
        {ok, _} -> ok;
        {error, _} -> timer:sleep(200), munin_up(Port, N - 1)
    end.

snmp_up(_Port, 0) -> {error, snmpd_not_answering};
snmp_up(Port, N) ->
    case beamscale_snmp:read("127.0.0.1", Port, "public", 500) of
        {ok, _} -> ok;
        {error, _} -> timer:sleep(200), snmp_up(Port, N - 1)
    end.

%%% Helpers

run(Config, Name, Port, Monitor) ->
    Dir = filename:join(?config(priv_dir, Config), "beamscale_hostwatch_" ++ Name),
    Text = io_lib:format("{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.\n"
                         "{phases, [{p, #{duration_s => 3, rate => 100}}]}.\n"
                         "{sessions, [{s, #{steps => [{loop, 5, [{http, #{path => \"/\"}}]}]}}]}.\n"
                         "{sample, [web]}.\n{monitors, [~ts]}.\n{drain_s, 2}.\n",
                         [Port, Monitor]),
    S = beamscale_test_load:scenario(Config, "hostwatch_" ++ Name ++ ".scenario", Text),
    {ok, Dir, _} = beamscale_loadtest:run(S, #{dir => Dir, quiet => true, seed => 3,
                                             sample_interval => 500}),
    Dir.

ok_rows(Dir) ->
    [R || #{status := <<"ok">>} = R <- beamscale_store:read_rows(filename:join(Dir,
                                                                            "samples.csv"))].

by_node(Node, Rows) -> [R || #{node := N} = R <- Rows, N =:= Node].

num(K, Row) -> beamscale_format_csv:number(maps:get(K, Row)).

nginx_conf(Dir, Port) ->
    Temps = [[T, "_temp_path ", Dir, ";\n"] || T <- ["client_body", "proxy", "fastcgi", "uwsgi",
                                                     "scgi"]],
    io_lib:format("worker_processes 2;\nerror_log ~ts/error.log;\nevents {}\n"
                  "http {\n access_log off;\n~ts"
                  " server {\n  listen 127.0.0.1:~b;\n  location / { return 200 \"hello\\n\"; }\n"
                  " }\n}\n", [Dir, Temps, Port]).
