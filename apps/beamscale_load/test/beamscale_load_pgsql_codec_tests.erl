%% The PostgreSQL codec: SCRAM-SHA-256 against RFC 7677's example, MD5 against a known hash,
%% and (PropEr) frontend messages cut back whole from any split of the stream.
-module(beamscale_load_pgsql_codec_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(C, beamscale_load_pgsql_codec).

%% RFC 7677, section 3: user "user", password "pencil".
scram_rfc7677_test() ->
    {First, Bare} = ?C:scram_first(<<"user">>, <<"rOprNGfwEbeRWgbNEkqO">>),
    ?assertEqual(<<"n,,n=user,r=rOprNGfwEbeRWgbNEkqO">>, First),
    ServerFirst = <<"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096">>,
    {ok, Final, Sig} = ?C:scram_final(ServerFirst, Bare, "pencil"),
    ?assertEqual(<<"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                   "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=">>, Final),
    ?assertEqual(ok, ?C:scram_verify(<<"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=">>,
                                     Sig)),
    ?assertEqual({error, bad_server_signature},
                 ?C:scram_verify(<<"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=">>, Sig)),
    ?assertEqual({error, {server_error, <<"invalid-proof">>}},
                 ?C:scram_verify(<<"e=invalid-proof">>, Sig)).

scram_bad_server_first_test() ->
    {_, Bare} = ?C:scram_first(<<>>, <<"abc">>),
    ?assertEqual({error, nonce_mismatch}, ?C:scram_final(<<"r=xyz1,s=AAAA,i=1">>, Bare, "p")),
    ?assertEqual({error, bad_server_first}, ?C:scram_final(<<"r=abc1,i=1">>, Bare, "p")),
    ?assertEqual({error, bad_server_first}, ?C:scram_final(<<"r=abc1,s=AAAA,i=x">>, Bare, "p")).

%% md5("foo" ++ "bar") = 3858f62230ac3c915f300c664312c63f; then md5 of that hex and the salt,
%% computed with md5sum: printf '3858f62230ac3c915f300c664312c63f\x01\x02\x03\x04' | md5sum.
md5_test() ->
    ?assertEqual(<<"md5", (md5_hex(<<"3858f62230ac3c915f300c664312c63f", 1, 2, 3, 4>>))/binary>>,
                 ?C:md5("bar", "foo", <<1, 2, 3, 4>>)),
    ?assertEqual(<<"md56e4f0b50f7277feb74acbf2a7734c9cb">>, ?C:md5("bar", "foo", <<1, 2, 3, 4>>)).

md5_hex(B) -> list_to_binary([io_lib:format("~2.16.0b", [X]) || <<X>> <= crypto:hash(md5, B)]).

auth_test() ->
    ?assertEqual(ok, ?C:auth(<<0:32>>)),
    ?assertEqual({md5, <<1, 2, 3, 4>>}, ?C:auth(<<5:32, 1, 2, 3, 4>>)),
    ?assertEqual({sasl, [<<"SCRAM-SHA-256">>, <<"SCRAM-SHA-256-PLUS">>]},
                 ?C:auth(<<10:32, "SCRAM-SHA-256", 0, "SCRAM-SHA-256-PLUS", 0, 0>>)),
    ?assertEqual({unsupported, 7}, ?C:auth(<<7:32>>)).

fields_test() ->
    Body = <<"SERROR", 0, "C42P01", 0, "Mrelation \"x\" does not exist", 0, 0>>,
    ?assertMatch(#{$S := <<"ERROR">>, $C := <<"42P01">>,
                   $M := <<"relation \"x\" does not exist">>}, ?C:fields(Body)).

decode_limits_test() ->
    ?assertEqual({error, {too_big, $D, 996, 100}}, ?C:decode(<<$D, 1000:32>>, 100)),
    ?assertEqual({error, bad_length}, ?C:decode(<<$D, 3:32>>, 100)),
    ?assertEqual(more, ?C:decode(<<$D, 10:32, 1, 2>>, 100)),
    ?assertEqual(more, ?C:decode(<<$D, 0>>, 100)).

%% Any sequence of typed messages, split anywhere, decodes back to the same messages.
prop_decode_any_split() ->
    ?FORALL({Msgs, Cut}, {list(message()), non_neg_integer()},
            begin
                Stream = iolist_to_binary([encode(M) || M <- Msgs]),
                At = Cut rem (byte_size(Stream) + 1),
                <<A:At/binary, B/binary>> = Stream,
                Msgs =:= read_all(A, B, [])
            end).

message() -> {oneof([$D, $T, $C, $E, $Z, $R]), binary()}.

encode({T, Body}) -> [T, <<(byte_size(Body) + 4):32>>, Body].

%% Decode what the first part holds, then feed the second, as a socket would.
read_all(Buf, Later, Acc) ->
    case ?C:decode(Buf, 1 bsl 20) of
        {ok, M, Rest} -> read_all(Rest, Later, [M | Acc]);
        more when Later =/= none -> read_all(<<Buf/binary, Later/binary>>, none, Acc);
        more -> lists:reverse(Acc)
    end.

%% Frontend messages built by the codec decode as one message of their type and length.
prop_frontend_framing() ->
    ?FORALL({Sql, Name, Params}, {utf8(), utf8(), list(oneof([null, utf8()]))},
            lists:all(fun({T, IoData}) ->
                              B = iolist_to_binary(IoData),
                              case ?C:decode(B, 1 bsl 20) of
                                  {ok, {T, _}, <<>>} -> true;
                                  _ -> false
                              end
                      end,
                      [{$Q, ?C:query(Sql)}, {$P, ?C:parse(Name, Sql)},
                       {$B, ?C:bind({Name, Name}, Params)}, {$E, ?C:execute(Name, 0)},
                       {$D, ?C:describe(portal, Name)}, {$S, ?C:sync()},
                       {$X, ?C:terminate()}, {$p, ?C:password(Sql)}])).

%% Bind's parameters: the count, then each length (-1 for NULL) and bytes, read back.
prop_bind_params() ->
    ?FORALL(Params, list(oneof([null, binary()])),
            begin
                {ok, {$B, Body}, <<>>} = ?C:decode(iolist_to_binary(?C:bind({<<>>, <<"s">>},
                                                                           Params)), 1 bsl 20),
                <<0, "s", 0, 0:16, N:16, Rest/binary>> = Body,
                N =:= length(Params) andalso read_params(N, Rest) =:= Params
            end).

read_params(0, <<0:16>>) -> [];
read_params(N, <<-1:32/signed, Rest/binary>>) -> [null | read_params(N - 1, Rest)];
read_params(N, <<L:32, V:L/binary, Rest/binary>>) -> [V | read_params(N - 1, Rest)].

proper_test_() ->
    [?_assert(proper:quickcheck(P, [{numtests, 300}, {to_file, user}]))
     || P <- [prop_decode_any_split(), prop_frontend_framing(), prop_bind_params()]].

%% The protocol's message formats (PostgreSQL 15 docs, "Message Formats"): Flush is Byte1('H')
%% Int32(4); CopyDone Byte1('c') Int32(4); CopyData Byte1('d') Int32(4 + n) Byten; CopyFail
%% Byte1('f') Int32 String (NUL-terminated).
copy_and_flush_bytes_test_() ->
    B = fun iolist_to_binary/1,
    [?_assertEqual(<<$H, 0, 0, 0, 4>>, B(?C:flush())),
     ?_assertEqual(<<$c, 0, 0, 0, 4>>, B(?C:copy_done())),
     ?_assertEqual(<<$d, 0, 0, 0, 9, "1\tx\n\n">>, B(?C:copy_data(<<"1\tx\n\n">>))),
     ?_assertEqual(<<$f, 0, 0, 0, 8, "why", 0>>, B(?C:copy_fail("why")))].
