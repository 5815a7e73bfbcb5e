%% The mqtt kind against a real mosquitto on 127.0.0.1 (its own throwaway configuration, no
%% persistence, stopped by its OS pid), and against a hostile broker in this node that answers
%% CONNECT with a packet announcing 256 MiB.
-module(beamscale_load_mqtt_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([publish_qos/1, bidi_receives/1, hostile_length/1, tsung_example/1]).
-export([publish_qos/0, bidi_receives/0, hostile_length/0, tsung_example/0]).

-import(beamscale_load_servers, [scenario/1, run/1]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [publish_qos, bidi_receives, hostile_length, tsung_example].

%% Fails, not skips, when mosquitto cannot start (start_server/4).
init_per_suite(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_mqtt_SUITE"),
    Port = beamscale_load_servers:free_port(),
    File = filename:join(Dir, "mosquitto.conf"),
    ok = file:write_file(File, io_lib:format("listener ~b 127.0.0.1\nallow_anonymous true\n"
                                             "persistence false\nlog_dest stderr\n", [Port])),
    Exe = case os:find_executable("mosquitto") of
              false -> os:find_executable("mosquitto", "/usr/sbin");
              E -> E
          end,
    Stop = beamscale_load_servers:start_server(Exe, ["-c", File], Port, Dir),
    [{port, Port}, {stop, Stop} | Config].

end_per_suite(Config) ->
    (proplists:get_value(stop, Config))(),
    Config.

scenario(Port, Sessions) ->
    scenario(io_lib:format(
               "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
               "{phases, [{p, #{duration_s => 1, rate => 20}}]}.\n"
               "{sessions, ~ts}.\n", [Port, Sessions])).

publish_qos() -> [{doc, "connect, publish at QoS 0 and 1, disconnect: all counted, no errors."}].
publish_qos(Config) ->
    Steps = "[{mqtt, #{type => connect, keepalive_s => 30}},"
            " {mqtt, #{type => publish, topic => <<\"bs/a\">>, payload => <<\"hi\">>}},"
            " {mqtt, #{type => publish, topic => <<\"bs/a\">>, size => 100, qos => 1,"
            "          retain => true}},"
            " {mqtt, #{type => disconnect}}]",
    Port = proplists:get_value(port, Config),
    #{total := T} = run(scenario(Port, "[{s, #{steps => " ++ Steps ++ "}}]")),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 10),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(4 * Done, maps:get(requests, T)),
    %% CONNACK (4 bytes) and PUBACK (4 bytes) per session: nothing else comes back.
    ?assertEqual(8 * Done, maps:get(bytes_received, T)).

bidi_receives() ->
    [{doc, "A bidi user subscribes and its wait gets another user's publish."}].
bidi_receives(Config) ->
    Sub = "{sub, #{bidi => true, steps => [{mqtt, #{type => connect}},"
          " {mqtt, #{type => subscribe, topic => <<\"bs/room\">>, qos => 1}},"
          " {wait, #{kind => mqtt, timeout_ms => 5000}},"
          " {mqtt, #{type => unsubscribe, topic => <<\"bs/room\">>}},"
          " {mqtt, #{type => disconnect}}]}}",
    %% Publishing for 1.2 s after it starts: every subscriber (arriving within the phase's
    %% second) sees a publisher's message after it subscribed.
    Pub = "{pub, #{steps => [{mqtt, #{type => connect}}"
          ++ lists:append(lists:duplicate(
                            5, ", {mqtt, #{type => publish, topic => <<\"bs/room\">>,"
                               " payload => <<\"m\">>, qos => 1}}, {think, 300}"))
          ++ ", {mqtt, #{type => disconnect}}]}}",
    Port = proplists:get_value(port, Config),
    #{total := T} = run(scenario(Port, "[" ++ Sub ++ ", " ++ Pub ++ "]")),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    Pushed = maps:get(<<"pushed">>, maps:get(counts, T), 0),
    ?assert(Pushed >= 1),
    ?assert(maps:get(sessions_done, T) >= 10).

hostile_length() ->
    [{doc, "A broker announcing a 256 MiB packet: a named reason, nothing of it held."}].
hostile_length(_Config) ->
    {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false},
                                 {reuseaddr, true}]),
    {ok, Port} = inet:port(L),
    Acceptor = spawn(fun() -> hostile(L) end),
    ok = gen_tcp:controlling_process(L, Acceptor),
    try
        Steps = "[{mqtt, #{type => connect}}]",
        #{total := T} = run(scenario(Port, "[{s, #{steps => " ++ Steps ++ "}}]")),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 10),
        Reason = <<"MQTT packet's remaining length 268435455 above the bound:"
                   " connection closed">>,
        ?assertEqual(#{Reason => Done}, maps:get(reasons, T)),
        %% The CONNACK's head and a few bytes of its body at most per user, not 256 MiB.
        ?assert(maps:get(bytes_received, T) =< Done * 64 * 1024)
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

%% Reads the CONNECT, then sends a PUBLISH head announcing 268435455 bytes and streams junk.
hostile(L) ->
    case gen_tcp:accept(L) of
        {ok, S} -> spawn(fun() -> flood(S) end), hostile(L);
        _ -> ok
    end.

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
