%% @doc A real sshd for tests, on 127.0.0.1 on a free port, with throwaway host and user keys in
%% a test's directory; the ssh options that reach it as the current user, and its stop by pid.
-module(beamscale_test_sshd).
-include_lib("common_test/include/ct.hrl").

-export([start/1, stop/1]).

-define(SSHD, "/usr/sbin/sshd").
-define(UP_TIMEOUT_MS, 10000).

%% @doc Start sshd with its files in `Dir': `{Handle, SshArgs}' (SshArgs go before the host).
-spec start(file:filename()) -> {{port(), integer()}, [string()]}.
start(Dir) ->
    filelib:is_regular(?SSHD) orelse ct:fail("no sshd (scripts/install-deps.sh installs it)"),
    [keygen(filename:join(Dir, K)) || K <- ["host_key", "id"]],
    {ok, Pub} = file:read_file(filename:join(Dir, "id.pub")),
    ok = file:write_file(filename:join(Dir, "authorized_keys"), Pub),
    %% sshd started as root wants its privilege separation directory.
    _ = file:make_dir("/run/sshd"),
    Port = free_port(),
    Conf = filename:join(Dir, "sshd_config"),
    ok = file:write_file(Conf, sshd_config(Dir, Port)),
    Sshd = open_port({spawn_executable, ?SSHD}, [{args, ["-D", "-e", "-f", Conf]},
                                                 stderr_to_stdout, exit_status, hide]),
    {os_pid, OsPid} = erlang:port_info(Sshd, os_pid),
    ok = wait_listening(Port, ?UP_TIMEOUT_MS),
    Args = ["-p", integer_to_list(Port), "-i", filename:join(Dir, "id"),
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR"],
    {{Sshd, OsPid}, Args}.

%% @doc Stop it by its pid.
-spec stop({port(), integer()}) -> ok.
stop({Sshd, OsPid}) ->
    _ = os:cmd("kill " ++ integer_to_list(OsPid)),
    catch port_close(Sshd),
    ok.

keygen(File) ->
    "" = os:cmd("ssh-keygen -q -t ed25519 -N '' -f " ++ File ++ " </dev/null").

sshd_config(Dir, Port) ->
    io_lib:format("Port ~b\nListenAddress 127.0.0.1\nHostKey ~ts/host_key\n"
                  "AuthorizedKeysFile ~ts/authorized_keys\nPidFile ~ts/sshd.pid\n"
                  "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                  "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
                  "LogLevel ERROR\n", [Port, Dir, Dir, Dir]).

free_port() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    ok = gen_tcp:close(L),
    Port.

wait_listening(_Port, Left) when Left =< 0 -> {error, sshd_not_listening};
wait_listening(Port, Left) ->
    case gen_tcp:connect({127, 0, 0, 1}, Port, [], 500) of
        {ok, S} -> gen_tcp:close(S);
        {error, _} -> timer:sleep(100), wait_listening(Port, Left - 100)
    end.
