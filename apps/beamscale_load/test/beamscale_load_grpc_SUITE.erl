%% The grpc kind against a Python gRPC server (python3-grpcio, generic handlers) started on
%% 127.0.0.1 in this suite's setup and stopped by its OS pid: the four call types with exact
%% message counts, and UNAVAILABLE and DEADLINE_EXCEEDED named.
-module(beamscale_load_grpc_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([fragmented/0, fragmented/1]).
-export([calls/1, statuses/1, text_messages/1]).
-export([calls/0, statuses/0, text_messages/0]).

-import(beamscale_load_servers, [scenario/1, run/1, free_port/0]).

-define(PYTHON, "/usr/bin/python3").
-define(START_MS, 15000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [calls, statuses, text_messages, fragmented].

init_per_suite(Config) ->
    Port = free_port(),
    Dir = ?config(priv_dir, Config),
    Stop = beamscale_load_servers:start_server(
             ?PYTHON, [filename:join(?config(data_dir, Config), "server.py"),
                       integer_to_list(Port)], Port, Dir, [], ?START_MS),
    [{port, Port}, {stop, Stop} | Config].

end_per_suite(Config) -> (?config(stop, Config))().

calls() -> [{doc, "Unary, server, client and bidi streaming: 0 errors, counts exact."}].
calls(Config) ->
    T = load(Config, 3,
          "[{loop, 5, [\n"
          "  {grpc, #{service => \"test.Echo\", method => \"Unary\", messages => [<<\"hi\">>],"
          " expect_messages => 1, metadata => [{\"x-user\", \"u1\"}], deadline_ms => 5000}},\n"
          "  {grpc, #{service => \"test.Echo\", method => \"ServerStream\", call => server_stream,"
          " messages => [<<7, \"abc\">>], expect_messages => 7}},\n"
          "  {grpc, #{service => \"test.Echo\", method => \"ClientStream\", call => client_stream,"
          " messages => [<<\"a\">>, <<\"b\">>, <<\"c\">>, <<\"d\">>], expect_messages => 1}},\n"
          "  {grpc, #{service => \"test.Echo\", method => \"Bidi\", call => bidi,"
          " messages => [<<\"x\">>, <<\"y\">>, <<\"z\">>], expect_messages => 3}}]}]"),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(3 * 5 * 4, maps:get(requests, T)),
    %% Per session: 1 + 1 + 4 + 3 sent; 1 + 7 + 1 + 3 received; one connection per user.
    Counts = maps:get(counts, T),
    ?assertEqual(3 * 5 * 9, maps:get(<<"grpc_messages_sent">>, Counts)),
    ?assertEqual(3 * 5 * 12, maps:get(<<"grpc_messages_received">>, Counts)),
    ?assertEqual(3 * 5 * 12, beamscale_stats_hist:count(maps:get({tx, grpc_message}, T))),
    ?assertEqual(3, beamscale_stats_hist:count(maps:get(connect, T))).

fragmented() ->
    [{doc, "The gRPC server's bytes one per TCP segment: calls' four kinds, counts exact."}].
fragmented(Config) ->
    beamscale_load_trickle:with(?config(port, Config), fun(Relay) ->
        calls([{port, Relay} | Config])
    end).

statuses() -> [{doc, "UNAVAILABLE and DEADLINE_EXCEEDED from the server, named as such."}].
statuses(Config) ->
    T = load(Config, 2,
          "[{grpc, #{service => \"test.Echo\", method => \"Unavailable\"}},\n"
          "  {grpc, #{service => \"test.Echo\", method => \"Slow\", deadline_ms => 300}},\n"
          "  {grpc, #{service => \"test.Echo\", method => \"Unary\",\n"
          "           expect_messages => 2}}]"),
    ?assertEqual(#{<<"gRPC UNAVAILABLE: down for maintenance">> => 2,
                   <<"gRPC DEADLINE_EXCEEDED: too slow">> => 2,
                   <<"gRPC: 1 messages received, 2 expected">> => 2}, maps:get(reasons, T)).

text_messages() ->
    [{doc, "Messages in protobuf text format, encoded by protoc as the scenario file is read."}].
text_messages(Config) ->
    %% Read as `load' reads it (beamscale_scenario_file, in the beamscale app: protoc is an OS
    %% command), beside the example's .proto.
    Dir = ?config(priv_dir, Config),
    Proto = filename:join(code:lib_dir(beamscale_load), "../../../../examples/grpc_echo.proto"),
    {ok, _} = file:copy(Proto, filename:join(Dir, "echo.proto")),
    File = filename:join(Dir, "text.scenario"),
    ok = file:write_file(File, scenario_text(Config, 2,
          "[{loop, 3, [\n"
          "  {grpc, #{service => \"test.Echo\", method => \"ServerStream\", call => server_stream,"
          " proto => \"echo.proto\", message_type => \"test.Req\","
          " messages => [{text, \"name: \\\"hi\\\" n: 3\"}], expect_messages => 10}},\n"
          "  {grpc, #{service => \"test.Echo\", method => \"ClientStream\", call => client_stream,"
          " proto => \"echo.proto\", message_type => \"test.Req\","
          " messages => [{text, \"n: 1\"}, {text, \"n: 2\"}], expect_messages => 1}}]}]")),
    {ok, S} = beamscale_scenario_file:read(File),
    T = totals(S),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(2 * 3 * 2, maps:get(requests, T)),
    %% The server sends a ServerStream request back as many times as its first byte: 10 is the
    %% tag of Req's field 1 (a string), so protoc's bytes, not the text, went. Per session: 3 x
    %% (1 + 2) sent, 3 x (10 + 1) received.
    Counts = maps:get(counts, T),
    ?assertEqual(2 * 3 * 3, maps:get(<<"grpc_messages_sent">>, Counts)),
    ?assertEqual(2 * 3 * 11, maps:get(<<"grpc_messages_received">>, Counts)).

%% The totals of a one-second run of `Users' users (one each 0.1 s) of the session `Steps' (a
%% terms list, as text) against the suite's server.
load(Config, Users, Steps) -> totals(scenario(scenario_text(Config, Users, Steps))).

scenario_text(Config, Users, Steps) ->
    io_lib:format("{targets, [{g, #{address => \"127.0.0.1:~b\"}}]}.\n"
                  "{phases, [{p, #{duration_s => 1, users_at => [~ts]}}]}.\n"
                  "{sessions, [{s, #{steps => ~ts}}]}.\n",
                  [?config(port, Config),
                   lists:join(", ", [io_lib:format("{0.~b, s}", [I])
                                     || I <- lists:seq(0, Users - 1)]), Steps]).

totals(S) ->
    #{total := T} = run(S),
    ct:pal("totals ~p", [maps:with([requests, errors, reasons, counts], T)]),
    T.
