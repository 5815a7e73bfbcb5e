%% The pgsql kind against a real PostgreSQL (`beamscale db start --engine postgres' in a
%% throwaway directory, stopped by its pid at the end): SCRAM and MD5 logins, PostgreSQL's own
%% words for a wrong password, a query error by SQLSTATE, the extended flow, and Tsung's
%% pgsql.xml with only host, port, credentials, database and durations rewritten.
-module(beamscale_load_pgsql_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([scram_and_md5/1, wrong_password/1, query_error/1, extended/1, pgsql_xml/1,
         refused/1]).
-export([scram_and_md5/0, wrong_password/0, query_error/0, extended/0, pgsql_xml/0,
         refused/0]).

-define(EXAMPLES, "/usr/share/doc/tsung/examples/").
-import(beamscale_load_servers, [tsung_example/2, run/1]).
%% Creating two small tables takes milliseconds; a host loaded by others' tests may take seconds.
-define(PSQL_TIMEOUT, 30000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [scram_and_md5, wrong_password, query_error, extended, pgsql_xml, refused].

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
    {0, _} = beamscale_os:cmd("/usr/lib/postgresql/15/bin/psql", Args, ?PSQL_TIMEOUT),
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
    ?assertEqual(Done, maps:get(rows, T)).

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

pgsql_xml() -> [{doc, "Tsung's pgsql.xml runs: logins and queries; only its SQL error counted."}].
pgsql_xml(Config) ->
    #{port := Port, user := U, password := P, database := D} = ?config(info, Config),
    S = tsung_example("pgsql.xml",
                      [{"port=\"5432\"", "port=\"" ++ integer_to_list(Port) ++ "\""},
                       {"database=\"bench\" username=\"bench\"",
                        "database=\"" ++ D ++ "\" username=\"" ++ U ++ "\""},
                       {"password=\"sesame\"", "password=\"" ++ P ++ "\""},
                       {"duration=\"10\" unit=\"minute\"", "duration=\"3\" unit=\"second\""},
                       {"interarrival=\"30\"", "interarrival=\"0.2\""},
                       {"<thinktime value=\"2\"/>", "<thinktime value=\"0.1\"/>"},
                       {"<thinktime value=\"20\"/>", "<thinktime value=\"0.1\"/>"}]),
    #{total := T} = R = run(S),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 2),
    %% Six requests a session; rows: 5 accounts and 2 users.
    ?assertEqual(6 * Done, maps:get(requests, T)),
    ?assertEqual(7 * Done, maps:get(rows, T)),
    %% The example's third query has an unterminated quote ('%_toto_% END ...): PostgreSQL
    %% answers a syntax error, counted by its SQLSTATE, and nothing else fails.
    ?assertMatch([{<<"pgsql 42601: ", _/binary>>, Done}], maps:to_list(reasons(R))).

refused() -> [{doc, "A pgsql step with bad keys, or over ssl in Tsung XML, names the problem."}].
refused(_Config) ->
    Bad = "{targets, [{db, #{address => \"127.0.0.1:5\"}}]}.\n"
          "{phases, [{p, #{duration_s => 1, rate => 1}}]}.\n"
          "{sessions, [{s, #{steps => [{pgsql, #{target => db, type => sql}}]}}]}.\n",
    {ok, Entries} = beamscale_format_terms:parse(Bad),
    {error, E} = beamscale_load_scenario:check("test", Entries),
    ?assertNotEqual(nomatch, string:find(beamscale_error:format(E), "sql")),
    {ok, Bin} = file:read_file(?EXAMPLES ++ "pgsql.xml"),
    Ssl = string:replace(unicode:characters_to_list(Bin), "type=\"tcp\"", "type=\"ssl\""),
    {error, E2} = beamscale_load_tsung:from_text("pgsql.xml", lists:flatten(Ssl)),
    ?assertNotEqual(nomatch, string:find(beamscale_load_tsung:format_error(E2), "of type tcp")).
