%% The mqtt kind against a real mosquitto on 127.0.0.1 (its own throwaway configuration, no
%% persistence, an ACL denying bs/denied/#, stopped by its OS pid), in MQTT 3.1.1 and 5.0, and
%% against hostile brokers in this node: one answering CONNECT with a packet announcing 256 MiB,
%% one that ends an MQTT 5.0 session with a DISCONNECT and its reason code.
-module(beamscale_load_mqtt_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([publish_qos/1, bidi_receives/1, hostile_length/1, tsung_example/1,
         retained_wait/1, suback_and_publish/1, broker_stopped/1, keepalive_pings/1,
         v5_pub_sub/1, v5_refused/1, v5_disconnect/1, v5_hostile_props/1]).
-export([publish_qos/0, bidi_receives/0, hostile_length/0, tsung_example/0,
         retained_wait/0, suback_and_publish/0, broker_stopped/0, keepalive_pings/0,
         v5_pub_sub/0, v5_refused/0, v5_disconnect/0, v5_hostile_props/0]).
-export([pub_sub/2]).
-export([fragmented/0, fragmented/1, tsung_counters/0, tsung_counters/1]).

-import(beamscale_load_servers, [scenario/1, run/1, broker/1]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [publish_qos, bidi_receives, retained_wait, suback_and_publish,
         hostile_length, tsung_example, broker_stopped, keepalive_pings,
         v5_pub_sub, v5_refused, v5_disconnect, v5_hostile_props, fragmented, tsung_counters].

%% Fails, not skips, when mosquitto cannot start (start_server/4).
init_per_suite(Config) ->
    {Port, Stop} = mosquitto(Config, "beamscale_load_mqtt_SUITE"),
    [{port, Port}, {stop, Stop} | Config].

%% A mosquitto of its own in priv_dir/`Name': its port and the fun that stops it by OS pid.
mosquitto(Config, Name) ->
    Dir = beamscale_load_servers:tmp_dir(Config, Name),
    Port = beamscale_load_servers:free_port(),
    File = filename:join(Dir, "mosquitto.conf"),
    Acl = filename:join(Dir, "acl"),
    %% Anonymous users (the file's lines before any `user'): everything but bs/denied/#.
    ok = file:write_file(Acl, "topic readwrite #\ntopic deny bs/denied/#\n"),
    %% `user root': started as root, mosquitto opens the ACL after becoming user mosquitto,
    %% which cannot enter a CI clone under `mktemp -d' (0700); as another user it has no effect.
    ok = file:write_file(File, io_lib:format("listener ~b 127.0.0.1\nallow_anonymous true\n"
                                             "persistence false\nlog_dest stderr\nuser root\n"
                                             "acl_file ~ts\n", [Port, Acl])),
    Exe = case os:find_executable("mosquitto") of
              false -> os:find_executable("mosquitto", "/usr/sbin");
              E -> E
          end,
    {Port, beamscale_load_servers:start_server(Exe, ["-c", File], Port, Dir)}.

end_per_suite(Config) ->
    (proplists:get_value(stop, Config))(),
    Config.

scenario(Port, Sessions) ->
    scenario(io_lib:format(
               "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
               "{phases, [{p, #{duration_s => 1, rate => 20}}]}.\n"
               "{sessions, ~ts}.\n", [Port, Sessions])).

publish_qos() -> [{doc, "connect, publish at QoS 0, 1, 2, disconnect: counted, no errors."}].
publish_qos(Config) ->
    Steps = "[{mqtt, #{type => connect, keepalive_s => 30}},"
            " {mqtt, #{type => publish, topic => <<\"bs/a\">>, payload => <<\"hi\">>}},"
            " {mqtt, #{type => publish, topic => <<\"bs/a\">>, size => 100, qos => 1,"
            "          retain => true}},"
            " {mqtt, #{type => publish, topic => <<\"bs/a\">>, payload => <<\"2\">>, qos => 2}},"
            " {mqtt, #{type => disconnect}}]",
    Port = proplists:get_value(port, Config),
    {Done, T} = sessions(Port, Steps, false),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(5 * Done, maps:get(requests, T)),
    %% The QoS 0 publish and the disconnect wait for no reply (Tsung's request_noack).
    ?assertEqual(2 * Done, maps:get(<<"request_noack">>, maps:get(counts, T))),
    %% CONNACK, PUBACK, PUBREC and PUBCOMP (4 bytes each) per session: nothing else comes back.
    ?assertEqual(16 * Done, maps:get(bytes_received, T)).

fragmented() ->
    [{doc, "mosquitto's bytes one per TCP segment: acks and pushed publishes all read."}].
fragmented(Config) ->
    beamscale_load_trickle:with(proplists:get_value(port, Config), fun(Relay) ->
        publish_qos([{port, Relay} | Config]),
        pub_sub(Relay, 1)
    end).

bidi_receives() ->
    [{doc, "A bidi user subscribes and its wait gets another user's publish, timed."}].
bidi_receives(Config) ->
    pub_sub(proplists:get_value(port, Config), 2).

%% Subscribers and publishers at QoS `Q' on `Port' (also RabbitMQ's MQTT plugin): no errors,
%% pushes counted, publish-to-delivery times recorded (the payloads' stamps).
pub_sub(Port, Q) -> pub_sub(Port, Q, "", "").

%% The same with `Connect' and `Publish' (terms text, ", key => value...") added to those steps.
pub_sub(Port, Q, Connect, Publish) ->
    Sub = session(sub, true, "[{mqtt, #{type => connect" ++ Connect ++ "}},"
                  " {mqtt, #{type => subscribe, topic => <<\"bs/room\">>, qos => " ++ qos(Q)
                  ++ "}}, {wait, #{kind => mqtt, timeout_ms => 5000}},"
                  " {mqtt, #{type => unsubscribe, topic => <<\"bs/room\">>}},"
                  " {mqtt, #{type => disconnect}}]"),
    %% Publishing for 1.2 s after it starts: every subscriber (arriving within the phase's
    %% second) sees a publisher's message after it subscribed.
    Pub = session(pub, false, "[{mqtt, #{type => connect" ++ Connect ++ "}}"
                  ++ lists:append(lists:duplicate(
                                    5, ", {mqtt, #{type => publish, topic => <<\"bs/room\">>,"
                                       " size => 50, qos => " ++ qos(Q) ++ Publish ++ "}},"
                                       " {think, 300}"))
                  ++ ", {mqtt, #{type => disconnect}}]"),
    #{total := T} = run(scenario(Port, ["[", Sub, ", ", Pub, "]"])),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    Pushed = maps:get(<<"pushed">>, maps:get(counts, T), 0),
    ?assert(Pushed >= 1),
    ?assert(beamscale_stats_hist:count(maps:get({tx, delivery_time}, T)) >= 1),
    ?assert(maps:get(sessions_done, T) >= 10).

qos(Q) -> integer_to_list(Q).

%% A session that is not bidi gets its own publishes back from its subscription while it waits
%% for the next answer: Tsung's ts_mqtt counters, each exact per session, in the run's counts
%% and, through the command, in summary.json, counters.csv and the page.
tsung_counters() ->
    [{doc, "Tsung's mqtt_* counters, exact per session, non-bidi deliveries counted, in files."}].
tsung_counters(Config) ->
    Steps = "[{mqtt, #{type => connect}},"
            " {mqtt, #{type => subscribe, topic => <<\"bs/c/%%_n%%\">>, qos => 1}}"
            ++ lists:append(lists:duplicate(
                              3, ", {mqtt, #{type => publish, topic => <<\"bs/c/%%_n%%\">>,"
                                 " size => 20, qos => 1}}, {think, 50}"))
            ++ ", {mqtt, #{type => unsubscribe, topic => <<\"bs/c/%%_n%%\">>}},"
               " {mqtt, #{type => disconnect}}]",
    Text = ["{sessions, [{s, #{steps => [{setvars, [n], user_number} | ", Steps, "]}}]}.\n"],
    {Text1, T, Done} = beamscale_load_servers:counted(proplists:get_value(port, Config), Text),
    Want = #{<<"mqtt_connected">> => Done, <<"mqtt_disconnected">> => Done,
             <<"mqtt_published">> => 3 * Done, <<"mqtt_server_pubacked">> => 3 * Done,
             <<"mqtt_server_published">> => 3 * Done, <<"mqtt_pubacked">> => 3 * Done},
    ?assertEqual(Want, maps:with(maps:keys(Want), maps:get(counts, T))),
    beamscale_load_servers:counters_in_files(Config, Text1, maps:keys(Want)).

%% One session of `Steps' (terms text) 20 times a second for a second against `Port': the
%% sessions done (10 at least, beside a CPU hog) and the run's totals.
sessions(Port, Steps, Bidi) ->
    #{total := T} = run(scenario(Port, ["[", session(s, Bidi, Steps), "]"])),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 10),
    {Done, T}.

%% The session `Name' of `Steps' (terms text), `Bidi' or not, as terms text.
session(Name, Bidi, Steps) ->
    io_lib:format("{~p, #{bidi => ~p, steps => ~ts}}", [Name, Bidi, Steps]).

v5_pub_sub() ->
    [{doc, "MQTT 5.0 subscribers and publishers (QoS 1, user properties): deliveries timed."}].
v5_pub_sub(Config) ->
    pub_sub(proplists:get_value(port, Config), 1, ", version => 5, session_expiry_s => 0",
            ", user_properties => [{<<\"run\">>, <<\"bs\">>}]").

v5_refused() ->
    [{doc, "mosquitto's ACL refuses MQTT 5.0 publishes at QoS 1 and 2: errors named by their "
           "reason code; the session goes on over the same connection."}].
v5_refused(Config) ->
    Steps = "[{mqtt, #{type => connect, version => 5}},"
            " {mqtt, #{type => publish, topic => <<\"bs/denied/a\">>, payload => <<\"x\">>,"
            "          qos => 1}},"
            " {mqtt, #{type => publish, topic => <<\"bs/denied/a\">>, payload => <<\"x\">>,"
            "          qos => 2}},"
            %% mosquitto grants any subscription (its ACL filters deliveries).
            " {mqtt, #{type => subscribe, topic => <<\"bs/denied/a\">>, qos => 1}},"
            " {mqtt, #{type => publish, topic => <<\"bs/open\">>, payload => <<\"x\">>,"
            "          qos => 2}},"
            " {mqtt, #{type => disconnect}}]",
    Port = proplists:get_value(port, Config),
    {Done, T} = sessions(Port, Steps, false),
    ?assertEqual(#{<<"PUBACK: not authorized (0x87)">> => Done,
                   <<"PUBREC: not authorized (0x87)">> => Done}, maps:get(reasons, T)),
    ?assertEqual(6 * Done, maps:get(requests, T)).

v5_disconnect() ->
    [{doc, "A broker ending an MQTT 5.0 session with DISCONNECT 0x8E: that reason, named."}].
v5_disconnect(_Config) ->
    {L, Port, Acceptor} = broker(fun taken_over/1),
    try
        Steps = "[{mqtt, #{type => connect, version => 5}},"
                " {mqtt, #{type => publish, topic => <<\"t\">>, payload => <<\"x\">>,"
                "          qos => 1}}]",
        {Done, T} = sessions(Port, Steps, false),
        ?assertEqual(#{<<"server DISCONNECT: session taken over (0x8E)">> => Done},
                     maps:get(reasons, T))
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

v5_hostile_props() ->
    [{doc, "An MQTT 5.0 CONNACK whose properties announce 256 MiB: refused by name."}].
v5_hostile_props(_Config) ->
    %% Remaining length 7: flags, reason code, a property length of 268435455, one byte.
    {L, Port, Acceptor} = broker(fun(S) -> answer(S, <<16#20, 7, 0, 0, 255, 255, 255, 127, 0>>)
                                 end),
    try
        {Done, T} = sessions(Port, "[{mqtt, #{type => connect, version => 5}}]", false),
        ?assertEqual(#{<<"MQTT 5 connack properties' length 268435455 past the packet (bytes"
                         " left: 1): connection closed">> => Done}, maps:get(reasons, T))
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

%% Reads the CONNECT, sends `Bytes', reads until the client goes.
answer(S, Bytes) ->
    _ = gen_tcp:recv(S, 0, 5000),
    _ = gen_tcp:send(S, Bytes),
    _ = gen_tcp:recv(S, 0, 10000),
    gen_tcp:close(S).

%% An MQTT 5.0 CONNACK (with a property), then a DISCONNECT "session taken over" for the
%% PUBLISH; then reads until the client goes.
taken_over(S) ->
    C = beamscale_load_mqtt_codec,
    {ok, Connect} = gen_tcp:recv(S, 0, 5000),
    {ok, #{type := connect, version := 5}, _} = C:decode(Connect, 1 bsl 20),
    ok = gen_tcp:send(S, C:encode(#{type => connack, return_code => 0,
                                    properties => #{maximum_qos => 1}})),
    {ok, _Publish} = gen_tcp:recv(S, 0, 5000),
    ok = gen_tcp:send(S, C:encode(#{type => disconnect, reason_code => 16#8E})),
    _ = gen_tcp:recv(S, 0, 10000),
    gen_tcp:close(S).

keepalive_pings() ->
    [{doc, "A 1 s keepalive and a 2.5 s think: pings keep the connection (mosquitto closes a "
           "connection silent for 1.5 keepalives)."}].
keepalive_pings(Config) ->
    Steps = "[{mqtt, #{type => connect, keepalive_s => 1}}, {think, 2500},"
            " {mqtt, #{type => publish, topic => <<\"bs/k\">>, payload => <<\"x\">>, qos => 1}},"
            " {mqtt, #{type => disconnect}}]",
    {Done, T} = sessions(proplists:get_value(port, Config), Steps, true),
    ?assertEqual(#{}, maps:get(reasons, T)),
    %% PINGRESPs came back (2 bytes each), besides the CONNACK and PUBACK.
    ?assert(maps:get(bytes_received, T) > 8 * Done).

retained_wait() ->
    [{doc, "The retained message that follows a SUBACK (often in its segment) ends the wait."}].
retained_wait(Config) ->
    Steps = "[{mqtt, #{type => connect}},"
            " {mqtt, #{type => publish, topic => <<\"bs/kept\">>, payload => <<\"r\">>,"
            "          qos => 1, retain => true}},"
            " {mqtt, #{type => subscribe, topic => <<\"bs/kept\">>, qos => 1}},"
            " {wait, #{kind => mqtt, timeout_ms => 3000}},"
            " {mqtt, #{type => disconnect}}]",
    Port = proplists:get_value(port, Config),
    {Done, T} = sessions(Port, Steps, true),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assert(maps:get(<<"pushed">>, maps:get(counts, T)) >= Done).

suback_and_publish() ->
    [{doc, "A PUBLISH sent with the SUBACK, in one segment, ends the next wait."}].
suback_and_publish(_Config) ->
    {L, Port, Acceptor} = broker(fun joined/1),
    try
        Steps = "[{mqtt, #{type => connect}}, {mqtt, #{type => subscribe, topic => <<\"t\">>}},"
                " {wait, #{kind => mqtt, timeout_ms => 3000}}]",
        {Done, T} = sessions(Port, Steps, true),
        ?assertEqual(#{}, maps:get(reasons, T)),
        ?assertEqual(Done, maps:get(<<"pushed">>, maps:get(counts, T)))
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

%% CONNACK, then SUBACK and a QoS 0 PUBLISH in one send; then reads until the client goes.
joined(S) ->
    C = beamscale_load_mqtt_codec,
    {ok, _} = gen_tcp:recv(S, 0, 5000),
    ok = gen_tcp:send(S, C:encode(#{type => connack, return_code => 0})),
    {ok, Sub} = gen_tcp:recv(S, 0, 5000),
    {ok, #{type := subscribe, id := Id}, _} = C:decode(Sub, 1 bsl 20),
    ok = gen_tcp:send(S, [C:encode(#{type => suback, id => Id, codes => <<0>>}),
                          C:encode(#{type => publish, topic => <<"t">>, payload => <<"m">>,
                                     qos => 0})]),
    _ = gen_tcp:recv(S, 0, 10000),
    gen_tcp:close(S).

broker_stopped() ->
    [{doc, "A broker stopped mid-load: errors by reason, and the run ends on time."}].
broker_stopped(Config) ->
    {Port, Stop} = mosquitto(Config, "beamscale_load_mqtt_SUITE_stopped"),
    Steps = "[{mqtt, #{type => connect}}, {think, 100},"
            " {mqtt, #{type => publish, topic => <<\"bs/s\">>, payload => <<\"x\">>, qos => 1}},"
            " {mqtt, #{type => disconnect}}]",
    %% 2 s of arrivals, a 5 s request timeout at most after them, generous beside a CPU hog.
    _ = beamscale_load_servers:stopped_mid_load(
          Port, Steps, Stop, #{duration_s => 2, stop_ms => 800, min_done => 5,
                               within_ms => 15000}).

hostile_length() ->
    [{doc, "A broker announcing a 256 MiB packet: a named reason, nothing of it held."}].
hostile_length(_Config) ->
    {L, Port, Acceptor} = broker(fun flood/1),
    try
        Steps = "[{mqtt, #{type => connect}}]",
        {Done, T} = sessions(Port, Steps, false),
        Reason = <<"MQTT packet's remaining length 268435455 above the bound:"
                   " connection closed">>,
        ?assertEqual(#{Reason => Done}, maps:get(reasons, T)),
        %% The CONNACK's head and a few bytes of its body at most per user, not 256 MiB.
        ?assert(maps:get(bytes_received, T) =< Done * 64 * 1024)
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

%% Reads the CONNECT, then sends a PUBLISH head announcing 268435455 bytes and streams junk.
flood(S) ->
    _ = gen_tcp:recv(S, 0, 5000),
    _ = gen_tcp:send(S, <<16#30, 16#FF, 16#FF, 16#FF, 16#7F>>),
    Junk = binary:copy(<<"x">>, 4096),
    lists:foreach(fun(_) -> gen_tcp:send(S, Junk) end, lists:seq(1, 16)),
    gen_tcp:close(S).

tsung_example() ->
    [{doc, "Tsung's mqtt.xml, both sessions, against mosquitto: answers and no errors."}].
tsung_example(Config) ->
    Port = integer_to_list(proplists:get_value(port, Config)),
    %% Besides the port and the arrivals: the static <user> (refused: static arrivals) goes,
    %% and the subscriber session gets arrivals of its own. The publisher's retained message
    %% reaches every subscriber that comes after the first publisher.
    S = beamscale_load_servers:tsung_example(
          "mqtt.xml",
          [{"port=\"5672\"", "port=\"" ++ Port ++ "\""},
           {"<user session=\"mqtt_subscriber\" start_time=\"10\" unit=\"second\"></user>", ""},
           {"probability=\"100\"", "probability=\"50\""},
           {"probability=\"0\"", "probability=\"50\""},
           {"maxnumber=\"1\" arrivalrate=\"1\"", "maxnumber=\"20\" arrivalrate=\"10\""},
           {"duration=\"3\"", "duration=\"1\""}]),
    #{total := T} = run(S),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assert(maps:get(sessions_done, T) >= 5).
