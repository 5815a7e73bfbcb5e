%% Tsung XML of the ts_amqp session type (amqp.xml's requests and options) to amqp steps, and
%% what is refused with its line.
-module(beamscale_load_tsung_amqp_tests).

-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

xml(Options, Body) ->
    lists:flatten(["<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">\n",
                   "<servers><server host=\"127.0.0.1\" port=\"5672\" type=\"tcp\"/></servers>\n",
                   "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
                   "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n",
                   "<options>", Options, "</options>\n",
                   "<sessions><session name=\"s\" probability=\"100\" type=\"ts_amqp\">\n",
                   Body, "</session></sessions>\n</tsung>\n"]).

load(Text) ->
    case beamscale_load_tsung:from_text("t.xml", Text) of
        {ok, #{sessions := [#{steps := Steps}]}, Ignored} -> {Steps, Ignored};
        {error, {Mod, _} = E} -> {error, lists:flatten(Mod:format_error(E))}
    end.

requests_test() ->
    {Steps, Ignored} =
        load(xml("<option type=\"ts_amqp\" name=\"username\" value=\"u\"/>"
                 "<option type=\"ts_amqp\" name=\"heartbeat\" value=\"30\"/>",
                 "<request><amqp type=\"connection.open\" vhost=\"/v\"/></request>\n"
                 "<request><amqp type=\"channel.open\"/></request>\n"
                 "<request><amqp type=\"basic.publish\" channel=\"2\" exchange=\"x\" "
                 "routing_key=\"q\" persistent=\"true\" payload_size=\"100\"/></request>\n"
                 "<request><amqp type=\"basic.consume\" queue=\"q\" ack=\"true\"/></request>\n"
                 "<request><amqp type=\"waitForConfirms\" timeout=\"1\"/></request>\n"
                 "<request><amqp type=\"waitForMessages\" timeout=\"2\"/></request>")),
    %% The ts_amqp options are read, not listed as ignored.
    ?assertEqual([], [I || "<option" ++ _ = I <- Ignored]),
    %% Tsung's waitForConfirms only thinks; beamscale awaits the confirms, and says so.
    ?assertMatch([_], [I || "not applied: <amqp type=\"waitForConfirms\" timeout>" ++ _ = I
                                <- Ignored]),
    M = beamscale_load_amqp,
    ?assertMatch([{request, M, server, #{type := 'connection.open', vhost := <<"/v">>,
                                         user := <<"u">>, password := <<"guest">>,
                                         heartbeat_s := 30}, _},
                  {request, M, server, #{type := 'channel.open', channel := 0}, _},
                  {request, M, server, #{type := 'basic.publish', channel := 2,
                                         exchange := <<"x">>, routing_key := <<"q">>,
                                         persistent := true, size := 100,
                                         ack := no_ack}, _},
                  {request, M, server, #{type := 'basic.consume', queue := <<"q">>,
                                         ack := true, channel := 1}, _},
                  {request, M, server, #{type := 'waitForConfirms'}, _},
                  {wait, M, server, 2000}], Steps).

refused_test() ->
    ?assertMatch({error, "t.xml:7: type=\"basic.get\" (expected one of " ++ _},
                 load(xml("", "<request><amqp type=\"basic.get\"/></request>"))),
    ?assertEqual({error, "t.xml:7: persistent: expected true or false"},
                 load(xml("", "<request><amqp type=\"basic.publish\" persistent=\"yes\"/>"
                              "</request>"))),
    ?assertEqual({error, "t.xml:7: channel: expected a channel from 1 to 65535"},
                 load(xml("", "<request><amqp type=\"channel.close\" channel=\"70000\"/>"
                              "</request>"))).
