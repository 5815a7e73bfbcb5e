%% The pgsql kind against a real PostgreSQL (`beamscale db start --engine postgres' in a
%% throwaway directory, stopped by its pid at the end): SCRAM and MD5 logins, PostgreSQL's own
%% words for a wrong password, a query error by SQLSTATE, the extended flow, Tsung's pgsql.xml
%% with only host, port, credentials, database and durations rewritten, and TLS (the server's
%% ssl turned on and off again by its superuser, with a certificate made here).
-module(beamscale_load_pgsql_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([fragmented/0, fragmented/1, flush_and_copy/0, flush_and_copy/1, copy_xml/0,
         copy_xml/1]).
-export([scram_and_md5/1, wrong_password/1, query_error/1, extended/1, pgsql_xml/1,
         refused/1, tls/1]).
-export([scram_and_md5/0, wrong_password/0, query_error/0, extended/0, pgsql_xml/0,
         refused/0, tls/0]).

-define(EXAMPLES, "/usr/share/doc/tsung/examples/").
-import(beamscale_load_servers, [tsung_example/2, run/1]).
%% Creating two small tables takes milliseconds; a host loaded by others' tests may take seconds.
-define(PSQL_TIMEOUT, 30000).
-define(PSQL, "/usr/lib/postgresql/15/bin/psql").
%% PostgreSQL applies a reloaded configuration within milliseconds; a loaded host may take more.
-define(RELOAD_WAIT_MS, 30000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [scram_and_md5, wrong_password, query_error, extended, pgsql_xml, refused, tls,
          fragmented, flush_and_copy, copy_xml].

init_per_suite(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "pg"),
    Opts = beamscale_db:defaults(#{dir => Dir, engine => postgres}),
    case beamscale_db:start(Opts) of
        {ok, Info} ->
            ok = psql(Info, ["CREATE TABLE accounts (id int, name text)",
                             "INSERT INTO accounts SELECT i, 'a' || i FROM "
                             "generate_series(1, 5) i",
                             "CREATE TABLE users (id int, login text)",
                             "INSERT INTO users VALUES (1, 'bench'), (2, 'sesame')",
                             "GRANT SELECT ON accounts, users TO " ++ maps:get(md5_user, Info)]),
            [{db, Opts}, {info, Info} | Config];
        {error, Reason} ->
            ct:fail("PostgreSQL did not start: ~ts", [beamscale_error:format(Reason)])
    end.

end_per_suite(Config) ->
    {ok, stopped} = beamscale_db:stop(?config(db, Config)),
    ok.

psql(#{host := H, port := P, user := U, password := Pw, database := D}, Sqls) ->
    Conn = lists:flatten(io_lib:format("host=~s port=~b user=~s password=~s dbname=~s",
                                       [H, P, U, Pw, D])),
    Args = ["-X", "-v", "ON_ERROR_STOP=1", "-d", Conn | lists:append([["-c", S] || S <- Sqls])],
    {0, _} = beamscale_os:cmd(?PSQL, Args, ?PSQL_TIMEOUT),
    ok.

%% A terms scenario: users arriving at `Rate' a second (Poisson, seeded) for a second, each
%% running `Steps' once.
scenario(#{port := Port}, Rate, Steps) ->
    Text = io_lib:format("{targets, [{db, #{address => \"127.0.0.1:~b\"}}]}.~n"
                         "{phases, [{p, #{duration_s => 1, rate => ~b}}]}.~n"
                         "{drain_s, 10}.~n"
                         "{sessions, [{s, #{steps => ~tp}}]}.~n", [Port, Rate, Steps]),
    beamscale_load_servers:scenario(Text).

login(User, Password, Database) ->
    [{pgsql, #{target => db, type => connect, database => Database, username => User}},
     {pgsql, #{target => db, type => authenticate, password => Password}}].

reasons(#{total := #{reasons := R}}) -> R.

fragmented() ->
    [{doc, "PostgreSQL's bytes one per TCP segment: SCRAM, MD5, the extended protocol, read."}].
fragmented(Config) ->
    Info = ?config(info, Config),
    beamscale_load_trickle:with(maps:get(port, Info), fun(Relay) ->
        Through = [{info, Info#{port => Relay}} | Config],
        scram_and_md5(Through),
        extended(Through)
    end).

scram_and_md5() -> [{doc, "SCRAM and MD5 users log in, query, close; rows and connects counted."}].
scram_and_md5(Config) ->
    #{user := U, password := P, md5_user := U5, md5_password := P5, database := D} = Info =
        ?config(info, Config),
    Steps = fun(User, Pw) -> login(User, Pw, D) ++
                                 [{pgsql, #{target => db, type => sql,
                                            sql => "SELECT * FROM accounts"}},
                                  {pgsql, #{target => db, type => close}}] end,
    [begin
         #{total := T} = R = run(scenario(Info, 10, Steps(User, Pw))),
         ?assertEqual(#{}, reasons(R)),
         Done = maps:get(sessions_done, T),
         ?assert(Done >= 2),
         ?assertEqual(0, maps:get(errors, T)),
         ?assertEqual(4 * Done, maps:get(requests, T)),
         ?assertEqual(5 * Done, maps:get(rows, T)),
         ?assertEqual(Done, beamscale_stats_hist:count(maps:get(connect, T))),
         ?assert(maps:get(bytes_received, T) > maps:get(bytes_sent, T))
     end || {User, Pw} <- [{U, P}, {U5, P5}]].

wrong_password() -> [{doc, "A wrong password is counted with PostgreSQL's own message."}].
wrong_password(Config) ->
    #{user := U, md5_user := U5, database := D} = Info = ?config(info, Config),
    [begin
         #{total := T} = R = run(scenario(Info, 10, login(User, "wrong", D))),
         Reason = iolist_to_binary(["pgsql 28P01: password authentication failed for user \"",
                                    User, "\""]),
         ?assert(maps:get(sessions_done, T) >= 2),
         ?assertEqual(#{Reason => maps:get(sessions_done, T)}, reasons(R))
     end || User <- [U, U5]].

query_error() -> [{doc, "A query error is counted by SQLSTATE; the session goes on after it."}].
query_error(Config) ->
    #{user := U, password := P, database := D} = Info = ?config(info, Config),
    Steps = login(U, P, D) ++ [{pgsql, #{target => db, type => sql, sql => "SELECT * FROM nope"}},
                               {pgsql, #{target => db, type => sql, sql => "SELECT 1"}},
                               {pgsql, #{target => db, type => close}}],
    #{total := T} = R = run(scenario(Info, 10, Steps)),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 2),
    ?assertEqual(#{<<"pgsql 42P01: relation \"nope\" does not exist">> => Done}, reasons(R)),
    ?assertEqual(Done, maps:get(rows, T)),
    %% The server's error reply is a latency, as an HTTP error status is (one rule).
    ?assertEqual(maps:get(requests, T), beamscale_stats_hist:count(maps:get(latency, T))).

extended() -> [{doc, "parse/bind/describe/execute/sync: a parameter bound, rows counted."}].
extended(Config) ->
    #{user := U, password := P, database := D} = Info = ?config(info, Config),
    Pg = fun(M) -> {pgsql, M#{target => db}} end,
    Steps = login(U, P, D) ++
        [Pg(#{type => parse, name => "s1", sql => "SELECT * FROM accounts WHERE id <= $1"}),
         Pg(#{type => bind, name => "s1", parameters => ["3"]}),
         Pg(#{type => describe}),
         Pg(#{type => execute}),
         Pg(#{type => sync}),
         Pg(#{type => bind, name => "s1", parameters => ["x"]}),
         Pg(#{type => execute}),
         Pg(#{type => sync}),
         Pg(#{type => close})],
    #{total := T} = R = run(scenario(Info, 10, Steps)),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 2),
    ?assertEqual(3 * Done, maps:get(rows, T)),
    ?assertEqual(#{<<"pgsql 22P02: invalid input syntax for type integer: \"x\"">> => Done},
                 reasons(R)).

flush_and_copy() ->
    [{doc, "flush reads the extended answers so far (rows counted); COPY FROM STDIN by sql and "
           "by execute, its data, copydone and copyfail: the table holds what was copied."}].
flush_and_copy(Config) ->
    #{user := U, password := P, database := D} = Info = ?config(info, Config),
    Pg = fun(M) -> {pgsql, M#{target => db}} end,
    Sql = fun(Q) -> Pg(#{type => sql, sql => Q}) end,
    Steps = login(U, P, D) ++
        [Sql("CREATE TEMP TABLE t (a int, b text)"),
         Pg(#{type => parse, name => "s2", sql => "SELECT * FROM accounts WHERE id <= $1"}),
         Pg(#{type => bind, name => "s2", parameters => ["2"]}),
         Pg(#{type => execute}),
         Pg(#{type => flush}),
         Pg(#{type => bind, name => "s2", parameters => ["4"]}),
         Pg(#{type => execute}),
         Pg(#{type => flush}),
         Pg(#{type => sync}),
         Sql("COPY t FROM STDIN"),
         Pg(#{type => copy, data => "1\tx\n2\ty\n"}),
         Pg(#{type => copy, data => "3\tz\n"}),
         Pg(#{type => copydone}),
         Sql("SELECT * FROM t"),
         Sql("COPY t FROM STDIN"),
         Pg(#{type => copy, data => "4\tw\n"}),
         Pg(#{type => copyfail, message => "abandoned"}),
         Sql("SELECT * FROM t"),
         Pg(#{type => parse, sql => "COPY t FROM STDIN"}),
         Pg(#{type => bind}),
         Pg(#{type => execute}),
         Pg(#{type => flush}),
         Pg(#{type => copy, data => "5\tv\n"}),
         Pg(#{type => copydone}),
         Pg(#{type => sync}),
         Sql("SELECT * FROM t"),
         Pg(#{type => copydone}),
         Pg(#{type => close})],
    #{total := T} = R = run(scenario(Info, 10, Steps)),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 2),
    ?assertEqual(length(Steps) * Done, maps:get(requests, T)),
    %% 2 and 4 accounts at the flushes; t: 3 rows, 3 (the failed copy added none), 4.
    ?assertEqual((2 + 4 + 3 + 3 + 4) * Done, maps:get(rows, T)),
    ?assertEqual(#{<<"pgsql copydone outside a COPY FROM STDIN">> => Done}, reasons(R)).

copy_xml() ->
    [{doc, "A Tsung file's flush, copy (Tsung's decimal bytes), copydone and copyfail run "
           "against PostgreSQL; cancel and call are refused naming the line."}].
copy_xml(Config) ->
    #{port := Port, user := U, password := P, database := D} = ?config(info, Config),
    Req = fun(X) -> ["<request><pgsql ", X, "</pgsql></request>\n"] end,
    Xml = fun(Body) ->
                  lists:flatten(
                    ["<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">\n",
                     "<servers><server host=\"127.0.0.1\" port=\"", integer_to_list(Port),
                     "\" type=\"tcp\"/></servers>\n",
                     "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
                     "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n",
                     "<sessions><session name=\"s\" probability=\"100\" type=\"ts_pgsql\">\n",
                     Req(["type=\"connect\" database=\"", D, "\" username=\"", U, "\">"]),
                     Req(["type=\"authenticate\" password=\"", P, "\">"]),
                     Body, "</session></sessions>\n</tsung>\n"])
          end,
    Body = [Req("type=\"sql\">CREATE TEMP TABLE c (a int, b text)"),
            Req("type=\"sql\">COPY c FROM STDIN"),
            %% "7\tseven\n" as Tsung writes bytes.
            Req("type=\"copy\">55,9,115,101,118,101,110,10"),
            Req("type=\"copydone\">"),
            Req("type=\"sql\">COPY c FROM STDIN"),
            Req("type=\"copyfail\">given up"),
            Req("type=\"parse\">SELECT * FROM c WHERE b = 'seven'"),
            Req("type=\"bind\">"), Req("type=\"execute\">"), Req("type=\"flush\">"),
            Req("type=\"sync\">"), Req("type=\"close\">")],
    {ok, S, _} = beamscale_load_tsung:from_text("copy.xml", Xml(Body)),
    #{total := T} = R = run(S),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 1),
    ?assertEqual(#{}, reasons(R)),
    ?assertEqual(14 * Done, maps:get(requests, T)),
    ?assertEqual(Done, maps:get(rows, T)),
    [begin
         {error, E} = beamscale_load_tsung:from_text("copy.xml",
                                                     Xml(Req(["type=\"", Type, "\">"]))),
         ?assertEqual("copy.xml:8: <pgsql type=\"" ++ Type ++ "\">: Tsung 1.7's reader has no "
                      "such request (its DTD names it, its ts_config_pgsql stops on it)",
                      lists:flatten(beamscale_load_tsung:format_error(E)))
     end || Type <- ["cancel", "call"]].

pgsql_xml() -> [{doc, "Tsung's pgsql.xml runs: logins and queries; only its SQL error counted."}].
pgsql_xml(Config) ->
    #{total := T} = R = run(pgsql_xml(?config(info, Config), "tcp", 3)),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 2),
    %% Six requests a session; rows: 5 accounts and 2 users.
    ?assertEqual(6 * Done, maps:get(requests, T)),
    ?assertEqual(7 * Done, maps:get(rows, T)),
    %% The example's third query has an unterminated quote ('%_toto_% END ...): PostgreSQL
    %% answers a syntax error, counted by its SQLSTATE, and nothing else fails.
    ?assertMatch([{<<"pgsql 42601: ", _/binary>>, Done}], maps:to_list(reasons(R))).

%% Tsung's pgsql.xml against the suite's server over `Type' (tcp or ssl), for `Secs' seconds,
%% with short think times.
pgsql_xml(#{port := Port, user := U, password := P, database := D}, Type, Secs) ->
    tsung_example("pgsql.xml",
                  [{"port=\"5432\" type=\"tcp\"",
                    "port=\"" ++ integer_to_list(Port) ++ "\" type=\"" ++ Type ++ "\""},
                   {"database=\"bench\" username=\"bench\"",
                    "database=\"" ++ D ++ "\" username=\"" ++ U ++ "\""},
                   {"password=\"sesame\"", "password=\"" ++ P ++ "\""},
                   {"duration=\"10\" unit=\"minute\"",
                    "duration=\"" ++ integer_to_list(Secs) ++ "\" unit=\"second\""},
                   {"interarrival=\"30\"", "interarrival=\"0.2\""},
                   {"<thinktime value=\"2\"/>", "<thinktime value=\"0.1\"/>"},
                   {"<thinktime value=\"20\"/>", "<thinktime value=\"0.1\"/>"}]).

refused() -> [{doc, "A pgsql step with bad keys names the problem."}].
refused(_Config) ->
    Bad = "{targets, [{db, #{address => \"127.0.0.1:5\"}}]}.\n"
          "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
          "{sessions, [{s, #{steps => [{pgsql, #{target => db, type => sql}}]}}]}.\n",
    {ok, Entries} = beamscale_format_terms:parse(Bad),
    {error, E} = beamscale_load_scenario:check("test", Entries),
    ?assertNotEqual(nomatch, string:find(beamscale_error:format(E), "sql")).

tls() ->
    [{doc, "SSLRequest then TLS: refused while ssl is off; with ssl on (a certificate made "
           "here), verified logins and pgsql.xml over type ssl; the server sees TLS sessions."}].
tls(Config) ->
    #{user := U, password := P, database := D} = Info = ?config(info, Config),
    Dir = beamscale_load_servers:tmp_dir(Config, "pgsql_suite_tls"),
    {Ca, Cert, Key} = beamscale_load_servers:certificate(Dir),
    Steps = login(U, P, D) ++ [{pgsql, #{target => db, type => sql,
                                         sql => "SELECT ssl FROM pg_stat_ssl "
                                                "WHERE pid = pg_backend_pid() AND ssl"}},
                               {pgsql, #{target => db, type => close}}],
    Tls = #{cacertfile => Ca, server_name_indication => "localhost"},
    #{total := T0} = R0 = run(tls_scenario(Info, Tls, Steps)),
    %% Each of a session's four requests tried to connect (a request reconnects after a failed
    %% connect) and was refused.
    ?assertEqual(#{<<"the server refused TLS (its SSLRequest answer was N: ssl is off)">> =>
                       4 * maps:get(sessions_done, T0)}, reasons(R0)),
    ssl_on(Info, Cert, Key),
    try
        #{total := T} = R = run(tls_scenario(Info, Tls, Steps)),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 2),
        ?assertEqual(#{}, reasons(R)),
        %% One row a session: pg_stat_ssl says the session's own backend is under TLS.
        ?assertEqual(Done, maps:get(rows, T)),
        ?assertEqual(Done, beamscale_stats_hist:count(maps:get(connect, T))),
        #{total := TX} = RX = run(pgsql_xml(Info, "ssl", 2)),
        DoneX = maps:get(sessions_done, TX),
        ?assert(DoneX >= 1),
        ?assertEqual(7 * DoneX, maps:get(rows, TX)),
        %% Only the example's own syntax error, as over plain TCP.
        ?assertMatch([{<<"pgsql 42601: ", _/binary>>, DoneX}], maps:to_list(reasons(RX)))
    after
        ssl_off(Info)
    end.

tls_scenario(#{port := Port}, Tls, Steps) ->
    beamscale_load_servers:scenario(
      io_lib:format("{targets, [{db, #{address => \"127.0.0.1:~b\", tls => ~0tp}}]}.~n"
                    "{phases, [{p, #{duration_s => 1, rate => 10}}]}.~n"
                    "{drain_s, 10}.~n"
                    "{sessions, [{s, #{steps => ~tp}}]}.~n", [Port, Tls, Steps])).

%% ssl on by the superuser (ALTER SYSTEM, then a reload: PostgreSQL applies its ssl settings on
%% reload), the key owned by the server's OS user as PostgreSQL requires; done when a client
%% that requires TLS logs in.
%% The files are copied beside the server's socket, in a directory the server's OS user owns:
%% it may not reach the test's own directory (a checkout under a 0700 directory).
ssl_on(#{os_user := OsUser, socket := Sock} = Info, Cert0, Key0) ->
    [Cert, Key] = [filename:join(filename:dirname(Sock), "test_" ++ filename:basename(F))
                   || F <- [Cert0, Key0]],
    {ok, _} = file:copy(Cert0, Cert),
    {ok, _} = file:copy(Key0, Key),
    ok = file:change_mode(Key, 8#600),
    [ok = beamscale_os:chown(OsUser, F) || F <- [Cert, Key]],
    super_psql(Info, ["ALTER SYSTEM SET ssl = on",
                      "ALTER SYSTEM SET ssl_cert_file = '" ++ Cert ++ "'",
                      "ALTER SYSTEM SET ssl_key_file = '" ++ Key ++ "'",
                      "SELECT pg_reload_conf()"]),
    wait_ssl(Info, "require", erlang:monotonic_time(millisecond) + ?RELOAD_WAIT_MS).

ssl_off(Info) ->
    super_psql(Info, ["ALTER SYSTEM RESET ssl", "ALTER SYSTEM RESET ssl_cert_file",
                      "ALTER SYSTEM RESET ssl_key_file", "SELECT pg_reload_conf()"]),
    wait_ssl(Info, "disable", erlang:monotonic_time(millisecond) + ?RELOAD_WAIT_MS).

%% Until psql connects with `sslmode' (`require': TLS is on) or, for `disable', until a
%% client asking for TLS is refused (it is off again).
wait_ssl(#{host := H, port := P, user := U, password := Pw, database := D} = Info, Mode,
         Deadline) ->
    Conn = lists:flatten(io_lib:format("host=~s port=~b user=~s password=~s dbname=~s "
                                       "sslmode=require", [H, P, U, Pw, D])),
    {Status, _} = beamscale_os:cmd(?PSQL, ["-X", "-d", Conn, "-c", "SELECT 1"], ?PSQL_TIMEOUT),
    case {Mode, Status, erlang:monotonic_time(millisecond) > Deadline} of
        {"require", 0, _} -> ok;
        {"disable", S, _} when S =/= 0 -> ok;
        {_, _, true} -> ct:fail("PostgreSQL's ssl did not turn ~ts", [Mode]);
        _ -> timer:sleep(100), wait_ssl(Info, Mode, Deadline)
    end.

%% psql as PostgreSQL's superuser over the unix socket (`peer': as the server's OS user).
super_psql(#{socket := Sock, port := Port, os_user := OsUser}, Sqls) ->
    Args = ["-X", "-v", "ON_ERROR_STOP=1", "-h", filename:dirname(Sock), "-p",
            integer_to_list(Port), "-U", "postgres", "-d", "postgres"
            | lists:append([["-c", S] || S <- Sqls])],
    {Exe, As} = case beamscale_os:user_name() of
                    OsUser -> {?PSQL, Args};
                    _ -> {"/usr/bin/setpriv", ["--reuid=" ++ OsUser, "--regid=" ++ OsUser,
                                               "--init-groups", ?PSQL | Args]}
                end,
    case beamscale_os:cmd(Exe, As, ?PSQL_TIMEOUT) of
        {0, _} -> ok;
        {Status, Out} -> ct:fail("psql as the superuser exited with ~p: ~ts", [Status, Out])
    end.
