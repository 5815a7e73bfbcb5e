-module(beamscale_load_xmpp_stream_tests).

-include_lib("eunit/include/eunit.hrl").

-define(S, beamscale_load_xmpp_stream).

header_then_stanzas_test() ->
    In = <<"<?xml version='1.0'?><stream:stream id='42' from='d'>"
           "<stream:features><mechanisms><mechanism>PLAIN</mechanism></mechanisms>"
           "</stream:features><iq type='result' id=\"bs1\"/>  </stream:stream>">>,
    {ok, {header, H}, R1} = ?S:next(In, 4096),
    ?assertEqual(<<"42">>, ?S:attr(H, <<"id">>)),
    {ok, {stanza, F}, R2} = ?S:next(R1, 4096),
    ?assertEqual(<<"stream:features">>, ?S:name(F)),
    {ok, {stanza, Iq}, R3} = ?S:next(R2, 4096),
    ?assertEqual(<<"bs1">>, ?S:attr(Iq, <<"id">>)),
    ?assertEqual({ok, stream_end, <<>>}, ?S:next(R3, 4096)).

%% Every cut of a stanza is incomplete until its last byte has come.
split_anywhere_test() ->
    M = <<"<message to='a'><body>bs-stamp:1;<![CDATA[<x>]]></body><!-- <y> --></message>">>,
    [?assertEqual(more, ?S:next(binary:part(M, 0, N), 4096))
     || N <- lists:seq(1, byte_size(M) - 1)],
    ?assertEqual({ok, {stanza, M}, <<>>}, ?S:next(M, 4096)),
    ?assertEqual(<<"bs-stamp:1;<![CDATA[<x>]]>">>, ?S:body(M)).

%% Fed in pieces of every size from 1 to 9 bytes, scanning on from each cursor: the same parts
%% as from the whole, CDATA, comments and nesting cut anywhere.
cursor_resumes_test() ->
    In = <<"  <message to='a'><body>x<![CDATA[</message>]]></body><!-- </message> -->"
           "<c><d/></c></message><presence/><iq id='1'><query><item/><item/></query></iq>">>,
    Whole = parts(fun(B, _) -> ?S:next(B, 4096) end, In, [byte_size(In)]),
    ?assertEqual(3, length(Whole)),
    [?assertEqual(Whole, parts(fun(B, C) -> ?S:next(B, 4096, C) end, In, [N]))
     || N <- lists:seq(1, 9)].

parts(Next, In, [N]) -> parts(Next, <<>>, In, N, start, []).

parts(_Next, <<>>, <<>>, _N, _C, Acc) -> lists:reverse(Acc);
parts(Next, Buf, In, N, C, Acc) ->
    case Next(Buf, C) of
        {ok, {stanza, S}, Rest} -> parts(Next, Rest, In, N, start, [S | Acc]);
        More when More =:= more; element(1, More) =:= more ->
            Take = min(N, byte_size(In)),
            <<Piece:Take/binary, In1/binary>> = In,
            C1 = case More of {more, At} -> At; more -> start end,
            parts(Next, <<Buf/binary, Piece/binary>>, In1, N, C1, Acc)
    end.

%% A stanza over the bound is refused however it is cut, the cursor kept or not.
bounded_with_cursor_test() ->
    Big = <<"<message><body>", (binary:copy(<<"x">>, 200))/binary>>,
    {more, C} = ?S:next(binary:part(Big, 0, 50), 100, start),
    ?assertEqual({error, {?S, {too_big, 100}}}, ?S:next(Big, 100, C)).

bounded_size_test() ->
    Big = <<"<message><body>", (binary:copy(<<"x">>, 200))/binary>>,
    ?assertEqual({error, {?S, {too_big, 100}}}, ?S:next(Big, 100)),
    Whole = <<Big/binary, "</body></message>">>,
    ?assertEqual({error, {?S, {too_big, 100}}}, ?S:next(Whole, 100)).

bounded_depth_test() ->
    Deep = binary:copy(<<"<a>">>, 100),
    ?assertEqual({error, {?S, too_deep}}, ?S:next(Deep, 1 bsl 20)).

not_xmpp_test() ->
    ?assertEqual({error, {?S, not_xmpp}}, ?S:next(<<"HTTP/1.1 400 Bad Request\r\n">>, 4096)).

%% Inside a stanza, only CDATA and comments may follow `<!': a processing instruction or a
%% DOCTYPE is refused, and a `<!' cut before it can be told is waited on.
not_xmpp_inside_test() ->
    [?assertEqual({error, {?S, not_xmpp}}, ?S:next(<<"<message>", In/binary>>, 4096))
     || In <- [<<"<?pi x?></message>">>, <<"<!DOCTYPE x></message>">>, <<"<!-x></message>">>]],
    [?assertEqual(more, ?S:next(<<"<message>", In/binary>>, 4096))
     || In <- [<<"<!">>, <<"<!-">>, <<"<![CDA">>, <<"<!-- x -">>, <<"<![CDATA[ ]]">>]].

condition_test() ->
    E = <<"<iq type='error' id='x'><error type='cancel'><conflict xmlns='u'/></error></iq>">>,
    ?assertEqual(<<"conflict">>, ?S:condition(E)),
    F = <<"<failure xmlns='s'><not-authorized/></failure>">>,
    ?assertEqual(<<"not-authorized">>, ?S:condition(F)).

stamp_test() ->
    Z = beamscale_load_xmpp_stanza,
    B = Z:stamp(64, 1234567),
    ?assertEqual(64, byte_size(B)),
    ?assertEqual(1234567, Z:stamped(B)),
    ?assertEqual(none, Z:stamped(<<"hello">>)),
    ?assertEqual(none, Z:stamped(undefined)),
    %% A stamp of today's 16 digits, and the bounds of any other: 20 digits at most.
    ?assertEqual(1764787200123456, Z:stamped(Z:stamp(16, 1764787200123456))),
    ?assertEqual(none, Z:stamped(<<"bs-stamp:17647872001234x6;xx">>)),
    ?assertEqual(12345678901234567890, Z:stamped(<<"bs-stamp:12345678901234567890;">>)),
    ?assertEqual(none, Z:stamped(<<"bs-stamp:123456789012345678901;">>)),
    ?assertEqual(none, Z:stamped(<<"bs-stamp:1234">>)).

check_test() ->
    U = beamscale_load_xmpp_user,
    ?assertMatch({ok, #{ack := no_ack, destination := online}},
                 U:check(#{type => chat, destination => online})),
    ?assertMatch({ok, #{ack := local, mechanism := plain}}, U:check(#{type => auth_sasl})),
    ?assertMatch({error, destination, _}, U:check(#{type => chat, destination => nobody})),
    ?assertMatch({error, room, _}, U:check(#{type => chat, room => <<"r">>})),
    ?assertMatch({error, type, _}, U:check(#{type => fly})).

%% A plain text is returned as it is; every special character escaped wherever it is.
escape_and_name_test() ->
    Z = beamscale_load_xmpp_stanza,
    J = <<"user12@bs.test/tsung">>,
    ?assertEqual(J, Z:escape(J)),
    ?assertEqual(<<"a&amp;b&lt;c&gt;d&apos;e&quot;">>, Z:escape(<<"a&b<c>d'e\"">>)),
    ?assertEqual(<<"&amp;">>, Z:escape(<<"&">>)),
    ?assertEqual(<<>>, Z:escape(<<>>)),
    S = beamscale_load_xmpp_stream,
    ?assertEqual(<<"message">>, S:name(<<"<message to='a'><body/></message>">>)),
    ?assertEqual(<<"presence">>, S:name(<<"<presence/>">>)),
    ?assertEqual(<<"stream:features">>, S:name(<<"<stream:features>">>)),
    ?assertEqual(<<"iq">>, S:name(<<"<iq\n type='get'>">>)).

%% A chat bounced by the server (type error, the body sent back) is no delivery; a chat is.
bounce_not_delivered_test() ->
    Key = '$beamscale_load_request_observed',
    Body = ["<body>", beamscale_load_xmpp_stanza:stamp(16, os:system_time(microsecond)),
            "</body>"],
    Bounce = iolist_to_binary(["<message from='u2@d' to='u1@d/r' type='error' id='c'>", Body,
                               "<error type='cancel'/></message>"]),
    erase(Key),
    ok = beamscale_load_xmpp_user:delivered(Bounce),
    ?assertEqual(undefined, get(Key)),
    ok = beamscale_load_xmpp_user:delivered(
           iolist_to_binary(["<message from='u1@d/r' to='u2@d' type='chat' id='c'>", Body,
                             "</message>"])),
    ?assertMatch([{xmpp_delivery, _}], erase(Key)).
