%% The MySQL protocol, pure: the scramble against known vectors, a greeting, a query's response
%% read packet by packet, the mysql kind's checks and Tsung's ts_mysql; PropEr: length-encoded
%% integers and strings round-trip, packets cut anywhere reassemble.
-module(beamscale_load_mysql_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

-define(P, beamscale_load_mysql_proto).
-define(MAX, 1 bsl 20).

%% MySQL's reference manual: PASSWORD('mypass') is '*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4',
%% the SHA1 of SHA1 the server stores. A server checks a scramble by undoing the XOR with that.
scramble_server_check_test() ->
    Stored = binary:decode_hex(<<"6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4">>),
    Salt = <<"abcdefghij0123456789">>,
    Scramble = ?P:scramble("mypass", Salt),
    H1 = crypto:exor(Scramble, crypto:hash(sha, [Salt, Stored])),
    ?assertEqual(Stored, crypto:hash(sha, H1)),
    ?assertNotEqual(Stored, crypto:hash(sha, crypto:exor(?P:scramble("mypasS", Salt),
                                                          crypto:hash(sha, [Salt, Stored])))).

%% The same computation in Python's hashlib, salt bytes 1..20, password "secret".
scramble_vector_test() ->
    ?assertEqual(binary:decode_hex(<<"b32bb3a583e1340c0a1108d58b1be49781ad8c2f">>),
                 ?P:scramble(<<"secret">>, list_to_binary(lists:seq(1, 20)))),
    ?assertEqual(<<>>, ?P:scramble("", <<"any salt">>)).

%% A handshake v10 as MariaDB sends it: 8 + 12 salt bytes, the plugin name after.
greeting(Plugin) ->
    <<10, "5.5.5-10.11.6-MariaDB", 0, 42:32/little, "ABCDEFGH", 0, 16#F7FE:16/little, 45,
      2:16/little, 16#81BF:16/little, 21, 0:6/unit:8, 0:32, "IJKLMNOPQRST", 0,
      Plugin/binary, 0>>.

greeting_test() ->
    {ok, G} = ?P:greeting(greeting(<<"mysql_native_password">>)),
    ?assertMatch(#{version := <<"5.5.5-10.11.6-MariaDB">>, plugin := <<"mysql_native_password">>,
                   salt := <<"ABCDEFGHIJKLMNOPQRST">>}, G),
    {ok, R} = ?P:auth_response(G, "u", "pw", "db"),
    Bin = iolist_to_binary(R),
    %% Capabilities, max packet, charset, 23 zeros, then user, the 20-byte scramble, db, plugin.
    <<Caps:32/little, _:32, 45, 0:23/unit:8, "u", 0, 20, Auth:20/binary, "db", 0,
      "mysql_native_password", 0>> = Bin,
    ?assertEqual(?P:scramble("pw", <<"ABCDEFGHIJKLMNOPQRST">>), Auth),
    ?assertNotEqual(0, Caps band 16#200),
    {ok, G2} = ?P:greeting(greeting(<<"client_ed25519">>)),
    ?assertEqual({error, {auth_plugin, <<"client_ed25519">>}}, ?P:auth_response(G2, "u", "", "")),
    ?assertEqual({error, {protocol_version, 9}}, ?P:greeting(<<9, "x">>)),
    ?assertEqual({error, {server, 1040, <<"08004">>, <<"Too many connections">>}},
                 ?P:greeting(<<16#FF, 1040:16/little, "#08004Too many connections">>)).

auth_reply_test() ->
    ?assertEqual(ok, ?P:auth_reply(<<0, 0, 0, 2, 0, 0, 0>>)),
    ?assertEqual({switch, <<"01234567890123456789">>},
                 ?P:auth_reply(<<16#FE, "mysql_native_password", 0, "01234567890123456789", 0>>)),
    ?assertEqual({error, {auth_plugin, <<"caching_sha2_password">>}},
                 ?P:auth_reply(<<16#FE, "caching_sha2_password", 0, "salt", 0>>)),
    ?assertMatch({error, {server, 1045, <<"28000">>, <<"Access denied", _/binary>>}},
                 ?P:auth_reply(<<16#FF, 1045:16/little, "#28000Access denied for user">>)).

%% A result set of 2 columns and 3 rows (one a row of 0xFE-led bytes, longer than an EOF), then
%% an OK, an ERR, and a multi-result whose first EOF says more follow.
response_test() ->
    Eof = fun(Status) -> <<16#FE, 0:16, Status:16/little>> end,
    Row = <<1, "a", 1, "b">>,
    Long = <<16#FE, 0:64/little, 16#FB>>,
    Set = fun(Status) -> [<<2>>, <<"col1">>, <<"col2">>, Eof(0), Row, Long, Row, Eof(Status)] end,
    ?assertEqual({done, 3}, feed(Set(2))),
    ?assertEqual({done, 0}, feed([<<0, 0, 0, 2:16/little, 0:16>>])),
    ?assertEqual({done, 6}, feed(Set(16#0A) ++ Set(2))),
    ?assertEqual({done, 3}, feed(Set(16#0A) ++ [<<0, 0, 0, 2:16/little, 0:16>>])),
    ?assertEqual({error, {server, 1064, <<"42000">>, <<"syntax">>}},
                 feed([<<16#FF, 1064:16/little, "#42000syntax">>])),
    ?assertEqual({error, {server, 1317, <<"70100">>, <<"interrupted">>}},
                 feed([<<1>>, <<"c">>, Eof(0), Row,
                       <<16#FF, 1317:16/little, "#70100interrupted">>])),
    ?assertEqual({error, local_infile}, feed([<<16#FB, "/etc/passwd">>])),
    ?assertEqual({error, bad_response}, feed([<<1>>, <<"c">>, Row])).

feed(Packets) -> feed(Packets, ?P:response_start()).

feed([P | Ps], St) ->
    case ?P:response(P, St) of
        {more, St1} when Ps =/= [] -> feed(Ps, St1);
        {more, _} -> unfinished;
        Done -> [] = Ps, Done
    end.

decode_test() ->
    ?assertEqual(more, ?P:decode(<<5, 0>>, ?MAX)),
    ?assertEqual(more, ?P:decode(<<5, 0, 0, 1, "abc">>, ?MAX)),
    ?assertEqual({ok, 1, <<"abcde">>, <<"x">>}, ?P:decode(<<5, 0, 0, 1, "abcdex">>, ?MAX)),
    %% The size is refused from the header, before the payload comes.
    ?assertEqual({error, {packet_too_big, 101}}, ?P:decode(<<101, 0, 0, 0>>, 100)),
    ?assertEqual(<<5, 0, 0, 0, 3, "SQL1">>, iolist_to_binary(?P:packet(0, ?P:query("SQL1")))).

%% A payload of 16 MiB - 1 bytes or more goes in parts; exactly that size ends with an empty part.
long_packet_test() ->
    Full = binary:copy(<<"x">>, 16#FFFFFF),
    B = iolist_to_binary(?P:packet(0, Full)),
    ?assertEqual(<<0, 0, 0, 1>>, binary:part(B, byte_size(B) - 4, 4)),
    ?assertEqual({ok, 1, Full, <<>>}, ?P:decode(B, 1 bsl 25)),
    B2 = iolist_to_binary(?P:packet(7, [Full, "yz"])),
    ?assertEqual({ok, 8, <<Full/binary, "yz">>, <<>>}, ?P:decode(B2, 1 bsl 25)),
    ?assertMatch({error, {packet_too_big, _}}, ?P:decode(B2, 16#FFFFFF)).

check_test_() ->
    T = #{host => "127.0.0.1", port => 3306},
    C = fun(S) -> beamscale_load_mysql:check(S, T) end,
    [?_assertMatch({ok, #{type := connect, login := none}}, C(#{type => connect})),
     ?_assertMatch({ok, #{login := #{user := <<"u">>, password := <<>>, database := <<"d">>}}},
                   C(#{type => connect, user => "u", database => <<"d">>})),
     ?_assertEqual({error, user, "missing (a user name)"},
                   C(#{type => authenticate, password => "p"})),
     ?_assertMatch({error, password, _}, C(#{type => connect, user => "u", password => 7})),
     ?_assertMatch({error, 'query', _}, C(#{type => sql, 'query' => ""})),
     ?_assertMatch({error, 'query', _}, C(#{type => sql})),
     ?_assertMatch({error, sql, "unknown key" ++ _}, C(#{type => close, sql => "x"})),
     ?_assertMatch({error, type, _}, C(#{type => ping})),
     ?_assertMatch({error, target, _},
                   beamscale_load_mysql:check(#{type => close}, T#{tls => []})),
     ?_assertMatch({error, target, _}, beamscale_load_mysql:check(#{type => close},
                                                                  #{node => a@b}))].

format_error_test() ->
    ?assertEqual(<<"mysql error 1045 (28000): Access denied">>,
                 beamscale_load_reasons:text({mysql_error, 1045, <<"28000">>,
                                              <<"Access denied">>})),
    ?assertMatch("the server asks for the auth plugin client_ed25519" ++ _,
                 lists:flatten(beamscale_load_mysql:format_error(
                                 {beamscale_load_mysql, {auth_plugin, <<"client_ed25519">>}}))).

%% ---- Tsung's ts_mysql ----

tsung(Server, Body) ->
    Text = lists:flatten(
             ["<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">\n<servers>", Server,
              "</servers>\n<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
              "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n"
              "<sessions><session name=\"s\" probability=\"100\" type=\"ts_mysql\">\n", Body,
              "</session></sessions>\n</tsung>\n"]),
    case beamscale_load_tsung:from_text("t.xml", Text) of
        {ok, #{sessions := [#{steps := Steps}], targets := Ts}, _} -> {Steps, Ts};
        {error, {Mod, _} = E} -> lists:flatten(Mod:format_error(E))
    end.

tsung_test() ->
    Tcp = "<server host=\"127.0.0.1\" port=\"3306\" type=\"tcp\"/>",
    {Steps, Targets} = tsung(Tcp, "<request><mysql type=\"connect\"/></request>\n"
                             "<request><mysql type=\"authenticate\" database=\"d\" username=\"u\" "
                             "password=\"p\"/></request>\n"
                             "<request><mysql type=\"sql\">SELECT 1</mysql></request>\n"
                             "<request><mysql type=\"close\"></mysql></request>"),
    ?assertMatch([{request, beamscale_load_mysql, server, #{type := connect, login := none}, _},
                  {request, beamscale_load_mysql, server,
                   #{type := authenticate, login := #{user := <<"u">>, password := <<"p">>,
                                                      database := <<"d">>}}, _},
                  {request, beamscale_load_mysql, server, #{type := sql}, _},
                  {request, beamscale_load_mysql, server, #{type := close}, _}], Steps),
    %% Tsung's connect_timeout default (30 s) travels with a Tsung file's server.
    ?assertEqual(#{server => #{host => "127.0.0.1", port => 3306, max_retries => 3,
                               connect_timeout_ms => 30000}}, Targets),
    ?assertEqual("t.xml:6: type=\"ping\" (expected connect, authenticate, sql or close)",
                 tsung(Tcp, "<request><mysql type=\"ping\"/></request>")),
    ?assertEqual("t.xml:6: query: expected a non-empty SQL text",
                 tsung(Tcp, "<request><mysql type=\"sql\"></mysql></request>")),
    ?assertMatch("t.xml:3: server type \"ssl\" is not supported for <mysql>" ++ _,
                 tsung("<server host=\"h\" port=\"1\" type=\"ssl\"/>",
                       "<request><mysql type=\"close\"/></request>")).

%% ---- properties ----

properties_test_() ->
    {timeout, 120, fun properties/0}.

properties() ->
    Opts = [{numtests, 500}, {to_file, user}],
    ?assert(proper:quickcheck(prop_int_round_trip(), Opts)),
    ?assert(proper:quickcheck(prop_str_round_trip(), Opts)),
    ?assert(proper:quickcheck(prop_packets_cut_anywhere(), [{numtests, 300}, {to_file, user}])).

%% Across each boundary of the four forms (1, 3, 4 and 9 bytes).
lenenc() ->
    oneof([integer(0, 300), integer(16#FFF0, 16#1000F), integer(16#FFFFF0, 16#100000F),
           integer(0, 16#FFFFFFFFFFFFFFFF)]).

prop_int_round_trip() ->
    ?FORALL({N, Tail}, {lenenc(), binary()},
            begin
                B = ?P:enc_int(N),
                Size = if N < 251 -> 1; N < 16#10000 -> 3; N < 16#1000000 -> 4; true -> 9 end,
                byte_size(B) =:= Size andalso ?P:dec_int(<<B/binary, Tail/binary>>) =:= {N, Tail}
                    andalso ?P:dec_int(binary:part(B, 0, byte_size(B) - 1)) =:= error
            end).

prop_str_round_trip() ->
    ?FORALL({S, Tail}, {frequency([{5, binary()}, {1, ?LET({N, C}, {integer(240, 70000), byte()},
                                                            binary:copy(<<C>>, N))}]), binary()},
            ?P:dec_str(iolist_to_binary([?P:enc_str(S), Tail])) =:= {S, Tail}).

%% Payloads framed with rising sequence numbers, the bytes cut at arbitrary points and fed piece
%% by piece, decode to the same payloads and numbers.
prop_packets_cut_anywhere() ->
    ?FORALL({Payloads, Cuts}, {list(binary()), list(integer(0, 2000))},
            begin
                Numbered = lists:zip(lists:seq(0, length(Payloads) - 1), Payloads),
                Bytes = iolist_to_binary([?P:packet(Seq band 255, P) || {Seq, P} <- Numbered]),
                Pieces = cut(Bytes, lists:usort([C || C <- Cuts, C < byte_size(Bytes)])),
                stream(Pieces, <<>>, []) =:= [{Seq band 255, P} || {Seq, P} <- Numbered]
            end).

cut(Bytes, Cuts) -> cut(Bytes, Cuts, 0).

cut(Bytes, [], At) -> [binary:part(Bytes, At, byte_size(Bytes) - At)];
cut(Bytes, [C | Cs], At) -> [binary:part(Bytes, At, C - At) | cut(Bytes, Cs, C)].

stream([], <<>>, Acc) -> lists:reverse(Acc);
stream([], Buf, Acc) -> {left_over, Buf, lists:reverse(Acc)};
stream([P | Ps], Buf, Acc) -> packets(Ps, <<Buf/binary, P/binary>>, Acc).

packets(Ps, Buf, Acc) ->
    case ?P:decode(Buf, ?MAX) of
        {ok, Seq, Payload, Rest} -> packets(Ps, Rest, [{Seq, Payload} | Acc]);
        more -> stream(Ps, Buf, Acc);
        {error, _} = E -> E
    end.

%% The example is a valid scenario (rebar3 runs EUnit from the repository's root).
example_test() ->
    {ok, #{sessions := [#{steps := [First | _]}]}} =
        beamscale_load_scenario:load("examples/mysql.scenario"),
    ?assertMatch({request, beamscale_load_mysql, db,
                  #{type := connect, login := #{user := <<"beamscale">>}}, 5000}, First).
