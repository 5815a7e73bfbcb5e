%% @doc The `xmpp' request kind, Tsung's `ts_jabber': an XMPP client over the user's TCP
%% connection (TLS direct, or STARTTLS). `connect' opens the stream, the `auth_*' types
%% authenticate (legacy XEP-0078 or SASL PLAIN, DIGEST-MD5, ANONYMOUS, then bind and session),
%% the others send presence, chat, roster, registration, MUC, pubsub, privacy and raw stanzas.
%% With `ack => local' a request waits for its answer (the iq of its id, or the next stanza);
%% `no_ack' only sends. A chat body carries its send time: the receiving user reads it on arrival
%% (in a request's read, or as a push while it waits in a `bidi' session) and records the
%% delivery time (`beamscale_load_xmpp_user'). Stanzas are cut by `beamscale_load_xmpp_stream'
%% within the target's `max_reply_bytes'.
-module(beamscale_load_xmpp).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).
-export([name/0, features/0, sockets/1, format_error/1, tsung/0, from_tsung/3]).
-export([push_socket/1, handle_push/3, measures/0]).

-define(ST, beamscale_load_xmpp_stream).
-define(Z, beamscale_load_xmpp_stanza).
-define(U, beamscale_load_xmpp_user).
-define(WS, beamscale_load_xmpp_ws).
-define(BOSH, beamscale_load_xmpp_bosh).

-type conn() :: map().

%% @doc A spec checked (`beamscale_load_xmpp_user:check/1'), against a host:port target.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := _}) -> ?U:check(Spec);
check(_Spec, _Target) -> {error, target, "xmpp needs a host:port target"}.

%% @doc Open the user's TCP (or TLS) connection; the stream is opened by `connect'.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(#{host := H, port := P} = Target) ->
    case beamscale_load_tcp:connect(Target) of
        {ok, {S, Buf}} ->
            {ok, #{s => S, buf => Buf, server => {H, P}, id => 1, target => Target}};
        {error, _} = E -> E
    end.

%% @doc Send one request and, with `ack => local', wait for its answer; with `respond' (checks
%% on the reply) that answer is returned as the reply's body, an iq error's too, as Tsung's
%% `<match>' reads what acknowledged the request.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{respond := R} = Spec, C, Timeout) when R =/= false ->
    case request(maps:remove(respond, Spec), C#{respond => true}, Timeout) of
        {ok, C1} -> {ok, unflag(C1), #{body => <<>>}};
        {error, Reason, C1} -> {error, Reason, unflag(C1)};
        WithReply -> WithReply
    end;
%% A connect opens the stream, and opens it again after STARTTLS or SASL (as Tsung's sessions
%% do): the user keeps the identity its first one gave it.
request(#{type := connect, websocket := Path} = Spec, #{s := S, server := Srv} = C, Timeout)
  when not is_map_key(ws, C) ->
    case ?WS:upgrade(S, Srv, Path, Timeout) of
        {ok, Rest} -> request(Spec, C#{ws => Rest}, Timeout);
        {error, _, _} = E -> E
    end;
request(#{type := connect, bosh := Path} = Spec, #{target := T} = C, Timeout)
  when not is_map_key(bosh, C) ->
    C1 = ?U:identity(Spec, C),
    request(Spec, ?BOSH:open(C1, Path, T#{domain => maps:get(domain, C1)}), Timeout);
request(#{type := connect} = Spec, C, Timeout) ->
    C1 = case C of
             #{bosh := _} -> ?BOSH:restart(C);
             #{user := _} -> C;
             _ -> ?U:identity(Spec, C)
         end,
    exchange(header(C1), features, C1, Timeout);
request(_Spec, C, _Timeout) when not is_map_key(domain, C) ->
    {error, {?MODULE, not_connected}, C};
request(#{type := close}, #{bosh := _} = C, _Timeout) ->
    ok = ?BOSH:close(C),
    ?U:offline(C),
    ok = ?BOSH:drop(C),
    {ok, closed};
request(#{type := close}, #{s := S} = C, _Timeout) ->
    _ = send(C, case C of #{ws := _} -> ?WS:close(); _ -> "</stream:stream>" end),
    ?U:offline(C),
    ok = beamscale_load_tcp:drop(S),
    {ok, closed};
request(#{type := starttls}, C, Timeout) ->
    case exchange("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>", proceed, C, Timeout) of
        {ok, C1} -> tls(C1, Timeout);
        Other -> Other
    end;
request(#{type := auth_sasl, mechanism := Mech}, #{user := U, pass := P} = C, Timeout) ->
    case exchange(?Z:sasl(Mech, U, P), sasl, C, Timeout) of
        {ok, C1} -> {ok, ?U:online(C1)};
        Other -> Other
    end;
request(#{type := auth_sasl_bind}, C, Timeout) ->
    iq(<<"set">>, none, ?Z:bind(<<"tsung">>), C, Timeout);
request(#{type := auth_sasl_session}, C, Timeout) ->
    iq(<<"set">>, none, ?Z:session(), C, Timeout);
request(#{type := Auth} = Spec, #{user := U, pass := P} = C, Timeout)
  when Auth =:= auth_set_plain; Auth =:= auth_set_digest; Auth =:= auth_set_sip ->
    How = maps:get(Auth, #{auth_set_plain => plain, auth_set_digest => digest,
                           auth_set_sip => sip}),
    Sid = maps:get(sid, C, <<>>),
    case iq(<<"set">>, none, ?Z:auth_set(How, U, P, Sid), C, Timeout, Spec) of
        {ok, C1} -> {ok, ?U:online(C1)};
        Other -> Other
    end;
request(Spec, C, Timeout) ->
    {Send, Want, C1} = ?U:stanza(Spec, C),
    case Want of
        {iq, Type, To} -> iq(Type, To, Send, C1, Timeout, Spec);
        _ -> exchange(Send, Want, C1, Timeout)
    end.

iq(Type, To, Inner, C, Timeout) -> iq(Type, To, Inner, C, Timeout, #{ack => local}).

iq(Type, To, Inner, #{id := N} = C, Timeout, Spec) ->
    Id = <<"bs", (integer_to_binary(N))/binary>>,
    Want = case maps:get(ack, Spec, local) of
               no_ack -> none;
               _ -> {id, Id}
           end,
    exchange(?Z:iq(Type, Id, To, Inner), Want, C#{id := N + 1}, Timeout).

%% STARTTLS's proceed came: the handshake over the same socket (the next connect opens the
%% stream again).
tls(#{s := S, server := Server} = C, Timeout) ->
    ok = beamscale_load_transport_tcp:setopts(S, [{active, false}]),
    beamscale_load_reader:closed(S),
    case beamscale_load_tls:handshake(S, Server, [{verify, verify_none}], Timeout) of
        {ok, T} -> {ok, C#{s := T, buf := <<>>}};
        {error, R} -> gone(C, R)
    end.

header(#{ws := _, domain := D}) -> ?WS:open(D);
header(#{domain := D}) -> ?Z:header(D).

%% The connection after it: over BOSH, the session's request id and connections change.
send(#{bosh := _} = C, Bytes) -> ?BOSH:send(C, Bytes);
send(#{ws := _, s := S} = C, Bytes) -> sent(?WS:send(S, Bytes), C);
send(#{s := S} = C, Bytes) -> sent(beamscale_load_tcp:send(S, Bytes), C).

sent(ok, C) -> {ok, C};
sent({error, _} = E, _C) -> E.

%% Bytes received: over WebSocket, the text of its whole frames.
feed(#{ws := Raw, buf := Buf, s := S} = C, Data) ->
    case ?WS:feed(S, {Raw, Buf}, Data) of
        {ok, Raw1, Buf1} -> {ok, C#{ws := Raw1, buf := Buf1}};
        {error, _} = E -> E
    end;
feed(#{buf := <<>>} = C, Data) -> {ok, C#{buf := Data}};
feed(#{buf := Buf} = C, Data) -> {ok, C#{buf := <<Buf/binary, Data/binary>>}}.

exchange(Bytes, Want, C, Timeout) ->
    case send(C, Bytes) of
        {ok, C1} when Want =:= none -> {ok, C1};
        {ok, C1} -> await(Want, C1, beamscale_load_tcp:deadline(Timeout));
        {error, R} -> gone(C, R)
    end.

%% Stanzas until the one awaited; messages met on the way are read for their stamp, pings
%% answered, others dropped. While a stanza is incomplete its buffer only grows, so each scan
%% goes on from the cursor where the last stopped.
await(Want, C, Deadline) -> await(Want, C, Deadline, start).

await(Want, #{s := S, buf := Buf} = C, Deadline, Cursor) ->
    case ?ST:next(Buf, beamscale_load_reader:max(S), Cursor) of
        {ok, Part, Rest} ->
            case answer(Want, Part, C#{buf := Rest}) of
                {done, C1} -> nudge(C1), done(C1, Part);
                {next, Want1, C1} -> await(Want1, C1, Deadline, start);
                %% The stream goes on after a refused request.
                {error, {E, _} = R} when E =:= iq_error; E =:= sasl_failure ->
                    refused({?MODULE, R}, C#{buf := Rest}, Part);
                {error, R} -> gone(C, {?MODULE, R})
            end;
        {more, At} when is_map_key(bosh, C) ->
            case ?BOSH:more(C, Deadline) of
                {ok, C1} -> await(Want, C1, Deadline, At);
                {error, R} -> gone(C, R)
            end;
        {more, At} ->
            case beamscale_load_reader:recv(S, <<>>, Deadline) of
                {ok, Data} ->
                    case feed(C, Data) of
                        {ok, C1} -> await(Want, C1, Deadline, At);
                        {error, R} -> gone(C, R)
                    end;
                {error, {beamscale_load_reader, {too_big, Max}}} -> too_big(Want, Max, C);
                {error, R} -> gone(C, R)
            end;
        {error, {?ST, {too_big, Max}}} -> too_big(Want, Max, C);
        {error, R} -> gone(C, {?MODULE, R})
    end.

%% The answer as the reply checks read (`respond'), or the connection only.
done(#{respond := _} = C, {stanza, X}) -> {ok, unflag(C), #{body => X}};
done(C, _Part) -> {ok, C}.

refused(R, #{respond := _} = C, {stanza, X}) -> {error, R, unflag(C), #{body => X}};
refused(R, C, _Part) -> {error, R, C}.

unflag(closed) -> closed;
unflag(C) -> maps:remove(respond, C).

%% The bound hit (the stanza cutter's or the reader's, the same `max_reply_bytes') said with
%% what was awaited.
too_big(Want, Max, C) ->
    What = case Want of
               features -> <<"the stream features">>;
               proceed -> <<"STARTTLS's proceed">>;
               sasl -> <<"the SASL answer">>;
               {id, _} -> <<"an iq reply">>;
               _ -> <<"a stanza">>
           end,
    gone(C, {?MODULE, {too_big, What, Max}}).

answer(Want, {header, H}, C) -> {next, Want, C#{sid => ?ST:attr(H, <<"id">>)}};
answer(_Want, stream_end, _C) -> {error, stream_end};
answer(Want, {stanza, X}, C) -> stanza(Want, ?ST:name(X), X, C).

stanza(_Want, <<"stream:error">>, X, _C) -> {error, {stream_error, ?ST:condition(X)}};
stanza(Want, <<"open">>, X, C) -> {next, Want, C#{sid => ?ST:attr(X, <<"id">>)}};
stanza(_Want, <<"close">>, _X, _C) -> {error, stream_end};
stanza(features, <<"stream:features">>, _X, C) -> {done, C};
stanza(proceed, <<"proceed">>, _X, C) -> {done, C};
stanza(sasl, <<"success">>, _X, C) -> {done, C};
stanza(sasl, <<"failure">>, X, _C) -> {error, {sasl_failure, ?ST:condition(X)}};
stanza(sasl, <<"challenge">>, X, #{user := U, pass := P, domain := D} = C) ->
    Text = case binary:split(X, [<<">">>, <<"</">>], [global]) of
               [_, T | _] -> T;
               _ -> <<>>
           end,
    case send(C, ?Z:digest_md5(Text, U, P, D)) of
        {ok, C1} -> {next, sasl, C1};
        {error, R} -> {error, {send, R}}
    end;
stanza(Want, <<"iq">>, X, C) -> iq_in(Want, ?ST:attr(X, <<"type">>), X, C);
stanza(Want, <<"message">>, X, C) ->
    ?U:delivered(X),
    any(Want, C);
stanza(Want, _Name, _X, C) -> any(Want, C).

any(any, C) -> {done, C};
any(Want, C) -> {next, Want, C}.

iq_in({id, Id} = Want, Type, X, C) ->
    case {?ST:attr(X, <<"id">>), Type} of
        {Id, <<"error">>} -> {error, {iq_error, ?ST:condition(X)}};
        {Id, _} -> {done, C};
        _ -> {next, Want, C}
    end;
iq_in(Want, Type, X, C) when Type =:= <<"get">>; Type =:= <<"set">> ->
    case send(C, ?U:pong(X)) of
        {ok, C1} -> {next, Want, C1};
        {error, R} -> {error, {send, R}}
    end;
iq_in(Want, _Type, _X, C) -> any(Want, C).

%% Bytes that came behind the answer wait in the buffer, where a `wait' step, which watches the
%% mailbox, would not see them: an empty message of the socket hands them on.
nudge(#{buf := <<>>}) -> ok;
nudge(#{s := S}) -> beamscale_load_transport:nudge(S).

gone(#{bosh := _} = C, Reason) ->
    ok = ?BOSH:drop(C),
    %% The run names only its kinds' reasons in their words: BOSH's go by this kind.
    {error, case Reason of
                {?BOSH, _} -> {?MODULE, Reason};
                _ -> Reason
            end, closed};
gone(#{s := S}, Reason) ->
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% @doc Close the user's connection.
-spec close(conn()) -> ok.
close(#{bosh := _} = C) -> ?U:offline(C), ?BOSH:drop(C);
close(#{s := S} = C) -> ?U:offline(C), beamscale_load_tcp:drop(S).

%% @doc The socket whose messages are this connection's pushes (over BOSH, its two).
-spec push_socket(conn()) -> term() | [term()].
push_socket(#{bosh := _} = C) -> ?BOSH:socks(C);
push_socket(#{s := S}) -> S.

%% @doc Stanzas the server sent while the user waits: a message is a push (its delivery time
%% recorded), pings are answered, the rest dropped.
-spec handle_push(term(), conn(), term()) -> {push | ignore, conn() | closed, term()}.
handle_push(Msg, #{bosh := _} = C, Store) -> bosh_push(Msg, C, Store);
handle_push({T, S, Data}, #{s := S} = C, Store) when T =:= tcp; T =:= ssl ->
    beamscale_load_request:count(bytes_received, byte_size(Data)),
    case case feed(C, Data) of
             {ok, Fed} -> pushes(Fed, 0);
             {error, _} -> error
         end of
        {ok, C1, 0} -> {ignore, C1, Store};
        {ok, C1, _} -> {push, C1, Store};
        error -> ?U:offline(C), ok = beamscale_load_tcp:drop(S), {ignore, closed, Store}
    end;
handle_push({P, S}, #{s := S} = C, Store) when P =:= tcp_passive; P =:= ssl_passive ->
    ok = beamscale_load_reader:arm(S),
    {ignore, C, Store};
handle_push(_Closed, #{s := S} = C, Store) ->
    ?U:offline(C),
    ok = beamscale_load_tcp:drop(S),
    {ignore, closed, Store}.

%% Over BOSH: each whole response's stanzas taken, and a poll kept open for the next ones.
bosh_push({T, S, Data}, C, Store) when T =:= tcp; T =:= ssl ->
    beamscale_load_request:count(bytes_received, byte_size(Data)),
    Polled = case ?BOSH:feed(C, S, Data) of
                 {ok, Fed} ->
                     case pushes(Fed, 0) of
                         {ok, C1, Got} -> {?BOSH:poll(C1), Got};
                         error -> error
                     end;
                 {error, _} -> error
             end,
    case Polled of
        {{ok, C2}, 0} -> {ignore, C2, Store};
        {{ok, C2}, _} -> {push, C2, Store};
        _ -> ?U:offline(C), ok = ?BOSH:drop(C), {ignore, closed, Store}
    end;
bosh_push({P, S}, C, Store) when P =:= tcp_passive; P =:= ssl_passive ->
    ok = beamscale_load_reader:arm(S),
    {ignore, C, Store};
bosh_push(_Closed, C, Store) ->
    ?U:offline(C),
    ok = ?BOSH:drop(C),
    {ignore, closed, Store}.

pushes(#{s := S, buf := Buf} = C, Got) ->
    case ?ST:next(Buf, beamscale_load_reader:max(S)) of
        {ok, Part, Rest} ->
            case answer(none, Part, C#{buf := Rest}) of
                {next, none, C1} ->
                    pushes(C1, Got + case Part of
                                         {stanza, <<"<message", _/binary>>} -> 1;
                                         _ -> 0
                                     end);
                {error, _} -> error
            end;
        more -> {ok, C, Got};
        {error, _} -> error
    end.

%% @doc The kind's step name.
-spec name() -> xmpp.
name() -> xmpp.

%% @doc `%%_name%%' placeholders in its specs.
-spec features() -> [beamscale_load_request:feature()].
features() -> [subst, match].

%% @doc One connection per target.
-spec sockets(map()) -> 1.
sockets(_Target) -> 1.

%% @doc The counts and histogram a run with xmpp steps declares: chats sent and delivered, and
%% their delivery time.
-spec measures() -> {[binary()], [atom()]}.
measures() -> ?U:measures().

%% @doc The text of its reasons.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error(not_connected) -> "an XMPP request before connect (or after close)";
format_error(stream_end) -> "the server closed the XMPP stream";
format_error({stream_error, C}) -> ["XMPP stream error: ", C];
format_error({sasl_failure, C}) -> ["SASL failure: ", C];
format_error({iq_error, C}) -> ["XMPP iq error: ", C];
format_error({send, R}) -> io_lib:format("send: ~0tp", [R]);
format_error({too_big, What, Max}) ->
    io_lib:format("XMPP stanza above max_reply_bytes (~b) awaiting ~ts: connection closed",
                  [Max, What]);
format_error({?BOSH, _} = R) -> ?BOSH:format_error(R);
format_error(R) -> ?ST:format_error(R).

%% @doc Tsung's `ts_jabber' sessions and their `<jabber>' element.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> beamscale_load_xmpp_tsung:tsung().


%% @doc A `<jabber>' element (`beamscale_load_xmpp_tsung').
-spec from_tsung(tuple(), tuple(), map()) -> {map(), [{atom(), map()}]}.
from_tsung(Req, E, Ctx) -> beamscale_load_xmpp_tsung:from_tsung(Req, E, Ctx).
