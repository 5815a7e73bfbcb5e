%% The throwaway MariaDB: `beamscale db start|status|stop' through the command line and the API,
%% on a real mariadbd; start fails (not skips) when it cannot start here.
-module(beamscale_db_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([start_status_stop/1, usage/1]).
-export([start_status_stop/0, usage/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [start_status_stop, usage].

start_status_stop() -> [{doc, "db start/status/stop on a real mariadbd; none left."}].
start_status_stop(Config) ->
    %% priv_dir is long: the socket must go elsewhere (sun_path).
    Dir = filename:join(?config(priv_dir, Config), "a_database_directory_with_a_long_name"),
    Opts = beamscale_db:defaults(#{dir => Dir}),
    ?assertEqual(0, beamscale_cli:dispatch(["db", "start", "--dir", Dir])),
    {ok, #{pid := Pid, socket := Sock, port := Port} = Info} = beamscale_db:read_info(Dir),
    ?assert(beamscale_os:is_process(Pid, "mariadbd")),
    ?assert(beamscale_os:can_connect({local, Sock})),
    ?assert(beamscale_os:can_connect(Port)),
    ?assertMatch({running, #{pid := Pid}}, beamscale_db:status(Opts)),
    #{user := U, password := P, database := D} = Info,
    %% They hold the password: another local user must not read them (issue 31).
    ?assertEqual(ok, beamscale_test_private:check(filename:join(Dir, "connection.config"))),
    ?assertEqual(ok, beamscale_test_private:check(filename:join(Dir, "client.cnf"))),
    ?assertEqual(ok, beamscale_db:mysql_ping("127.0.0.1", Port, U, P, D)),
    ?assertNotEqual(ok, beamscale_db:mysql_ping("127.0.0.1", Port, U, "wrong", D)),
    ?assertMatch({error, {beamscale_db, {already_running, _, Pid}}}, beamscale_db:start(Opts)),
    ?assertEqual(0, beamscale_cli:dispatch(["db", "status", "--dir", Dir])),
    ?assertEqual(0, beamscale_cli:dispatch(["db", "stop", "--dir", Dir])),
    ?assertNot(beamscale_os:alive(Pid)),
    ?assertNot(filelib:is_dir(filename:join(Dir, "data"))),
    ?assertNot(filelib:is_dir(filename:dirname(Sock))),
    ?assertEqual(stopped, beamscale_db:status(Opts)),
    ?assertEqual(1, beamscale_cli:dispatch(["db", "status", "--dir", Dir])),
    ?assertEqual({ok, not_running}, beamscale_db:stop(Opts)).

usage() -> [{doc, "db with no subcommand or an unknown one exits 2."}].
usage(_Config) ->
    ?assertEqual(2, beamscale_cli:dispatch(["db"])),
    ?assertEqual(2, beamscale_cli:dispatch(["db", "restart"])).
