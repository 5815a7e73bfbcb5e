%% The http2 kind's checks (pure): the header block built once, bad keys named, forbidden
%% headers dropped; a Tsung <http beamscale_version="2"> read as an http2 step.
-module(beamscale_load_h2_tests).

-include_lib("eunit/include/eunit.hrl").

-define(T, #{host => "127.0.0.1", port => 8080}).

block_test() ->
    {ok, #{block := B, body := <<"ab">>, streams := 4, status := [200, 204]}}
        = beamscale_load_h2:check(#{method => post, path => "/x", body => <<"ab">>,
                                    streams => 4, status => [200, 204],
                                    headers => [{"X-A", "1"}, {"Host", "h"},
                                                {"Connection", "close"}]}, ?T),
    {ok, Hs, _} = beamscale_load_h2_hpack:decode(B, beamscale_load_h2_hpack:new({4096, 65536})),
    ?assertEqual([{<<":method">>, <<"POST">>}, {<<":scheme">>, <<"http">>},
                  {<<":authority">>, <<"127.0.0.1:8080">>}, {<<":path">>, <<"/x">>},
                  {<<"user-agent">>, <<"beamscale/0.1.0">>}, {<<"x-a">>, <<"1">>},
                  {<<"content-length">>, <<"2">>}], Hs),
    {ok, #{block := B2}} = beamscale_load_h2:check(#{}, ?T#{tls => []}),
    {ok, [_, {<<":scheme">>, <<"https">>} | _], _}
        = beamscale_load_h2_hpack:decode(B2, beamscale_load_h2_hpack:new({4096, 65536})).

bad_test() ->
    Err = fun(S) -> {error, K, _} = beamscale_load_h2:check(S, ?T), K end,
    ?assertEqual(version, Err(#{version => "2"})),
    ?assertEqual(streams, Err(#{streams => 0})),
    ?assertEqual(streams, Err(#{streams => 1001})),
    ?assertEqual(headers, Err(#{headers => [{"X", "a\r\nb"}]})),
    ?assertEqual(path, Err(#{path => "/a\nb"})),
    ?assertEqual(method, Err(#{method => "GE T"})),
    ?assertEqual(respond, Err(#{respond => maybe})),
    ?assertMatch({error, target, _}, beamscale_load_h2:check(#{}, #{node => n})).

tsung_test() ->
    Xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE tsung SYSTEM \"tsung-1.0.dtd\">\n"
          "<tsung loglevel=\"notice\"><servers>"
          "<server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/></servers>"
          "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
          "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>"
          "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\">"
          "<request><http url=\"/a\" method=\"GET\" beamscale_version=\"2\""
          " beamscale_streams=\"10\"/></request>\n"
          "<request><http url=\"/b\" beamscale_version=\"3\"/></request>"
          "</session></sessions></tsung>\n",
    {error, E} = beamscale_load_tsung:from_text("t.xml", Xml),
    ?assertMatch("t.xml:4: beamscale_version \"3\" is not supported (2)" ++ _,
                 lists:flatten(beamscale_load_tsung:format_error(E))),
    [Ok, _] = string:split(Xml, "\n<request><http url=\"/b\" beamscale_version=\"3\"/></request>"),
    {ok, S, _} = beamscale_load_tsung:from_text("t.xml", Ok ++ "</session></sessions></tsung>\n"),
    #{sessions := [#{steps := [{dyn, _, {request, beamscale_load_h2, server,
                                         #{streams := 10, block := _}, _}}]}]} = S.

%% A terms `http' step of `version => 2' is an http2 step (its keys that kind's); "1.1" stays
%% HTTP/1.1; a bad version is named at the http step's key.
version_test() ->
    Read = fun(Step) ->
                   Text = io_lib:format("{targets, [{web, #{address => \"127.0.0.1:8080\"}}]}.~n"
                                        "{phases, [{p, #{duration_s => 1,"
                                        " users_at => [{0.0, s}]}}]}.~n"
                                        "{sessions, [{s, #{steps => [~0tp]}}]}.~n", [Step]),
                   {ok, Es} = beamscale_format_terms:parse(lists:flatten(Text)),
                   beamscale_load_scenario:check("v.scenario", Es)
           end,
    {ok, #{sessions := [#{steps := [{request, beamscale_load_h2, web, #{streams := 3}, _}]}]}}
        = Read({http, #{version => 2, path => "/a", streams => 3}}),
    {ok, #{sessions := [#{steps := [{request, beamscale_load_h2, web, #{streams := 1}, _}]}]}}
        = Read({http, #{version => "2"}}),
    {ok, #{sessions := [#{steps := [{request, beamscale_load_http, web, _, _}]}]}}
        = Read({http, #{version => "1.1"}}),
    {error, E1} = Read({http, #{version => 3}}),
    ?assertMatch("v.scenario:3: key sessions.s.steps.http.version: expected \"1.1\", \"1.0\""
                 " or 2" ++ _,
                 lists:flatten(beamscale_load_scenario:format_error(E1))),
    {error, E2} = Read({http, #{streams => 2}}),
    ?assertMatch("v.scenario:3: key sessions.s.steps.http.streams: unknown key" ++ _,
                 lists:flatten(beamscale_load_scenario:format_error(E2))).

%% The example scenario reads, as an http2 step of 10 streams.
example_test() ->
    File = filename:join(code:lib_dir(beamscale_load), "../../../../examples/h2_nginx.scenario"),
    {ok, Text} = file:read_file(File),
    {ok, Entries} = beamscale_format_terms:parse(binary_to_list(Text)),
    {ok, #{sessions := [#{steps := [{loop, 1000, [{request, beamscale_load_h2, web,
                                                   #{streams := 10}, _}]}]}]}}
        = beamscale_load_scenario:check(File, Entries).

grpc_check_test() ->
    T = #{host => "127.0.0.1", port => 50051},
    Err = fun(S) -> {error, K, _} = beamscale_load_grpc:check(S, T), K end,
    ?assertEqual(service, Err(#{method => "M"})),
    ?assertEqual(method, Err(#{service => "a.B", method => "x/y"})),
    ?assertEqual(messages, Err(#{service => "a.B", method => "M", messages => [<<>>, <<>>]})),
    ?assertEqual(call, Err(#{service => "a.B", method => "M", call => stream})),
    ?assertEqual(metadata, Err(#{service => "a.B", method => "M",
                                 metadata => [{"x", "a\nb"}]})),
    {ok, #{body := Body, count := 2}}
        = beamscale_load_grpc:check(#{service => "a.B", method => "M", call => bidi,
                                      messages => [<<"ab">>, <<>>]}, T),
    ?assertEqual(<<0, 2:32, "ab", 0, 0:32>>, Body),
    ?assertEqual(<<"gRPC UNAVAILABLE: x y">>,
                 iolist_to_binary(beamscale_load_grpc:format_error({status, <<"14">>,
                                                                   <<"x y">>}))).
