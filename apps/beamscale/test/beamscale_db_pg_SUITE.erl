%% The throwaway PostgreSQL: `beamscale db start --engine postgres', status and stop through the
%% command line and the API, on Debian's real server; start fails (not skips) when it cannot.
-module(beamscale_db_pg_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([start_status_stop/1, bad_engine/1, locked_parent/1]).
-export([start_status_stop/0, bad_engine/0, locked_parent/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [start_status_stop, bad_engine, locked_parent].

start_status_stop() -> [{doc, "db start --engine postgres, status, stop; scram and md5 users."}].
start_status_stop(Config) ->
    %% priv_dir is long: the socket must go elsewhere (sun_path).
    Dir = filename:join(?config(priv_dir, Config), "db_pg_a_database_directory_with_a_long_name"),
    Opts = beamscale_db:defaults(#{dir => Dir}),
    ?assertEqual(0, beamscale_cli:dispatch(["db", "start", "--engine", "postgres",
                                            "--dir", Dir])),
    {ok, #{pid := Pid, socket := Sock, port := Port, engine := postgres} = Info} =
        beamscale_db:read_info(Dir),
    ?assert(beamscale_os:is_process(Pid, "postgres")),
    ?assert(beamscale_os:can_connect({local, Sock})),
    ?assert(beamscale_os:can_connect(Port)),
    %% Without --engine, status and stop find the engine in the connection file.
    ?assertMatch({running, #{pid := Pid}}, beamscale_db:status(Opts)),
    #{md5_user := U5, md5_password := P5} = Info,
    %% It holds the passwords: another local user must not read it (issue 31).
    ?assertEqual(ok, beamscale_test_private:check(filename:join(Dir, "connection.config"))),
    ?assertEqual(ok, beamscale_db_pg:ping(Info)),
    ?assertEqual(ok, beamscale_db_pg:ping(Info#{user := U5, password := P5})),
    {error, Wrong} = beamscale_db_pg:ping(Info#{password := "wrong"}),
    ?assertNotEqual(nomatch, string:find(Wrong, "password authentication failed")),
    ?assertMatch({error, {beamscale_db_pg, {already_running, _, Pid}}},
                 beamscale_db:start(Opts#{engine := postgres})),
    ?assertEqual(0, beamscale_cli:dispatch(["db", "status", "--dir", Dir])),
    ?assertEqual(0, beamscale_cli:dispatch(["db", "stop", "--dir", Dir])),
    ?assertNot(beamscale_os:alive(Pid)),
    ?assertNot(filelib:is_dir(filename:join(Dir, "pgdata"))),
    ?assertNot(filelib:is_dir(filename:dirname(Sock))),
    ?assertEqual(stopped, beamscale_db:status(Opts)),
    ?assertEqual(1, beamscale_cli:dispatch(["db", "status", "--dir", Dir])),
    ?assertEqual({ok, not_running}, beamscale_db:stop(Opts#{engine := postgres})).

locked_parent() ->
    [{doc, "A directory under a 0700 parent: as root the server (run as postgres) keeps its "
      "files in a private /tmp directory that stop removes; as anyone else an unwritable "
      "directory fails and says why."}].
locked_parent(Config) ->
    Parent = filename:join(?config(priv_dir, Config), "db_pg_locked"),
    Dir = filename:join(Parent, "db"),
    ok = filelib:ensure_path(Dir),
    ok = file:change_mode(Parent, 8#700),
    Opts = beamscale_db:defaults(#{dir => Dir, engine => postgres}),
    case beamscale_os:user_name() of
        "root" -> locked_parent_as_root(Dir, Opts);
        _ -> unwritable_dir(Dir, Opts)
    end.

locked_parent_as_root(Dir, Opts) ->
    ?assertNot(beamscale_os:enterable_by("postgres", Dir)),
    {ok, #{pid := Pid, socket := Sock} = Info} = beamscale_db:start(Opts),
    Home = filename:dirname(Sock),
    try
        ?assertMatch("/tmp/beamscale-db-" ++ _, Home),
        ?assert(filelib:is_dir(filename:join(Home, "pgdata"))),
        ?assertEqual(ok, beamscale_db_pg:ping(Info)),
        ?assertMatch({running, _}, beamscale_db:status(Opts))
    after
        ?assertEqual({ok, stopped}, beamscale_db:stop(Opts))
    end,
    ?assertNot(beamscale_os:alive(Pid)),
    ?assertNot(filelib:is_dir(Home)).

unwritable_dir(Dir, Opts) ->
    ok = file:change_mode(Dir, 8#500),
    try
        {error, {beamscale_db_pg, Why}} = beamscale_db:start(Opts),
        Text = beamscale_error:format({beamscale_db_pg, Why}),
        ct:pal("~ts", [Text]),
        ?assertNotEqual(nomatch, string:find(Text, "cannot write")),
        ?assertEqual(stopped, beamscale_db:status(Opts))
    after
        ok = file:change_mode(Dir, 8#700)
    end.

bad_engine() -> [{doc, "db start --engine with an unknown engine exits 2."}].
bad_engine(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "db"),
    ?assertEqual(2, beamscale_cli:dispatch(["db", "start", "--engine", "oracle", "--dir", Dir])).
