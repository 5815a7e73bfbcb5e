%% The LDAP codec: RFC 4515 filters (RFC 4515's own examples, Tsung's escapes), bytes against
%% RFC 4511's encoding of a simple bind, and framing of hostile lengths.
-module(beamscale_load_ldap_codec_tests).

-include_lib("eunit/include/eunit.hrl").

-define(C, beamscale_load_ldap_codec).

ava(A, V) -> {'AttributeValueAssertion', A, V}.

filter_test_() ->
    [?_assertEqual({ok, {equalityMatch, ava(<<"filename">>, <<"C:\\MyFile">>)}},
                   ?C:filter("(filename=C:\\5cMyFile)")),
     ?_assertEqual({ok, {'and', [{present, <<"objectClass">>},
                                 {'not', {equalityMatch, ava(<<"cn">>, <<"Tim">>)}}]}},
                   ?C:filter("(&(objectClass=*)(!(cn=Tim)))")),
     ?_assertEqual({ok, {'or', [{substrings, {'SubstringFilter', <<"cn">>,
                                              [{initial, <<"Ba">>}, {any, <<"b">>},
                                               {final, <<"s">>}]}},
                                {greaterOrEqual, ava(<<"n">>, <<"3">>)},
                                {lessOrEqual, ava(<<"n">>, <<"9">>)},
                                {approxMatch, ava(<<"sn">>, <<"x">>)}]}},
                   ?C:filter("(|(cn=Ba*b*s)(n>=3)(n<=9)(sn~=x))")),
     %% RFC 4515's: a value of the bytes 00 00 00 04, and a star as a value, escaped.
     ?_assertEqual({ok, {equalityMatch, ava(<<"bin">>, <<0, 0, 0, 4>>)}},
                   ?C:filter("(bin=\\00\\00\\00\\04)")),
     ?_assertEqual({ok, {equalityMatch, ava(<<"cn">>, <<"*">>)}}, ?C:filter("(cn=\\2a)")),
     ?_assertEqual({ok, {equalityMatch, ava(<<"sn">>, <<"Lučić"/utf8>>)}},
                   ?C:filter(<<"(sn=Lučić)"/utf8>>)),
     ?_assertMatch({error, "missing )"}, ?C:filter("(cn=a")),
     ?_assertMatch({error, "bad escape" ++ _}, ?C:filter("(cn=\\zz)")),
     ?_assertMatch({error, "a filter starts with (" }, ?C:filter("cn=a")),
     ?_assertMatch({error, "extensible" ++ _}, ?C:filter("(cn:dn:=a)")),
     ?_assertMatch({error, "text after" ++ _}, ?C:filter("(cn=a)(cn=b)"))].

%% RFC 4511's BER of a simple bind, message id 1, as every LDAP client sends it.
bind_bytes_test() ->
    {ok, B} = ?C:encode(1, {bind, <<"cn=a">>, <<"pw">>}),
    ?assertEqual(<<16#30, 16#12, 2, 1, 1, 16#60, 16#0D, 2, 1, 3, 4, 4, "cn=a", 16#80, 2, "pw">>,
                 iolist_to_binary(B)).

round_trip_test() ->
    %% A search response as a server sends it: entry, then done.
    Done = {'LDAPMessage', 7, {searchResDone, {'LDAPResult', noSuchObject, "", "", asn1_NOVALUE}},
            asn1_NOVALUE},
    {ok, Bin} = 'ELDAPv3':encode('LDAPMessage', Done),
    B = iolist_to_binary(Bin),
    ?assertEqual({ok, B, <<1, 2>>}, ?C:frame(<<B/binary, 1, 2>>, 1000)),
    ?assertMatch({ok, 7, {searchResDone, {'LDAPResult', noSuchObject, _, _, _}}}, ?C:decode(B)),
    ?assertEqual(more, ?C:frame(binary:part(B, 0, byte_size(B) - 1), 1000)),
    %% Every prefix, as a server sending a byte a segment leaves it: more, and what it needs.
    [begin
         ?assertEqual(more, ?C:frame(binary:part(B, 0, N), 1000)),
         ?assert(?C:need(binary:part(B, 0, N)) =< byte_size(B))
     end || N <- lists:seq(1, byte_size(B) - 1)],
    ?assertEqual(byte_size(B), ?C:need(B)).

%% An entry and a reference are told by their first bytes, as `decode/1' reads them; other
%% operations and bytes that do not read so are left to `decode/1'.
peek_test() ->
    Msg = fun(Op) ->
                  {ok, B} = 'ELDAPv3':encode('LDAPMessage', {'LDAPMessage', 300, Op,
                                                             asn1_NOVALUE}),
                  iolist_to_binary(B)
          end,
    Entry = Msg({searchResEntry, {'SearchResultEntry', "cn=x",
                                  [{'PartialAttribute', "cn", [binary:copy(<<"v">>, 200)]}]}}),
    ?assertMatch({ok, 300, {searchResEntry, _}}, ?C:decode(Entry)),
    ?assertEqual({300, entry}, ?C:peek(Entry)),
    ?assertEqual({300, ref}, ?C:peek(Msg({searchResRef, ["ldap://h/o=x"]}))),
    ?assertEqual({300, other},
                 ?C:peek(Msg({searchResDone, {'LDAPResult', success, "", "", asn1_NOVALUE}}))),
    ?assertEqual(error, ?C:peek(<<16#30, 3, 1, 1, 1>>)),
    ?assertEqual(error, ?C:peek(<<"HTTP">>)).

hostile_test_() ->
    [?_assertEqual({error, {?C, {too_long, 16#FFFFFFFF + 6, 1 bsl 20}}},
                   ?C:frame(<<16#30, 16#84, 255, 255, 255, 255>>, 1 bsl 20)),
     ?_assertEqual({error, {?C, {too_long, 102, 101}}}, ?C:frame(<<16#30, 100>>, 101)),
     ?_assertEqual(<<"LDAP message of 102 bytes above max_reply_bytes (101): connection closed">>,
                   iolist_to_binary(?C:format_error({too_long, 102, 101}))),
     ?_assertEqual(more, ?C:frame(<<16#30, 16#82, 1>>, 1000)),
     ?_assertEqual({error, {?C, bad_length}}, ?C:frame(<<16#30, 16#85, 1, 1, 1, 1, 1>>, 1000)),
     ?_assertEqual({error, {?C, not_ldap}}, ?C:frame(<<"HTTP/1.1 200">>, 1000)),
     ?_assertEqual({error, {?C, undecodable}}, ?C:decode(<<16#30, 3, 1, 1, 1>>))].
