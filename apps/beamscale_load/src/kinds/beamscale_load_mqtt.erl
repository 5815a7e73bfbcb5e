%% @doc The `mqtt' request kind, Tsung's `ts_mqtt': an MQTT 3.1.1 client over the user's TCP (or
%% TLS) connection (`beamscale_load_mqtt_codec'). `connect' sends CONNECT and waits for CONNACK,
%% `publish' sends at QoS 0 (no answer), 1 (waits for its PUBACK) or 2 (PUBREC, PUBREL,
%% PUBCOMP), `subscribe' and `unsubscribe' wait for their acknowledgement, `disconnect' ends the
%% session. Messages the broker delivers from the user's subscriptions are pushes
%% (`handle_push/3', in a `bidi' session): counted, acknowledged at QoS 1 and 2, their payload
%% dropped; a `wait' step waits for one. A `size' payload carries the publish stamp
%% (`beamscale_load_stamp'): the user it is delivered to records the publish-to-delivery time.
%% PINGREQs keep the connection while the user thinks (keepalive).
%% Every read goes through `beamscale_load_reader' and the codec refuses a packet longer than
%% the target's `max_reply_bytes' before its bytes come.
-module(beamscale_load_mqtt).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).
-export([name/0, format_error/1, tsung/0, from_tsung/3]).
-export([push_socket/1, handle_push/3, measures/0]).
-export_type([conn/0]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/2, attr/3, req/3, bool/4, fail/4]).

-type socket() :: beamscale_load_tcp:socket().
%% The socket, the bytes received but not decoded, the next packet id, and whether the MQTT
%% session is open (CONNACK received).
-type conn() :: {mqtt, socket(), binary(), 1..65535, boolean()}.

-define(CODEC, beamscale_load_mqtt_codec).
%% Bytes a `size' payload may ask for: the payload is built once per spec and held by every user.
-define(MAX_SIZE, 16 * 1024 * 1024).
-define(KEYS, #{connect => [keepalive_s, client_id, clean, user, password, will],
                publish => [topic, payload, size, qos, retain, stamp],
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
    maps:merge(Will, Creds#{type => connect,
                            keepalive_s => keepalive(maps:get(keepalive_s, S, 60)),
                            clean => bool(clean, maps:get(clean, S, true)),
                            client_id => text(client_id, maps:get(client_id, S, <<>>))});
spec(publish, S) ->
    Payload = case S of
                  #{payload := _, size := _} -> bad(size, "give payload or size, not both");
                  #{payload := P} -> bytes(payload, P);
                  #{size := N} when is_integer(N), N >= 0, N =< ?MAX_SIZE -> <<0:(N * 8)>>;
                  #{size := _} -> bad(size, "expected a size from 0 to 16 MiB");
                  _ -> <<>>
              end,
    #{type => publish, topic => topic(S), payload => Payload,
      qos => qos(maps:get(qos, S, 0)), retain => bool(retain, maps:get(retain, S, false)),
      stamp => case bool(stamp, maps:get(stamp, S, is_map_key(size, S))) of
                   true when is_map_key(size, S) -> head;
                   true -> front;
                   false -> false
               end};
spec(subscribe, S) -> #{type => subscribe, topic => topic(S), qos => qos(maps:get(qos, S, 0))};
spec(unsubscribe, S) -> #{type => unsubscribe, topic => topic(S)};
spec(disconnect, _) -> #{type => disconnect}.

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
request(#{type := connect}, {mqtt, _, _, _, true} = Conn, _Timeout) ->
    {error, {?MODULE, already_connected}, Conn};
request(#{type := connect, keepalive_s := K} = Spec, {mqtt, S, Buf, Id, false}, Timeout) ->
    P = Spec#{client_id := client_id(Spec)},
    case exchange(P, {mqtt, S, Buf, Id, false}, connack, Timeout) of
        {ok, _} = Ok -> ok = arm(S, K * 1000), Ok;
        Error -> Error
    end;
request(_Spec, {mqtt, _, _, _, false} = Conn, _Timeout) ->
    {error, {?MODULE, not_connected}, Conn};
request(#{type := disconnect}, {mqtt, S, _, _, true}, _Timeout) ->
    _ = send(S, #{type => disconnect}),
    ok = disarm(S),
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
request(#{type := subscribe, topic := T, qos := Q}, {mqtt, _, _, Id, _} = Conn, Timeout) ->
    exchange(#{type => subscribe, id => Id, topics => [{T, Q}]}, Conn, {suback, Id}, Timeout);
request(#{type := unsubscribe, topic := T}, {mqtt, _, _, Id, _} = Conn, Timeout) ->
    exchange(#{type => unsubscribe, id => Id, topics => [T]}, Conn, {unsuback, Id}, Timeout).

%% An empty client id asks the broker for one, which MQTT 3.1.1 allows with a clean session
%% only: a kept session needs a name of its own, unique per connection.
client_id(#{client_id := <<>>, clean := false}) ->
    iolist_to_binary(io_lib:format("beamscale-~ts-~b",
                                   [node(), erlang:unique_integer([positive])]));
client_id(#{client_id := Id}) -> Id.

exchange(Packet, {mqtt, S, Buf, Id, Up}, Want, Timeout) ->
    ok = beat(S),
    Next = Id rem 65535 + 1,
    case send(S, Packet) of
        ok when Want =:= none -> {ok, {mqtt, S, Buf, Next, Up}};
        ok -> await(Want, S, Buf, beamscale_load_tcp:deadline(Timeout), Next);
        {error, Reason} -> gone(S, Reason)
    end.

send(S, Packet) -> beamscale_load_tcp:send(S, ?CODEC:encode(Packet)).

%% The packet awaited; deliveries from subscriptions that come first are acknowledged and
%% dropped (a request does not count pushes: only a wait does).
await(Want, S, Buf, Deadline, Id) ->
    case ?CODEC:decode(Buf, beamscale_load_reader:max(S)) of
        {ok, P, Rest} ->
            case answer(Want, P, S) of
                {done, Result} -> nudge(S, Rest), Result(Rest, Id);
                {next, Want1} -> await(Want1, S, Rest, Deadline, Id);
                skip -> await(Want, S, Rest, Deadline, Id);
                {error, R} -> gone(S, {?MODULE, R})
            end;
        more ->
            case beamscale_load_reader:recv(S, Buf, Deadline) of
                {ok, Buf1} -> await(Want, S, Buf1, Deadline, Id);
                {error, Reason} -> gone(S, Reason)
            end;
        {error, {?CODEC, R}} -> gone(S, {?MODULE, R})
    end.

%% Bytes that came with the answer (a retained message right behind a SUBACK) wait in the
%% buffer, where a `wait' step, which watches the mailbox, would not see them: an empty message
%% of the socket hands them to `handle_push/3' (or to the next request's read).
nudge(_S, <<>>) -> ok;
nudge(S, _Rest) -> self() ! {tcp_or_ssl(S), S, <<>>}, ok.

tcp_or_ssl(S) when is_port(S) -> tcp;
tcp_or_ssl(_S) -> ssl.

answer(connack, #{type := connack, return_code := 0}, S) ->
    {done, fun(Rest, Id) -> {ok, {mqtt, S, Rest, Id, true}} end};
answer(connack, #{type := connack, return_code := Rc}, _S) -> {error, {refused, Rc}};
answer({pubrec, Id}, #{type := pubrec, id := Id}, S) ->
    case send(S, #{type => pubrel, id => Id}) of
        ok -> {next, {pubcomp, Id}};
        {error, R} -> {error, {send, R}}
    end;
answer({Type, Id}, #{type := Type, id := Id} = P, S) ->
    case P of
        #{codes := <<128>>} -> {error, subscribe_refused};
        _ -> {done, fun(Rest, Next) -> {ok, {mqtt, S, Rest, Next, true}} end}
    end;
answer(_Want, #{type := publish, payload := Pl} = P, S) ->
    _ = ack(S, P),
    ok = beamscale_load_stamp:delivered(Pl),
    skip;
answer(_Want, #{type := pingresp}, _S) -> skip;
answer(_Want, #{type := pubrel, id := Id}, S) -> _ = send(S, #{type => pubcomp, id => Id}), skip;
answer(_Want, #{type := T}, _S) -> {error, {unexpected, T}}.

%% A QoS 1 delivery is acknowledged, else the broker sends it again; a QoS 2 one is received
%% (PUBREC), and its PUBREL completed (PUBCOMP) when it comes.
ack(S, #{qos := 1, id := Id}) -> send(S, #{type => puback, id => Id});
ack(S, #{qos := 2, id := Id}) -> send(S, #{type => pubrec, id => Id});
ack(_S, _P) -> ok.

gone(S, Reason) ->
    ok = disarm(S),
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% @doc Close the user's connection (without DISCONNECT: the broker then sends the will).
-spec close(conn()) -> ok.
close({mqtt, S, _, _, _}) ->
    ok = disarm(S),
    beamscale_load_tcp:drop(S).

%% The keepalive: a PINGREQ every half keepalive while the user thinks (the timer's message
%% `{mqtt_ping, Socket}' is the socket's, handed to `handle_push/3'), or before its next request;
%% the broker would close a connection silent for 1.5 keepalives. The timer and its interval
%% are kept by socket, as the reader keeps its bound.
arm(_S, 0) -> ok;
arm(S, Ms) ->
    put({?MODULE, ping, S}, {erlang:send_after(max(1, Ms div 2), self(), {mqtt_ping, S}), Ms}),
    ok.

disarm(S) ->
    case erase({?MODULE, ping, S}) of
        undefined -> ok;
        {Ref, _} -> _ = erlang:cancel_timer(Ref),
                    receive {mqtt_ping, S} -> ok after 0 -> ok end
    end.

ping(S) ->
    case get({?MODULE, ping, S}) of
        {_, Ms} -> _ = send(S, #{type => pingreq}), arm(S, Ms);
        undefined -> ok
    end.

%% A ping due before a request.
beat(S) ->
    receive {mqtt_ping, S} -> ping(S) after 0 -> ok end.

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
    ok = ping(S),
    {ignore, Conn, N};
handle_push({T, S, Data}, {mqtt, S, Buf, Id, Up}, N) when T =:= tcp; T =:= ssl ->
    beamscale_load_request:count(bytes_received, byte_size(Data)),
    case deliveries(S, <<Buf/binary, Data/binary>>, 0) of
        {ok, Rest, 0} -> {ignore, {mqtt, S, Rest, Id, Up}, N};
        {ok, Rest, Got} -> {push, {mqtt, S, Rest, Id, Up}, N + Got};
        error -> ok = disarm(S), ok = beamscale_load_tcp:drop(S), {ignore, closed, N}
    end;
handle_push({Passive, S}, {mqtt, S, _, _, _} = Conn, N) when Passive =:= tcp_passive;
                                                               Passive =:= ssl_passive ->
    ok = beamscale_load_reader:arm(S),
    {ignore, Conn, N};
handle_push(_Closed, {mqtt, S, _, _, _}, N) ->
    ok = disarm(S),
    ok = beamscale_load_tcp:drop(S),
    {ignore, closed, N}.

deliveries(S, Buf, Got) ->
    case ?CODEC:decode(Buf, beamscale_load_reader:max(S)) of
        {ok, #{type := publish, payload := Pl} = P, Rest} ->
            _ = ack(S, P),
            ok = beamscale_load_stamp:delivered(Pl),
            deliveries(S, Rest, Got + 1);
        {ok, #{type := pubrel, id := Id}, Rest} ->
            _ = send(S, #{type => pubcomp, id => Id}),
            deliveries(S, Rest, Got);
        {ok, _Other, Rest} -> deliveries(S, Rest, Got);
        more -> {ok, Buf, Got};
        {error, _} -> error
    end.

%% @doc Its own histograms: a stamped publish's time to its delivery (`beamscale_load_stamp').
-spec measures() -> {[binary()], [atom()]}.
measures() -> {[], [delivery_time]}.

%% @doc The kind's step name.
-spec name() -> mqtt.
name() -> mqtt.

%% @doc The text of its reasons.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error(already_connected) -> "connect on an MQTT session already open";
format_error(not_connected) -> "an MQTT request before connect (or after disconnect)";
format_error({refused, Rc}) -> io_lib:format("CONNACK refused the connection (code ~b)", [Rc]);
format_error(subscribe_refused) -> "SUBACK refused the subscription (0x80)";
format_error({send, R}) -> io_lib:format("send: ~0tp", [R]);
format_error({unexpected, T}) -> io_lib:format("unexpected MQTT ~ts packet", [T]);
format_error(R) -> ?CODEC:format_error(R).

%% @doc Tsung's `ts_mqtt' sessions and their `<mqtt>' element, to a tcp or ssl server.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_mqtt", element => mqtt, servers => ["tcp", "ssl"],
             attributes => [type, clean_start, keepalive, will_topic, will_qos, will_msg,
                            will_retain, topic, qos, retained, timeout]}.

%% @doc An `<mqtt>' element: `type' connect (clean_start, keepalive, will_*), publish (topic,
%% qos, retained; the text is the payload), subscribe (topic, qos), unsubscribe (topic),
%% disconnect; `waitForMessages' (timeout, seconds) is a `wait' step.
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) ->
    check_attrs(E, Ctx),
    Spec = case req(E, type, Ctx) of
               "connect" -> tsung_connect(E, Ctx);
               "publish" -> #{type => publish, topic => topic(E, Ctx), qos => qos(E, Ctx),
                              retain => bool(E, retained, false, Ctx),
                              payload => unicode:characters_to_binary(
                                           beamscale_load_tsung_request:text(E))};
               "subscribe" -> #{type => subscribe, topic => topic(E, Ctx), qos => qos(E, Ctx)};
               "unsubscribe" -> #{type => unsubscribe, topic => topic(E, Ctx)};
               "disconnect" -> #{type => disconnect};
               "waitForMessages" -> #{wait_ms => wait_ms(E, Ctx)};
               T -> fail(E, Ctx, "type=\"~ts\" (expected connect, publish, subscribe, "
                                 "unsubscribe or disconnect)", [T])
           end,
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    case Spec of
        #{wait_ms := _} -> {Spec#{target => Name}, [{Name, Target}]};
        _ -> checked(Spec, Name, Target, E, Ctx)
    end.

checked(Spec, Name, Target, E, Ctx) ->
    case check(Spec, #{host => "", port => 0}) of
        {ok, _} -> {Spec#{target => Name}, [{Name, Target}]};
        {error, Key, Msg} -> fail(E, Ctx, "~ts: ~ts", [Key, Msg])
    end.

tsung_connect(E, Ctx) ->
    Will = case attr(E, will_topic) of
               undefined -> #{};
               T -> #{will => #{topic => T, message => attr(E, will_msg, ""),
                                qos => qos(E, will_qos, Ctx),
                                retain => bool(E, will_retain, false, Ctx)}}
           end,
    Will#{type => connect, clean => bool(E, clean_start, true, Ctx),
          keepalive_s => int(E, keepalive, "60", Ctx)}.

%% Tsung's `timeout' is in seconds (default 1): the wait ends at the first message, or fails
%% with `no pushed message within Ms ms'.
wait_ms(E, Ctx) ->
    case int(E, timeout, "1", Ctx) of
        S when S > 0, S =< 4294967 -> S * 1000;
        _ -> fail(E, Ctx, "timeout: expected seconds from 1 to 4294967", [])
    end.

topic(E, Ctx) -> unicode:characters_to_binary(req(E, topic, Ctx)).

qos(E, Ctx) -> qos(E, qos, Ctx).

qos(E, Name, Ctx) ->
    case attr(E, Name, "0") of
        "0" -> 0;
        "1" -> 1;
        "2" -> 2;
        Q -> fail(E, Ctx, "~ts=\"~ts\" (expected 0, 1 or 2)", [Name, Q])
    end.

int(E, Name, Default, Ctx) ->
    V = attr(E, Name, Default),
    try list_to_integer(V)
    catch error:badarg -> fail(E, Ctx, "~ts=\"~ts\" (expected an integer)", [Name, V])
    end.
