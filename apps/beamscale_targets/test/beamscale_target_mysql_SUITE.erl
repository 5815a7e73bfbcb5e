%% The MariaDB target against a real MariaDB started with `beamscale_db' (the suite fails, not
%% skips, when it cannot start), run on a real peer node: writes and reads through pools of one
%% and several connections, then the database hanging and down: errors within the timeout.
%% No mariadbd or emulator is left afterwards.
-module(beamscale_target_mysql_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([driver_on_default_path/1, pool_of_one/1, pool_of_several/1, db_hangs/1, db_down/1]).
-export([driver_on_default_path/0, pool_of_one/0, pool_of_several/0, db_hangs/0, db_down/0]).

%% In this order: db_down stops the database.
suite() -> [{timetrap, {minutes, 2}}].

all() -> [driver_on_default_path, pool_of_one, pool_of_several, db_hangs, db_down].

%% Failures are kept in the config and fail each test case: a failing init_per_suite would
%% only skip them.
init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Opts = beamscale_db:defaults(#{dir => filename:join(?config(priv_dir, Config), "db")}),
    Db = beamscale_db:start(Opts),
    Peer = catch beamscale_target_peer:start("mysql"),
    [{db, Db}, {db_opts, Opts}, {peer, Peer} | Config].

end_per_suite(Config) ->
    {ok, _} = beamscale_db:stop(?config(db_opts, Config)),
    case ?config(db, Config) of
        {ok, #{pid := Pid}} -> ?assertNot(beamscale_os:alive(Pid));
        _ -> ok
    end,
    case ?config(peer, Config) of
        {ok, H} -> beamscale_target_peer:stop(H);
        _ -> ok
    end.

%% The node under test finds Debian's p1_mysql on its own default code path.
driver_on_default_path() -> [{doc, "The peer finds Debian's p1_mysql on its code path."}].
driver_on_default_path(Config) ->
    {Node, _} = setup(Config),
    Path = erpc:call(Node, code, which, [p1_mysql_conn]),
    ?assertEqual(erpc:call(Node, code, lib_dir, []),
                 filename:dirname(filename:dirname(filename:dirname(Path)))).

pool_of_one() -> [{doc, "A pool of one connection writes and reads back each record."}].
pool_of_one(Config) ->
    {Node, File} = setup(Config),
    Call = fun(F, A) -> erpc:call(Node, beamscale_target_mysql, F, A, 60000) end,
    ?assertEqual({ok, #{records => 0, pool_size => 1}},
                 Call(start, [#{db_file => File, pool_size => 1, reset => true}])),
    ?assertEqual({ok, #{written => 200}}, Call(write, [200])),
    ?assertEqual({ok, #{read => 200, found => 200}}, Call(read, [200])),
    ?assertEqual(ok, Call(stop, [])).

%% Eight concurrent sessions through a pool of four: every write lands, with distinct keys.
pool_of_several() -> [{doc, "8 writers through a pool of 4: every write lands."}].
pool_of_several(Config) ->
    {Node, File} = setup(Config),
    Call = fun(F, A) -> erpc:call(Node, beamscale_target_mysql, F, A, 60000) end,
    {ok, #{records := Before}} = Call(start, [#{db_file => File, pool_size => 4}]),
    Self = self(),
    [spawn_link(fun() -> Self ! {done, Call(write, [100])} end) || _ <- lists:seq(1, 8)],
    Results = [receive {done, R} -> R after 60000 -> timeout end || _ <- lists:seq(1, 8)],
    ?assertEqual(lists:duplicate(8, {ok, #{written => 100}}), Results),
    ?assertEqual({ok, #{records => Before + 800, pool_size => 4}},
                 Call(start, [#{db_file => File, pool_size => 4}])),
    ?assertEqual({ok, #{read => 300, found => 300}}, Call(read, [300])),
    ?assertEqual(ok, Call(stop, [])).

%% A server that accepts but never answers: start fails within the timeout, no hang.
db_hangs() -> [{doc, "A server that never answers fails start within the timeout."}].
db_hangs(Config) ->
    {Node, _} = setup(Config),
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    Opts = #{port => Port, user => "u", password => "p", database => "d", pool_size => 2,
             timeout => 1000},
    {Us, Result} = timer:tc(erpc, call, [Node, beamscale_target_mysql, start, [Opts], 10000]),
    ?assertMatch({error, {beamscale_target_mysql, _}}, Result),
    ?assert(Us < 2500000),
    ok = gen_tcp:close(L).

%% The database goes away under a started pool: writes and reads fail fast with the count so far.
db_down() -> [{doc, "With the database gone, writes and reads fail fast."}].
db_down(Config) ->
    {Node, File} = setup(Config),
    Call = fun(F, A) -> erpc:call(Node, beamscale_target_mysql, F, A, 60000) end,
    {ok, _} = Call(start, [#{db_file => File, pool_size => 3, timeout => 2000}]),
    {ok, #{written := 10}} = Call(write, [10]),
    {ok, #{pid := Pid}} = ?config(db, Config),
    ?assertEqual({ok, stopped}, beamscale_db:stop(?config(db_opts, Config))),
    ?assertNot(beamscale_os:alive(Pid)),
    {Us, Write} = timer:tc(fun() -> Call(write, [50]) end),
    ?assertMatch({error, {beamscale_target_mysql, {written, _, #{written := 0}}}}, Write),
    ?assertMatch({error, {beamscale_target_mysql, {found, _, #{found := 0}}}}, Call(read, [5])),
    ?assert(Us < 2500000),
    ?assertEqual(ok, Call(stop, [])).

setup(Config) ->
    {ok, #{dir := Dir}} = ?config(db, Config),
    {ok, #{node := Node}} = ?config(peer, Config),
    {Node, filename:join(Dir, "connection.config")}.
