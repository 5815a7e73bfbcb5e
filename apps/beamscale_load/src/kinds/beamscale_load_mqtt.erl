%% @doc The `mqtt' request kind, Tsung's `ts_mqtt': an MQTT 3.1.1 client (or 5.0, a `connect'
%% with `version => 5') over the user's TCP (or TLS) connection (`beamscale_load_mqtt_codec').
%% `connect' sends CONNECT and waits for CONNACK, `publish' sends at QoS 0 (no answer), 1 (waits
%% for its PUBACK) or 2 (PUBREC, PUBREL, PUBCOMP), `subscribe' and `unsubscribe' wait for their
%% acknowledgement, `disconnect' ends the session. Messages the broker delivers from the user's
%% subscriptions are pushes (`handle_push/3', in a `bidi' session): counted, acknowledged at QoS
%% 1 and 2, their payload dropped; a `wait' step waits for one. A `size' payload carries the
%% publish stamp (`beamscale_load_stamp'): the user it is delivered to records the
%% publish-to-delivery time. PINGREQs keep the connection while the user thinks (keepalive).
%% Every read goes through `beamscale_load_reader' and the codec refuses a packet longer than
%% the target's `max_reply_bytes' before its bytes come. MQTT 5.0's reason codes of 0x80 and
%% above are errors named by their reason (`beamscale_load_mqtt_v5'), on a connection kept but
%% for CONNACK's and a server's DISCONNECT.
-module(beamscale_load_mqtt).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).
-export([name/0, format_error/1, tsung/0, from_tsung/3]).
-export([push_socket/1, handle_push/3, measures/0]).
-export_type([conn/0]).

-type socket() :: beamscale_load_tcp:socket().
%% The socket, the bytes received but not decoded, the next packet id, and the MQTT session's
%% protocol level once it is open (CONNACK received): 4 (MQTT 3.1.1) or 5 (MQTT 5.0).
-type conn() :: {mqtt, socket(), binary(), 1..65535, false | 4 | 5}.

-define(CODEC, beamscale_load_mqtt_codec).
-define(N(Name), beamscale_load_request:named(Name)).
-define(P, beamscale_load_mqtt_ping).
%% Bytes a `size' payload may ask for: the payload is built once per spec and held by every user.
-define(MAX_SIZE, 16 * 1024 * 1024).
-define(KEYS, #{connect => [keepalive_s, client_id, clean, user, password, will, version,
                            session_expiry_s, receive_maximum],
                publish => [topic, payload, size, qos, retain, stamp, user_properties],
                subscribe => [topic, qos], unsubscribe => [topic], disconnect => []}).

%% @doc `#{type => connect | publish | subscribe | unsubscribe | disconnect, ...}' against
%% host:port (docs/scenario.md, "mqtt").
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := _}) -> beamscale_load_request:check_typed(Spec, ?KEYS, fun spec/2);
check(#{type := _}, _Target) -> {error, target, "mqtt needs a host:port target"};
check(_Spec, _Target) -> {error, type, "missing"}.

spec(connect, S) ->
    Will = case S of
               #{will := #{topic := T, message := M} = W} ->
                   #{will => #{topic => text(will, T), message => bytes(will, M),
                               qos => qos(maps:get(qos, W, 0)),
                               retain => bool(will, maps:get(retain, W, false))}};
               #{will := _} -> bad(will, "expected #{topic => T, message => M, qos, retain}");
               _ -> #{}
           end,
    Creds = maps:from_list([{K, text(K, V)} || K <- [user, password],
                                               V <- [maps:get(K, S, undefined)],
                                               V =/= undefined]),
    Clean = bool(clean, maps:get(clean, S, true)),
    maps:merge(maps:merge(Will, v5(maps:get(version, S, 4), Clean, S)),
               Creds#{type => connect, keepalive_s => keepalive(maps:get(keepalive_s, S, 60)),
                      clean => Clean,
                      client_id => text(client_id, maps:get(client_id, S, <<>>))});
spec(publish, S) ->
    Payload = case S of
                  #{payload := _, size := _} -> bad(size, "give payload or size, not both");
                  #{payload := P} -> bytes(payload, P);
                  #{size := N} when is_integer(N), N >= 0, N =< ?MAX_SIZE -> <<0:(N * 8)>>;
                  #{size := _} -> bad(size, "expected a size from 0 to 16 MiB");
                  _ -> <<>>
              end,
    Props = maps:from_list([{properties, #{user_property => pairs(Ps)}}
                            || #{user_properties := Ps} <- [S]]),
    Qos = qos(maps:get(qos, S, 0)),
    %% Nothing answers a QoS 0 publish (nor a disconnect): counted apart, Tsung's request_noack.
    (maps:merge(Props, maps:from_list([{ack, no_ack} || Qos =:= 0])))#{
      type => publish, topic => topic(S), payload => Payload, qos => Qos,
      retain => bool(retain, maps:get(retain, S, false)),
      stamp => case bool(stamp, maps:get(stamp, S, is_map_key(size, S))) of
                   true when is_map_key(size, S) -> head;
                   true -> front;
                   false -> false
               end};
spec(subscribe, S) -> #{type => subscribe, topic => topic(S), qos => qos(maps:get(qos, S, 0))};
spec(unsubscribe, S) -> #{type => unsubscribe, topic => topic(S)};
spec(disconnect, _) -> #{type => disconnect, ack => no_ack}.

%% MQTT 5.0's CONNECT properties: the session kept `session_expiry_s' after the connection
%% (by default none with `clean', for ever without, as 3.1.1 keeps it), at most
%% `receive_maximum' QoS 1 and 2 deliveries unacknowledged, and no topic aliases (each
%% delivery names its topic).
v5(4, _Clean, S) ->
    case [K || K <- [session_expiry_s, receive_maximum], is_map_key(K, S)] of
        [] -> #{};
        [K | _] -> bad(K, "an MQTT 5 setting: needs version => 5")
    end;
v5(5, Clean, S) ->
    Expiry = maps:get(session_expiry_s, S, case Clean of true -> 0; false -> 16#FFFFFFFF end),
    Max = maps:get(receive_maximum, S, 65535),
    #{version => 5,
      properties => #{session_expiry_interval => within(session_expiry_s, Expiry, 0, 16#FFFFFFFF),
                      receive_maximum => within(receive_maximum, Max, 1, 65535),
                      topic_alias_maximum => 0}};
v5(_, _Clean, _S) -> bad(version, "expected 4 (MQTT 3.1.1) or 5 (MQTT 5.0)").

within(_Key, V, Lo, Hi) when is_integer(V), V >= Lo, V =< Hi -> V;
within(Key, _V, Lo, Hi) -> bad(Key, lists:flatten(io_lib:format("expected ~b to ~b", [Lo, Hi]))).

pairs(Ps) when is_list(Ps) ->
    [case P of
         {K, V} -> {text(user_properties, K), text(user_properties, V)};
         _ -> bad(user_properties, "expected [{Key, Value}] strings")
     end || P <- Ps];
pairs(_) -> bad(user_properties, "expected [{Key, Value}] strings").

topic(#{topic := T}) ->
    case text(topic, T) of
        <<>> -> bad(topic, "expected a non-empty topic");
        B -> B
    end;
topic(_) -> bad(topic, "missing").

text(Key, V) ->
    case bytes(Key, V) of
        B when byte_size(B) =< 65535 -> B;
        _ -> bad(Key, "at most 65535 bytes")
    end.

bytes(Key, V) ->
    try iolist_to_binary(V)
    catch error:badarg -> bad(Key, "expected a string (iodata)")
    end.

qos(Q) when Q =:= 0; Q =:= 1; Q =:= 2 -> Q;
qos(_) -> bad(qos, "expected 0, 1 or 2").

bool(_Key, B) when is_boolean(B) -> B;
bool(Key, _) -> bad(Key, "expected true or false").

keepalive(K) when is_integer(K), K >= 0, K =< 65535 -> K;
keepalive(_) -> bad(keepalive_s, "expected seconds from 0 to 65535").

-spec bad(atom(), string()) -> no_return().
bad(Key, Msg) -> throw({bad, Key, Msg}).

%% @doc Open the user's TCP connection (TLS if the target says so); the MQTT session is opened
%% by a `connect' request.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(Target) ->
    case beamscale_load_tcp:connect(Target) of
        {ok, {S, Buf}} -> {ok, {mqtt, S, Buf, 1, false}};
        {error, _} = E -> E
    end.

%% @doc Send one packet and wait for its answer, if it has one.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{type := connect}, {mqtt, _, _, _, V} = Conn, _Timeout) when V =/= false ->
    {error, {?MODULE, already_connected}, Conn};
request(#{type := connect, keepalive_s := K} = Spec, {mqtt, S, Buf, Id, false}, Timeout) ->
    P = Spec#{client_id := client_id(Spec)},
    case exchange(P, {mqtt, S, Buf, Id, false}, connack, Timeout) of
        {ok, _} = Ok -> ok = ?P:arm(S, K * 1000), ok = ?N(<<"mqtt_connected">>), Ok;
        Error -> Error
    end;
request(_Spec, {mqtt, _, _, _, false} = Conn, _Timeout) ->
    {error, {?MODULE, not_connected}, Conn};
%% MQTT 5.0 properties only on a 5.0 session; its publish and subscriptions always have them.
request(#{properties := _}, {mqtt, _, _, _, 4} = Conn, _Timeout) ->
    {error, {?MODULE, v5_only}, Conn};
request(#{type := T} = P, {mqtt, _, _, _, 5} = Conn, Timeout)
  when not is_map_key(properties, P), T =/= disconnect ->
    request(P#{properties => #{}}, Conn, Timeout);
request(#{type := disconnect}, {mqtt, S, _, _, _}, _Timeout) ->
    _ = send(S, #{type => disconnect}),
    ok = ?N(<<"mqtt_disconnected">>),
    ok = ?P:disarm(S),
    ok = beamscale_load_tcp:drop(S),
    {ok, closed};
request(#{type := publish, stamp := Where, payload := Pl} = P, Conn, Timeout)
  when Where =/= false ->
    %% A size payload's head, or the stamp in front of a given one.
    Stamped = case Where of
                  head -> beamscale_load_stamp:stamped(Pl);
                  front -> <<(beamscale_load_stamp:stamp())/binary, Pl/binary>>
              end,
    request(P#{stamp := false, payload := Stamped}, Conn, Timeout);
request(#{type := publish, qos := 0} = P, Conn, Timeout) -> exchange(P, Conn, none, Timeout);
%% QoS 2: PUBLISH, PUBREC, PUBREL, PUBCOMP, all within the request's deadline.
request(#{type := publish, qos := Q} = P, {mqtt, _, _, Id, _} = Conn, Timeout) ->
    exchange(P#{id => Id}, Conn, {case Q of 1 -> puback; 2 -> pubrec end, Id}, Timeout);
request(#{type := subscribe, topic := T, qos := Q} = P, {mqtt, _, _, Id, _} = Conn, Timeout) ->
    Sub = maps:with([properties], P),
    exchange(Sub#{type => subscribe, id => Id, topics => [{T, Q}]}, Conn, {suback, Id}, Timeout);
request(#{type := unsubscribe, topic := T} = P, {mqtt, _, _, Id, _} = Conn, Timeout) ->
    Unsub = maps:with([properties], P),
    exchange(Unsub#{type => unsubscribe, id => Id, topics => [T]}, Conn, {unsuback, Id},
             Timeout).

%% An empty client id asks the broker for one, which MQTT 3.1.1 allows with a clean session
%% only: a kept session needs a name of its own, unique per connection.
client_id(#{client_id := <<>>, clean := false}) ->
    iolist_to_binary(io_lib:format("beamscale-~ts-~b",
                                   [node(), erlang:unique_integer([positive])]));
client_id(#{client_id := Id}) -> Id.

exchange(Packet, {mqtt, S, Buf, Id, Up}, Want, Timeout) ->
    ok = ?P:beat(S),
    Next = Id rem 65535 + 1,
    case send(S, Packet, Up) of
        ok when Want =:= none -> ok = sent(Packet), {ok, {mqtt, S, Buf, Next, Up}};
        ok -> ok = sent(Packet), await(Want, S, Buf, beamscale_load_tcp:deadline(Timeout), Next,
                    version(Up, Packet));
        {error, Reason} -> gone(S, Reason)
    end.

sent(#{type := publish}) -> ?N(<<"mqtt_published">>);
sent(_Packet) -> ok.

%% The session's protocol level, or the one its CONNECT asks for.
version(false, Packet) -> maps:get(version, Packet, 4);
version(V, _Packet) -> V.

send(S, Packet, Version) -> beamscale_load_tcp:send(S, ?CODEC:encode(Packet, Version)).

send(S, Packet) -> beamscale_load_tcp:send(S, ?CODEC:encode(Packet)).

%% The packet awaited; deliveries from subscriptions that come first are acknowledged and
%% dropped (a request does not count pushes: only a wait does). A PUBACK without a reason code
%% (most publishes' answer) is matched as bytes, not decoded.
await({puback, Id}, S, <<16#40, 2, Id:16, Rest/binary>>, _Deadline, Next, V) ->
    ok = ?N(<<"mqtt_server_pubacked">>),
    nudge(S, Rest),
    {ok, {mqtt, S, Rest, Next, V}};
await(Want, S, <<>>, Deadline, Id, V) -> read(Want, S, <<>>, Deadline, Id, V);
await(Want, S, Buf, Deadline, Id, V) ->
    case ?CODEC:decode(Buf, beamscale_load_reader:max(S), V) of
        {ok, P, Rest} ->
            case answer(Want, P, S) of
                {done, Result} -> nudge(S, Rest), Result({mqtt, S, Rest, Id, V});
                {next, Want1} -> await(Want1, S, Rest, Deadline, Id, V);
                skip -> await(Want, S, Rest, Deadline, Id, V);
                {error, R} -> gone(S, {?MODULE, R})
            end;
        more -> read(Want, S, Buf, Deadline, Id, V);
        {error, {?CODEC, R}} -> gone(S, {?MODULE, R})
    end.

read(Want, S, Buf, Deadline, Id, V) ->
    case beamscale_load_reader:recv(S, Buf, Deadline) of
        {ok, Buf1} -> await(Want, S, Buf1, Deadline, Id, V);
        {error, Reason} -> gone(S, Reason)
    end.

%% Bytes that came with the answer (a retained message right behind a SUBACK) wait in the
%% buffer, where a `wait' step, which watches the mailbox, would not see them: an empty message
%% of the socket hands them to `handle_push/3' (or to the next request's read).
nudge(_S, <<>>) -> ok;
nudge(S, _Rest) -> beamscale_load_transport:nudge(S).

%% The answer awaited: `{done, fun(Conn) -> Result end}' (an error by reason code keeps the
%% connection), or the next packet to await; an error closes the connection.
answer(connack, #{type := connack, return_code := 0}, _S) -> {done, fun(C) -> {ok, C} end};
answer(connack, #{type := connack, return_code := Rc}, _S) when Rc >= 16#80 ->
    {error, {reason, connack, Rc}};
answer(connack, #{type := connack, return_code := Rc}, _S) -> {error, {refused, Rc}};
answer({Type, Id}, #{type := Type, id := Id} = P, S) ->
    _ = [?N(<<"mqtt_server_pubacked">>) || Type =:= puback],
    case refusal(P) of
        none when Type =:= pubrec ->
            case send(S, #{type => pubrel, id => Id}) of
                ok -> {next, {pubcomp, Id}};
                {error, R} -> {error, {send, R}}
            end;
        none -> {done, fun(C) -> {ok, C} end};
        R -> {done, fun(C) -> {error, {?MODULE, R}, C} end}
    end;
answer(_Want, #{type := disconnect, reason_code := Rc}, _S) -> {error, {disconnected, Rc}};
answer(_Want, #{type := publish} = P, S) -> received(S, P), skip;
answer(_Want, #{type := pingresp}, _S) -> skip;
answer(_Want, #{type := pubrel, id := Id}, S) -> _ = send(S, #{type => pubcomp, id => Id}), skip;
answer(_Want, #{type := T}, _S) -> {error, {unexpected, T}}.

%% A reason code of 0x80 or above (3.1.1's SUBACK has 0x80 alone): the first.
refusal(#{type := T, reason_code := Rc}) when Rc >= 16#80 -> {reason, T, Rc};
refusal(#{type := T, codes := Codes}) ->
    case [C || <<C>> <= Codes, C >= 16#80] of
        [] -> none;
        [C | _] -> {reason, T, C}
    end;
refusal(_P) -> none.

%% A delivery from the broker (Tsung's `mqtt_server_published'), in a request's wait or a push,
%% bidi or not: its stamp read, and at QoS 1 acknowledged (Tsung's `mqtt_pubacked'), else the
%% broker sends it again; at QoS 2 received (PUBREC), its PUBREL completed (PUBCOMP) when it
%% comes.
received(S, #{payload := Pl} = P) ->
    ok = ?N(<<"mqtt_server_published">>),
    _ = ack(S, P),
    beamscale_load_stamp:delivered(Pl).

ack(S, #{qos := 1, id := Id}) -> ok = ?N(<<"mqtt_pubacked">>), send(S, #{type => puback, id => Id});
ack(S, #{qos := 2, id := Id}) -> send(S, #{type => pubrec, id => Id});
ack(_S, _P) -> ok.

gone(S, Reason) ->
    ok = ?P:disarm(S),
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% @doc Close the user's connection (without DISCONNECT: the broker then sends the will).
-spec close(conn()) -> ok.
close({mqtt, S, _, _, _}) ->
    ok = ?P:disarm(S),
    beamscale_load_tcp:drop(S).

%% @doc The socket whose messages are this connection's pushes.
-spec push_socket(conn()) -> term().
push_socket({mqtt, S, _, _, _}) -> S.

%% @doc Bytes the broker sent while the user waits: whole PUBLISH packets are pushes (counted in
%% `Store', acknowledged at QoS 1 and 2), other packets dropped, a partial one kept for the next
%% bytes.
-spec handle_push(term(), conn(), non_neg_integer() | undefined) ->
    {push | ignore, conn() | closed, non_neg_integer()}.
handle_push(Msg, Conn, undefined) -> handle_push(Msg, Conn, 0);
handle_push({mqtt_ping, S}, {mqtt, S, _, _, _} = Conn, N) ->
    ok = ?P:ping(S),
    {ignore, Conn, N};
handle_push({T, S, Data}, {mqtt, S, Buf, Id, Up}, N) when T =:= tcp; T =:= ssl ->
    beamscale_load_request:count(bytes_received, byte_size(Data)),
    case deliveries(S, <<Buf/binary, Data/binary>>, 0, version(Up, #{})) of
        {ok, Rest, 0} -> {ignore, {mqtt, S, Rest, Id, Up}, N};
        {ok, Rest, Got} -> {push, {mqtt, S, Rest, Id, Up}, N + Got};
        error -> ok = ?P:disarm(S), ok = beamscale_load_tcp:drop(S), {ignore, closed, N}
    end;
handle_push({Passive, S}, {mqtt, S, _, _, _} = Conn, N) when Passive =:= tcp_passive;
                                                               Passive =:= ssl_passive ->
    ok = beamscale_load_reader:arm(S),
    {ignore, Conn, N};
handle_push(_Closed, {mqtt, S, _, _, _}, N) ->
    ok = ?P:disarm(S),
    ok = beamscale_load_tcp:drop(S),
    {ignore, closed, N}.

deliveries(S, Buf, Got, V) ->
    case ?CODEC:decode(Buf, beamscale_load_reader:max(S), V) of
        {ok, #{type := publish} = P, Rest} ->
            ok = received(S, P),
            deliveries(S, Rest, Got + 1, V);
        {ok, #{type := pubrel, id := Id}, Rest} ->
            _ = send(S, #{type => pubcomp, id => Id}),
            deliveries(S, Rest, Got, V);
        {ok, _Other, Rest} -> deliveries(S, Rest, Got, V);
        more -> {ok, Buf, Got};
        {error, _} -> error
    end.

%% @doc Tsung's counters of `ts_mqtt', and its own histogram: a stamped publish's time to its
%% delivery (`beamscale_load_stamp').
-spec measures() -> {[binary()], [atom()]}.
measures() ->
    {[<<"mqtt_", N/binary>> || N <- [<<"connected">>, <<"disconnected">>, <<"published">>,
                                     <<"server_pubacked">>, <<"server_published">>,
                                     <<"pubacked">>]],
     [delivery_time]}.

%% @doc The kind's step name.
-spec name() -> mqtt.
name() -> mqtt.

%% @doc The text of its reasons.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error(already_connected) -> "connect on an MQTT session already open";
format_error(not_connected) -> "an MQTT request before connect (or after disconnect)";
format_error({refused, Rc}) -> io_lib:format("CONNACK refused the connection (code ~b)", [Rc]);
format_error({send, R}) -> io_lib:format("send: ~0tp", [R]);
format_error({unexpected, T}) -> io_lib:format("unexpected MQTT ~ts packet", [T]);
format_error(R) -> ?CODEC:format_error(R).

%% @doc Tsung's `ts_mqtt' sessions and their `<mqtt>' element (`beamscale_load_mqtt_tsung').
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> beamscale_load_mqtt_tsung:tsung().

%% @doc An `<mqtt>' element (`beamscale_load_mqtt_tsung').
-spec from_tsung(tuple(), tuple(), map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) -> beamscale_load_mqtt_tsung:from_tsung(E, Ctx, fun check/2).
