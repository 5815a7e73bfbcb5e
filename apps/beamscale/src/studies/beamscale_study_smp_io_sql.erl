%% @doc The smp-io study's direct MySQL sessions (docs/studies/smp-io.md, "Two ways to load
%% MariaDB"): the `%%module:function%%' callbacks their `mysql' steps call on the load node for
%% the login and for each statement, the same INSERT and SELECT the rpc way's target sends
%% (`beamscale_target_mysql'). Record numbers come from a counter set before a cell's levels
%% (written ones in order, read ones at random among those written), shared by the users of
%% the node through `persistent_term' and `atomics'.
-module(beamscale_study_smp_io_sql).

-export([init/2, user/1, password/1, database/1, insert/1, select/1]).

%% @doc Before a cell's levels: the login of the database of `DbFile' (beamscale db's
%% `connection.config'), and `Existing' records already written.
-spec init(file:filename(), non_neg_integer()) -> ok.
init(DbFile, Existing) ->
    {ok, [Info]} = file:consult(DbFile),
    Ref = atomics:new(1, [{signed, false}]),
    ok = atomics:put(Ref, 1, Existing),
    persistent_term:put(?MODULE, {maps:with([user, password, database], Info), Ref}).

%% @doc The database user (the callbacks take the user's variables, unused here).
-spec user(map()) -> string().
user(_Vars) -> field(user).

%% @doc Its password.
-spec password(map()) -> string().
password(_Vars) -> field(password).

%% @doc The database.
-spec database(map()) -> string().
database(_Vars) -> field(database).

%% @doc The INSERT of the next record.
-spec insert(map()) -> binary().
insert(_Vars) ->
    {_, Ref} = persistent_term:get(?MODULE),
    beamscale_target_mysql:insert_sql(atomics:add_get(Ref, 1, 1)).

%% @doc The SELECT of a random record written so far (record 1 before any).
-spec select(map()) -> binary().
select(_Vars) ->
    {_, Ref} = persistent_term:get(?MODULE),
    beamscale_target_mysql:select_sql(rand:uniform(max(1, atomics:get(Ref, 1)))).

field(K) ->
    {Login, _} = persistent_term:get(?MODULE),
    maps:get(K, Login).
