%% The ldap kind against a real slapd on 127.0.0.1 (Debian's, its own slapd.conf, mdb database
%% and TLS certificate in priv_dir, in the foreground, stopped by its OS pid), seeded with
%% ldapadd; and against a hostile server in this node announcing a 4 GiB message.
-module(beamscale_load_ldap_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([operations/1, errors_by_code/1, start_tls/1, tsung_example/1, server_stopped/1,
         hostile_length/1, tsung_counters/1, starttls_refused/1]).
-export([operations/0, errors_by_code/0, start_tls/0, tsung_example/0, server_stopped/0,
         hostile_length/0, tsung_counters/0, starttls_refused/0]).

-export([fragmented/0, fragmented/1]).

-import(beamscale_load_servers, [scenario/1, run/1]).

-define(SUFFIX, "dc=pablo-desktop").
-define(ADMIN, "cn=admin,dc=pablo-desktop").
-define(PASSWORD, "secret").
%% ldapadd ends in milliseconds; generous beside a CPU hog.
-define(LDAPADD_TIMEOUT_S, 30).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [operations, errors_by_code, tsung_counters, start_tls, starttls_refused, tsung_example,
          hostile_length, fragmented, server_stopped].

%% Fails, not skips, when slapd cannot start (start_server/4).
init_per_suite(Config) ->
    {Port, Stop, Ca} = slapd(Config, "beamscale_load_ldap_SUITE", tls),
    try seed(Port) of
        ok -> [{port, Port}, {stop, Stop}, {ca, Ca} | Config]
    catch C:R:St -> Stop(), erlang:raise(C, R, St)
    end.

end_per_suite(Config) ->
    (proplists:get_value(stop, Config))(),
    Config.

%% A slapd of its own in priv_dir/`Name' (the schemas Debian ships, an mdb database, with `tls'
%% StartTLS with a certificate for 127.0.0.1): its port, the fun that stops it, the CA's file.
slapd(Config, Name, Tls) ->
    Dir = beamscale_load_servers:tmp_dir(Config, Name),
    Db = filename:join(Dir, "db"),
    ok = filelib:ensure_path(Db),
    {Ca, TlsConf} = case Tls of
                        tls -> {C, Cert, Key} = beamscale_load_servers:certificate(Dir),
                               {C, ["TLSCACertificateFile ", C, "\nTLSCertificateFile ", Cert,
                                    "\nTLSCertificateKeyFile ", Key, "\n"]};
                        no_tls -> {none, []}
                    end,
    Port = beamscale_load_servers:free_port(),
    Conf = filename:join(Dir, "slapd.conf"),
    ok = file:write_file(
           Conf, [[["include /etc/ldap/schema/", S, ".schema\n"]
                   || S <- ["core", "cosine", "inetorgperson"]],
                  "pidfile ", filename:join(Dir, "slapd.pid"), "\n"
                  "modulepath /usr/lib/ldap\nmoduleload back_mdb\n",
                  TlsConf,
                  "database mdb\nmaxsize 16777216\nsuffix \"", ?SUFFIX, "\"\n"
                  "rootdn \"", ?ADMIN, "\"\nrootpw ", ?PASSWORD, "\ndirectory ", Db, "\n"]),
    Exe = case os:find_executable("slapd") of
              false -> os:find_executable("slapd", "/usr/sbin");
              E -> E
          end,
    Url = "ldap://127.0.0.1:" ++ integer_to_list(Port) ++ "/",
    %% -d 0: in the foreground (its OS pid is the port's), logging nothing.
    Stop = beamscale_load_servers:start_server(Exe, ["-d", "0", "-f", Conf, "-h", Url], Port, Dir),
    {Port, Stop, Ca}.

%% The suffix, two people the searches find, and the one Tsung's ldap.xml modifies.
seed(Port) ->
    Ldif = ["dn: ", ?SUFFIX, "\nobjectClass: dcObject\nobjectClass: organization\n"
            "o: beamscale\ndc: pablo-desktop\n\n",
            [["dn: cn=", Cn, ",", ?SUFFIX, "\nobjectClass: inetOrgPerson\ncn: ", Cn,
              "\nsn: test\n\n"] || Cn <- ["user2", "u119843"]]],
    File = filename:join(os:getenv("TMPDIR", "/tmp"),
                         "beamscale_load_ldap_SUITE." ++ os:getpid() ++ ".ldif"),
    ok = file:write_file(File, Ldif),
    Out = os:cmd(lists:flatten(
                   io_lib:format("timeout ~b ldapadd -x -H ldap://127.0.0.1:~b -D '~ts' -w ~ts"
                                 " -f ~ts 2>&1; echo \"exit=$?\"",
                                 [?LDAPADD_TIMEOUT_S, Port, ?ADMIN, ?PASSWORD, File]))),
    ok = file:delete(File),
    string:find(Out, "exit=0") =/= nomatch orelse ct:fail("ldapadd failed: ~ts", [Out]),
    ok.

scenario(Port, Sessions) ->
    scenario(io_lib:format(
               "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
               "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
               "{sessions, ~ts}.\n", [Port, Sessions])).

bind() ->
    "{ldap, #{type => bind, dn => <<\"" ?ADMIN "\">>, password => <<\"" ?PASSWORD "\">>}}".

operations() ->
    [{doc, "bind, search, add, modify, delete, unbind: entries counted, no errors."}].
operations(Config) ->
    Dn = "<<\"cn=tmp%%_id%%," ?SUFFIX "\">>",
    Steps = "[{setvars, [id], {random_string, 16}}, " ++ bind() ++ ","
            " {ldap, #{type => search, base => <<\"" ?SUFFIX "\">>,"
            "          filter => <<\"(|(cn=user2)(cn=u119843))\">>, attributes => [<<\"sn\">>]}},"
            " {ldap, #{type => search, base => <<\"cn=user2," ?SUFFIX "\">>, scope => base}},"
            " {ldap, #{type => add, dn => " ++ Dn ++ ", attrs => [{<<\"objectClass\">>,"
            "          [<<\"inetOrgPerson\">>]}, {<<\"cn\">>, [<<\"tmp%%_id%%\">>]},"
            "          {<<\"sn\">>, [<<\"x\">>]}]}},"
            " {ldap, #{type => modify, dn => " ++ Dn ++ ","
            "          changes => [{replace, <<\"sn\">>, [<<\"y\">>]},"
            "                      {add, <<\"mail\">>, [<<\"a@b.c\">>]}]}},"
            " {ldap, #{type => delete, dn => " ++ Dn ++ "}},"
            " {ldap, #{type => unbind}}]",
    #{total := T} = run(scenario(port(Config), "[{s, #{steps => " ++ Steps ++ "}}]")),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(7 * Done, maps:get(requests, T)),
    %% Two entries from the first search, one from the second, per session.
    ?assertEqual(3 * Done, maps:get(rows, T)).

fragmented() ->
    [{doc, "slapd's bytes one per TCP segment: operations' entries and answers all read."}].
fragmented(Config) ->
    beamscale_load_trickle:with(port(Config), fun(Relay) ->
        operations([{port, Relay} | Config])
    end).

errors_by_code() ->
    [{doc, "A wrong password, a missing base, a missing entry: their result codes in words."}].
errors_by_code(Config) ->
    Steps = "[{ldap, #{type => bind, dn => <<\"" ?ADMIN "\">>, password => <<\"no\">>}},"
            " {ldap, #{type => search, base => <<\"dc=nowhere\">>}}, " ++ bind() ++ ","
            " {ldap, #{type => delete, dn => <<\"cn=nobody," ?SUFFIX "\">>}}]",
    #{total := T} = run(scenario(port(Config), "[{s, #{steps => " ++ Steps ++ "}}]")),
    ?assertEqual([<<"LDAP bind: invalid credentials">>, <<"LDAP delete: no such object">>,
                  <<"LDAP search: no such object">>],
                 lists:sort(maps:keys(maps:get(reasons, T)))).

tsung_counters() ->
    [{doc, "Tsung's ts_ldap counters: a bind refused and one accepted, an add of an entry that "
           "exists, a modify of one that does not: each counted once a session."}].
tsung_counters(Config) ->
    Steps = "[{ldap, #{type => bind, dn => <<\"" ?ADMIN "\">>, password => <<\"no\">>}}, "
            ++ bind() ++ ","
            " {ldap, #{type => add, dn => <<\"cn=user2," ?SUFFIX "\">>, attrs =>"
            "          [{<<\"objectClass\">>, [<<\"inetOrgPerson\">>]},"
            "           {<<\"cn\">>, [<<\"user2\">>]}, {<<\"sn\">>, [<<\"x\">>]}]}},"
            " {ldap, #{type => modify, dn => <<\"cn=nobody," ?SUFFIX "\">>,"
            "          changes => [{replace, <<\"sn\">>, [<<\"y\">>]}]}},"
            " {ldap, #{type => search, base => <<\"cn=user2," ?SUFFIX "\">>, scope => base}}]",
    #{total := T} = run(scenario(port(Config), "[{s, #{steps => " ++ Steps ++ "}}]")),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(3 * Done, maps:get(errors, T)),
    ?assertEqual(#{<<"ldap_bind_error">> => Done, <<"ldap_bind_ok">> => Done,
                   <<"ldap_add_error">> => Done, <<"ldap_modify_error">> => Done,
                   <<"ldap_starttls_error">> => 0, <<"ldap_unexpected_msg_resp">> => 0},
                 maps:filter(fun(K, _) -> lists:prefix("ldap_", binary_to_list(K)) end,
                             maps:get(counts, T))).

start_tls() -> [{doc, "start_tls verified against the test's CA, then bind and search."}].
start_tls(Config) ->
    Steps = "[{ldap, #{type => start_tls, tls => #{cacertfile => \""
            ++ proplists:get_value(ca, Config) ++ "\"}}},"
            ++ bind() ++ ", {ldap, #{type => search, base => <<\"cn=user2," ?SUFFIX "\">>}},"
            " {ldap, #{type => unbind}}]",
    #{total := T} = run(scenario(port(Config), "[{s, #{steps => " ++ Steps ++ "}}]")),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(Done, maps:get(rows, T)).

tsung_example() ->
    [{doc, "Tsung's ldap.xml against slapd: answers; one error an add, unset variables apart."}].
tsung_example(Config) ->
    Port = integer_to_list(port(Config)),
    %% Besides server, credentials and durations: the example's filter calls a module `cn' it
    %% does not ship (%%cn:f%%): it goes, leaving (cn=a**n).
    S = beamscale_load_servers:tsung_example(
          "ldap.xml",
          [{"host=\"myserver\" port=\"80\"", "host=\"127.0.0.1\" port=\"" ++ Port ++ "\""},
           {"user=\"uid=nniclausse\" password=\"XXX\"",
            "user=\"" ?ADMIN "\" password=\"" ?PASSWORD "\""},
           {"%%cn:f%%", ""},
           {"duration=\"10\" unit=\"minute\"", "duration=\"1\" unit=\"second\""},
           {"interarrival=\"2\"", "arrivalrate=\"10\""},
           {"<thinktime value=\"1\" >", "<thinktime value=\"0.1\" >"}]),
    #{total := T} = run(S),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 3),
    %% The add names %%_new_user_dn%% and %%_new_user_cn%%, which the example never sets: sent
    %% with them empty, the add names the root DSE, which exists: one error a request, as Tsung
    %% counts; the unset variables are counted apart (`unset.NAME'), not as errors.
    ?assertEqual([<<"LDAP add: entry already exists">>],
                 lists:sort(maps:keys(maps:get(reasons, T)))),
    ?assertMatch(#{<<"unset.new_user_cn">> := N, <<"unset.new_user_dn">> := N} when N >= Done,
                 maps:get(counts, T)),
    ?assertEqual(6 * Done, maps:get(requests, T)),
    %% Tsung's counters: its bind accepted, its add refused.
    ?assertMatch(#{<<"ldap_bind_ok">> := Done, <<"ldap_add_error">> := Done},
                 maps:get(counts, T)),
    %% cn=user2 found by the first search; the others find nothing.
    ?assertEqual(Done, maps:get(rows, T)).

hostile_length() ->
    [{doc, "A server announcing a 4 GiB message: a named reason, nothing of it held."}].
hostile_length(_Config) ->
    {L, Port, Acceptor} = beamscale_load_servers:broker(fun flood/1),
    try
        #{total := T} = run(scenario(Port, "[{s, #{steps => [" ++ bind() ++ "]}}]")),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ?assertEqual(#{<<"LDAP message of 4294967301 bytes above max_reply_bytes (16777216):"
                         " connection closed">> => Done}, maps:get(reasons, T)),
        ?assert(maps:get(bytes_received, T) =< Done * 64 * 1024)
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

%% Reads the bind, answers with a SEQUENCE head of length 2^32 - 1 and junk.
flood(S) ->
    _ = gen_tcp:recv(S, 0, 5000),
    _ = gen_tcp:send(S, <<16#30, 16#84, 16#FF, 16#FF, 16#FF, 16#FF>>),
    _ = gen_tcp:send(S, binary:copy(<<"x">>, 65536)),
    _ = gen_tcp:recv(S, 0, 5000),
    gen_tcp:close(S).

starttls_refused() ->
    [{doc, "start_tls to a slapd without TLS: refused in slapd's words, Tsung's "
           "ldap_starttls_error counted, the bind after it on the plain connection accepted."}].
starttls_refused(Config) ->
    {Port, Stop, _} = slapd(Config, "beamscale_load_ldap_SUITE_plain", no_tls),
    try
        Steps = "[{ldap, #{type => start_tls, tls => #{}}}, " ++ bind() ++ "]",
        #{total := T} = run(scenario(Port, "[{s, #{steps => " ++ Steps ++ "}}]")),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ct:pal("~p", [maps:get(reasons, T)]),
        ?assertEqual(Done, maps:get(errors, T)),
        ?assertMatch([<<"LDAP start_tls: ", _/binary>>], maps:keys(maps:get(reasons, T))),
        ?assertMatch(#{<<"ldap_starttls_error">> := Done, <<"ldap_bind_ok">> := Done},
                     maps:get(counts, T))
    after
        Stop()
    end.

server_stopped() ->
    [{doc, "slapd stopped mid-load: errors by reason, and the run ends on time."}].
server_stopped(Config) ->
    {Port, Stop, _} = slapd(Config, "beamscale_load_ldap_SUITE_stopped", no_tls),
    Steps = "[" ++ bind() ++ ", {think, 100}, " ++ bind() ++ ", {ldap, #{type => unbind}}]",
    _ = beamscale_load_servers:stopped_mid_load(
          Port, Steps, Stop, #{duration_s => 2, stop_ms => 800, min_done => 5,
                               within_ms => 15000}).

port(Config) -> proplists:get_value(port, Config).
