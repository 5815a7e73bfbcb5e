%% @doc Test helper: network namespaces that stand for other hosts (beamscale_hosts_SUITE,
%% beamscale_load_netns_SUITE, beamscale_load_sources_SUITE, beamscale_load_ipv6_SUITE,
%% beamscale_load_batch_SUITE). A
%% namespace made, servers started in it and stopped by pid, and the namespace removed with
%% every process left in it and its /etc/netns/NAME (`ip netns exec' mounts it over /etc); a
%% TCP echo that records whom it accepted, run on a peer node inside one. Only OTP here, so
%% that the suites of every app can call it.
-module(beamscale_load_test_netns).
-include_lib("common_test/include/ct.hrl").

-export([add/1, remove/1, list/0, pids/1, ip/1, etc/1, exec_ok/2]).
-export([start/3, start/4, stop/1, listening/2, wait_until/2, ssh_keys/1, sshd/4, ssh_as/4,
         nginx/4]).
-export([peer/1, recorder/2, udp_recorder/2, accepted/1]).
-export_type([server/0]).

%% A server started in a namespace: its port and its OS pid (`ip netns exec' execs it).
-type server() :: {port(), string()}.

%% `ip', ss, kill and ssh-keygen take milliseconds; a loaded host may take seconds.
-define(CMD_TIMEOUT_MS, 20000).
%% sshd and nginx listen within milliseconds; a loaded host may take seconds.
-define(UP_TIMEOUT_MS, 20000).
%% A process sent SIGTERM a moment ago may still be on its way out.
-define(GONE_TIMEOUT_MS, 10000).

%% @doc The namespace `Ns', with its loopback up.
-spec add(string()) -> ok.
add(Ns) ->
    ip(["netns", "add", Ns]),
    ip(["-n", Ns, "link", "set", "lo", "up"]).

%% @doc Every process left in `Ns' (SIGTERM, then SIGKILL), then the namespace and its
%% /etc/netns directory; a namespace not there is no error (a set-up that failed midway).
-spec remove(string()) -> ok.
remove(Ns) ->
    case lists:member(Ns, list()) of
        true ->
            [kill(P, "TERM") || P <- pids(Ns)],
            _ = wait_until(fun() -> pids(Ns) =:= [] end, ?GONE_TIMEOUT_MS),
            [kill(P, "KILL") || P <- pids(Ns)],
            ip(["netns", "del", Ns]);
        false -> ok
    end,
    _ = file:del_dir_r(etc(Ns)),
    ok.

%% @doc The namespaces' names.
-spec list() -> [string()].
list() ->
    {0, Out} = cmd(exe("ip"), ["netns", "list"]),
    [hd(string:lexemes(L, " ")) || L <- string:lexemes(Out, "\n")].

%% @doc The OS pids of the processes in `Ns'.
-spec pids(string()) -> [string()].
pids(Ns) ->
    case cmd(exe("ip"), ["netns", "pids", Ns]) of
        {0, Out} -> string:lexemes(Out, "\n");
        _ -> []
    end.

%% @doc `ip ARGS'; a failure fails the test with ip's words (as a host without namespaces would).
-spec ip([string()]) -> ok.
ip(Args) ->
    case cmd(exe("ip"), Args) of
        {0, _} -> ok;
        {Status, Out} ->
            ct:fail("cannot make the test's network (ip ~ts): status ~p: ~ts",
                    [lists:join(" ", Args), Status, Out])
    end.

%% @doc The directory `ip netns exec Ns' mounts over /etc (hosts, ssh/ssh_config).
-spec etc(string()) -> file:filename().
etc(Ns) -> "/etc/netns/" ++ Ns.

%% @doc Whether the shell command `Cmd' succeeds in `Ns'.
-spec exec_ok(string(), string()) -> boolean().
exec_ok(Ns, Cmd) ->
    element(1, cmd(exe("ip"), ["netns", "exec", Ns, "sh", "-c", Cmd])) =:= 0.

%% @doc `Exe ARGS' started in `Ns', not waited for.
-spec start(string(), file:filename(), [string()]) -> server().
start(Ns, Exe, Args) ->
    filelib:is_regular(Exe) orelse ct:fail("~ts not found (scripts/install-deps.sh)", [Exe]),
    P = open_port({spawn_executable, exe("ip")},
                  [{args, ["netns", "exec", Ns, Exe | Args]}, exit_status, binary,
                   stderr_to_stdout]),
    {os_pid, Pid} = erlang:port_info(P, os_pid),
    {P, integer_to_list(Pid)}.

%% @doc As `start/3', returned once it listens on TCP port `Port' of `Ns' (else stopped, and
%% the test fails with its output).
-spec start(string(), file:filename(), [string()], inet:port_number()) -> server().
start(Ns, Exe, Args, Port) ->
    {P, _} = Server = start(Ns, Exe, Args),
    case wait_until(fun() -> listening(Ns, Port) end, ?UP_TIMEOUT_MS) of
        ok -> Server;
        timeout ->
            stop(Server),
            ct:fail("~ts did not listen in ~ts: ~ts", [Exe, Ns, drain(P)])
    end.

%% @doc Stop a server by its pid.
-spec stop(server()) -> ok.
stop({P, Pid}) ->
    kill(Pid, "TERM"),
    catch port_close(P),
    ok.

%% @doc Whether something listens on TCP port `Port' in `Ns'.
-spec listening(string(), inet:port_number()) -> boolean().
listening(Ns, Port) ->
    {_, Out} = cmd(exe("ip"), ["netns", "exec", Ns, "ss", "-ltnH",
                               "sport = :" ++ integer_to_list(Port)]),
    string:trim(Out) =/= "".

%% @doc `ok' once `Cond()' holds, checked every 200 ms for `Ms' at most, else `timeout'.
-spec wait_until(fun(() -> boolean()), integer()) -> ok | timeout.
wait_until(Cond, Ms) when Ms =< 0 ->
    case Cond() of true -> ok; false -> timeout end;
wait_until(Cond, Ms) ->
    case Cond() of
        true -> ok;
        false -> timer:sleep(200), wait_until(Cond, Ms - 200)
    end.

%% @doc Throwaway ssh keys in `Dir' (`host_key', and `id' authorized for the user): the ssh
%% options that log in with them, before the host.
-spec ssh_keys(file:filename()) -> [string()].
ssh_keys(Dir) ->
    [keygen(filename:join(Dir, K)) || K <- ["host_key", "id"]],
    {ok, Pub} = file:read_file(filename:join(Dir, "id.pub")),
    ok = file:write_file(filename:join(Dir, "authorized_keys"), Pub),
    ["-i", filename:join(Dir, "id"), "-o", "StrictHostKeyChecking=no",
     "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR"].

%% @doc sshd on port 22 of `Addresses' in `Ns', with `ssh_keys/1''s keys in `Dir' and its
%% configuration `Dir/sshd_Label'; returned once it listens.
-spec sshd(string(), file:filename(), [string()], string()) -> server().
sshd(Ns, Dir, Addresses, Label) ->
    %% sshd started as root wants its privilege separation directory.
    _ = file:make_dir("/run/sshd"),
    Conf = filename:join(Dir, "sshd_" ++ Label),
    ok = file:write_file(Conf, [["ListenAddress ", A, "\n"] || A <- Addresses]
                         ++ io_lib:format(
        "HostKey ~ts/host_key\nAuthorizedKeysFile ~ts/authorized_keys\n"
        "PidFile none\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nLogLevel ERROR\n",
        [Dir, Dir])),
    start(Ns, "/usr/sbin/sshd", ["-D", "-e", "-f", Conf], 22).

%% @doc sshd on port 22 of `Addresses' in `Ns', logged into as root by every `ssh' run in `Ns'
%% with `ssh_keys/1''s throwaway key (the namespace's ssh_config): returned once `ssh Host'
%% works there.
-spec ssh_as(string(), file:filename(), [string()], string()) -> server().
ssh_as(Ns, Dir, Addresses, Host) ->
    _ = ssh_keys(Dir),
    ok = filelib:ensure_path(filename:join(etc(Ns), "ssh")),
    ok = file:write_file(filename:join([etc(Ns), "ssh", "ssh_config"]), io_lib:format(
                           "Host *\n  IdentityFile ~ts/id\n  StrictHostKeyChecking no\n"
                           "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n", [Dir])),
    P = sshd(Ns, Dir, Addresses, Host),
    case wait_until(fun() -> exec_ok(Ns, "ssh -o BatchMode=yes " ++ Host ++ " true") end,
                    ?UP_TIMEOUT_MS) of
        ok -> P;
        timeout -> stop(P), ct:fail("ssh ~ts did not log in in ~ts", [Host, Ns])
    end.

%% @doc nginx in `Ns' with its files in `Dir' and `Http' the body of its `http' block (its
%% `server's, log formats), returned once it listens on `Port'.
-spec nginx(string(), file:filename(), iodata(), inet:port_number()) -> server().
nginx(Ns, Dir, Http, Port) ->
    Conf = filename:join(Dir, "nginx.conf"),
    ok = file:write_file(Conf, [io_lib:format(
      "daemon off;\nworker_processes 1;\npid ~ts/nginx.pid;\nerror_log ~ts/error.log;\n"
      "events { worker_connections 256; }\n"
      "http {\n client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
      " uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n", lists:duplicate(7, Dir)), Http, "}\n"]),
    start(Ns, "/usr/sbin/nginx", ["-p", Dir, "-c", Conf, "-e", filename:join(Dir, "error.log")],
          Port).

%%% Internals

keygen(File) ->
    _ = file:delete(File), _ = file:delete(File ++ ".pub"),
    {0, _} = cmd(exe("ssh-keygen"), ["-q", "-t", "ed25519", "-N", "", "-f", File]),
    ok.

kill(Pid, Sig) ->
    _ = cmd(exe("kill"), ["-" ++ Sig, Pid]),
    ok.

exe(Name) ->
    case os:find_executable(Name) of
        false -> ct:fail("~ts not found (scripts/install-deps.sh)", [Name]);
        Exe -> Exe
    end.

%% `Exe ARGS' to its end within ?CMD_TIMEOUT_MS: its status and output (stderr too) as text.
cmd(Exe, Args) ->
    P = open_port({spawn_executable, Exe}, [{args, Args}, exit_status, stderr_to_stdout,
                                            binary, hide]),
    cmd_out(P, <<>>, erlang:monotonic_time(millisecond) + ?CMD_TIMEOUT_MS).

cmd_out(P, Acc, Deadline) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive
        {P, {data, D}} -> cmd_out(P, <<Acc/binary, D/binary>>, Deadline);
        {P, {exit_status, St}} -> {St, binary_to_list(Acc)}
    after Left ->
        catch port_close(P),
        {timeout, binary_to_list(Acc)}
    end.

drain(P) ->
    receive {P, {data, D}} -> [D | drain(P)]
    after 0 -> []
    end.

%% @doc (On a peer node in a namespace: called there, it runs there.) A TCP echo on `Ip':`Port'
%% that records the address of each connection; returned once it listens.
-spec recorder(inet:ip_address(), inet:port_number()) -> pid() | no_recorder.
recorder(Ip, Port) ->
    recording(fun(Family) ->
                      {ok, L} = gen_tcp:listen(Port, [binary, Family, {ip, Ip}, {active, false},
                                                      {reuseaddr, true}, {backlog, 128}]),
                      L
              end, fun accept/2, Ip).

%% @doc (On a peer node in a namespace.) A UDP echo on `Ip':`Port' that records the address of
%% each datagram's sender (read by `accepted/1'); returned once its socket is open.
-spec udp_recorder(inet:ip_address(), inet:port_number()) -> pid() | no_recorder.
udp_recorder(Ip, Port) ->
    recording(fun(Family) ->
                      {ok, S} = gen_udp:open(Port, [binary, Family, {ip, Ip}, {active, false},
                                                    {reuseaddr, true}]),
                      S
              end, fun udp_echo/2, Ip).

%% A process that opens its socket by `Open(Family)' and serves it by `Serve(Socket, Table)'.
recording(Open, Serve, Ip) ->
    Parent = self(),
    Family = case tuple_size(Ip) of 4 -> inet; 8 -> inet6 end,
    Pid = spawn(fun() ->
                        Tab = ets:new(accepted, [public, bag]),
                        Socket = Open(Family),
                        Parent ! {listening, self()},
                        Serve(Socket, Tab)
                end),
    receive {listening, Pid} -> Pid after 10000 -> no_recorder end.

accept(L, Tab) ->
    asked(Tab),
    case gen_tcp:accept(L, 100) of
        {ok, S} ->
            {ok, {A, _}} = inet:peername(S),
            ets:insert(Tab, {A}),
            Pid = spawn(fun() -> receive go -> echo(S) end end),
            ok = gen_tcp:controlling_process(S, Pid),
            Pid ! go,
            accept(L, Tab);
        {error, timeout} -> accept(L, Tab)
    end.

%% The sources recorded so far, to whoever asked (`accepted/1'), then forgotten.
asked(Tab) ->
    receive
        {accepted, From} -> From ! {accepted, ets:tab2list(Tab)}, ets:delete_all_objects(Tab)
    after 0 -> ok
    end.

udp_echo(S, Tab) ->
    asked(Tab),
    case gen_udp:recv(S, 0, 100) of
        {ok, {A, P, Data}} ->
            ets:insert(Tab, {A}),
            ok = gen_udp:send(S, A, P, Data);
        {error, timeout} -> ok
    end,
    udp_echo(S, Tab).

%% An echo: Tsung's ack="local" waits for the server's reply.
echo(S) ->
    case gen_tcp:recv(S, 0, 5000) of
        {ok, Data} -> _ = gen_tcp:send(S, Data), echo(S);
        _ -> gen_tcp:close(S)
    end.

%% @doc (On the peer.) The addresses the recorder accepted since it was last asked.
-spec accepted(pid()) -> [string()] | timeout.
accepted(Pid) ->
    Pid ! {accepted, self()},
    receive {accepted, L} -> lists:usort([inet:ntoa(A) || {A} <- L]) after 5000 -> timeout end.

%% @doc A peer node (not distributed: its calls go over its standard I/O) run in `Ns', with
%% the load generator's code and this helper's on its path.
-spec peer(string()) -> pid().
peer(Ns) ->
    Paths = lists:usort([filename:dirname(code:which(M))
                         || M <- [?MODULE, beamscale_load_run, beamscale_stats_hist,
                                  beamscale_format_csv]]),
    {ok, Peer, _} = peer:start(#{exec => {exe("ip"), ["netns", "exec", Ns,
                                                      os:find_executable("erl")]},
                                 connection => standard_io,
                                 args => lists:append([["-pa", P] || P <- Paths])}),
    Peer.
