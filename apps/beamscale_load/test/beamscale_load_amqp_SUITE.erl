%% The amqp kind against a real RabbitMQ on 127.0.0.1 (a node of its own, `beamscale_load_rabbit',
%% stopped by its OS pid; the last case stops it mid-load), and against hostile brokers in this
%% node (a frame announcing 1 GiB, bytes that are not AMQP).
-module(beamscale_load_amqp_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([publish_consume/1, tsung_example/1, errors_by_reason/1, hostile_frame/1, garbage/1,
         mqtt_plugin/1, heartbeats/1, broker_stopped/1]).
-export([publish_consume/0, tsung_example/0, errors_by_reason/0, hostile_frame/0, garbage/0,
         mqtt_plugin/0, heartbeats/0, broker_stopped/0]).

-export([fragmented/0, fragmented/1, tsung_counters/0, tsung_counters/1]).

-import(beamscale_load_servers, [scenario/1, run/1]).

suite() -> [{timetrap, {minutes, 3}}].

%% broker_stopped stops the suite's broker: it comes last.
all() -> [publish_consume, tsung_example, errors_by_reason, hostile_frame, garbage,
          mqtt_plugin, heartbeats, fragmented, tsung_counters, broker_stopped].

%% Fails, not skips, when RabbitMQ cannot start. Its MQTT plugin is on for the mqtt kind.
init_per_suite(Config) ->
    #{amqp := Port, rabbitmq_mqtt := Mqtt, stop := Stop} =
        beamscale_load_rabbit:start(Config, "bs_amqp_suite", [rabbitmq_mqtt]),
    [{port, Port}, {mqtt_port, Mqtt}, {stop, Stop} | Config].

end_per_suite(Config) ->
    (proplists:get_value(stop, Config))(),
    Config.

scenario(Port, Sessions) ->
    scenario(io_lib:format(
               "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
               "{phases, [{p, #{duration_s => 1, rate => 20}}]}.\n"
               "{sessions, ~ts}.\n", [Port, Sessions])).

%% The queue `bs_q' bound to the exchange `bs_x' (declaring them again changes nothing).
-define(DECLARE, "{amqp, #{type => 'connection.open', heartbeat_s => 5}},"
                 " {amqp, #{type => 'channel.open'}},"
                 " {amqp, #{type => 'exchange.declare', exchange => <<\"bs_x\">>}},"
                 " {amqp, #{type => 'queue.declare', queue => <<\"bs_q\">>}},"
                 " {amqp, #{type => 'queue.bind', queue => <<\"bs_q\">>,"
                 "          exchange => <<\"bs_x\">>, routing_key => <<\"k\">>}}").

publish_consume() ->
    [{doc, "Publishers with confirms, consumers with acks: confirms counted, delivery times."}].
publish_consume(Config) ->
    %% Each consumer's own queue on a fanout exchange gets every message published after it
    %% came; the publishers publish again after the last consumer came.
    Fanout = "{amqp, #{type => 'connection.open', heartbeat_s => 5}},"
             " {amqp, #{type => 'channel.open'}},"
             " {amqp, #{type => 'exchange.declare', exchange => <<\"bs_fan\">>,"
             "          exchange_type => <<\"fanout\">>}}",
    Publish = lists:append(lists:duplicate(
                             5, ", {amqp, #{type => 'basic.publish', exchange => <<\"bs_fan\">>,"
                                " size => 100, persistent => true}}"))
        ++ ", {amqp, #{type => 'waitForConfirms'}}",
    Pub = "{pub, #{steps => [" ++ Fanout ++ ", {amqp, #{type => 'confirm.select'}}"
          ++ Publish ++ ", {think, 1500}" ++ Publish
          ++ ", {amqp, #{type => 'channel.close'}}, {amqp, #{type => 'connection.close'}}]}}",
    Sub = "{sub, #{bidi => true, steps => [" ++ Fanout ++ ","
          " {amqp, #{type => 'queue.declare', exclusive => true, auto_delete => true}},"
          " {amqp, #{type => 'queue.bind', queue => <<>>, exchange => <<\"bs_fan\">>}},"
          " {amqp, #{type => 'basic.qos', prefetch_count => 10}},"
          " {amqp, #{type => 'basic.consume', queue => <<>>, ack => true}},"
          " {wait, #{kind => amqp, timeout_ms => 5000}}, {think, 500},"
          " {amqp, #{type => 'connection.close'}}]}}",
    Port = proplists:get_value(port, Config),
    #{total := T} = run(scenario(Port, "[" ++ Pub ++ ", " ++ Sub ++ "]")),
    ct:pal("~p", [maps:with([sessions_done, requests, errors, reasons, counts], T)]),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    Publishes = beamscale_stats_hist:count(maps:get({tx, confirm_time}, T)),
    %% 10 publishes a publisher session, each confirmed, its time from the publish recorded.
    ?assert(Publishes >= 10),
    ?assertEqual(0, Publishes rem 10),
    %% A publish waits for nothing (its confirm is waitForConfirms'): Tsung's request_noack.
    ?assertEqual(Publishes, maps:get(<<"request_noack">>, maps:get(counts, T))),
    Delivered = beamscale_stats_hist:count(maps:get({tx, delivery_time}, T)),
    ?assert(Delivered >= 1),
    ?assert(beamscale_stats_hist:percentile(maps:get({tx, delivery_time}, T), 99.0) > 0),
    ?assert(maps:get(<<"pushed">>, maps:get(counts, T)) >= 1).

%% A session that is not bidi consumes its own queue: the deliveries come while it waits for
%% its confirms and its channel.close; Tsung's ts_amqp counters, exact per session but for
%% deliveries (one still on its way at the channel.close is requeued, not delivered), in the
%% run's counts and, through the command, in summary.json, counters.csv and the page.
tsung_counters() ->
    [{doc, "Tsung's amqp_* counters per session, non-bidi deliveries counted, in the files."}].
tsung_counters(Config) ->
    Q = "<<\"bs_c_%%_n%%\">>",
    Steps = "[{setvars, [n], user_number}, {amqp, #{type => 'connection.open'}},"
            " {amqp, #{type => 'channel.open'}}, {amqp, #{type => 'confirm.select'}},"
            " {amqp, #{type => 'queue.declare', queue => " ++ Q ++ ", auto_delete => true}},"
            " {amqp, #{type => 'basic.consume', queue => " ++ Q ++ ", ack => true}}"
            ++ lists:append(lists:duplicate(3, ", {amqp, #{type => 'basic.publish',"
                                               " routing_key => " ++ Q ++ ", size => 20}}"))
            ++ ", {amqp, #{type => 'waitForConfirms'}}, {think, 200},"
               " {amqp, #{type => 'channel.close'}}, {amqp, #{type => 'connection.close'}}]",
    Text = ["{sessions, [{s, #{steps => ", Steps, "}}]}.\n"],
    {Text1, T, Done} = beamscale_load_servers:counted(proplists:get_value(port, Config), Text),
    Counts = maps:get(counts, T),
    Want = #{<<"amqp_connected">> => Done, <<"amqp_channel_opened">> => Done,
             <<"amqp_consumer">> => Done, <<"amqp_published">> => 3 * Done,
             <<"amqp_confirmed">> => 3 * Done, <<"amqp_unconfirmed">> => 0,
             <<"amqp_channel_closed">> => Done, <<"amqp_closed">> => Done,
             <<"amqp_error">> => 0, <<"amqp_unexpected">> => 0},
    ?assertEqual(Want, maps:with(maps:keys(Want), Counts)),
    Delivered = maps:get(<<"amqp_delivered">>, Counts),
    ?assert(Delivered >= 1 andalso Delivered =< 3 * Done, Delivered),
    beamscale_load_servers:counters_in_files(
      Config, Text1, [K || {K, N} <- maps:to_list(Want), N > 0] ++ [<<"amqp_delivered">>]).

fragmented() ->
    [{doc, "RabbitMQ's bytes one per TCP segment: publish_consume's figures all the same."}].
fragmented(Config) ->
    beamscale_load_trickle:with(proplists:get_value(port, Config), fun(Relay) ->
        publish_consume([{port, Relay} | Config])
    end).

tsung_example() ->
    [{doc, "Tsung's amqp.xml (gzipped), both sessions, against RabbitMQ: answers, no errors."}].
tsung_example(Config) ->
    Port = proplists:get_value(port, Config),
    %% Tsung's example expects test_exchange bound to test_queue.
    Declare = "[{amqp, #{type => 'connection.open'}}, {amqp, #{type => 'channel.open'}},"
              " {amqp, #{type => 'exchange.declare', exchange => <<\"test_exchange\">>}},"
              " {amqp, #{type => 'queue.declare', queue => <<\"test_queue\">>}},"
              " {amqp, #{type => 'queue.bind', queue => <<\"test_queue\">>,"
              "          exchange => <<\"test_exchange\">>, routing_key => <<\"test_queue\">>}},"
              " {amqp, #{type => 'connection.close'}}]",
    Once = "{phases, [{p, #{duration_s => 1, rate => 2, max_users => 1}}]}.\n",
    #{total := D} = run(scenario(io_lib:format(
                                   "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n~ts"
                                   "{sessions, [{s, #{steps => ~ts}}]}.\n",
                                   [Port, Once, Declare]))),
    ?assertEqual(0, maps:get(errors, D)),
    S = tsung_amqp(Port),
    #{total := T} = run(S),
    ct:pal("~p", [maps:with([sessions_done, requests, errors, reasons, counts], T)]),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assert(maps:get(sessions_done, T) >= 2),
    ?assert(beamscale_stats_hist:count(maps:get({tx, confirm_time}, T)) >= 2000).

%% amqp.xml with its host, port, durations and the static user (refused: static arrivals)
%% rewritten; the consumer session gets arrivals of its own.
tsung_amqp(Port) ->
    beamscale_load_servers:tsung_example(
      "amqp.xml",
      [{"port=\"5672\"", "port=\"" ++ integer_to_list(Port) ++ "\""},
       {"host=\"ubuntu\"", "host=\"localhost\""},
       {"<user session=\"amqp_consumer\" start_time=\"1\" unit=\"second\"></user>", ""},
       {"probability=\"100\"", "probability=\"50\""},
       {"probability=\"0\"", "probability=\"50\""},
       {"maxnumber=\"1\" arrivalrate=\"1\"", "maxnumber=\"4\" arrivalrate=\"4\""},
       {"duration=\"3\"", "duration=\"1\""},
       {"timeout=\"180\"", "timeout=\"5\""}]).

errors_by_reason() ->
    [{doc, "A publish to an exchange that does not exist: the channel's close in words."}].
errors_by_reason(Config) ->
    Steps = "[{amqp, #{type => 'connection.open'}}, {amqp, #{type => 'channel.open'}},"
            " {amqp, #{type => 'basic.publish', exchange => <<\"bs_none\">>,"
            "          payload => <<\"x\">>}},"
            " {amqp, #{type => 'queue.declare', queue => <<\"bs_q\">>}},"
            " {amqp, #{type => 'connection.close'}}]",
    Port = proplists:get_value(port, Config),
    #{total := T} = run(scenario(Port, "[{s, #{steps => " ++ Steps ++ "}}]")),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 10),
    ?assertEqual(#{<<"channel closed by the broker: 404 not-found">> => Done},
                 maps:get(reasons, T)).

hostile_frame() ->
    [{doc, "A broker announcing a 1 GiB frame: a named reason, nothing of it held."}].
hostile_frame(_Config) ->
    hostile(fun huge/1, <<"AMQP frame of 1073741832 bytes above frame-max 4096:"
                          " connection closed">>).

garbage() -> [{doc, "A server answering HTTP: refused from its first bytes, bounded."}].
garbage(_Config) ->
    %% "HTTP/1." read as a frame header: type 'H', channel "TT", size "P/1.".
    hostile(fun http/1, <<"AMQP frame of 1345270070 bytes above frame-max 4096:"
                          " connection closed">>).

hostile(Serve, Reason) ->
    {L, Port, Acceptor} = beamscale_load_servers:broker(Serve),
    try
        #{total := T} = run(scenario(Port, "[{s, #{steps => [{amqp, #{type => "
                                           "'connection.open'}}]}}]")),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 10),
        ?assertEqual(#{Reason => Done}, maps:get(reasons, T)),
        ?assert(maps:get(bytes_received, T) =< Done * 64 * 1024)
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

%% After the protocol header: a method frame's header announcing 1 GiB, then junk.
huge(S) ->
    _ = gen_tcp:recv(S, 8, 5000),
    _ = gen_tcp:send(S, <<1, 0:16, (1 bsl 30):32>>),
    Junk = binary:copy(<<"x">>, 4096),
    lists:foreach(fun(_) -> gen_tcp:send(S, Junk) end, lists:seq(1, 16)),
    gen_tcp:close(S).

%% An HTTP server's answer.
http(S) ->
    _ = gen_tcp:recv(S, 8, 5000),
    _ = gen_tcp:send(S, <<"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n">>),
    _ = gen_tcp:recv(S, 0, 5000),
    gen_tcp:close(S).

mqtt_plugin() ->
    [{doc, "The mqtt kind against RabbitMQ's MQTT plugin (QoS 1): pushes and delivery times."}].
mqtt_plugin(Config) ->
    beamscale_load_mqtt_SUITE:pub_sub(proplists:get_value(mqtt_port, Config), 1).

heartbeats() ->
    [{doc, "A 1 s heartbeat and a 3.5 s think: the user's heartbeats keep the connection "
           "(RabbitMQ closes one silent for two intervals)."}].
heartbeats(Config) ->
    Steps = "[{amqp, #{type => 'connection.open', heartbeat_s => 1}},"
            " {amqp, #{type => 'channel.open'}}, {think, 3500},"
            " {amqp, #{type => 'queue.declare', queue => <<\"bs_q\">>}},"
            " {amqp, #{type => 'connection.close'}}]",
    Port = proplists:get_value(port, Config),
    #{total := T} = run(scenario(Port, "[{s, #{bidi => true, steps => " ++ Steps ++ "}}]")),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assert(maps:get(sessions_done, T) >= 10).

broker_stopped() ->
    [{doc, "The broker stopped mid-load: errors by reason, and the run ends on time."}].
broker_stopped(Config) ->
    Steps = "[{amqp, #{type => 'connection.open'}}, {amqp, #{type => 'channel.open'}},"
            " {amqp, #{type => 'confirm.select'}}, {think, 200},"
            " {amqp, #{type => 'basic.publish', routing_key => <<\"bs_q\">>, size => 10}},"
            " {amqp, #{type => 'waitForConfirms'}}, {amqp, #{type => 'connection.close'}}]",
    _ = beamscale_load_servers:stopped_mid_load(
          proplists:get_value(port, Config), Steps, proplists:get_value(stop, Config),
          #{duration_s => 3, stop_ms => 1000, min_done => 10, within_ms => 20000}).
