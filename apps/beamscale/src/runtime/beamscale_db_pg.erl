%% @doc The throwaway PostgreSQL of `beamscale db start --engine postgres': Debian's server
%% (`/usr/lib/postgresql/VERSION/bin'), `initdb' in a fresh directory, listening on 127.0.0.1 (a
%% free port) and a unix socket, a database owned by a user whose password is
%% stored as SCRAM-SHA-256, and a second user whose password is stored as MD5 (logins over TCP
%% use whichever the stored password allows). `DIR/connection.config' is written as for
%% MariaDB. The data and the socket go in the directory, or in a private one under /tmp (see
%% `home_for/2'). Stopped by the postmaster's pid, never by name; stopping removes the data.
-module(beamscale_db_pg).

-export([start/1, stop/1, status/1, ping/1, format_error/1]).

-define(INFO_FILE, "connection.config").
-define(LAUNCH_PID, "postgres.pid.launch").
-define(LOG, "postgres.log").
%% Where the server's own files (data and socket) went, kept from the first moment: a start that
%% fails removes them too.
-define(HOME_FILE, "postgres.home").
%% initdb and the setup's psql finish in seconds on an idle host; a shared host may be slow.
-define(CMD_TIMEOUT, 60000).
%% How often start looks whether the server is up: it takes about a second to start.
-define(POLL, 200).
%% A port taken between picking and binding is rare; three tries make a failure a real one.
-define(BIND_RETRIES, 3).
-define(DATABASE, "beamscale").
-define(USER, "beamscale").
-define(MD5_USER, "beamscale_md5").
%% Debian's server runs as this user; PostgreSQL refuses to run as root.
-define(PG_USER, "postgres").
%% A unix socket path longer than this does not fit in `sun_path' (108 bytes with the NUL).
-define(MAX_SOCKET_PATH, 100).
-define(BIN_DIRS, ["/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin",
                   "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/14/bin"]).

%% @doc Initialise a fresh cluster, start it, create the users and the database, wait until the
%% user logs in over TCP and write the connection file.
-spec start(beamscale_db:opts()) -> {ok, beamscale_db:info()} | {error, {?MODULE, term()}}.
start(#{dir := Dir} = Opts) ->
    case running(Dir) of
        {true, Pid} -> {error, {?MODULE, {already_running, Dir, Pid}}};
        false ->
            try
                {ok, do_start(Opts)}
            catch
                throw:Reason -> _ = stop_launched(Dir), cleanup(Dir), {error, {?MODULE, Reason}}
            end
    end.

%% @doc Stop the server of `Dir' by its pid (INT: PostgreSQL's fast shutdown, which does not
%% wait for clients; KILL past the stop timeout) and remove its data.
-spec stop(beamscale_db:opts()) -> {ok, stopped | not_running}.
stop(#{dir := Dir, stop_timeout := Timeout}) ->
    Result = case running(Dir) of
                 {true, Pid} -> beamscale_db_files:stop_pid(Pid, "INT", Timeout);
                 false -> not_running
             end,
    cleanup(Dir),
    {ok, Result}.

%% @doc Whether the server of `Dir' runs and answers, with its connection data.
-spec status(beamscale_db:opts()) ->
          {running, beamscale_db:info()} | {not_answering, beamscale_db:info()} | stopped.
status(#{dir := Dir}) ->
    case {running(Dir), read_info(Dir)} of
        {{true, _}, {ok, Info}} ->
            case ping(Info) of
                ok -> {running, Info};
                {error, _} -> {not_answering, Info}
            end;
        _ -> stopped
    end.

%% @doc Log in over TCP with Debian's `psql' and run `SELECT 1'.
-spec ping(map()) -> ok | {error, binary()}.
ping(#{host := H, port := Port, user := U, password := P, database := D}) ->
    Conn = io_lib:format("host=~s port=~b user=~s password=~s dbname=~s connect_timeout=2",
                         [H, Port, U, P, D]),
    case beamscale_os:cmd(bin("psql"), ["-X", "-A", "-t", "-d", lists:flatten(Conn), "-c",
                                        "SELECT 1"], ?CMD_TIMEOUT) of
        {0, _} -> ok;
        {_, Out} -> {error, Out}
    end.

%% @doc One line for an error of this module.
-spec format_error(term()) -> iodata().
format_error({?MODULE, Reason}) -> format_error(Reason);
format_error({already_running, Dir, Pid}) ->
    io_lib:format("a PostgreSQL already runs in ~ts (pid ~s); stop it first", [Dir, Pid]);
format_error({not_installed, Exe}) ->
    io_lib:format("~s not found: install Debian's postgresql (scripts/install-deps.sh)", [Exe]);
format_error({not_reachable, User, Dir}) ->
    io_lib:format("PostgreSQL runs as ~s, which cannot write ~ts (or a parent directory)",
                  [User, Dir]);
format_error({not_writable, Dir, Why}) ->
    io_lib:format("cannot write ~ts: ~ts", [Dir, file:format_error(Why)]);
format_error({initdb, Status, Out}) ->
    io_lib:format("initdb exited with ~p: ~ts", [Status, last_line(Out)]);
format_error({died, Log}) -> ["postgres exited during start: ", last_line(Log)];
format_error({not_ready, Ms, Log}) ->
    io_lib:format("postgres did not accept connections within ~b ms: ~ts", [Ms, last_line(Log)]);
format_error({setup, Status, Out}) ->
    io_lib:format("creating the users and database failed (~p): ~ts", [Status, last_line(Out)]);
format_error(Other) -> io_lib:format("~0tp", [Other]).

%%% Starting

%% The log of a previous server goes (the new one appends to it); a stopped one's stays.
do_start(#{dir := Dir, start_timeout := Timeout}) ->
    cleanup(Dir),
    _ = file:delete(filename:join(Dir, ?LOG)),
    ok = filelib:ensure_path(Dir),
    OsUser = os_user(),
    Home = home_for(Dir, OsUser),
    case file:write_file(filename:join(Dir, ?HOME_FILE), Home) of
        ok -> ok = filelib:ensure_path(Home);
        {error, Why} -> throw({not_writable, Dir, Why})
    end,
    own(OsUser, Home),
    initdb(Home, OsUser),
    write_hba(Home),
    Deadline = erlang:monotonic_time(millisecond) + Timeout,
    {Pid, Port} = launch(Dir, Home, OsUser, {Deadline, Timeout}, ?BIND_RETRIES),
    Info = #{engine => postgres, host => "127.0.0.1", port => Port,
             socket => socket_file(Home, Port), user => ?USER, password => password(),
             md5_user => ?MD5_USER, md5_password => password(), database => ?DATABASE,
             pid => Pid, os_user => OsUser, dir => Dir},
    setup(Info, Home),
    wait_ready(Info, Deadline, Timeout),
    ok = beamscale_db_files:write_private(filename:join(Dir, ?INFO_FILE),
                                          io_lib:format("~tp.~n", [Info])),
    Info.

bin(Name) ->
    Found = [F || D <- ?BIN_DIRS, F <- [filename:join(D, Name)], filelib:is_regular(F)],
    case Found of
        [F | _] -> F;
        [] -> throw({not_installed, Name})
    end.

%% Run `Exe' as `OsUser': directly when that is who we are, else through `setpriv', which
%% execs (a launched server's pid is then the postmaster's own).
as(OsUser, Exe, Args) ->
    case beamscale_os:user_name() of
        OsUser -> {Exe, Args};
        _ -> {"/usr/bin/setpriv", ["--reuid=" ++ OsUser, "--regid=" ++ OsUser, "--init-groups",
                                   Exe | Args]}
    end.

%% Local logins are the server's OS user's only (`peer', for the setup); TCP asks for the
%% password, by SCRAM or MD5 as the user's stored password allows (PostgreSQL's `md5' method).
initdb(Home, OsUser) ->
    {Exe, Args} = as(OsUser, bin("initdb"), ["-D", data_dir(Home), "-U", ?PG_USER,
                                             "--locale=C", "-E", "UTF8", "--no-sync",
                                             "--auth-local=peer", "--auth-host=md5"]),
    case beamscale_os:cmd(Exe, Args, ?CMD_TIMEOUT) of
        {0, _} -> ok;
        {Status, Out} -> throw({initdb, Status, Out})
    end.

write_hba(Home) ->
    Hba = ["local all ", ?PG_USER, " peer\n", "local all all scram-sha-256\n",
           "host all all 127.0.0.1/32 md5\n"],
    ok = file:write_file(filename:join(data_dir(Home), "pg_hba.conf"), Hba).

%% Commits wait for no fsync (as the MariaDB's flush once a second): the throwaway server is
%% measured for its protocol and queries, not its disk.
server_opts(SockDir, Port) ->
    ["-h", "127.0.0.1", "-p", integer_to_list(Port), "-k", SockDir,
     "-c", "synchronous_commit=off", "-c", "max_connections=200",
     "-c", "password_encryption=scram-sha-256"].

%% A free port is picked then released, so another process may take it before postgres binds:
%% a failed bind is retried with another port. The shell opens the log and execs the server.
launch(Dir, Home, OsUser, {Deadline, Timeout} = Limit, Tries) ->
    Port = beamscale_os:free_port(),
    {Exe, Args} = as(OsUser, bin("postgres"), ["-D", data_dir(Home) | server_opts(Home, Port)]),
    Log = filename:join(Dir, ?LOG),
    Pid = beamscale_os:spawn_detached(
            "/bin/sh", ["-c", "log=$1; shift; exec \"$@\" >>\"$log\" 2>&1", "sh", Log, Exe | Args]),
    ok = file:write_file(filename:join(Dir, ?LAUNCH_PID), Pid),
    case wait_socket(Pid, {Home, Port}, Deadline) of
        ok -> {Pid, Port};
        died when Tries > 1 ->
            case string:find(read_log(Dir), "could not bind") of
                nomatch -> throw({died, read_log(Dir)});
                _ -> launch(Dir, Home, OsUser, Limit, Tries - 1)
            end;
        died -> throw({died, read_log(Dir)});
        timeout -> throw({not_ready, Timeout, read_log(Dir)})
    end.

%% The socket accepts before the server does ("the database system is starting up"):
%% `pg_isready' says when it accepts sessions.
wait_socket(Pid, {SockDir, Port} = Sock, Deadline) ->
    Alive = beamscale_os:alive(Pid),
    Ready = Alive andalso beamscale_os:can_connect({local, socket_file(SockDir, Port)})
        andalso element(1, beamscale_os:cmd(bin("pg_isready"), ["-q", "-h", SockDir, "-p",
                                                                integer_to_list(Port)],
                                            ?CMD_TIMEOUT)) =:= 0,
    Now = erlang:monotonic_time(millisecond),
    if
        Ready -> ok;
        not Alive -> died;
        Now > Deadline -> timeout;
        true -> timer:sleep(?POLL), wait_socket(Pid, Sock, Deadline)
    end.

%% As the server's OS user over the socket (`peer'); each `-c' is its own transaction, which
%% CREATE DATABASE needs.
setup(#{port := Port, user := U, password := P, md5_user := U5, md5_password := P5,
        database := D, os_user := OsUser}, SockDir) ->
    Sql = [io_lib:format("CREATE USER ~s PASSWORD '~s'", [U, P]),
           io_lib:format("CREATE DATABASE ~s OWNER ~s", [D, U]),
           io_lib:format("SET password_encryption = 'md5'; CREATE USER ~s PASSWORD '~s'",
                         [U5, P5]),
           io_lib:format("GRANT ALL ON DATABASE ~s TO ~s", [D, U5])],
    Cs = lists:append([["-c", lists:flatten(S)] || S <- Sql]),
    {Exe, Args} = as(OsUser, bin("psql"), ["-X", "-v", "ON_ERROR_STOP=1", "-h", SockDir,
                                           "-p", integer_to_list(Port), "-U", ?PG_USER,
                                           "-d", "postgres" | Cs]),
    case beamscale_os:cmd(Exe, Args, ?CMD_TIMEOUT) of
        {0, _} -> ok;
        {Status, Out} -> throw({setup, Status, Out})
    end.

wait_ready(Info, Deadline, Timeout) ->
    case ping(Info) of
        ok -> ok;
        {error, Why} ->
            case erlang:monotonic_time(millisecond) > Deadline of
                true -> throw({not_ready, Timeout, Why});
                false -> timer:sleep(?POLL), wait_ready(Info, Deadline, Timeout)
            end
    end.

%% As root, the server runs as Debian's `postgres' user; otherwise as the caller.
os_user() ->
    case beamscale_os:user_name() of
        "root" -> ?PG_USER;
        Me -> Me
    end.

%% The server's files live in `Dir', or in a fresh directory under /tmp when the socket's path
%% there would be too long or when the server's OS user cannot enter `Dir' (a checkout of root's
%% under a 0700 directory, as `mktemp -d' makes).
home_for(Dir, OsUser) ->
    Fits = length(socket_file(Dir, 65535)) =< ?MAX_SOCKET_PATH,
    Reachable = beamscale_os:user_name() =:= OsUser orelse beamscale_os:enterable_by(OsUser, Dir),
    case Fits andalso Reachable of
        true -> Dir;
        false -> beamscale_db_files:tmp_dir()
    end.

%% The server's OS user must own its home when that is not who we are.
own(OsUser, Home) ->
    case beamscale_os:user_name() of
        OsUser -> ok;
        _ ->
            beamscale_os:chown(OsUser, Home),
            case beamscale_os:writable_by(OsUser, Home) of
                true -> ok;
                false -> throw({not_reachable, OsUser, Home})
            end
    end.

%%% Stopping and cleaning up

%% The postmaster's pid: the first line of its pid file, or the one launched (a start that
%% failed before the pid file was written).
running(Dir) ->
    Files = [filename:join(data_dir(home(Dir)), "postmaster.pid"),
             filename:join(Dir, ?LAUNCH_PID)],
    Pids = [string:trim(hd(string:split(B, "\n"))) || F <- Files,
                                                       {ok, B} <- [file:read_file(F)]],
    case [P || P <- lists:usort(Pids), beamscale_os:is_process(binary_to_list(P), "postgres")]
    of
        [P | _] -> {true, binary_to_list(P)};
        [] -> false
    end.

stop_launched(Dir) ->
    case running(Dir) of
        {true, Pid} -> beamscale_db_files:stop_pid(Pid, "INT", ?CMD_TIMEOUT);
        false -> not_running
    end.

cleanup(Dir) ->
    Home = home(Dir),
    _ = file:del_dir_r(data_dir(Home)),
    beamscale_db_files:remove_tmp_dir(Home, Dir),
    lists:foreach(fun(F) -> _ = file:delete(filename:join(Dir, F)) end,
                  [?INFO_FILE, ?LAUNCH_PID, ?HOME_FILE]).

%% Where the server's files went (`Dir' itself when no start recorded another place).
home(Dir) ->
    case file:read_file(filename:join(Dir, ?HOME_FILE)) of
        {ok, Home} -> binary_to_list(Home);
        {error, _} -> Dir
    end.

%%% Small helpers

%% The connection file as `beamscale_db:read_info/1' reads it (which calls this module: it is
%% read here too, to keep the two modules out of a cycle).
read_info(Dir) ->
    case file:consult(filename:join(Dir, ?INFO_FILE)) of
        {ok, [#{engine := postgres} = Info]} -> {ok, Info};
        _ -> error
    end.

data_dir(Dir) -> filename:join(Dir, "pgdata").

socket_file(SockDir, Port) -> filename:join(SockDir, ".s.PGSQL." ++ integer_to_list(Port)).

read_log(Dir) -> beamscale_db_files:read_text(filename:join(Dir, ?LOG)).

last_line(Text) -> beamscale_db_files:last_line(Text).

password() -> beamscale_db_files:password().
