%% @doc The `amqp' request kind, Tsung's `ts_amqp': an AMQP 0-9-1 client over the user's TCP
%% (or TLS) connection. Each request is one method named as AMQP names it ('connection.open',
%% 'channel.open', 'basic.publish'...) and waits for its answer ('...-ok'); a publish waits for
%% nothing, and 'waitForConfirms' waits until every publish on a channel in confirm mode is
%% confirmed. Deliveries to the user's consumers are pushes (`handle_push/3', in a `bidi'
%% session), acknowledged unless the consumer said no ack; a publish stamps its payload and the
%% consumer that receives it records the publish-to-delivery time (histogram `delivery'), as a
%% confirm records publish-to-confirm (`confirm'). Heartbeats go out while the user thinks.
%% Frames are bounded by the negotiated frame-max, read from their header before their bytes
%% (`beamscale_load_amqp_codec'), and a message's body by the target's `max_reply_bytes'.
-module(beamscale_load_amqp).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).
-export([name/0, features/0, sockets/1, format_error/1, tsung/0, from_tsung/3]).
-export([push_socket/1, handle_push/3, measures/0]).
-export_type([conn/0]).

-include_lib("xmerl/include/xmerl.hrl").

-type conn() :: {amqp, beamscale_load_amqp_conn:state()}.

-define(CODEC, beamscale_load_amqp_codec).
-define(C, beamscale_load_amqp_conn).
-define(N(Name), beamscale_load_request:named(<<"amqp_", Name>>)).
%% The frame-max the client asks for: the largest frame it accepts, and sends.
-define(FRAME_MAX, 131072).

%% @doc `#{type => Method, ...}' against host:port (docs/scenario.md, "amqp"); `check/2' of
%% `beamscale_load_amqp_spec'.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, Target) -> beamscale_load_amqp_spec:check(Spec, Target).

%% @doc Open the user's TCP connection (TLS if the target says so); 'connection.open' opens
%% the AMQP connection over it.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(Target) ->
    case beamscale_load_tcp:connect(Target) of
        {ok, {S, Buf}} ->
            St = ?C:new(S, beamscale_load_reader:max(S)),
            {ok, {amqp, St#{buf := Buf}}};
        {error, _} = E -> E
    end.

%% @doc Send one method and wait for its answer, if it has one.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{type := 'connection.open'}, {amqp, #{open := true}} = Conn, _) ->
    {error, {?MODULE, already_open}, Conn};
request(#{type := 'connection.open'} = Spec, {amqp, St}, Timeout) ->
    open(Spec, St, beamscale_load_tcp:deadline(Timeout));
request(_Spec, {amqp, #{open := false}} = Conn, _) -> {error, {?MODULE, not_open}, Conn};
request(Spec, {amqp, St}, Timeout) ->
    St1 = ?C:beat(St),
    case channel(Spec, St1) of
        {ok, Ch} -> method(Spec, Ch, St1, beamscale_load_tcp:deadline(Timeout));
        {error, R} -> {error, {?MODULE, R}, {amqp, St1}}
    end.

%% The channel a request is on: a channel.open's next free one, or the spec's, which must be
%% open (and not closed by the broker).
channel(#{type := 'connection.close'}, _St) -> {ok, 0};
channel(#{type := 'waitForConfirms'}, _St) -> {ok, 0};
channel(#{type := 'channel.open', channel := 0}, #{next_ch := N}) -> {ok, N};
channel(#{type := 'channel.open', channel := Ch}, _St) -> {ok, Ch};
channel(#{channel := Ch}, #{chans := Cs, closed_chans := Cl}) ->
    case {Cs, Cl} of
        {#{Ch := _}, _} -> {ok, Ch};
        {_, #{Ch := Code}} -> {error, {channel_closed, Code}};
        _ -> {error, {channel_not_open, Ch}}
    end.

%% The handshake: protocol header, start / start-ok (PLAIN), tune / tune-ok and open (sent
%% together), open-ok.
open(#{vhost := V, user := U, password := P, heartbeat_s := H}, St0, D) ->
    Steps = [fun(_, St) -> call(?CODEC:protocol_header(), {'connection.start', 0}, St, D) end,
             fun(_, St) -> call(?CODEC:method(0, 'connection.start_ok',
                                              #{user => U, password => P}),
                                {'connection.tune', 0}, St, D) end,
             fun(Tune, St) -> tune(Tune, V, H, St, D) end],
    handshake(Steps, #{}, St0).

handshake([], _Args, St) -> ok = ?N("connected"), {ok, {amqp, ?C:arm(St#{open := true})}};
handshake([F | Fs], Args, St) ->
    case F(Args, St) of
        {ok, Args1, St1} -> handshake(Fs, Args1, St1);
        Error -> Error
    end.

%% The frame-max is the smaller of the broker's and ours (0: no limit of the broker's); the
%% heartbeat the user's, unless the broker asks for a shorter one.
tune(#{frame_max := SF, heartbeat := SH, channel_max := CM}, V, H, St, D) ->
    FM = case SF of 0 -> ?FRAME_MAX; _ -> min(SF, ?FRAME_MAX) end,
    HB = case {SH, H} of {0, _} -> H; {_, 0} -> 0; _ -> min(SH, H) end,
    Bytes = [?CODEC:method(0, 'connection.tune_ok',
                           #{channel_max => CM, frame_max => FM, heartbeat => HB}),
             ?CODEC:method(0, 'connection.open', #{vhost => V})],
    call(Bytes, {'connection.open_ok', 0}, St#{frame_max := FM, heartbeat_ms := HB * 1000}, D).

%% Send, then wait for the answer `Want' ({Method, Channel}).
call(Bytes, Want, St, D) ->
    case ?C:send(St, Bytes) of
        ok -> await(Want, St, D);
        {error, R} -> gone(St, R)
    end.

%% One request's method on its channel.
method(#{type := 'channel.open'}, Ch, #{chans := Cs, closed_chans := Cl, next_ch := N} = St,
       D) ->
    answered(call(?CODEC:method(Ch, 'channel.open', #{}), {'channel.open_ok', Ch}, St, D),
             fun(S) -> ok = ?N("channel_opened"),
                       S#{chans := Cs#{Ch => #{confirm => false, seq => 1, pending => #{},
                                               closing => false}},
                          closed_chans := maps:remove(Ch, Cl), next_ch := max(N, Ch + 1)}
             end);
method(#{type := 'channel.close'}, Ch, St, D) ->
    answered(call(?CODEC:method(Ch, 'channel.close', #{}), {'channel.close_ok', Ch},
                  ?C:closing(Ch, St), D),
             fun(#{chans := Cs} = S) -> ok = ?N("channel_closed"),
                                        S#{chans := maps:remove(Ch, Cs)} end);
method(#{type := 'confirm.select'}, Ch, St, D) ->
    answered(call(?CODEC:method(Ch, 'confirm.select', #{}), {'confirm.select_ok', Ch}, St, D),
             fun(#{chans := #{Ch := C} = Cs} = S) ->
                     S#{chans := Cs#{Ch := C#{confirm := true}}}
             end);
method(#{type := 'basic.consume', ack := Ack} = Spec, Ch, #{consumers := Cs} = St, D) ->
    answered(call(?CODEC:method(Ch, 'basic.consume', Spec#{no_ack => not Ack}),
                  {'basic.consume_ok', Ch}, St#{consumers := Cs#{pending => not Ack}}, D),
             fun(S) -> ok = ?N("consumer"), S end);
method(#{type := 'basic.publish', wire := {Head, Stamp, Tail}}, Ch, St, _D) ->
    published([Head, [beamscale_load_stamp:stamp() || Stamp] | Tail], Ch, St);
method(#{type := 'basic.publish'} = Spec, Ch, #{frame_max := FM} = St, _D) ->
    Publish = ?CODEC:method(Ch, 'basic.publish', Spec),
    published(?CODEC:content(Ch, payload(Spec), maps:get(persistent, Spec), FM, Publish), Ch,
              St);
method(#{type := 'waitForConfirms'}, _Ch, St, D) ->
    R = case ?C:unconfirmed(St) of
            0 -> {ok, #{}, St};
            _ -> await(confirms, St, D)
        end,
    case R of
        {ok, _, #{nacked := 0} = St1} -> {ok, {amqp, St1}};
        {ok, _, #{nacked := N} = St1} -> {error, {?MODULE, {nacked, N}}, {amqp, St1#{nacked := 0}}};
        Error -> Error
    end;
method(#{type := 'connection.close'}, _Ch, St, D) ->
    case call(?CODEC:method(0, 'connection.close', #{}), {'connection.close_ok', 0}, St, D) of
        {ok, _, St1} -> ?C:disarm(St1), ok = beamscale_load_tcp:drop(maps:get(sock, St1)),
                        ok = ?N("closed"), {ok, closed};
        Error -> Error
    end;
method(#{type := Type} = Spec, Ch, St, D) ->
    Ok = list_to_existing_atom(atom_to_list(Type) ++ "_ok"),
    answered(call(?CODEC:method(Ch, Type, Spec), {Ok, Ch}, St, D), fun(S) -> S end).

published(Bytes, Ch, St) ->
    case ?C:send(St, Bytes) of
        ok -> ok = ?N("published"), {ok, {amqp, ?C:next_seq(Ch, St)}};
        {error, R} -> gone(St, R)
    end.

answered({ok, _Args, St}, Then) -> {ok, {amqp, Then(St)}};
answered(Error, _Then) -> Error.

%% A size payload carries the publish stamp in its first bytes; a given one carries it in front
%% when the spec says `stamp => true'.
payload(#{payload := P, stamp := true}) -> <<(beamscale_load_stamp:stamp())/binary, P/binary>>;
payload(#{payload := P}) -> P;
payload(#{size := N}) -> beamscale_load_stamp:stamped(<<0:(N * 8)>>).

%% Frames until the answer `Want' ({Method, Channel}, or `confirms': none pending).
await(Want, #{sock := S} = St, D) -> await(<<>>, Want, St, D, S).

await(Data, Want, St, D, S) ->
    case ?C:read(Data, St, fun(E, St1) -> done(Want, E, St1) end) of
        {done, {error, R}, St1} -> {error, {?MODULE, R}, {amqp, St1}};
        {done, Args, St1} -> {ok, Args, St1};
        {more, St1} ->
            case beamscale_load_reader:recv(S, <<>>, D) of
                {ok, More} -> await(More, Want, St1, D, S);
                {error, R} -> gone(St1, R)
            end;
        {error, R, St1} -> gone(St1, R)
    end.

done({Name, Ch}, {answer, Name, Ch, Args}, _St) -> {done, Args};
done({_, Ch}, {channel_closed, Ch, Code}, _St) when Ch > 0 ->
    {done, {error, {channel_closed, Code}}};
%% Another method on the channel awaited (Tsung's `amqp_unexpected'): the answer still awaited.
done({_, Ch}, {answer, _, Ch, _}, _St) -> ?N("unexpected"), next;
done(confirms, _Event, St) ->
    case ?C:unconfirmed(St) of
        0 -> {done, #{}};
        _ -> next
    end;
done(_Want, _Event, _St) -> next.

gone(St, Reason) ->
    ?C:disarm(St),
    ok = beamscale_load_tcp:drop(maps:get(sock, St)),
    {error, Reason, closed}.

%% @doc Close the user's connection (without connection.close).
-spec close(conn()) -> ok.
close({amqp, St}) ->
    ?C:disarm(St),
    beamscale_load_tcp:drop(maps:get(sock, St)).

%% @doc The socket whose messages (and heartbeat timer) are this connection's pushes.
-spec push_socket(conn()) -> term().
push_socket({amqp, #{sock := S}}) -> S.

%% @doc What the broker sends while the user waits: whole deliveries are pushes (counted in
%% `Store', acknowledged), other frames applied (confirms, closes); the heartbeat timer sends a
%% heartbeat.
-spec handle_push(term(), conn(), non_neg_integer() | undefined) ->
    {push | ignore, conn() | closed, non_neg_integer()}.
handle_push(Msg, Conn, undefined) -> handle_push(Msg, Conn, 0);
handle_push({amqp_heartbeat, S}, {amqp, #{sock := S} = St}, N) ->
    {ignore, {amqp, ?C:heartbeat(St)}, N};
handle_push({T, S, Data}, {amqp, #{sock := S} = St}, N) when T =:= tcp; T =:= ssl ->
    beamscale_load_request:count(bytes_received, byte_size(Data)),
    case deliveries(Data, St, 0) of
        {ok, St1, 0} -> {ignore, {amqp, St1}, N};
        {ok, St1, Got} -> {push, {amqp, St1}, N + Got};
        {error, St1} -> _ = gone(St1, push), {ignore, closed, N}
    end;
handle_push({Passive, S}, {amqp, #{sock := S}} = Conn, N) when Passive =:= tcp_passive;
                                                               Passive =:= ssl_passive ->
    ok = beamscale_load_reader:arm(S),
    {ignore, Conn, N};
handle_push(_Closed, {amqp, St}, N) ->
    _ = gone(St, push),
    {ignore, closed, N}.

deliveries(Data, St, Got) ->
    case ?C:read(Data, St, fun(delivered, _) -> {done, delivered}; (_, _) -> next end) of
        {done, delivered, St1} -> deliveries(<<>>, St1, Got + 1);
        {more, St1} -> {ok, St1, Got};
        {error, _, St1} -> {error, St1}
    end.

%% @doc Tsung's counters of `ts_amqp', and its own histograms: a stamped publish's time to its
%% delivery (`beamscale_load_stamp'), and to its confirm.
-spec measures() -> {[binary()], [atom()]}.
measures() ->
    {[<<"amqp_", N/binary>> || N <- [<<"connected">>, <<"channel_opened">>, <<"channel_closed">>,
                                     <<"consumer">>, <<"closed">>, <<"published">>,
                                     <<"delivered">>, <<"confirmed">>, <<"unconfirmed">>,
                                     <<"error">>, <<"unexpected">>]],
     [delivery_time, confirm_time]}.

%% @doc The kind's step name.
-spec name() -> amqp.
name() -> amqp.

%% @doc Placeholders in a Tsung element (its channel numbers, its payload).
-spec features() -> [beamscale_load_request:feature()].
features() -> [subst].

%% @doc One connection per target.
-spec sockets(map()) -> 1.
sockets(_Target) -> 1.

%% @doc The text of its reasons: the broker's reply codes in AMQP's words.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error(already_open) -> "connection.open on an AMQP connection already open";
format_error(not_open) -> "an AMQP request before connection.open (or after connection.close)";
format_error({channel_closed, Code}) ->
    io_lib:format("channel closed by the broker: ~b ~ts", [Code, ?CODEC:reply_text(Code)]);
format_error({connection_closed, Code, {0, 0}}) ->
    io_lib:format("connection closed by the broker: ~b ~ts", [Code, ?CODEC:reply_text(Code)]);
format_error({connection_closed, Code, {C, M}}) ->
    io_lib:format("connection closed by the broker: ~b ~ts (method ~b.~b)",
                  [Code, ?CODEC:reply_text(Code), C, M]);
format_error({channel_not_open, Ch}) -> io_lib:format("channel ~b is not open", [Ch]);
format_error({nacked, N}) -> io_lib:format("~b publishes nacked by the broker", [N]);
format_error(unexpected_frame) -> "an AMQP frame out of place: connection closed";
format_error(body_overrun) -> "an AMQP body longer than its header said: connection closed";
format_error(R) -> ?CODEC:format_error(R).

%% @doc Tsung's `ts_amqp' sessions and their `<amqp>' element, to a tcp or ssl server.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_amqp", element => amqp, servers => ["tcp", "ssl"],
             attributes => [type, vhost, channel, exchange, routing_key, persistent,
                            payload_size, payload, queue, ack, prefetch_size,
                            prefetch_count, timeout],
             options => ["username", "password", "heartbeat"]}.

%% @doc An `<amqp>' element (`beamscale_load_amqp_spec').
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(Req, E, Ctx) -> beamscale_load_amqp_spec:from_tsung(Req, E, Ctx).
