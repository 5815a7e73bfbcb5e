%% gRPC messages in protobuf text format, encoded by the real protoc when a terms scenario is
%% read: the bytes against those worked out by hand, the errors at the file's line and key.
-module(beamscale_proto_text_tests).
-include_lib("eunit/include/eunit.hrl").

examples() -> filename:join(code:lib_dir(beamscale), "../../../../examples").

proto() -> filename:join(examples(), "grpc_echo.proto").

%% `name: "hi" n: 3': field 1 (tag 1<<3 | 2 = 10), length 2, "hi"; field 2 (2<<3 | 0 = 16),
%% varint 3.
encode_test() ->
    ?assertEqual({ok, <<10, 2, "hi", 16, 3>>},
                 beamscale_proto_text:encode(proto(), "test.Req", "name: \"hi\" n: 3", 20000)),
    {error, E} = beamscale_proto_text:encode(proto(), "test.Req", "nme: 1", 20000),
    ?assertMatch("protoc: input:1:" ++ _,
                 unicode:characters_to_list(beamscale_proto_text:format_error(E))).

%% A scenario file beside a copy of the .proto: read by the one reader, its text messages
%% (and only those) replaced by bytes, `proto' and `message_type' gone.
scenario(Step) ->
    Dir = filename:join(string:trim(os:cmd("mktemp -d")), "proto_text"),
    ok = filelib:ensure_path(Dir),
    {ok, _} = file:copy(proto(), filename:join(Dir, "echo.proto")),
    File = filename:join(Dir, "g.scenario"),
    ok = file:write_file(File, io_lib:format(
                                 "{targets, [{g, #{address => \"127.0.0.1:50051\"}}]}.\n"
                                 "{phases, [{p, #{duration_s => 1, users_at => [{0, s}]}}]}.\n"
                                 "{sessions, [{s, #{steps => [\n~ts]}}]}.\n", [Step])),
    {File, beamscale_scenario_file:read(File)}.

read_test() ->
    {_, {ok, #{sessions := [#{steps := [{request, beamscale_load_grpc, g, Checked, _}]}]}}}
        = scenario("{grpc, #{service => \"test.Echo\", method => \"ClientStream\",\n"
                   "  call => client_stream, proto => \"echo.proto\","
                   " message_type => \"test.Req\",\n"
                   "  messages => [{text, \"name: \\\"hi\\\" n: 3\"}, <<1, 2>>]}}"),
    %% Both framed with gRPC's prefix (uncompressed, the length): the text's bytes by hand.
    ?assertEqual(<<0, 6:32, 10, 2, "hi", 16, 3, 0, 2:32, 1, 2>>,
                 iolist_to_binary(maps:get(body, Checked))).

errors_test() ->
    Text = fun(Step) ->
                   {File, {error, E}} = scenario(Step),
                   string:prefix(unicode:characters_to_list(beamscale_error:format(E)), File)
           end,
    ?assertEqual(":7: key messages: protoc: input:1:4: Message type \"test.Req\" has no field "
                 "named \"nme\".",
                 Text("{grpc, #{service => \"test.Echo\", method => \"Unary\",\n"
                      "  proto => \"echo.proto\", message_type => \"test.Req\",\n"
                      "  messages =>\n  [{text, \"nme: 1\"}]}}")),
    ?assertMatch(":6: key messages: protoc: " ++ _,
                 Text("{grpc, #{service => \"test.Echo\", method => \"Unary\",\n"
                      "  proto => \"echo.proto\",\n  message_type => \"test.Nope\","
                      " messages => [{text, \"\"}]}}")),
    ?assertEqual(":5: key message_type: missing (with proto)",
                 Text("{grpc, #{service => \"test.Echo\", method => \"Unary\",\n"
                      "  proto => \"echo.proto\", messages => [{text, \"\"}]}}")),
    ?assertEqual(":5: key proto: expected a file name not starting with -",
                 Text("{grpc, #{service => \"test.Echo\", method => \"Unary\",\n"
                      "  proto => \"-echo.proto\", message_type => \"test.Req\","
                      " messages => [{text, \"\"}]}}")),
    ?assertEqual(":5: key message_type: expected a full name (pkg.Type)",
                 Text("{grpc, #{service => \"test.Echo\", method => \"Unary\",\n"
                      "  proto => \"echo.proto\", message_type => \"-x\","
                      " messages => [{text, \"\"}]}}")).

%% The example reads, its unary call's text message encoded: <<10, 5, "hello", 16, 1>> framed.
example_test() ->
    {ok, #{sessions := [#{steps := [{loop, 10, [{request, beamscale_load_grpc, svc, Unary, _},
                                                {request, beamscale_load_grpc, svc,
                                                 #{count := 1, expect := 5}, _} | _]}]}]}}
        = beamscale_scenario_file:read(filename:join(examples(), "grpc_echo.scenario")),
    ?assertEqual(<<0, 9:32, 10, 5, "hello", 16, 1>>, iolist_to_binary(maps:get(body, Unary))).
