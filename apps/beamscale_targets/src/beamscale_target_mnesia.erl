%% @doc Mnesia as an IO-bound target (the thesis's Mnesia benchmark), run on the node under
%% test: a `disc_copies' table `subscriber' in a directory of the run; `write(N)' writes N new
%% records, `read(N)' reads N random existing ones, each operation in its own activity
%% (`transaction' or `async_dirty', ...). Each returns what it did so a load run can check it.
-module(beamscale_target_mnesia).

-export([defaults/1, start/1, stop/0, write/1, write/2, read/1, read/2, format_error/1]).
-export_type([opts/0, mode/0]).

%% `dump_log_write_threshold' and `dc_dump_limit' are Mnesia's own settings (the thesis raised
%% both to keep up with many writes); `default' leaves Mnesia's value.
-type opts() :: #{dir := file:filename(), dump_log_write_threshold := pos_integer() | default,
                  dc_dump_limit := pos_integer() | default, table_timeout := timeout()}.
-type mode() :: transaction | sync_transaction | async_dirty | sync_dirty.

-define(TABLE, subscriber).
-define(TABLE_TIMEOUT, 30000).
-define(LIMIT, [{chars_limit, 300}]).
%% Mnesia does not lock its directory: a second node started on it would write into the logs of
%% the first. This file, made exclusively, names the node (and OS process) that holds it.
-define(LOCK, "beamscale_mnesia.lock").

%% @doc Options with defaults filled in.
-spec defaults(#{dir := file:filename(), atom() => term()}) -> opts().
defaults(Opts) ->
    maps:merge(#{dump_log_write_threshold => default, dc_dump_limit => default,
                 table_timeout => ?TABLE_TIMEOUT}, Opts).

%% @doc (Re)start Mnesia on this node with its directory in `dir', and create the table or
%% reopen it with the records it holds.
-spec start(#{dir := file:filename(), atom() => term()}) ->
          {ok, #{records := non_neg_integer(), dir := file:filename()}} |
          {error, {?MODULE, term()}}.
start(Opts0) ->
    #{dir := Dir, table_timeout := Timeout} = Opts = defaults(Opts0),
    _ = stop(),
    ok = filelib:ensure_path(Dir),
    case lock(Dir) of
        ok -> start(Dir, Opts, Timeout);
        {error, _} = Error -> Error
    end.

start(Dir, Opts, Timeout) ->
    ok = application:set_env(mnesia, dir, filename:absname(Dir)),
    [ok = application:set_env(mnesia, K, V)
     || K <- [dump_log_write_threshold, dc_dump_limit], V <- [maps:get(K, Opts)], V =/= default],
    Result = maybe_schema(mnesia:create_schema([node()]), Dir),
    case Result =:= ok andalso mnesia:start() of
        ok -> open_table(Dir, Timeout);
        false -> unlock(), Result;
        {error, Reason} -> unlock(), {error, {?MODULE, {start, Reason}}}
    end.

%% @doc Stop Mnesia (its files stay) and free its directory.
-spec stop() -> ok.
stop() ->
    _ = application:stop(mnesia),
    unlock().

%% @doc Write `N' new records, each in its own transaction.
-spec write(non_neg_integer()) -> {ok, #{written := non_neg_integer()}} |
          {error, {?MODULE, term()}}.
write(N) -> write(N, transaction).

%% @doc Write `N' new records, each in its own activity of kind `Mode'.
-spec write(non_neg_integer(), mode()) -> {ok, #{written := non_neg_integer()}} |
          {error, {?MODULE, term()}}.
write(N, Mode) ->
    Op = fun() ->
                 Rec = list_to_tuple([?TABLE | beamscale_target_subscriber:values(
                                                 beamscale_target_keys:next(?MODULE))]),
                 mnesia:activity(Mode, fun() -> mnesia:write(Rec) end)
         end,
    repeat(N, Op, written, 0).

%% @doc Read `N' random existing records, each in its own transaction.
-spec read(non_neg_integer()) -> {ok, #{read := non_neg_integer(), found := non_neg_integer()}} |
          {error, {?MODULE, term()}}.
read(N) -> read(N, transaction).

%% @doc Read `N' random existing records, each in its own activity of kind `Mode'
%% (`async_dirty': no transaction, as the thesis's dirty reads).
-spec read(non_neg_integer(), mode()) ->
          {ok, #{read := non_neg_integer(), found := non_neg_integer()}} |
          {error, {?MODULE, term()}}.
read(N, Mode) ->
    Op = fun() ->
                 case beamscale_target_keys:random(?MODULE) of
                     none -> throw(empty_table);
                     Seq ->
                         Key = beamscale_target_subscriber:key(Seq),
                         length(mnesia:activity(Mode, fun() -> mnesia:read(?TABLE, Key) end))
                 end
         end,
    case repeat(N, Op, found, 0) of
        {ok, #{found := Found}} -> {ok, #{read => N, found => Found}};
        Error -> Error
    end.

%% @doc One line for an error of this module.
-spec format_error(term()) -> iodata().
format_error({start, Why}) -> ["cannot start Mnesia: ", mnesia_text(Why)];
format_error({in_use, Dir, Holder}) ->
    io_lib:format("Mnesia directory ~ts is in use by ~ts: give each running target its own dir",
                  [Dir, Holder]);
format_error({foreign_schema, Dir, Nodes}) ->
    io_lib:format("Mnesia directory ~ts holds the schema of ~0p, not of this node (a disc_copies "
                  "schema belongs to its node's name): give a new dir or remove it", [Dir, Nodes]);
format_error({schema, Why}) -> ["cannot create the Mnesia schema: ", mnesia_text(Why)];
format_error({create_table, Why}) ->
    io_lib:format("cannot create table ~s: ~ts", [?TABLE, mnesia_text(Why)]);
format_error({table_timeout, Ms}) ->
    io_lib:format("table ~s was not loaded within ~b ms", [?TABLE, Ms]);
format_error({table, Why}) ->
    io_lib:format("table ~s cannot be loaded: ~ts", [?TABLE, mnesia_text(Why)]);
format_error({empty_table, Done}) ->
    io_lib:format("nothing to read: table ~s is empty (~ts)", [?TABLE, done(Done)]);
format_error({aborted, Why, Done}) ->
    io_lib:format("aborted: ~ts (~ts)", [mnesia_text(Why), done(Done)]).

%%% Internals

%% Mnesia's own words where it has them (its descriptions are for the reason's first atom).
mnesia_text({error, Why}) -> mnesia_text(Why);
mnesia_text({What, Arg}) when is_atom(What) -> [words(What), ": ", term(Arg)];
mnesia_text(What) when is_atom(What) -> words(What);
mnesia_text(Why) -> term(Why).

words(What) ->
    Text = mnesia:error_description(What),
    case is_list(Text) andalso io_lib:printable_unicode_list(Text) of
        true -> Text;
        false -> atom_to_list(What)
    end.

term(T) -> io_lib:format("~0tp", [T], ?LIMIT).

done(Done) ->
    lists:join(", ", [io_lib:format("~b ~s before", [N, K]) || {K, N} <- maps:to_list(Done)]).

maybe_schema(ok, _Dir) -> ok;
maybe_schema({error, {_, {already_exists, _}}}, Dir) -> own_schema(Dir);
maybe_schema({error, Reason}, _Dir) -> {error, {?MODULE, {schema, Reason}}}.

%% A schema made by another node (a directory left by an earlier run) would have Mnesia wait
%% for that node's tables: said now (db_nodes reads the schema while Mnesia is stopped) rather
%% than after the table timeout.
own_schema(Dir) ->
    Nodes = mnesia:system_info(db_nodes),
    case lists:member(node(), Nodes) of
        true -> ok;
        false -> {error, {?MODULE, {foreign_schema, Dir, Nodes}}}
    end.

%% The directory locked for this node (beamscale_target_lock); locked by this emulator already
%% (a restart) is locked.
lock(Dir) ->
    File = filename:join(Dir, ?LOCK),
    Me = io_lib:format("node ~ts (OS pid ~s)", [node(), os:getpid()]),
    case beamscale_target_lock:take(File, Me) of
        ok -> application:set_env(beamscale_targets, mnesia_lock, File);
        {in_use, Holder} -> {error, {?MODULE, {in_use, Dir, Holder}}};
        {error, Reason} -> {error, {?MODULE, {start, {lock, File, Reason}}}}
    end.

unlock() ->
    case application:get_env(beamscale_targets, mnesia_lock) of
        {ok, File} ->
            ok = beamscale_target_lock:release(File),
            application:unset_env(beamscale_targets, mnesia_lock);
        undefined -> ok
    end.

open_table(Dir, Timeout) ->
    Def = [{disc_copies, [node()]}, {attributes, beamscale_target_subscriber:fields()},
           {record_name, ?TABLE}],
    case mnesia:create_table(?TABLE, Def) of
        {atomic, ok} -> wait_table(Dir, Timeout);
        {aborted, {already_exists, ?TABLE}} -> wait_table(Dir, Timeout);
        {aborted, Reason} -> {error, {?MODULE, {create_table, Reason}}}
    end.

wait_table(Dir, Timeout) ->
    case mnesia:wait_for_tables([?TABLE], Timeout) of
        ok ->
            Size = mnesia:table_info(?TABLE, size),
            ok = beamscale_target_keys:init(?MODULE, Size),
            {ok, #{records => Size, dir => Dir}};
        {timeout, _} -> {error, {?MODULE, {table_timeout, Timeout}}};
        {error, Reason} -> {error, {?MODULE, {table, Reason}}}
    end.

%% Run `Op' `N' times, adding what it returns (a count, or `ok' for one) under `Key'; the first
%% abort ends the run with the count so far.
repeat(0, _Op, Key, Done) -> {ok, #{Key => Done}};
repeat(N, Op, Key, Done) ->
    try Op() of
        ok -> repeat(N - 1, Op, Key, Done + 1);
        Count when is_integer(Count) -> repeat(N - 1, Op, Key, Done + Count)
    catch
        throw:Why -> {error, {?MODULE, {Why, #{Key => Done}}}};
        exit:{aborted, Why} -> {error, {?MODULE, {aborted, Why, #{Key => Done}}}}
    end.
