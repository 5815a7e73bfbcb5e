%% @doc The operating system, in one place: running commands with a time limit, starting a
%% detached server, processes by pid (alive, zombie, signal, wait until gone), users, loopback
%% ports, the host's logical cores, its random bytes and private temporary directories.
-module(beamscale_os).

-export([cmd/3, cmd/4, cmd_input/4, spawn_detached/2, free_port/0, can_connect/1, logical_cores/0]).
-export([is_process/2, alive/1, signal/2, wait_gone/2]).
-export([user_name/0, user_exists/1, chown/2, writable_by/2, enterable_by/2]).
-export([random_bytes/1, random_name/0, tmp_dir/0, private_dir/1, remove_stale_dirs/1]).

-define(CONNECT_TIMEOUT, 2000).

-type status() :: non_neg_integer() | timeout | closed.
-define(POLL, 100).

%% @doc Run `Exe' with `Args' (no shell); its exit status and output, or `timeout' after it was
%% killed, or `closed' when it ended before reading its input (`cmd_input/4').
-spec cmd(string(), [string()], pos_integer()) -> {status(), binary()}.
cmd(Exe, Args, Timeout) -> cmd(Exe, Args, [], Timeout).

%% @doc `cmd/3' with these environment variables set (over this node's environment).
-spec cmd(string(), [string()], [{string(), string()}], pos_integer()) -> {status(), binary()}.
cmd(Exe, Args, Env, Timeout) -> run(Exe, Args, Env, [], Timeout).

%% @doc `cmd/3' with `Input' written to the command's standard input first (a secret kept off
%% every command line: the run's cookie, sent through ssh).
-spec cmd_input(string(), [string()], iodata(), pos_integer()) -> {status(), binary()}.
cmd_input(Exe, Args, Input, Timeout) -> run(Exe, Args, [], Input, Timeout).

run(Exe, Args, Env, Input, Timeout) ->
    Port = open_port({spawn_executable, Exe},
                     [{args, Args}, {env, Env}, exit_status, binary, stderr_to_stdout, hide]),
    %% A command that ends before reading its input closes its port with epipe: a monitor says
    %% so, where the link would end the caller.
    Ref = erlang:monitor(port, Port),
    true = unlink(Port),
    %% A command that ends at once (getconf) may have closed its port already: no pid to kill.
    OsPid = case erlang:port_info(Port, os_pid) of
                {os_pid, P} -> P;
                undefined -> gone
            end,
    _ = iolist_size(Input) =:= 0 orelse (catch port_command(Port, Input)),
    collect(Port, {Ref, OsPid}, erlang:monotonic_time(millisecond) + Timeout, <<>>).

collect(Port, {Ref, OsPid} = Ids, Deadline, Acc) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive
        {Port, {data, D}} -> collect(Port, Ids, Deadline, <<Acc/binary, D/binary>>);
        {Port, {exit_status, S}} -> erlang:demonitor(Ref, [flush]), {S, Acc};
        {'DOWN', Ref, port, Port, _Epipe} -> {closed, Acc}
    after Left ->
        _ = OsPid =:= gone orelse signal(integer_to_list(OsPid), "KILL"),
        erlang:demonitor(Ref, [flush]),
        catch port_close(Port),
        {timeout, Acc}
    end.

%% @doc Start `Exe' in its own session, detached from this emulator (it outlives it), its output
%% discarded; its pid. `sh' execs `setsid', which execs `Exe' (a background job of a
%% non-interactive shell is no group leader, so `setsid' does not fork): `$!' is `Exe''s pid.
-spec spawn_detached(string(), [string()]) -> string().
spawn_detached(Exe, Args) ->
    Script = "setsid \"$0\" \"$@\" </dev/null >/dev/null 2>&1 & echo $!",
    {0, Out} = cmd("/bin/sh", ["-c", Script, Exe | Args], ?CONNECT_TIMEOUT),
    string:trim(binary_to_list(Out)).

%% @doc A TCP port on 127.0.0.1 free at the time of the call.
-spec free_port() -> inet:port_number().
free_port() ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    ok = gen_tcp:close(L),
    Port.

%% @doc Whether something accepts connections at a unix socket or a loopback port.
-spec can_connect({local, string()} | inet:port_number()) -> boolean().
can_connect({local, Path}) -> connect_ok(gen_tcp:connect({local, Path}, 0, [local]));
can_connect(Port) -> connect_ok(gen_tcp:connect({127, 0, 0, 1}, Port, [])).

connect_ok({ok, S}) -> ok = gen_tcp:close(S), true;
connect_ok({error, _}) -> false.

%% @doc The number of logical cores this host offers.
-spec logical_cores() -> pos_integer().
logical_cores() ->
    case erlang:system_info(logical_processors_available) of
        N when is_integer(N) -> N;
        unknown -> erlang:system_info(logical_processors)
    end.

%% @doc Whether `Pid' is a live process whose command line names `Name' (a pid file may be stale
%% and the pid reused).
-spec is_process(string(), string()) -> boolean().
is_process(Pid, Name) ->
    alive(Pid) andalso
        case file:read_file("/proc/" ++ Pid ++ "/cmdline") of
            {ok, Cmd} -> binary:match(Cmd, list_to_binary(Name)) =/= nomatch;
            {error, _} -> false
        end.

%% @doc Whether process `Pid' runs (a zombie does not).
-spec alive(string()) -> boolean().
alive(Pid) ->
    case digits(Pid) andalso file:read_file("/proc/" ++ Pid ++ "/stat") of
        {ok, Stat} ->
            [_, AfterName] = string:split(Stat, ") ", trailing),
            binary:first(AfterName) =/= $Z;
        _ -> false
    end.

%% @doc Send signal `Sig' (`"TERM"', `"KILL"', ...) to `Pid'.
-spec signal(string(), string()) -> ok.
signal(Pid, Sig) ->
    _ = digits(Pid) andalso cmd("/bin/kill", ["-" ++ Sig, Pid], ?CONNECT_TIMEOUT) =:= {0, <<>>},
    ok.

digits(S) -> S =/= "" andalso lists:all(fun(C) -> C >= $0 andalso C =< $9 end, S).

%% @doc Wait until `Pid' has gone, at most `Timeout' ms.
-spec wait_gone(string(), non_neg_integer()) -> ok | timeout.
wait_gone(Pid, Timeout) ->
    case alive(Pid) of
        false -> ok;
        true when Timeout =< 0 -> timeout;
        true -> timer:sleep(?POLL), wait_gone(Pid, Timeout - ?POLL)
    end.

%% @doc The name of the user this emulator runs as.
-spec user_name() -> string().
user_name() ->
    {0, Out} = cmd("/usr/bin/id", ["-un"], ?CONNECT_TIMEOUT),
    string:trim(binary_to_list(Out)).

%% @doc Whether the system knows user `User'.
-spec user_exists(string()) -> boolean().
user_exists(User) ->
    element(1, cmd("/usr/bin/getent", ["passwd", User], ?CONNECT_TIMEOUT)) =:= 0.

%% @doc Give `Dir' and what is in it to `User'.
-spec chown(string(), file:filename()) -> ok.
chown(User, Dir) ->
    {0, _} = cmd("/bin/chown", ["-R", User ++ ":", Dir], ?CONNECT_TIMEOUT),
    ok.

%% @doc Whether `User' can enter and write `Dir' (every parent must let it through).
-spec writable_by(string(), file:filename()) -> boolean().
writable_by(User, Dir) -> test_as(User, ["-w", Dir, "-a", "-x", Dir]).

%% @doc Whether `User' can enter `Dir' (every parent must let it through).
-spec enterable_by(string(), file:filename()) -> boolean().
enterable_by(User, Dir) -> test_as(User, ["-x", Dir]).

%% `test' run as `User'; false when `runuser' is missing.
test_as(User, Test) ->
    case os:find_executable("runuser", "/usr/sbin:/sbin:/usr/bin:/bin") of
        false -> false;
        RunUser -> element(1, cmd(RunUser, ["-u", User, "--", "/usr/bin/test" | Test],
                                  ?CONNECT_TIMEOUT)) =:= 0
    end.

%% @doc `N' random bytes fit for secrets (cookies, tokens): the kernel's, from `/dev/urandom';
%% `crypto' only where that cannot be read. Not `crypto' first: loading its library takes
%% 60 ms of CPU (OpenSSL's set-up), a tenth of a whole `beamscale load' start.
-spec random_bytes(pos_integer()) -> binary().
random_bytes(N) ->
    case file:open("/dev/urandom", [read, raw, binary]) of
        {ok, F} ->
            try file:read(F, N) of
                {ok, <<_:N/binary>> = B} -> B;
                _ -> crypto:strong_rand_bytes(N)
            after file:close(F)
            end;
        {error, _} -> crypto:strong_rand_bytes(N)
    end.

%% @doc 12 random letters and digits (a node's name, a directory's).
-spec random_name() -> string().
random_name() ->
    [C || <<C>> <= base64:encode(random_bytes(9)), C =/= $+, C =/= $/, C =/= $=].

%% @doc $TMPDIR, or /tmp.
-spec tmp_dir() -> file:filename().
tmp_dir() ->
    case os:getenv("TMPDIR") of
        T when T =:= false; T =:= "" -> "/tmp";
        T -> T
    end.

%% @doc A fresh directory under `tmp_dir/0' only this user can enter: `Prefix', this emulator's
%% pid, a random part. A name that exists is an error, never reused: one another user planted
%% (a symlink, a directory of theirs) cannot take what is written in it.
-spec private_dir(string()) -> file:filename().
private_dir(Prefix) ->
    Dir = filename:join(tmp_dir(), Prefix ++ os:getpid() ++ "-" ++ random_name()),
    ok = file:make_dir(Dir),
    ok = file:change_mode(Dir, 8#700),
    Dir.

%% @doc Remove what `private_dir(Prefix)' made for emulators that are gone. Another user's
%% directory cannot be entered (0700) and stays; a reused pid keeps one a while.
-spec remove_stale_dirs(string()) -> ok.
remove_stale_dirs(Prefix) ->
    _ = [file:del_dir_r(D)
         || D <- filelib:wildcard(filename:join(tmp_dir(), Prefix ++ "*")),
            [Pid | _] <- [string:split(lists:nthtail(length(Prefix), filename:basename(D)), "-")],
            Pid =/= "", lists:all(fun(C) -> C >= $0 andalso C =< $9 end, Pid),
            not alive(Pid)],
    ok.
