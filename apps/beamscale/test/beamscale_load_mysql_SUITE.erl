%% The mysql kind against a real MariaDB: the throwaway server of `beamscale db start' (Debian's
%% mariadbd, a fresh datadir, 127.0.0.1), started once for the suite and stopped by its pid. Its
%% tables are made here with Debian's `mariadb' client, not with the code under test.
-module(beamscale_load_mysql_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([fragmented/0, fragmented/1]).
-export([connect_query_close/1, wrong_password/1, syntax_error/1, other_plugin/1,
         mysql_xml/1]).
-export([connect_query_close/0, wrong_password/0, syntax_error/0, other_plugin/0,
         mysql_xml/0]).

%% The mariadb client's statements take milliseconds; more means the server is stuck.
-define(CLIENT_TIMEOUT, 30000).
%% Rows of the tables mysql.xml reads: gens and te.
-define(GENS, 5).
-define(TE, 3).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [connect_query_close, wrong_password, syntax_error, other_plugin, mysql_xml,
          fragmented].

init_per_suite(Config) ->
    %% priv_dir is long; beamscale_db puts the socket under /tmp then (sun_path).
    Dir = filename:join(?config(priv_dir, Config), "mysql_kind_db"),
    case beamscale_db:start(beamscale_db:defaults(#{dir => Dir})) of
        {ok, Info} ->
            Values = lists:join(", ", [["(", integer_to_list(I), ")"] || I <- lists:seq(1, 10)]),
            sql(Dir, ["CREATE TABLE gens (id INT); CREATE TABLE te (id INT); "
                      "CREATE TABLE t (id INT); INSERT INTO t VALUES ", Values, "; "
                      "INSERT INTO gens SELECT id FROM t WHERE id <= ", integer_to_list(?GENS),
                      "; INSERT INTO te SELECT id FROM t WHERE id <= ", integer_to_list(?TE)]),
            %% A user of MariaDB's ed25519 plugin (shipped with Debian's server), made by root
            %% over the socket as beamscale_db makes its user.
            root_sql(Info, "INSTALL SONAME 'auth_ed25519'; CREATE USER 'ed'@'127.0.0.1' "
                           "IDENTIFIED VIA ed25519 USING PASSWORD('pw'); "
                           "GRANT ALL ON beamscale.* TO 'ed'@'127.0.0.1'"),
            [{db, Dir}, {info, Info} | Config];
        {error, E} -> ct:fail("MariaDB did not start: ~ts", [beamscale_db:format_error(E)])
    end.

end_per_suite(Config) ->
    {ok, stopped} = beamscale_db:stop(beamscale_db:defaults(#{dir => ?config(db, Config)})),
    ok.

sql(Dir, Sql) ->
    Client = os:find_executable("mariadb"),
    Args = ["--defaults-file=" ++ filename:join(Dir, "client.cnf"), "-e", lists:flatten(Sql)],
    case beamscale_os:cmd(Client, Args, ?CLIENT_TIMEOUT) of
        {0, _} -> ok;
        {Status, Out} -> ct:fail("mariadb exited with ~p: ~ts", [Status, Out])
    end.

root_sql(#{socket := Sock}, Sql) ->
    Args = ["--no-defaults", "--socket=" ++ Sock, "-uroot", "-e", Sql],
    case beamscale_os:cmd(os:find_executable("mariadb"), Args, ?CLIENT_TIMEOUT) of
        {0, _} -> ok;
        {Status, Out} -> ct:fail("mariadb as root exited with ~p: ~ts", [Status, Out])
    end.

run(S) ->
    #{total := T} = beamscale_load_servers:run(S),
    T.

%% A terms scenario against the server: `Steps' in a session, 10 users a second for 1 s.
terms(Config, Steps) ->
    #{port := Port} = ?config(info, Config),
    Text = io_lib:format("{targets, [{db, #{address => \"127.0.0.1:~b\"}}]}.\n"
                         "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
                         "{sessions, [{s, #{steps => ~ts}}]}.\n", [Port, Steps]),
    beamscale_load_servers:scenario(Text).

connect(Config, Password) ->
    #{user := U, database := D} = ?config(info, Config),
    io_lib:format("{mysql, #{type => connect, user => ~tp, password => ~tp, database => ~tp}}",
                  [U, Password, D]).

password(Config) -> maps:get(password, ?config(info, Config)).

fragmented() ->
    [{doc, "MariaDB's bytes one per TCP segment: login, rows and close all read."}].
fragmented(Config) ->
    Info = ?config(info, Config),
    beamscale_load_trickle:with(maps:get(port, Info), fun(Relay) ->
        connect_query_close([{info, Info#{port => Relay}} | Config])
    end).

connect_query_close() ->
    [{doc, "connect with a login, two queries, close: no error, rows and bytes counted."}].
connect_query_close(Config) ->
    T = run(terms(Config, ["[", connect(Config, password(Config)), ", "
                           "{mysql, #{type => sql, query => <<\"SELECT * FROM t\">>}}, "
                           "{mysql, #{type => sql, query => \"SELECT id FROM t WHERE id < 4\"}},"
                           " {mysql, #{type => close}}]"])),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(4 * Done, maps:get(requests, T)),
    ?assertEqual((10 + 3) * Done, maps:get(rows, T)),
    ?assertEqual(Done, beamscale_stats_hist:count(maps:get(connect, T))),
    ?assert(maps:get(bytes_sent, T) > Done * 100),
    ?assert(maps:get(bytes_received, T) > Done * 100).

wrong_password() ->
    [{doc, "A wrong password is an error counted in MariaDB's words; the next query too."}].
wrong_password(Config) ->
    #{user := U} = ?config(info, Config),
    T = run(terms(Config, ["[", connect(Config, "not" ++ password(Config)), ", "
                           "{mysql, #{type => sql, query => <<\"SELECT 1\">>}}]"])),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    Denied = iolist_to_binary(["mysql error 1045 (28000): Access denied for user '", U,
                               "'@'127.0.0.1' (using password: YES)"]),
    ?assertEqual(#{Denied => Done,
                   <<"sql before the MySQL login (connect with a user, or authenticate)">> => Done},
                 maps:get(reasons, T)),
    ?assertEqual(0, maps:get(rows, T)).

syntax_error() ->
    [{doc, "A SQL syntax error is counted by its code; the connection takes the next query."}].
syntax_error(Config) ->
    T = run(terms(Config, ["[", connect(Config, password(Config)), ", "
                           "{mysql, #{type => sql, query => <<\"SELEC 1\">>}}, "
                           "{mysql, #{type => sql, query => <<\"SELECT 1\">>}}, "
                           "{mysql, #{type => close}}]"])),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    [{Reason, Done}] = maps:to_list(maps:get(reasons, T)),
    ?assertMatch(<<"mysql error 1064 (42000): You have an error in your SQL syntax", _/binary>>,
                 Reason),
    ?assertEqual(Done, maps:get(errors, T)),
    %% SELECT 1 ran on the same connection: one row each, one connect each.
    ?assertEqual(Done, maps:get(rows, T)),
    ?assertEqual(Done, beamscale_stats_hist:count(maps:get(connect, T))).

other_plugin() ->
    [{doc, "A user of another auth plugin (ed25519): the switch refused, the plugin named."}].
other_plugin(Config) ->
    T = run(terms(Config, "[{mysql, #{type => connect, user => \"ed\", password => \"pw\"}}]")),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(#{<<"the server asks for the auth plugin client_ed25519; beamscale speaks "
                     "mysql_native_password only">> => Done},
                 maps:get(reasons, T)).

mysql_xml() ->
    [{doc, "Tsung's mysql.xml, only server, credentials and duration rewritten: no error."}].
mysql_xml(Config) ->
    #{port := Port, user := U, password := P, database := D} = ?config(info, Config),
    S = beamscale_load_servers:tsung_example(
          "mysql.xml",
          [{"host=\"192.168.0.2\" port=\"3306\"",
            "host=\"127.0.0.1\" port=\"" ++ integer_to_list(Port) ++ "\""},
           {"database=\"test\" username=\"test\" password=\"test\"",
            lists:flatten(io_lib:format("database=\"~s\" username=\"~s\" password=\"~s\"",
                                        [D, U, P]))},
           {"duration=\"1\" unit=\"minute\"", "duration=\"7\" unit=\"second\""}]),
    T = run(S),
    Done = maps:get(sessions_done, T),
    %% A user every 3 s on average (exponential gaps) for 7 s; each ran its session to the end.
    ct:log("~b sessions", [Done]),
    ?assert(Done >= 1),
    ?assertEqual(maps:get(sessions_started, T), Done),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(6 * Done, maps:get(requests, T)),
    %% SHOW TABLES lists gens, t and te.
    ?assertEqual((3 + ?GENS + ?TE) * Done, maps:get(rows, T)).
