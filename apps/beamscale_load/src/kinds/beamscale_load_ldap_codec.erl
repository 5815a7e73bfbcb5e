%% @doc LDAPv3 messages (RFC 4511), pure: requests encoded and replies decoded with OTP's own
%% ASN.1 module `ELDAPv3' (app eldap), framed here by their BER length, and search filters in
%% RFC 4515's string form (Tsung's syntax, escapes such as `C:\5cMyFile' included). What comes
%% from a server is hostile: a message's length is checked against the bound before its body is
%% awaited, and a body `ELDAPv3' cannot decode is an error, not a crash.
-module(beamscale_load_ldap_codec).

-export([encode/2, frame/2, need/1, peek/1, decode/1, filter/1, format_error/1]).
-export_type([op/0]).

-include_lib("eldap/ebin/ELDAPv3.hrl").

-type op() :: {bind, binary(), binary()}
            | {search, binary(), atom(), binary(), [binary()]}
            | {add, binary(), [{binary(), [binary()]}]}
            | {modify, binary(), [{add | delete | replace, binary(), [binary()]}]}
            | {delete, binary()} | start_tls | unbind.

-define(START_TLS_OID, "1.3.6.1.4.1.1466.20037").

%% @doc The bytes of request `Op' with message id `Id' (the filter of a search is parsed here:
%% it was checked when the scenario was read, but a substituted value may break it).
-spec encode(pos_integer(), op()) -> {ok, iodata()} | {error, {?MODULE, term()}}.
encode(Id, Op) ->
    try 'ELDAPv3':encode('LDAPMessage', #'LDAPMessage'{messageID = Id, protocolOp = op(Op)}) of
        {ok, Bytes} -> {ok, Bytes};
        {error, R} -> {error, {?MODULE, {encode, R}}}
    catch throw:{bad_filter, Msg} -> {error, {?MODULE, {bad_filter, Msg}}}
    end.

op({bind, Dn, Pw}) ->
    {bindRequest, #'BindRequest'{version = 3, name = Dn, authentication = {simple, Pw}}};
op({search, Base, Scope, Filter, Attrs}) ->
    F = case filter(Filter) of
            {ok, Parsed} -> Parsed;
            {error, Msg} -> throw({bad_filter, Msg})
        end,
    {searchRequest, #'SearchRequest'{baseObject = Base, scope = Scope,
                                     derefAliases = neverDerefAliases, sizeLimit = 0,
                                     timeLimit = 0, typesOnly = false, filter = F,
                                     attributes = Attrs}};
op({add, Dn, Attrs}) ->
    {addRequest, #'AddRequest'{entry = Dn, attributes = [{'AddRequest_attributes', T, Vs}
                                                         || {T, Vs} <- Attrs]}};
op({modify, Dn, Mods}) ->
    {modifyRequest,
     #'ModifyRequest'{object = Dn,
                      changes = [#'ModifyRequest_changes_SEQOF'{
                                    operation = Op,
                                    modification = #'PartialAttribute'{type = T, vals = Vs}}
                                 || {Op, T, Vs} <- Mods]}};
op({delete, Dn}) -> {delRequest, Dn};
op(start_tls) -> {extendedReq, #'ExtendedRequest'{requestName = ?START_TLS_OID}};
op(unbind) -> {unbindRequest, 'NULL'}.

%% @doc The first whole message in `Buf': `more' while its head or body is incomplete, an error
%% when it is not an LDAPMessage (a SEQUENCE) or announces more than `Max' bytes.
-spec frame(binary(), pos_integer()) ->
    {ok, binary(), binary()} | more | {error, {?MODULE, term()}}.
frame(<<16#30, 0:1, Len:7, _/binary>> = Buf, Max) -> body(Buf, 2, Len, Max);
frame(<<16#30, 1:1, N:7, Rest/binary>> = Buf, Max) when N >= 1, N =< 4 ->
    case Rest of
        <<Len:N/unit:8, _/binary>> -> body(Buf, 2 + N, Len, Max);
        _ -> more
    end;
%% The tag alone: its length comes in the next segment (a server's bytes one per segment).
frame(<<16#30>>, _Max) -> more;
frame(<<16#30, _/binary>>, _Max) -> {error, {?MODULE, bad_length}};
frame(<<>>, _Max) -> more;
frame(<<_, _/binary>>, _Max) -> {error, {?MODULE, not_ldap}}.

body(_Buf, Head, Len, Max) when Head + Len > Max ->
    {error, {?MODULE, {too_long, Head + Len, Max}}};
body(Buf, Head, Len, _Max) ->
    case Buf of
        <<Msg:(Head + Len)/binary, Rest/binary>> -> {ok, Msg, Rest};
        _ -> more
    end.

%% @doc The bytes `frame/2' needs from the start of `Buf' to have the first message whole, once
%% its length has come (one byte more before).
-spec need(binary()) -> pos_integer().
need(<<16#30, 0:1, Len:7, _/binary>>) -> 2 + Len;
need(<<16#30, 1:1, N:7, Len:N/unit:8, _/binary>>) when N >= 1, N =< 4 -> 2 + N + Len;
need(Buf) -> byte_size(Buf) + 1.

%% @doc A framed message's id, and whether it is a search's entry or reference, from its first
%% bytes (`other': any other operation, for `decode/1'; `error': not read so). The entries of a
%% search are counted, not read: 10^6 of them decoded each took 8 users past a 1 s deadline.
-spec peek(binary()) -> {non_neg_integer(), entry | ref | other} | error.
peek(<<16#30, 0:1, _:7, Rest/binary>>) -> peek_op(Rest);
peek(<<16#30, 1:1, N:7, _:N/binary, Rest/binary>>) -> peek_op(Rest);
peek(_) -> error.

%% messageID, an INTEGER of 1 to 4 bytes (ours are positive), then the operation's tag:
%% [APPLICATION 4] SearchResultEntry, [APPLICATION 19] SearchResultReference.
peek_op(<<2, L, Id:L/unit:8, Tag, _/binary>>) when L >= 1, L =< 4 ->
    {Id, case Tag of 16#64 -> entry; 16#73 -> ref; _ -> other end};
peek_op(_) -> error.

%% @doc A framed message: its id and operation (`{Name, Record}' as `ELDAPv3' gives it).
-spec decode(binary()) -> {ok, integer(), {atom(), term()}} | {error, {?MODULE, term()}}.
decode(Msg) ->
    try 'ELDAPv3':decode('LDAPMessage', Msg) of
        {ok, #'LDAPMessage'{messageID = Id, protocolOp = {Name, _} = Op}} when is_atom(Name) ->
            {ok, Id, Op};
        _ -> {error, {?MODULE, undecodable}}
    catch _:_ -> {error, {?MODULE, undecodable}}
    end.

%% ---- RFC 4515 filters ----

%% @doc A filter's string form parsed into `ELDAPv3''s term, or the reason it is not one.
-spec filter(binary() | string()) -> {ok, term()} | {error, string()}.
filter(Text) ->
    try parse(unicode:characters_to_list(Text)) of
        {F, []} -> {ok, F};
        {_, Rest} -> {error, "text after the filter: " ++ lists:sublist(Rest, 20)}
    catch throw:{filter, Msg} -> {error, Msg}
    end.

parse([$( | T]) ->
    {F, Rest} = comp(T),
    case Rest of
        [$) | Rest1] -> {F, Rest1};
        _ -> fail("missing )")
    end;
parse(_) -> fail("a filter starts with (").

comp([$& | T]) -> set('and', T, []);
comp([$| | T]) -> set('or', T, []);
comp([$! | T]) -> {F, Rest} = parse(T), {{'not', F}, Rest};
comp(T) -> item(T).

set(Op, [$( | _] = T, Acc) -> {F, Rest} = parse(T), set(Op, Rest, [F | Acc]);
set(_Op, _T, []) -> fail("& and | need a filter in parentheses");
set(Op, T, Acc) -> {{Op, lists:reverse(Acc)}, T}.

%% attr op value, up to the closing parenthesis (not taken).
item(T) ->
    {Attr, Rest} = lists:splitwith(fun(C) -> not lists:member(C, "=~<>():*\\") end, T),
    [fail("missing attribute name") || Attr =:= ""],
    A = list_to_binary(Attr),
    case Rest of
        [$~, $= | V] -> ava(approxMatch, A, V);
        [$>, $= | V] -> ava(greaterOrEqual, A, V);
        [$<, $= | V] -> ava(lessOrEqual, A, V);
        [$= | V] -> equal(A, V);
        [$: | _] -> fail("extensible match (:=) is not supported");
        _ -> fail("expected =, ~=, >= or <= after " ++ Attr)
    end.

ava(Op, A, V) ->
    {Raw, Rest} = raw(V),
    [fail("* in a ~=, >= or <= value") || lists:member(star, Raw)],
    {{Op, #'AttributeValueAssertion'{attributeDesc = A, assertionValue = value(Raw)}}, Rest}.

equal(A, V) ->
    case raw(V) of
        {[star], Rest} -> {{present, A}, Rest};
        {Raw, Rest} ->
            case lists:member(star, Raw) of
                false -> {{equalityMatch, #'AttributeValueAssertion'{
                                             attributeDesc = A, assertionValue = value(Raw)}},
                          Rest};
                true -> {{substrings, #'SubstringFilter'{type = A, substrings = subs(Raw)}},
                         Rest}
            end
    end.

%% initial*any*...*final: the pieces between stars, empty ones left out.
subs(Raw) ->
    Pieces = split(Raw, [], []),
    Last = length(Pieces),
    [{Pos, value(P)} || {I, P} <- lists:zip(lists:seq(1, Last), Pieces), P =/= [],
                        Pos <- [if I =:= 1 -> initial; I =:= Last -> final; true -> any end]].

split([], Cur, Acc) -> lists:reverse([lists:reverse(Cur) | Acc]);
split([star | T], Cur, Acc) -> split(T, [], [lists:reverse(Cur) | Acc]);
split([B | T], Cur, Acc) -> split(T, [B | Cur], Acc).

%% The value's bytes (escapes `\XX' decoded) and stars, up to the `)'.
raw(V) -> raw(V, []).

raw([$) | _] = Rest, Acc) -> {lists:reverse(Acc), Rest};
raw([$*| T], Acc) -> raw(T, [star | Acc]);
raw([$\\, H, L | T], Acc) ->
    case catch list_to_integer([H, L], 16) of
        B when is_integer(B) -> raw(T, [B | Acc]);
        _ -> fail("bad escape \\" ++ [H, L] ++ " (expected two hex digits)")
    end;
raw([$\\ | _], _Acc) -> fail("bad escape at the end of a value");
raw([$( | _], _Acc) -> fail("( in a value (write \\28)");
raw([C | T], Acc) -> raw(T, lists:reverse(binary_to_list(<<C/utf8>>), Acc));
raw([], _Acc) -> fail("missing )").

value(Raw) -> list_to_binary(Raw).

-spec fail(string()) -> no_return().
fail(Msg) -> throw({filter, Msg}).

%% @doc The text of a codec reason.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({too_long, N, Max}) ->
    io_lib:format("LDAP message of ~b bytes above max_reply_bytes (~b): connection closed",
                  [N, Max]);
format_error(bad_length) -> "LDAP message with a bad BER length: connection closed";
format_error(not_ldap) -> "bytes that are not an LDAP message: connection closed";
format_error(undecodable) -> "LDAP message that does not decode: connection closed";
format_error({bad_filter, Msg}) -> ["bad LDAP filter after substitution: ", Msg];
format_error({encode, _}) -> "LDAP request that does not encode".
