%% @doc The throwaway database: Debian's `mariadbd' with a fresh datadir under a directory, on
%% 127.0.0.1 (a free port) and a unix socket, with a schema and a user with a random password.
%% What a client needs is written to `DIR/connection.config' (Erlang terms) and `DIR/client.cnf'
%% (for `mariadb --defaults-file'). Stopped by its pid, never by name; stopping removes the datadir.
%% With `engine => postgres' the same is done for PostgreSQL by `beamscale_db_pg'.
-module(beamscale_db).

-export([defaults/1, default_dir/0, start/1, stop/1, status/1, read_info/1, mysql_ping/5,
         format_error/1]).
-export_type([opts/0, info/0]).

-type engine() :: mariadb | postgres.
-type opts() :: #{dir := file:filename(), start_timeout := pos_integer(),
                  stop_timeout := pos_integer(), engine := engine()}.
-type info() :: #{host := string(), port := inet:port_number(), socket := string(),
                  user := string(), password := string(), database := string(),
                  pid := string(), os_user := string(), dir := string(),
                  engine => engine(), md5_user => string(), md5_password => string()}.

-define(INFO_FILE, "connection.config").
-define(CLIENT_FILE, "client.cnf").
-define(START_TIMEOUT, 60000).
-define(STOP_TIMEOUT, 30000).
-define(CMD_TIMEOUT, 30000).
-define(POLL, 200).
%% A login over loopback answers in milliseconds; longer means the server is not up yet.
-define(CONNECT_TIMEOUT, 2000).
-define(BIND_RETRIES, 3).
-define(DATABASE, "beamscale").
-define(USER, "beamscale").
%% A unix socket path longer than this does not fit in `sun_path' (108 bytes with the NUL).
-define(MAX_SOCKET_PATH, 100).

%% @doc The directory of the database unless told: runs/db (relative to the current one).
-spec default_dir() -> file:filename().
default_dir() -> filename:join("runs", "db").

%% @doc Options with defaults filled in; the directory is made absolute.
%% dir: where the data, the socket and the connection files go; start_timeout, stop_timeout:
%% ms start waits for the server, ms stop waits before KILL; engine: mariadb or postgres.
-spec defaults(#{dir => file:filename(), atom() => term()}) -> opts().
defaults(Opts) ->
    Full = maps:merge(#{dir => default_dir(), start_timeout => ?START_TIMEOUT,
                        stop_timeout => ?STOP_TIMEOUT, engine => mariadb}, Opts),
    Full#{dir := filename:absname(maps:get(dir, Full))}.

%% @doc Initialise a fresh datadir, start the server, wait until it accepts connections on TCP,
%% create the schema and the user, and write the connection files.
-spec start(opts()) -> {ok, info()} | {error, {module(), term()}}.
start(#{engine := postgres} = Opts) -> beamscale_db_pg:start(Opts);
start(#{dir := Dir} = Opts) ->
    case running(Dir) of
        {true, Pid} -> {error, {?MODULE, {already_running, Dir, Pid}}};
        false ->
            try
                {ok, do_start(Opts)}
            catch
                throw:Reason -> cleanup(Dir), {error, {?MODULE, Reason}}
            end
    end.

%% @doc Stop the server of `Dir' by its pid (TERM, then KILL past the stop timeout) and remove
%% its datadir and connection files. `not_running' when there was none. The engine is the one
%% the connection file names, when there is one.
-spec stop(opts()) -> {ok, stopped | not_running} | {error, {?MODULE, term()}}.
stop(#{engine := mariadb} = Opts) ->
    case engine(Opts) of
        postgres -> beamscale_db_pg:stop(Opts#{engine := postgres});
        mariadb -> stop_mariadb(Opts)
    end;
stop(Opts) -> beamscale_db_pg:stop(Opts).

stop_mariadb(#{dir := Dir, stop_timeout := Timeout}) ->
    Result = case running(Dir) of
                 {true, Pid} -> beamscale_db_files:stop_pid(Pid, "TERM", Timeout);
                 false -> not_running
             end,
    cleanup(Dir),
    {ok, Result}.

%% @doc Whether the server of `Dir' runs and answers, with its connection data.
-spec status(opts()) -> {running, info()} | {not_answering, info()} | stopped.
status(#{engine := mariadb} = Opts) ->
    case engine(Opts) of
        postgres -> beamscale_db_pg:status(Opts#{engine := postgres});
        mariadb -> status_mariadb(Opts)
    end;
status(Opts) -> beamscale_db_pg:status(Opts).

%% A directory started with `--engine postgres' is stopped and shown as such without it.
engine(#{dir := Dir, engine := Given}) ->
    case read_info(Dir) of
        {ok, #{engine := postgres}} -> postgres;
        _ -> Given
    end.

status_mariadb(#{dir := Dir}) ->
    case {running(Dir), read_info(Dir)} of
        {{true, _}, {ok, Info}} ->
            case ping(Info) of
                ok -> {running, Info};
                {error, _} -> {not_answering, Info}
            end;
        _ -> stopped
    end.

%% @doc The connection data written by `start/1'.
-spec read_info(file:filename()) -> {ok, info()} | {error, {?MODULE, term()}}.
read_info(Dir) ->
    case file:consult(filename:join(Dir, ?INFO_FILE)) of
        {ok, [Info]} when is_map(Info) -> {ok, Info};
        {ok, _} -> {error, {?MODULE, {bad_info_file, Dir}}};
        {error, Reason} -> {error, {?MODULE, {no_info_file, Dir, Reason}}}
    end.

%% @doc One line for an error of this module.
-spec format_error(term()) -> iodata().
format_error({?MODULE, Reason}) -> format_error(Reason);
format_error({already_running, Dir, Pid}) ->
    io_lib:format("a database already runs in ~ts (pid ~s); stop it first", [Dir, Pid]);
format_error({not_installed, Exe}) ->
    io_lib:format("~s not found: install Debian's mariadb-server (scripts/install-deps.sh)", [Exe]);
format_error({install_db, Status, Out}) ->
    io_lib:format("mariadb-install-db exited with ~p: ~ts", [Status, last_line(Out)]);
format_error({died, Log}) -> ["mariadbd exited during start: ", last_line(Log)];
format_error({not_ready, Ms, Log}) ->
    io_lib:format("mariadbd did not accept connections within ~b ms: ~ts", [Ms, last_line(Log)]);
format_error({setup, Status, Out}) ->
    io_lib:format("creating the schema and user failed (~p): ~ts", [Status, last_line(Out)]);
format_error({bad_info_file, Dir}) ->
    io_lib:format("the database's info file in ~ts is not what beamscale wrote", [Dir]);
format_error({no_info_file, Dir, Why}) ->
    io_lib:format("no database in ~ts (~ts)", [Dir, file:format_error(Why)]);
format_error(Other) -> io_lib:format("~0tp", [Other]).

%%% Starting

do_start(#{dir := Dir, start_timeout := Timeout}) ->
    Exes = [exe(E) || E <- ["mariadbd", "mariadb-install-db", "mariadb"]],
    cleanup(Dir),
    ok = filelib:ensure_path(filename:join(Dir, "data")),
    SockDir = socket_dir(Dir),
    OsUser = os_user([Dir, SockDir]),
    install_db(hd(tl(Exes)), Dir, OsUser),
    Deadline = erlang:monotonic_time(millisecond) + Timeout,
    {Pid, Port} = launch(hd(Exes), Dir, SockDir, OsUser, {Deadline, Timeout}, ?BIND_RETRIES),
    Info = #{host => "127.0.0.1", port => Port, socket => filename:join(SockDir, "mysqld.sock"),
             user => ?USER, password => beamscale_db_files:password(), database => ?DATABASE,
             pid => Pid, os_user => OsUser, dir => Dir},
    setup(lists:last(Exes), Info),
    wait_ready(Info, Deadline, Timeout),
    write_info(Dir, Info),
    Info.

exe(Name) ->
    Found = [F || F <- [os:find_executable(Name), "/usr/sbin/" ++ Name], F =/= false,
                  filelib:is_regular(F)],
    case Found of
        [F | _] -> F;
        [] -> throw({not_installed, Name})
    end.

%% Options that keep the throwaway server small and quick to initialise. The log is written at
%% each commit but flushed to disk once a second (as tuned servers do; the thesis tuned InnoDB
%% too): a commit then costs no fsync, and only an OS crash could lose the last second.
server_opts() ->
    ["--innodb-log-file-size=8M", "--innodb-buffer-pool-size=128M", "--skip-name-resolve",
     "--innodb-flush-log-at-trx-commit=2"].

install_db(Exe, Dir, OsUser) ->
    Args = ["--no-defaults", "--datadir=" ++ filename:join(Dir, "data"), "--skip-test-db",
            "--auth-root-authentication-method=normal", "--user=" ++ OsUser] ++ server_opts(),
    case beamscale_os:cmd(Exe, Args, ?CMD_TIMEOUT) of
        {0, _} -> ok;
        {Status, Out} -> throw({install_db, Status, Out})
    end.

%% A free port is picked then released, so another process may take it before mariadbd binds:
%% a failed bind is retried with another port.
launch(Exe, Dir, SockDir, OsUser, {Deadline, Timeout} = Limit, Tries) ->
    Port = beamscale_os:free_port(),
    Args = ["--no-defaults", "--datadir=" ++ filename:join(Dir, "data"), "--user=" ++ OsUser,
            "--bind-address=127.0.0.1", "--port=" ++ integer_to_list(Port),
            "--socket=" ++ filename:join(SockDir, "mysqld.sock"),
            "--pid-file=" ++ filename:join(Dir, "mysqld.pid"),
            "--log-error=" ++ log_file(Dir)] ++ server_opts(),
    Pid = beamscale_os:spawn_detached(Exe, Args),
    ok = file:write_file(filename:join(Dir, "mysqld.pid.launch"), Pid),
    case wait_socket(Pid, filename:join(SockDir, "mysqld.sock"), Deadline) of
        ok -> {Pid, Port};
        died when Tries > 1 ->
            case string:find(read_log(Dir), "Can't start server: Bind") of
                nomatch -> throw({died, read_log(Dir)});
                _ -> launch(Exe, Dir, SockDir, OsUser, Limit, Tries - 1)
            end;
        died -> throw({died, read_log(Dir)});
        timeout ->
            _ = beamscale_db_files:stop_pid(Pid, "TERM", ?STOP_TIMEOUT),
            throw({not_ready, Timeout, read_log(Dir)})
    end.

wait_socket(Pid, Sock, Deadline) ->
    Alive = beamscale_os:alive(Pid),
    Ready = Alive andalso beamscale_os:can_connect({local, Sock}),
    Now = erlang:monotonic_time(millisecond),
    if
        Ready -> ok;
        not Alive -> died;
        Now > Deadline -> timeout;
        true -> timer:sleep(?POLL), wait_socket(Pid, Sock, Deadline)
    end.

%% Over the socket as root (no password on this throwaway server, reachable only locally).
setup(Client, #{socket := Sock, user := U, password := P, database := D}) ->
    Sql = lists:flatten(
            ["CREATE DATABASE ", D, "; ",
             [io_lib:format("CREATE USER '~s'@'~s' IDENTIFIED BY '~s'; "
                            "GRANT ALL ON ~s.* TO '~s'@'~s'; ", [U, H, P, D, U, H])
              || H <- ["localhost", "127.0.0.1"]]]),
    Args = ["--no-defaults", "--socket=" ++ Sock, "-uroot", "-e", Sql],
    case beamscale_os:cmd(Client, Args, ?CMD_TIMEOUT) of
        {0, _} -> ok;
        {Status, Out} -> throw({setup, Status, Out})
    end.

%% Ready means: the user logs in over TCP through the driver the targets use.
wait_ready(Info, Deadline, Timeout) ->
    case ping(Info) of
        ok -> ok;
        {error, Why} ->
            case erlang:monotonic_time(millisecond) > Deadline of
                true -> throw({not_ready, Timeout, io_lib:format("~0tp", [Why])});
                false -> timer:sleep(?POLL), wait_ready(Info, Deadline, Timeout)
            end
    end.

ping(#{host := H, port := Port, user := U, password := P, database := D}) ->
    mysql_ping(H, Port, U, P, D).

write_info(Dir, #{host := H, port := Port, socket := S, user := U, password := P,
                  database := D} = Info) ->
    ok = beamscale_db_files:write_private(filename:join(Dir, ?INFO_FILE),
                                          io_lib:format("~tp.~n", [Info])),
    Cnf = io_lib:format("[client]~nhost=~s~nport=~b~nsocket=~s~nuser=~s~npassword=~s~n"
                        "database=~s~n", [H, Port, S, U, P, D]),
    ok = beamscale_db_files:write_private(filename:join(Dir, ?CLIENT_FILE), Cnf).

%%% Who runs the server

%% As root, mariadbd switches to the unprivileged `mysql' user of the Debian package when that
%% user can write the directories; otherwise (a directory it cannot reach) it stays root, which
%% mariadbd accepts only when told `--user=root'. Not as root, it runs as the caller.
os_user(Dirs) ->
    Me = beamscale_os:user_name(),
    case Me =:= "root" andalso beamscale_os:user_exists("mysql") of
        true ->
            [beamscale_os:chown("mysql", D) || D <- Dirs],
            case lists:all(fun(D) -> beamscale_os:writable_by("mysql", D) end, Dirs) of
                true -> "mysql";
                false -> [beamscale_os:chown("root", D) || D <- Dirs], "root"
            end;
        false -> Me
    end.

%%% Stopping and cleaning up

running(Dir) ->
    Pids = [string:trim(B) || F <- ["mysqld.pid", "mysqld.pid.launch"],
                              {ok, B} <- [file:read_file(filename:join(Dir, F))]],
    case [P || P <- lists:usort(Pids), beamscale_os:is_process(binary_to_list(P), "mariadbd")]
    of
        [P | _] -> {true, binary_to_list(P)};
        [] -> false
    end.

cleanup(Dir) ->
    case read_info(Dir) of
        {ok, #{socket := Sock}} -> beamscale_db_files:remove_tmp_dir(filename:dirname(Sock), Dir);
        {error, _} -> ok
    end,
    _ = file:del_dir_r(filename:join(Dir, "data")),
    lists:foreach(fun(F) -> _ = file:delete(filename:join(Dir, F)) end,
                  [?INFO_FILE, ?CLIENT_FILE, "mysqld.pid", "mysqld.pid.launch", "mysqld.sock"]).

%% The socket lives in the directory, or in a fresh one under /tmp when that path is too long.
socket_dir(Dir) ->
    case length(filename:join(Dir, "mysqld.sock")) =< ?MAX_SOCKET_PATH of
        true -> Dir;
        false ->
            Tmp = beamscale_db_files:tmp_dir(),
            ok = file:make_dir(Tmp),
            Tmp
    end.

%%% Small helpers

log_file(Dir) -> filename:join(Dir, "mysqld.err").

read_log(Dir) -> beamscale_db_files:read_text(log_file(Dir)).

last_line(Text) -> beamscale_db_files:last_line(Text).

%% @doc Log in with the MySQL protocol through `p1_mysql' and run `SELECT 1'.
-spec mysql_ping(string(), inet:port_number(), string(), string(), string()) ->
          ok | {error, term()}.
mysql_ping(Host, Port, User, Password, Database) ->
    Quiet = fun(_Level, _Format, _Args) -> ok end,
    case p1_mysql_conn:start(Host, Port, User, Password, Database, ?CONNECT_TIMEOUT, Quiet) of
        {ok, Conn} ->
            Result = p1_mysql_conn:fetch(Conn, <<"SELECT 1">>, self(), ?CONNECT_TIMEOUT),
            p1_mysql_conn:stop(Conn),
            case Result of
                {data, _} -> ok;
                Other -> {error, Other}
            end;
        Error -> {error, Error}
    end.
