%% The throwaway PostgreSQL: `beamscale db start --engine postgres', status and stop through the
%% command line and the API, on Debian's real server; start fails (not skips) when it cannot.
-module(beamscale_db_pg_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([start_status_stop/1, bad_engine/1, unreachable_dir/1]).
-export([start_status_stop/0, bad_engine/0, unreachable_dir/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [start_status_stop, bad_engine, unreachable_dir].

start_status_stop() -> [{doc, "db start --engine postgres, status, stop; scram and md5 users."}].
start_status_stop(Config) ->
    %% priv_dir is long: the socket must go elsewhere (sun_path).
    Dir = filename:join(?config(priv_dir, Config), "a_database_directory_with_a_long_name"),
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

unreachable_dir() -> [{doc, "A directory the server cannot write: start fails, says why."}].
unreachable_dir(Config) ->
    %% As root the server's user cannot pass the 0700 parent; as anyone else initdb cannot
    %% write the 0500 directory.
    Parent = filename:join(?config(priv_dir, Config), "locked"),
    Dir = filename:join(Parent, "db"),
    ok = filelib:ensure_path(Dir),
    ok = file:change_mode(Dir, 8#500),
    ok = file:change_mode(Parent, 8#700),
    Opts = beamscale_db:defaults(#{dir => Dir, engine => postgres}),
    try
        {error, {beamscale_db_pg, Why}} = beamscale_db:start(Opts),
        Text = beamscale_error:format({beamscale_db_pg, Why}),
        ct:pal("~ts", [Text]),
        ?assert(lists:any(fun(W) -> string:find(Text, W) =/= nomatch end,
                          ["cannot write", "initdb"])),
        ?assertEqual(stopped, beamscale_db:status(Opts)),
        ?assertEqual([], [F || F <- filelib:wildcard(filename:join(Dir, "*"))])
    after
        ok = file:change_mode(Dir, 8#700)
    end.

bad_engine() -> [{doc, "db start --engine with an unknown engine exits 2."}].
bad_engine(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "db"),
    ?assertEqual(2, beamscale_cli:dispatch(["db", "start", "--engine", "oracle", "--dir", Dir])).
