%% Tsung XML of the ts_mqtt session type (mqtt.xml's requests) to mqtt steps, and what is
%% refused with its line.
-module(beamscale_load_tsung_mqtt_tests).

-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

xml(Body) ->
    lists:flatten(["<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">\n",
                   "<servers><server host=\"127.0.0.1\" port=\"1883\" type=\"tcp\"/></servers>\n",
                   "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
                   "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n",
                   "<sessions><session name=\"s\" probability=\"100\" type=\"ts_mqtt\">\n",
                   Body, "</session></sessions>\n</tsung>\n"]).

load(Text) ->
    case beamscale_load_tsung:from_text("t.xml", Text) of
        {ok, #{sessions := [#{steps := Steps}]}, _} -> Steps;
        {error, {Mod, _} = E} -> {error, lists:flatten(Mod:format_error(E))}
    end.

requests_test() ->
    Steps = load(xml("<request><mqtt type=\"connect\" clean_start=\"true\" keepalive=\"10\" "
                     "will_topic=\"w\" will_qos=\"0\" will_msg=\"bye\" will_retain=\"false\">"
                     "</mqtt></request>\n"
                     "<request subst=\"true\"><mqtt type=\"publish\" topic=\"t\" qos=\"1\" "
                     "retained=\"true\">test_message</mqtt></request>\n"
                     "<request><mqtt type=\"subscribe\" topic=\"t\" qos=\"1\"/></request>\n"
                     "<request><mqtt type=\"unsubscribe\" topic=\"t\"/></request>\n"
                     "<request><mqtt type=\"disconnect\"/></request>")),
    M = beamscale_load_mqtt,
    ?assertMatch([{request, M, server, #{type := connect, keepalive_s := 10, clean := true,
                                         will := #{topic := <<"w">>, message := <<"bye">>}}, _},
                  {request, M, server, #{type := publish, topic := <<"t">>, qos := 1,
                                         retain := true, payload := <<"test_message">>}, _},
                  {request, M, server, #{type := subscribe, topic := <<"t">>, qos := 1}, _},
                  {request, M, server, #{type := unsubscribe, topic := <<"t">>}, _},
                  {request, M, server, #{type := disconnect, ack := no_ack}, _}], Steps),
    %% As Tsung: a publish at QoS 0 waits for no reply, one at QoS 1 does.
    ?assertNot(is_map_key(ack, element(4, lists:nth(2, Steps)))),
    ?assertMatch([{request, M, server, #{type := publish, qos := 0, ack := no_ack}, _}],
                 load(xml("<request><mqtt type=\"publish\" topic=\"t\">x</mqtt></request>"))).

wait_test() ->
    ?assertMatch([{wait, beamscale_load_mqtt, server, 60000}],
                 load(xml("<request><mqtt type=\"waitForMessages\" timeout=\"60\"/></request>"))),
    ?assertEqual({error, "t.xml:6: timeout: expected seconds from 1 to 4294967"},
                 load(xml("<request><mqtt type=\"waitForMessages\" timeout=\"0\"/></request>"))).

refused_test() ->
    ?assertEqual({error, "t.xml:6: qos=\"3\" (expected 0, 1 or 2)"},
                 load(xml("<request><mqtt type=\"publish\" topic=\"t\" qos=\"3\">x</mqtt>"
                          "</request>"))),
    ?assertEqual({error, "t.xml:6: topic: expected a non-empty topic"},
                 load(xml("<request><mqtt type=\"subscribe\" topic=\"\"/></request>"))).

%% MQTT 5.0, which Tsung has not: `version="5"' on connect.
version_test() ->
    ?assertMatch([{request, beamscale_load_mqtt, server, #{type := connect, version := 5}, _}],
                 load(xml("<request><mqtt type=\"connect\" version=\"5\"/></request>"))),
    ?assertEqual({error, "t.xml:6: version: expected 4 (MQTT 3.1.1) or 5 (MQTT 5.0)"},
                 load(xml("<request><mqtt type=\"connect\" version=\"3\"/></request>"))).
