%% @doc `beamscale db start|stop|status': the throwaway MariaDB of `beamscale_db'.
-module(beamscale_cmd_db).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "db", summary => "start, stop or show the throwaway MariaDB (or PostgreSQL)",
      usage => "beamscale db start|stop|status [--dir DIR] [--engine mariadb|postgres]",
      details => "start: a fresh datadir under DIR (--dir), 127.0.0.1 on a free port "
                 "and a unix socket,\na schema and a user; prints how to reach it and writes "
                 "DIR/connection.config and\nDIR/client.cnf "
                 "(mariadb --defaults-file=DIR/client.cnf)."
                 "\nstop: stops it by its pid and removes the datadir."
                 "\n--engine postgres: PostgreSQL instead (initdb; a SCRAM user and an MD5 "
                 "user); stop and\nstatus find the engine in DIR/connection.config.",
      options => [{dir, "--dir", string, "the database's directory",
                   {value, beamscale_db:default_dir()}},
                  {timeout, "--timeout", integer, "seconds start may wait for the server"},
                  {engine, "--engine", string, "mariadb or postgres",
                   {value, atom_to_list(maps:get(engine, beamscale_db:defaults(#{})))}}]}.

%% @doc Start, stop or show the database.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := Opts, args := [Action]}) when Action =:= "start"; Action =:= "stop";
                                           Action =:= "status" ->
    case engine(beamscale_args:get(engine, Opts, maps:get(options, info()))) of
        {ok, Engine} -> db(Action, Opts, Engine);
        error -> {error, {engine, maps:get(engine, Opts)}}
    end;
do(#{args := Args}) ->
    {error, {usage, Args}}.

engine("mariadb") -> {ok, mariadb};
engine("postgres") -> {ok, postgres};
engine(_) -> error.

db(Action, Opts, Engine) ->
    Given = (maps:with([dir], Opts))#{engine => Engine},
    DbOpts = beamscale_db:defaults(case maps:find(timeout, Opts) of
                                       {ok, S} -> Given#{start_timeout => S * 1000};
                                       error -> Given
                                   end),
    action(list_to_atom(Action), DbOpts).

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({usage, []}) -> "say start, stop or status";
format_error({engine, E}) -> ["--engine: expected mariadb or postgres, not ", E];
format_error({usage, Args}) -> ["expected start, stop or status, not: ", lists:join(" ", Args)].

action(start, Opts) ->
    case beamscale_db:start(Opts) of
        {ok, Info} -> print(Info);
        {error, Reason} -> {failed, beamscale_error:format(Reason)}
    end;
action(stop, #{dir := Dir} = Opts) ->
    {ok, Result} = beamscale_db:stop(Opts),
    io:format("~s: ~ts~n", [Result, Dir]);
action(status, #{dir := Dir} = Opts) ->
    case beamscale_db:status(Opts) of
        {running, Info} -> io:format("running~n"), print(Info);
        {not_answering, Info} ->
            print(Info),
            {failed, "the server's process runs but it does not accept connections"};
        stopped -> {failed, io_lib:format("no database runs in ~ts", [Dir])}
    end.

print(#{engine := postgres, host := H, port := P, user := U, password := Pw, database := D,
        md5_user := U5, md5_password := P5} = Info) ->
    print_common(Info),
    io:format("md5 user  ~s (password ~s)~nclient    psql \"host=~s port=~b user=~s "
              "password=~s dbname=~s\"~n", [U5, P5, H, P, U, Pw, D]);
print(#{dir := Dir} = Info) ->
    print_common(Info),
    io:format("client    mariadb --defaults-file=~ts~n", [filename:join(Dir, "client.cnf")]).

print_common(#{host := H, port := P, socket := S, user := U, password := Pw, database := D,
               pid := Pid, os_user := OsUser, dir := Dir}) ->
    io:format("host      ~s~nport      ~b~nsocket    ~s~nuser      ~s~npassword  ~s~n"
              "database  ~s~npid       ~s (runs as ~s)~ninfo      ~ts~n",
              [H, P, S, U, Pw, D, Pid, OsUser, filename:join(Dir, "connection.config")]).
