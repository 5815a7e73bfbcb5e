%% The xmpp kind's steps against a real ejabberd of its own (beamscale_load_xmpp_server), one
%% start for the suite: SASL and legacy authentication, chat with delivery time, presence and
%% roster, registration, MUC, pubsub, privacy lists, STARTTLS, WebSocket and BOSH, and servers
%% in this node that answer without end. Tsung's jabber examples are
%% beamscale_load_xmpp_tsung_SUITE's.
-module(beamscale_load_xmpp_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([fragmented/0, fragmented/1]).
-export([muc_counts/0, muc_counts/1]).
-export([no_online/0, no_online/1, no_free_userid/0, no_free_userid/1]).
-export([sasl/1, legacy/1, chat_delivery/1, roster_presence/1, muc_pubsub_privacy/1,
         register/1, register_match/1, starttls/1, hostile_stanza/1, websocket/1, bosh/1,
         hostile_bosh/1]).
-export([sasl/0, legacy/0, chat_delivery/0, roster_presence/0, muc_pubsub_privacy/0,
         register/0, register_match/0, starttls/0, hostile_stanza/0, websocket/0, bosh/0,
         hostile_bosh/0]).

-import(beamscale_load_servers, [scenario/1, run/1]).

-define(USERS, 40).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [sasl, legacy, chat_delivery, roster_presence, muc_pubsub_privacy, register,
          register_match, starttls, hostile_stanza, websocket, bosh, hostile_bosh, fragmented,
          muc_counts, no_online, no_free_userid].

%% Fails, not skips, when ejabberd cannot start.
init_per_suite(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_xmpp_SUITE"),
    {Port, Http, Stop} = beamscale_load_xmpp_server:start(Dir, ?USERS, #{}),
    [{port, Port}, {http, Http}, {stop, Stop} | Config].

end_per_suite(Config) ->
    (proplists:get_value(stop, Config))(),
    Config.

scenario(Config, Sessions) -> scenario(Config, Sessions, "duration_s => 1, rate => 10").

scenario(Config, Sessions, Phase) ->
    scenario(io_lib:format(
               "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
               "{phases, [{p, #{~ts}}]}.\n"
               "{sessions, ~ts}.\n", [proplists:get_value(port, Config), Phase, Sessions])).

connect() ->
    "{xmpp, #{type => connect, domain => <<\"bs.test\">>, userid_max => 40}}".

steps(Steps) -> "[{s, #{bidi => true, steps => [" ++ connect() ++ ", "
                    ++ lists:join(", ", Steps) ++ "]}}]".

%% After SASL the stream is opened again (a connect, as in Tsung's files), then bound.
bind() -> ["{xmpp, #{type => connect}}", "{xmpp, #{type => auth_sasl_bind}}",
           "{xmpp, #{type => auth_sasl_session}}"].

clean(T) ->
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assert(maps:get(sessions_done, T) >= 5).

pubsub_refused(T) ->
    Known = [<<"XMPP iq error: ", C/binary>>
             || C <- [<<"internal-server-error">>, <<"item-not-found">>, <<"not-subscribed">>]],
    ?assertEqual([], maps:keys(maps:get(reasons, T)) -- Known),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assert(maps:get(errors, T) =< 4 * Done).

run_steps(Config, Steps) -> run_steps(Config, Steps, "duration_s => 1, rate => 10").

run_steps(Config, Steps, Phase) ->
    #{total := T} = run(scenario(Config, steps(Steps), Phase)),
    ct:pal("~p", [maps:with([requests, errors, reasons, counts, sessions_done], T)]),
    T.

fragmented() -> [{doc, "ejabberd's bytes one per TCP segment: SASL, roster, chat, all read."}].
fragmented(Config) ->
    beamscale_load_trickle:with(proplists:get_value(port, Config), fun(Relay) ->
        clean(run_steps([{port, Relay} | Config],
                        ["{xmpp, #{type => auth_sasl}}"] ++ bind()
                        ++ ["{xmpp, #{type => presence_initial}}",
                            "{xmpp, #{type => iq_roster_get}}",
                            "{xmpp, #{type => chat, size => 64}}", "{xmpp, #{type => close}}"]))
    end).

sasl() -> [{doc, "SASL PLAIN, DIGEST-MD5 and ANONYMOUS, then bind and session, all answered."}].
sasl(Config) ->
    [begin
         T = run_steps(Config, ["{xmpp, #{type => auth_sasl, mechanism => " ++ M ++ "}}"]
                       ++ bind() ++ ["{xmpp, #{type => close}}"]),
         clean(T),
         ?assertEqual(6 * maps:get(sessions_done, T), maps:get(requests, T))
     end || M <- ["plain", "digest_md5", "anonymous"]].

legacy() -> [{doc, "Legacy authentication (auth_get, auth_set_plain, auth_set_digest) answered."}].
legacy(Config) ->
    [clean(run_steps(Config, ["{xmpp, #{type => auth_get}}", "{xmpp, #{type => " ++ A ++ "}}",
                              "{xmpp, #{type => close}}"]))
     || A <- ["auth_set_plain", "auth_set_digest"]].

chat_delivery() -> [{doc, "Chats to online users delivered, with delivery times and counts."}].
chat_delivery(Config) ->
    Chats = lists:duplicate(5, "{xmpp, #{type => chat, size => 64}}, {think, 100}"),
    T = run_steps(Config, ["{xmpp, #{type => auth_sasl}}"] ++ bind()
                  ++ ["{xmpp, #{type => presence_initial}}"] ++ Chats
                  ++ ["{think, 1000}", "{xmpp, #{type => close}}"]),
    clean(T),
    Counts = maps:get(counts, T),
    Sent = maps:get(<<"xmpp_chat_sent">>, Counts),
    Delivered = maps:get(<<"xmpp_chat_delivered">>, Counts),
    ?assertEqual(5 * maps:get(sessions_done, T), Sent),
    ?assert(Delivered >= Sent div 2),
    #{count := N} = maps:get({tx, xmpp_delivery}, T),
    ?assertEqual(Delivered, N).

roster_presence() -> [{doc, "Roster gets, adds and renames and presence stanzas answered."}].
roster_presence(Config) ->
    clean(run_steps(Config, ["{xmpp, #{type => auth_sasl}}"] ++ bind()
                    ++ ["{xmpp, #{type => iq_roster_add, destination => random}}",
                        "{xmpp, #{type => presence_subscribe, destination => previous}}",
                        "{xmpp, #{type => iq_roster_get}}",
                        "{xmpp, #{type => presence_broadcast, show => <<\"away\">>}}",
                        "{xmpp, #{type => presence_directed, destination => online}}",
                        "{xmpp, #{type => iq_roster_remove, destination => previous}}",
                        "{xmpp, #{type => presence_final}}", "{xmpp, #{type => close}}"])).

%% ejabberd 23.01 aborts pubsub node creations that run at once (Mnesia `cyclic' on
%% pubsub_index, not retried: internal-server-error), and the node's next requests then fail
%% (item-not-found, not-subscribed): those only (a busy host makes them frequent; the MUC and
%% privacy requests, and every pubsub request on a quiet host, are answered).
muc_pubsub_privacy() -> [{doc, "MUC, pubsub and privacy answered (pubsub races excepted)."}].
muc_pubsub_privacy(Config) ->
    pubsub_refused(run_steps(Config, ["{xmpp, #{type => auth_sasl}}"] ++ bind()
                    ++ ["{xmpp, #{type => muc_join, room => <<\"r1\">>}}",
                        "{xmpp, #{type => muc_chat, room => <<\"r1\">>, size => 20}}",
                        "{xmpp, #{type => muc_exit, room => <<\"r1\">>}}",
                        "{setvars, [n], user_number}",
                        "{xmpp, #{type => pubsub_create, node => <<\"n%%_n%%\">>,"
                        " node_type => <<\"flat\">>}}",
                        "{xmpp, #{type => pubsub_subscribe, node => <<\"n%%_n%%\">>}}",
                        "{xmpp, #{type => pubsub_publish, node => <<\"n%%_n%%\">>, size => 9}}",
                        "{xmpp, #{type => pubsub_unsubscribe, node => <<\"n%%_n%%\">>}}",
                        "{xmpp, #{type => pubsub_delete, node => <<\"n%%_n%%\">>}}",
                        "{xmpp, #{type => privacy_get_names}}", "{xmpp, #{type => close}}"])).

%% A room's chats are counted apart from one-to-one chats: each send once, each delivery (to
%% every occupant, the sender too) once, timed; nothing of them in the chat counts.
muc_counts() -> [{doc, "MUC chats sent and delivered counted apart from chats, each timed."}].
muc_counts(Config) ->
    T = run_steps(Config, ["{xmpp, #{type => auth_sasl}}"] ++ bind()
                  ++ ["{xmpp, #{type => muc_join, room => <<\"r2\">>}}", "{think, 100}",
                      "{xmpp, #{type => muc_chat, room => <<\"r2\">>, size => 20}}",
                      "{think, 100}",
                      "{xmpp, #{type => muc_chat, room => <<\"r2\">>, size => 20}}",
                      "{think, 500}", "{xmpp, #{type => muc_exit, room => <<\"r2\">>}}",
                      "{xmpp, #{type => close}}"]),
    clean(T),
    Counts = maps:get(counts, T),
    ?assertEqual(2 * maps:get(sessions_done, T), maps:get(<<"xmpp_muc_sent">>, Counts)),
    Delivered = maps:get(<<"xmpp_muc_delivered">>, Counts),
    ?assert(Delivered >= 1),
    ?assertEqual(#{<<"xmpp_chat_sent">> => 0, <<"xmpp_chat_delivered">> => 0},
                 maps:with([<<"xmpp_chat_sent">>, <<"xmpp_chat_delivered">>], Counts)),
    ?assertEqual(Delivered, maps:get(count, maps:get({tx, xmpp_delivery}, T))).

register() -> [{doc, "In-band registration of new users answered."}].
register(Config) ->
    %% New users (user41 and above were not made up front): registered, then authenticated.
    Connect = "{xmpp, #{type => connect, domain => <<\"bs.test\">>, username => <<\"new\">>,"
              " userid_max => 1000000}}",
    #{total := T} = run(scenario(Config, "[{s, #{steps => [" ++ Connect ++ ","
                                 " {xmpp, #{type => register}}, {xmpp, #{type => auth_sasl}},"
                                 " {xmpp, #{type => close}}]}}]")),
    clean(T).

register_match() ->
    [{doc, "A match on a registration's reply: counted on the error of a user that exists "
           "(the error counted too), nomatch on a new user's result, as Tsung's <match>."}].
register_match(Config) ->
    Reg = fun(User, Max) ->
                  "[{xmpp, #{type => connect, domain => <<\"bs.test\">>, username => <<\""
                      ++ User ++ "\">>, userid_max => " ++ Max ++ "}},"
                  " {xmpp, #{type => register, match => [#{name => <<\"e\">>, re => \"error\","
                  " 'when' => match, do => continue}]}}, {xmpp, #{type => close}}]"
          end,
    %% user1..user40 exist (made up front); fresh1... do not.
    Sessions = "[{old, #{weight => 1, steps => " ++ Reg("user", "40") ++ "}},"
               " {new, #{weight => 1, steps => " ++ Reg("fresh", "1000000") ++ "}}]",
    #{total := T} = run(scenario(Config, Sessions, "duration_s => 2, rate => 10")),
    Counts = maps:get(counts, T),
    ct:pal("~p", [maps:with([requests, errors, reasons, counts, sessions_done], T)]),
    Match = maps:get(<<"match.e">>, Counts, 0),
    NoMatch = maps:get(<<"nomatch.e">>, Counts, 0),
    ?assert(Match >= 1),
    ?assert(NoMatch >= 1),
    %% Each registration checked once: the old users' errors are the matches.
    ?assertEqual(maps:get(sessions_done, T), Match + NoMatch),
    ?assertEqual(Match, maps:get(errors, T)),
    ?assertEqual([<<"XMPP iq error: conflict">>], maps:keys(maps:get(reasons, T))).

starttls() -> [{doc, "STARTTLS upgrades the stream, then authentication goes on over TLS."}].
starttls(Config) ->
    clean(run_steps(Config, ["{xmpp, #{type => starttls}}", "{xmpp, #{type => connect}}",
                             "{xmpp, #{type => auth_sasl}}"]
                    ++ bind() ++ ["{xmpp, #{type => close}}"])).

%% A server in this node that answers the stream header with a stanza that never ends (its
%% body streamed): a named reason per user, and no more read than the bound allows.
hostile_stanza() -> [{doc, "A stanza that never ends is a named reason, bounded in bytes read."}].
hostile_stanza(_Config) ->
    T = hostile(connect(), "<?xml version='1.0'?><stream:stream id='1' from='bs.test'>"
                           "<message><body>"),
    Done = maps:get(sessions_done, T),
    ?assertEqual(#{<<"XMPP stanza above max_reply_bytes (65536) awaiting the stream features: "
                     "connection closed">> => Done},
                 maps:get(reasons, T)).

%% A BOSH server whose answer is above the bound (its Content-Length read, the rest not), or
%% not 200: each a named reason, bounded in bytes read.
hostile_bosh() ->
    [{doc, "A BOSH answer above max_reply_bytes, not 200 or without a length: named reasons."}].
hostile_bosh(_Config) ->
    Open = "{xmpp, #{type => connect, domain => <<\"bs.test\">>, bosh => <<\"/http-bind\">>}}",
    [begin
         T = hostile(Open, Head),
         ?assertEqual(#{Reason => maps:get(sessions_done, T)}, maps:get(reasons, T))
     end || {Head, Reason} <- [{"HTTP/1.1 200 OK\r\nContent-Length: 999999\r\n\r\n<body>",
                                <<"BOSH: response above max_reply_bytes (65536): connection "
                                  "closed">>},
                               {"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n",
                                <<"BOSH: HTTP status 503">>},
                               %% An endless chunked body was "HTTP status 200" (issue 55).
                               {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                                <<"BOSH: a 200 response without Content-Length (chunked or to "
                                  "the close): not read, connection closed">>}]].

%% Sessions of one `connect' against a server in this node that answers `Head' then 1 MiB.
hostile(Connect, Head) ->
    {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false},
                                 {reuseaddr, true}]),
    {ok, Port} = inet:port(L),
    Acceptor = spawn(fun() -> accept(L, Head) end),
    ok = gen_tcp:controlling_process(L, Acceptor),
    try
        S = scenario(io_lib:format(
                       "{targets, [{t, #{address => \"127.0.0.1:~b\","
                       " max_reply_bytes => 65536}}]}.\n"
                       "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
                       "{sessions, [{s, #{steps => [~ts]}}]}.\n", [Port, Connect])),
        #{total := T} = run(S),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ?assert(maps:get(bytes_received, T) =< Done * 256 * 1024),
        T
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

accept(L, Head) ->
    case gen_tcp:accept(L) of
        {ok, S} -> spawn(fun() -> flood(S, Head) end), accept(L, Head);
        _ -> ok
    end.

flood(S, Head) ->
    _ = gen_tcp:recv(S, 0, 5000),
    _ = gen_tcp:send(S, Head),
    Junk = binary:copy(<<"x">>, 4096),
    lists:foreach(fun(_) -> gen_tcp:send(S, Junk) end, lists:seq(1, 256)),
    gen_tcp:close(S).

%% RFC 7395 over ejabberd's HTTP listener: SASL, bind, presence, chats (some delivered),
%% close, all answered.
websocket() -> [{doc, "XMPP over WebSocket (RFC 7395): authentication, chats and close."}].
websocket(Config) ->
    chats_over(Config, "websocket => <<\"/ws\">>", []).

bosh() -> [{doc, "XMPP over BOSH (XEP-0124/0206): SASL, restart, chats pushed, terminate."}].
bosh(Config) ->
    T = chats_over(Config, "bosh => <<\"/http-bind\">>", ["{xmpp, #{type => iq_roster_get}}"]),
    %% Chats reach users that are still polling: pushed, with their delivery time.
    Delivered = maps:get(<<"xmpp_chat_delivered">>, maps:get(counts, T)),
    ?assertEqual(Delivered, maps:get(count, maps:get({tx, xmpp_delivery}, T))).

%% Authentication, 3 chats and close over ejabberd's HTTP port (`Transport': the connect's key).
chats_over(Config, Transport, More) ->
    Chats = lists:duplicate(3, "{xmpp, #{type => chat, size => 32}}, {think, 100}"),
    Open = "{xmpp, #{type => connect, domain => <<\"bs.test\">>, userid_max => 40, "
           ++ Transport ++ "}}",
    Steps = [Open, "{xmpp, #{type => auth_sasl}}"] ++ bind()
            ++ ["{xmpp, #{type => presence_initial}}"] ++ More ++ Chats
            ++ ["{think, 1000}", "{xmpp, #{type => close}}"],
    S = scenario(io_lib:format(
                   "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
                   "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
                   "{sessions, [{s, #{bidi => true, steps => [~ts]}}]}.\n",
                   [proplists:get_value(http, Config), lists:join(", ", Steps)])),
    #{total := T} = run(S),
    ct:pal("~p", [maps:with([requests, errors, reasons, counts, sessions_done], T)]),
    clean(T),
    Counts = maps:get(counts, T),
    ?assertEqual(3 * maps:get(sessions_done, T), maps:get(<<"xmpp_chat_sent">>, Counts)),
    ?assert(maps:get(<<"xmpp_chat_delivered">>, Counts) >= 1),
    T.

no_online() ->
    [{doc, "Chats to an online user with no other user online: Tsung's error_no_online counted "
           "once a chat; to an offline one, with 38 users offline, none."}].
no_online(Config) ->
    %% userid_max 39: online flags of their own, none left by the other cases' users.
    Connect = "{xmpp, #{type => connect, domain => <<\"bs.test\">>, userid_max => 39}}",
    Steps = [Connect, "{xmpp, #{type => auth_sasl}}"] ++ bind()
        ++ ["{xmpp, #{type => presence_initial}}",
            "{xmpp, #{type => chat, destination => online}}",
            "{xmpp, #{type => chat, destination => online}}",
            "{xmpp, #{type => chat, destination => offline}}", "{xmpp, #{type => close}}"],
    #{total := T} = run(scenario(Config, "[{s, #{steps => [" ++ lists:join(", ", Steps) ++ "]}}]",
                                 "duration_s => 1, rate => 20, max_users => 1")),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(1, maps:get(sessions_done, T)),
    ?assertMatch(#{<<"error_no_online">> := 2, <<"error_no_offline">> := 0,
                   <<"xmpp_chat_sent">> := 3}, maps:get(counts, T)).

no_free_userid() ->
    [{doc, "Users arriving while userid_max users are online: Tsung's error_no_free_userid "
           "counted once each, and each connected all the same."}].
no_free_userid(Config) ->
    %% userid_max 2 (flags of their own): five users 0.5 s apart (not Poisson arrivals), each
    %% online 3 s, so from the third on each arrives with both ids in use.
    Connect = "{xmpp, #{type => connect, domain => <<\"bs.test\">>, userid_max => 2}}",
    Steps = [Connect, "{xmpp, #{type => auth_sasl}}", "{think, 3000}",
             "{xmpp, #{type => close}}"],
    At = lists:join(", ", [io_lib:format("{~.1f, s}", [I / 2]) || I <- lists:seq(0, 4)]),
    #{total := T} = run(scenario(Config, "[{s, #{steps => [" ++ lists:join(", ", Steps) ++ "]}}]",
                                 "duration_s => 2.5, users_at => [" ++ At ++ "]")),
    ct:pal("~p", [maps:with([requests, errors, reasons, counts, sessions_done], T)]),
    ?assertEqual(#{}, maps:get(reasons, T)),
    #{sessions_started := N, sessions_done := Done, counts := Counts} = T,
    ?assertEqual(5, N),
    ?assertEqual(N, Done),
    ?assertEqual(N - 2, maps:get(<<"error_no_free_userid">>, Counts)).
