%% @doc MariaDB (InnoDB) as an IO-bound target (the thesis's MySQL benchmark), run on the node
%% under test: the `subscriber' table, `write(N)' inserts N new records and `read(N)' reads N
%% random existing ones, one statement per operation on a connection of a pool whose size is an
%% argument (the thesis compared 50 connections with one). The driver is Debian's `p1_mysql'
%% (pure Erlang, on the default code path of Debian's erl); it has no prepared statements, so
%% string values are escaped with `p1_mysql:quote/1'. When the database is down or hangs, calls
%% return an error within their timeout.
-module(beamscale_target_mysql).

-export([defaults/1, start/1, stop/0, write/1, read/1, format_error/1]).
-export([insert_sql/1, select_sql/1]).
-export_type([opts/0]).

%% Either the connection data, or `db_file': the `connection.config' of `beamscale db start'.
-type opts() :: #{host := string(), port := inet:port_number(), user := string(),
                  password := string(), database := string(), pool_size := pos_integer(),
                  timeout := pos_integer(), connect_timeout := pos_integer(),
                  reset := boolean()}.

-define(POOL, beamscale_target_mysql_pool).
-define(TIMEOUT, 5000).
-define(CONNECT_TIMEOUT, 2000).
-define(POOL_SIZE, 50).
-define(TABLE, "subscriber").

%% @doc Options with defaults filled in (and those of `db_file' read).
-spec defaults(map()) -> opts().
defaults(#{db_file := File} = Opts) ->
    {ok, [Info]} = file:consult(File),
    defaults(maps:merge(maps:with([host, port, user, password, database], Info),
                        maps:remove(db_file, Opts)));
defaults(Opts) ->
    maps:merge(#{host => "127.0.0.1", pool_size => ?POOL_SIZE, timeout => ?TIMEOUT,
                 connect_timeout => ?CONNECT_TIMEOUT, reset => false}, Opts).

%% @doc Start the pool, create the table if it is missing (drop it first with `reset') and
%% count its records. Fails when the database cannot be reached.
-spec start(map()) -> {ok, #{records := non_neg_integer(), pool_size := pos_integer()}} |
          {error, {?MODULE, term()}}.
start(Opts0) ->
    #{pool_size := Size, reset := Reset} = Opts = defaults(Opts0),
    ok = beamscale_target_pool:stop(?POOL),
    {ok, _} = beamscale_target_pool:start(?POOL, Size, connector(Opts)),
    persistent_term:put({?MODULE, timeout}, maps:get(timeout, Opts)),
    Drop = [<<"DROP TABLE IF EXISTS " ?TABLE>> || Reset],
    case sql_all(Drop ++ [create_table(), <<"SELECT COUNT(*) FROM " ?TABLE>>]) of
        {ok, [[Count]]} ->
            ok = beamscale_target_keys:init(?MODULE, to_integer(Count)),
            {ok, #{records => to_integer(Count), pool_size => Size}};
        {error, Why} ->
            ok = beamscale_target_pool:stop(?POOL),
            {error, {?MODULE, {start, Why}}}
    end.

%% @doc Stop the pool and close its connections.
-spec stop() -> ok.
stop() -> beamscale_target_pool:stop(?POOL).

%% @doc Insert `N' new records; stops at the first error (with the count so far).
-spec write(non_neg_integer()) -> {ok, #{written := non_neg_integer()}} |
          {error, {?MODULE, term()}}.
write(N) -> repeat(N, fun insert/0, written, 0).

%% @doc Read `N' random existing records by key.
-spec read(non_neg_integer()) -> {ok, #{read := non_neg_integer(), found := non_neg_integer()}} |
          {error, {?MODULE, term()}}.
read(N) ->
    case repeat(N, fun select/0, found, 0) of
        {ok, #{found := Found}} -> {ok, #{read => N, found => Found}};
        Error -> Error
    end.

%% @doc One line for an error of this module.
-spec format_error(term()) -> iodata().
format_error({?MODULE, Reason}) -> format_error(Reason);
format_error({start, {beamscale_target_pool, Why}}) ->
    ["start: ", beamscale_target_pool:format_error(Why)];
format_error({Op, {beamscale_target_pool, Why}, Done}) ->
    io_lib:format("~s after ~0tp: ~ts", [Op, Done, beamscale_target_pool:format_error(Why)]);
format_error({Op, Why, Done}) ->
    io_lib:format("~s after ~0tp: ~0tp", [Op, Done, Why]);
format_error(Why) -> io_lib:format("~0tp", [Why]).

%%% Internals

connector(#{host := H, port := P, user := U, password := Pw, database := D,
            connect_timeout := CT}) ->
    Quiet = fun(_Level, _Format, _Args) -> ok end,
    #{connect => fun(Left) ->
                         case p1_mysql_conn:start(H, P, U, Pw, D, max(1, min(CT, Left)), Quiet) of
                             {ok, Conn} -> {ok, Conn};
                             %% p1_mysql says no more when it cannot connect or log in.
                             {error, normal} -> {error, refused_or_login_failed};
                             {error, Why} -> {error, Why}
                         end
                 end,
      close => fun(Conn) -> p1_mysql_conn:stop(Conn), ok end}.

%% @doc The statement that inserts record number `Seq' (also sent by the smp-io study's direct
%% MySQL sessions, so both ways run the same SQL).
-spec insert_sql(pos_integer()) -> binary().
insert_sql(Seq) ->
    Values = beamscale_target_subscriber:values(Seq),
    iolist_to_binary(["INSERT INTO " ?TABLE " VALUES (",
                      lists:join($,, [literal(V) || V <- Values]), ")"]).

%% @doc The statement that reads record number `Seq' by its key.
-spec select_sql(pos_integer()) -> binary().
select_sql(Seq) ->
    Key = literal(beamscale_target_subscriber:key(Seq)),
    iolist_to_binary(["SELECT * FROM " ?TABLE " WHERE imsi = ", Key]).

insert() ->
    case sql(insert_sql(beamscale_target_keys:next(?MODULE))) of
        {ok, updated} -> ok;
        {error, Why} -> {error, Why}
    end.

select() ->
    case beamscale_target_keys:random(?MODULE) of
        none -> {error, empty_table};
        Seq ->
            case sql(select_sql(Seq)) of
                {ok, Rows} when is_list(Rows) -> length(Rows);
                {error, Why} -> {error, Why}
            end
    end.

create_table() ->
    Cols = [[atom_to_list(F), " ", T] || {F, T} <- beamscale_target_subscriber:columns()],
    iolist_to_binary(["CREATE TABLE IF NOT EXISTS " ?TABLE " (", lists:join(", ", Cols),
                      ") ENGINE=InnoDB"]).

sql_all([Sql]) -> sql(Sql);
sql_all([Sql | Rest]) ->
    case sql(Sql) of
        {ok, _} -> sql_all(Rest);
        Error -> Error
    end.

%% One statement on a pooled connection: `{ok, Rows}' or `{ok, updated}'.
sql(Sql) ->
    Timeout = persistent_term:get({?MODULE, timeout}, ?TIMEOUT),
    Job = fun(Conn, Left) -> p1_mysql_conn:fetch(Conn, Sql, self(), max(1, Left)) end,
    case beamscale_target_pool:run(?POOL, Job, Timeout) of
        {data, Result} -> {ok, p1_mysql:get_result_rows(Result)};
        {updated, _} -> {ok, updated};
        {error, {beamscale_target_pool, _} = Why} -> {error, Why};
        {error, Result} -> {error, {mysql, p1_mysql:get_result_reason(Result)}}
    end.

literal(V) when is_integer(V) -> integer_to_list(V);
literal(V) when is_binary(V) -> p1_mysql:quote(binary_to_list(V)).

to_integer(V) when is_integer(V) -> V;
to_integer(V) when is_binary(V) -> binary_to_integer(V);
to_integer(V) when is_list(V) -> list_to_integer(V).

%% Run `Op' `N' times, adding what it returns (a count, or `ok' for one) under `Key'; the first
%% error ends the run with the count so far: with the database down every further operation
%% would only wait for its own timeout.
repeat(0, _Op, Key, Done) -> {ok, #{Key => Done}};
repeat(N, Op, Key, Done) ->
    case Op() of
        ok -> repeat(N - 1, Op, Key, Done + 1);
        Count when is_integer(Count) -> repeat(N - 1, Op, Key, Done + Count);
        {error, Why} -> {error, {?MODULE, {Key, Why, #{Key => Done}}}}
    end.
