%% @doc The `ldap' request kind, Tsung's `ts_ldap': LDAPv3 over the user's TCP connection
%% (`beamscale_load_ldap_codec'). `bind' (simple), `search' (its entries counted as rows),
%% `add', `modify', `delete' and `start_tls' wait for their response; a result code other than
%% success is the error `{ldap, Operation, Code}', named in words; `unbind' ends the connection.
%% Every read goes through `beamscale_load_reader' (the request's deadline, `max_reply_bytes' for
%% all a search returns) and the codec refuses a message longer than the bound before its body
%% comes. Tsung's counters of `ts_ldap' are kept under its names (`measures/0'). The Tsung
%% element is read by `beamscale_load_ldap_tsung'.
-module(beamscale_load_ldap).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).
-export([name/0, features/0, sockets/1, format_error/1, tsung/0, from_tsung/3, measures/0]).
-export_type([conn/0]).

-include_lib("xmerl/include/xmerl.hrl").

-type socket() :: beamscale_load_tcp:socket().
%% The socket, the bytes received but not decoded, the next message id, the target (its host,
%% port and tls settings, for start_tls).
-type conn() :: {ldap, socket(), binary(), pos_integer(), map()}.

-define(CODEC, beamscale_load_ldap_codec).
-define(KEYS, #{bind => [dn, password], search => [base, filter, scope, attributes],
                add => [dn, attrs], modify => [dn, changes], delete => [dn],
                start_tls => [tls], unbind => []}).
-define(SCOPES, #{base => baseObject, one => singleLevel, sub => wholeSubtree,
                  baseObject => baseObject, singleLevel => singleLevel,
                  wholeSubtree => wholeSubtree}).
-define(MAX_ID, 16#7FFFFFFF).
%% Tsung's `ts_ldap' counters: a bind's outcome, a failed add, modify or StartTLS, a message for
%% another request.
-define(COUNTERS, [<<"ldap_bind_ok">>, <<"ldap_bind_error">>, <<"ldap_add_error">>,
                   <<"ldap_modify_error">>, <<"ldap_starttls_error">>,
                   <<"ldap_unexpected_msg_resp">>]).

%% @doc `#{type => bind | search | add | modify | delete | start_tls | unbind, ...}' against
%% host:port (docs/scenario.md, "ldap").
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := _}) -> beamscale_load_request:check_typed(Spec, ?KEYS, fun spec/2);
check(_Spec, _Target) -> {error, target, "ldap needs a host:port target"}.

spec(bind, S) -> #{type => bind, dn => text(dn, maps:get(dn, S, <<>>)),
                   password => text(password, maps:get(password, S, <<>>))};
spec(search, S) ->
    Filter = text(filter, maps:get(filter, S, <<"(objectClass=*)">>)),
    case ?CODEC:filter(Filter) of
        {ok, _} -> ok;
        {error, Msg} -> bad(filter, Msg)
    end,
    Scope = case maps:find(maps:get(scope, S, sub), ?SCOPES) of
                {ok, Sc} -> Sc;
                error -> bad(scope, "expected base, one or sub")
            end,
    #{type => search, base => text(base, maps:get(base, S, <<>>)), filter => Filter,
      scope => Scope, attributes => [text(attributes, A) || A <- list(attributes, S)]};
spec(add, S) -> #{type => add, dn => dn(S), attrs => [attr(attrs, A) || A <- list(attrs, S)]};
spec(modify, S) ->
    #{type => modify, dn => dn(S), changes => [change(C) || C <- list(changes, S)]};
spec(delete, S) -> #{type => delete, dn => dn(S)};
spec(start_tls, S) ->
    case beamscale_load_tls:check(maps:get(tls, S, #{verify => verify_none})) of
        {ok, Opts} -> #{type => start_tls, tls => Opts};
        {error, K, Msg} -> bad(K, Msg)
    end;
spec(unbind, _) -> #{type => unbind}.

dn(#{dn := Dn}) -> text(dn, Dn);
dn(_) -> bad(dn, "missing").

list(Key, S) ->
    case maps:get(Key, S, []) of
        L when is_list(L) -> L;
        _ -> bad(Key, "expected a list")
    end.

attr(Key, {T, Vs}) when is_list(Vs) -> {text(Key, T), [text(Key, V) || V <- Vs]};
attr(Key, _) -> bad(Key, "expected {Type, [Value]}").

change({Op, T, Vs}) when Op =:= add; Op =:= delete; Op =:= replace ->
    {Type, Values} = attr(changes, {T, Vs}),
    {Op, Type, Values};
change(_) -> bad(changes, "expected {add | delete | replace, Type, [Value]}").

text(Key, V) ->
    try iolist_to_binary(V)
    catch error:badarg -> bad(Key, "expected a string (iodata)")
    end.

-spec bad(atom(), string()) -> no_return().
bad(Key, Msg) -> throw({bad, Key, Msg}).

%% @doc Open the user's TCP connection (TLS at once if the target says so).
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(Target) ->
    case beamscale_load_tcp:connect(Target) of
        {ok, {S, Buf}} -> {ok, {ldap, S, Buf, 1, Target}};
        {error, _} = E -> E
    end.

%% @doc Send one request and wait for its response (none for unbind).
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{type := unbind}, {ldap, S, _, Id, _}, _Timeout) ->
    _ = send(S, Id, unbind),
    ok = beamscale_load_tcp:drop(S),
    {ok, closed};
request(#{type := Type} = Spec, {ldap, S, Buf, Id, T}, Timeout) ->
    Deadline = beamscale_load_tcp:deadline(Timeout),
    Next = Id rem ?MAX_ID + 1,
    case send(S, Id, op(Spec)) of
        ok ->
            Awaited = await(S, Buf, {Type, Id, 0}, Deadline),
            counted(Type, Awaited),
            case Awaited of
                {ok, Rest, success} when Type =:= start_tls ->
                    start_tls(Spec, {ldap, S, Rest, Next, T}, Deadline);
                {ok, Rest, success} -> {ok, {ldap, S, Rest, Next, T}};
                {ok, Rest, Code} ->
                    {error, {?MODULE, {ldap, Type, Code}}, {ldap, S, Rest, Next, T}};
                {error, {?CODEC, R}} -> gone(S, {?MODULE, R});
                {error, Reason} -> gone(S, Reason)
            end;
        {error, {?CODEC, R}} -> {error, {?MODULE, R}, {ldap, S, Buf, Next, T}};
        {error, Reason} -> gone(S, Reason)
    end.

%% Tsung's counter of a response, if it keeps one.
counted(bind, {ok, _, success}) -> beamscale_load_request:named(<<"ldap_bind_ok">>);
counted(bind, {ok, _, _}) -> beamscale_load_request:named(<<"ldap_bind_error">>);
counted(_, {ok, _, success}) -> ok;
counted(add, {ok, _, _}) -> beamscale_load_request:named(<<"ldap_add_error">>);
counted(modify, {ok, _, _}) -> beamscale_load_request:named(<<"ldap_modify_error">>);
counted(start_tls, {ok, _, _}) -> beamscale_load_request:named(<<"ldap_starttls_error">>);
counted(_, {error, {?MODULE, unexpected}}) ->
    beamscale_load_request:named(<<"ldap_unexpected_msg_resp">>);
counted(_, _) -> ok.

op(#{type := bind, dn := Dn, password := Pw}) -> {bind, Dn, Pw};
op(#{type := search, base := B, scope := Sc, filter := F, attributes := A}) ->
    {search, B, Sc, F, A};
op(#{type := add, dn := Dn, attrs := A}) -> {add, Dn, A};
op(#{type := modify, dn := Dn, changes := C}) -> {modify, Dn, C};
op(#{type := delete, dn := Dn}) -> {delete, Dn};
op(#{type := start_tls}) -> start_tls.

send(S, Id, Op) ->
    case ?CODEC:encode(Id, Op) of
        {ok, Bytes} -> beamscale_load_tcp:send(S, Bytes);
        {error, _} = E -> E
    end.

%% The response to message `Id': search entries and references before it are counted (entries
%% as rows, told by their first bytes: not decoded) and dropped. A message of another id (a
%% notice of disconnection) ends the connection. The reader's bound, hit, is said as the
%% operation's (a search's with its entries so far).
await(S, Buf, {Type, Id, N} = Op, Deadline) ->
    case ?CODEC:frame(Buf, beamscale_load_reader:max(S)) of
        {ok, Msg, Rest} ->
            case peek(Msg) of
                {Id, entry} ->
                    beamscale_load_request:count(rows, 1),
                    await(S, Rest, {Type, Id, N + 1}, Deadline);
                {Id, ref} -> await(S, Rest, Op, Deadline);
                {ok, Id, {_Name, Result}} -> {ok, Rest, code(Result)};
                {ok, _Other, _} -> {error, {?MODULE, unexpected}};
                {error, _} = E -> E;
                {_Other, _} -> {error, {?MODULE, unexpected}}
            end;
        more ->
            case beamscale_load_reader:recv_at_least(S, Buf, ?CODEC:need(Buf), Deadline) of
                {ok, Buf1} -> await(S, Buf1, Op, Deadline);
                {error, {beamscale_load_reader, {too_big, Max}}} ->
                    {error, {?MODULE, {too_big, Type, Max, N}}};
                {error, _} = E -> E
            end;
        {error, _} = E -> E
    end.

%% An entry or reference told by its first bytes, else the message decoded (an entry whose id
%% the first bytes do not tell, as well).
peek(Msg) ->
    case ?CODEC:peek(Msg) of
        {_, Kind} = Peeked when Kind =:= entry; Kind =:= ref -> Peeked;
        _ ->
            case ?CODEC:decode(Msg) of
                {ok, Id, {searchResEntry, _}} -> {Id, entry};
                {ok, Id, {searchResRef, _}} -> {Id, ref};
                Decoded -> Decoded
            end
    end.

%% Every response record (LDAPResult, BindResponse, ExtendedResponse) has its result code first.
code(Result) when is_tuple(Result), tuple_size(Result) >= 2 -> element(2, Result);
code(_) -> undecodable.

%% The TLS handshake over the connection, within the request's deadline; the socket is passive
%% for it (ssl takes it so) and armed again by `beamscale_load_tls'.
start_tls(#{tls := Opts}, {ldap, S, <<>>, _, _} = Conn, Deadline) ->
    case (beamscale_load_transport:which(S)):name() of
        tcp -> handshake(Opts, Conn, Deadline);
        tls -> gone(S, {?MODULE, tls_twice})
    end;
start_tls(_Spec, {ldap, S, _, _, _}, _Deadline) -> gone(S, {?MODULE, tls_twice}).

handshake(Opts, {ldap, S, <<>>, Next, #{host := H, port := P} = T}, Deadline) ->
    ok = beamscale_load_transport_tcp:setopts(S, [{active, false}]),
    beamscale_load_reader:closed(S),
    Left = max(1, Deadline - erlang:monotonic_time(millisecond)),
    case beamscale_load_tls:handshake(S, {H, P}, Opts, Left) of
        {ok, Tls} ->
            ok = beamscale_load_reader:opened(Tls, T),
            {ok, {ldap, Tls, <<>>, Next, T}};
        {error, Reason} -> gone(S, Reason)
    end.

gone(S, Reason) ->
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% @doc Tsung's counters of `ts_ldap', under its names.
-spec measures() -> {[binary()], []}.
measures() -> {?COUNTERS, []}.

%% @doc Close the user's connection.
-spec close(conn()) -> ok.
close({ldap, S, _, _, _}) -> beamscale_load_tcp:drop(S).

%% @doc The kind's step name.
-spec name() -> ldap.
name() -> ldap.

%% @doc Placeholders in its Tsung element (Tsung's `subst').
-spec features() -> [beamscale_load_request:feature()].
features() -> [subst].

%% @doc One connection per target.
-spec sockets(map()) -> 1.
sockets(_Target) -> 1.

%% @doc The text of its reasons: a result code in words (`invalidCredentials': "invalid
%% credentials").
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({ldap, Op, Code}) when is_atom(Code) ->
    io_lib:format("LDAP ~ts: ~ts", [Op, words(atom_to_list(Code))]);
format_error({ldap, Op, Code}) -> io_lib:format("LDAP ~ts: result code ~0tp", [Op, Code]);
format_error({too_big, search, Max, N}) ->
    io_lib:format("LDAP search reply above max_reply_bytes (~b bytes, ~b entries read): "
                  "connection closed", [Max, N]);
format_error({too_big, Op, Max, _N}) ->
    io_lib:format("LDAP ~ts reply above max_reply_bytes (~b bytes): connection closed", [Op, Max]);
format_error(unexpected) ->
    "LDAP message for another request (a notice of disconnection?): connection closed";
format_error(tls_twice) -> "start_tls on a connection already in TLS (or with bytes pending)";
format_error(R) -> ?CODEC:format_error(R).

words([C | T]) when C >= $A, C =< $Z -> [$\s, C - $A + $a | words(T)];
words([C | T]) -> [C | words(T)];
words([]) -> [].

%% @doc Tsung's `ts_ldap' sessions and their `<ldap>' element, to a tcp server.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_ldap", element => ldap, servers => ["tcp"],
             attributes => [type, user, password, base, filter, scope, dn, cacertfile]}.

%% @doc An `<ldap>' element (`beamscale_load_ldap_tsung').
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) ->
    Spec = beamscale_load_ldap_tsung:spec(E, Ctx),
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    case check(Spec, #{host => "", port => 0}) of
        {ok, _} -> {Spec#{target => Name}, [{Name, Target}]};
        {error, Key, Msg} -> beamscale_load_tsung_dom:fail(E, Ctx, "~ts: ~ts", [Key, Msg])
    end.
