%% @doc The connection state of the `amqp' kind and what each frame a broker sends does to it:
%% deliveries assembled (only their first bytes kept, for the publish stamp) and acknowledged,
%% publisher confirms matched to their publishes, heartbeats sent while the user thinks, and a
%% channel or the connection closed by the broker. `beamscale_load_amqp' sends the requests.
-module(beamscale_load_amqp_conn).

-export([new/2, frame/2, read/3, send/2, closing/2, next_seq/2, unconfirmed/1]).
-export([arm/1, disarm/1, beat/1, heartbeat/1]).
-export_type([state/0]).

-define(CODEC, beamscale_load_amqp_codec).
-define(N(Name), beamscale_load_request:named(<<"amqp_", Name>>)).
%% The bytes of a payload's head kept: its publish stamp (`beamscale_load_stamp').
-define(STAMP_SIZE, 12).

-type state() :: #{sock := term(), buf := binary(), max := pos_integer(),
                   frame_max := pos_integer(), heartbeat_ms := non_neg_integer(),
                   timer := reference() | undefined, next_ch := pos_integer(),
                   open := boolean(), chans := #{pos_integer() => map()},
                   closed_chans := #{pos_integer() => non_neg_integer()},
                   consumers := #{binary() | pending => boolean()},
                   partial := #{pos_integer() => tuple()},
                   nacked := non_neg_integer()}.

%% @doc The state of a new connection over `S' whose replies are bounded by `Max' bytes.
%% A plain TCP socket's sends are joined (`delay_send'): a publish waits for no answer, and the
%% runtime writes what a burst of them queued in one system call, not one per publish; a
%% method that waits for its answer is written when the user blocks for it. Measured with
%% bench/amqp_vs_tsung.sh 20 6000 in one invocation: 13.2 µs of client CPU per publish,
%% against 20.0 with the option set only while publishing (a setopts each way). TLS
%% connections are left as they are.
-spec new(term(), pos_integer()) -> state().
new(S, Max) ->
    Transport = beamscale_load_transport:which(S),
    _ = Transport:name() =:= tcp andalso Transport:setopts(S, [{delay_send, true}]) =:= ok,
    #{sock => S, buf => <<>>, max => Max, frame_max => 4096, heartbeat_ms => 0,
      timer => undefined, next_ch => 1, open => false, chans => #{}, closed_chans => #{},
      consumers => #{}, partial => #{}, nacked => 0}.

%% @doc Send bytes on the connection.
-spec send(state(), iodata()) -> ok | {error, term()}.
send(#{sock := S}, Bytes) -> beamscale_load_tcp:send(S, Bytes).

%% @doc Decode and apply the frames of `Data' (after the buffer) until `Done(Event, State)'
%% says `{done, Result}', or the bytes run out (`{more, State}'); `{error, Reason, State}'.
-spec read(binary(), state(), fun((term(), state()) -> {done, term()} | next)) ->
    {done, term(), state()} | {more, state()} | {error, term(), state()}.
read(Data, #{buf := Buf, frame_max := FM} = St, Done) ->
    case ?CODEC:decode(append(Buf, Data), FM) of
        {ok, F, Rest} ->
            case frame(F, St#{buf := Rest}) of
                {{error, {_, unexpected_frame} = R}, St1} -> ?N("unexpected"), {error, R, St1};
                {{error, R}, St1} -> {error, R, St1};
                {Event, St1} ->
                    case Done(Event, St1) of
                        {done, Result} -> {done, Result, St1};
                        next -> read(<<>>, St1, Done)
                    end
            end;
        more -> {more, St#{buf := append(Buf, Data)}};
        %% The kind's reason, whose text is the codec's.
        {error, {?CODEC, R}} -> ?N("error"), {error, {beamscale_load_amqp, R}, St}
    end.

append(<<>>, D) -> D;
append(B, <<>>) -> B;
append(B, D) -> <<B/binary, D/binary>>.

%% @doc One frame's effect: `{Event, State}', the event `none', `delivered', `confirmed',
%% `{answer, Method, Channel, Args}', `{channel_closed, Ch, Code}' or `{error, Reason}'.
-spec frame(beamscale_load_amqp_codec:frame(), state()) -> {term(), state()}.
frame(heartbeat, St) -> {none, St};
frame({method, Ch, 'basic.deliver', #{consumer_tag := Tag, delivery_tag := D}},
      #{partial := P} = St) ->
    {none, St#{partial := P#{Ch => {Tag, D, header, <<>>}}}};
frame({header, Ch, Size, _}, #{partial := P, max := Max} = St) ->
    case P of
        #{Ch := {_, _, header, _}} when Size > Max ->
            {{error, {beamscale_load_reader, {too_big, Max}}}, St};
        #{Ch := {Tag, D, header, _}} ->
            body(Ch, <<>>, St#{partial := P#{Ch := {Tag, D, Size, <<>>}}});
        _ -> {{error, {beamscale_load_amqp, unexpected_frame}}, St}
    end;
frame({body, Ch, Bytes}, #{partial := P} = St) when is_map_key(Ch, P) ->
    body(Ch, Bytes, St);
frame({method, Ch, Ack, #{delivery_tag := D, multiple := M}}, St)
  when Ack =:= 'basic.ack'; Ack =:= 'basic.nack' ->
    confirmed(Ch, D, M, Ack, St);
frame({method, Ch, 'channel.close', #{code := Code}}, #{chans := Cs, closed_chans := Cl} = St) ->
    _ = send(St, ?CODEC:method(Ch, 'channel.close_ok', #{})),
    {{channel_closed, Ch, Code},
     St#{chans := maps:remove(Ch, Cs), closed_chans := Cl#{Ch => Code}}};
frame({method, 0, 'connection.close', #{code := Code, method := M}}, St) ->
    _ = send(St, ?CODEC:method(0, 'connection.close_ok', #{})),
    {{error, {beamscale_load_amqp, {connection_closed, Code, M}}}, St};
frame({method, Ch, 'basic.consume_ok', #{consumer_tag := Tag}} = F, St) ->
    {{answer, 'basic.consume_ok', Ch, #{}}, consumer(Tag, F, St)};
frame({method, _, 'basic.return', _}, St) -> {none, St};
frame({method, Ch, Name, Args}, St) -> {{answer, Name, Ch, Args}, St};
frame(_Other, St) -> {{error, {beamscale_load_amqp, unexpected_frame}}, St}.

%% The consumer's ack mode was put under the tag `pending' by the consume request.
consumer(Tag, _F, #{consumers := #{pending := NoAck} = Cs} = St) ->
    St#{consumers := maps:remove(pending, Cs#{Tag => NoAck})};
consumer(Tag, _F, #{consumers := Cs} = St) -> St#{consumers := Cs#{Tag => false}}.

%% Body bytes of a channel's delivery under way (a broker may interleave channels' frames):
%% the first ?STAMP_SIZE kept, the rest counted only.
body(Ch, Bytes, #{partial := P} = St) ->
    case P of
        #{Ch := {Tag, D, Left, Head}} when is_integer(Left) ->
            case Left - byte_size(Bytes) of
                Left1 when Left1 > 0 ->
                    {none, St#{partial := P#{Ch := {Tag, D, Left1, head(Head, Bytes)}}}};
                0 -> delivered(Ch, Tag, D, head(Head, Bytes),
                               St#{partial := maps:remove(Ch, P)});
                _ -> {{error, {beamscale_load_amqp, body_overrun}}, St}
            end;
        _ -> {{error, {beamscale_load_amqp, unexpected_frame}}, St}
    end.

head(Head, Bytes) when byte_size(Head) < ?STAMP_SIZE ->
    binary:part(<<Head/binary, Bytes/binary>>, 0,
                min(?STAMP_SIZE, byte_size(Head) + byte_size(Bytes)));
head(Head, _Bytes) -> Head.

%% Acknowledged unless its consumer said no ack, or its channel is closing: after a
%% channel.close, the broker may have closed it already, and takes an ack on it for a
%% connection error (504); it requeues what was not acknowledged.
delivered(Ch, Tag, D, Head, #{consumers := Cs, chans := Chans} = St) ->
    _ = [send(St, ?CODEC:method(Ch, 'basic.ack', #{delivery_tag => D}))
         || not maps:get(Tag, Cs, false), not maps:get(closing, maps:get(Ch, Chans, #{}), true)],
    ok = beamscale_load_stamp:delivered(Head),
    %% Tsung's `amqp_delivered': in a request's wait or a push, bidi or not.
    ok = ?N("delivered"),
    {delivered, St}.

%% A publisher confirm (ack or nack) of one publish, or of all up to `D' (`multiple').
confirmed(Ch, D, Multiple, Ack, #{chans := Cs, nacked := N} = St) ->
    case Cs of
        #{Ch := #{pending := P} = C} ->
            {Done, Left} = take_confirmed(D, Multiple, P),
            Now = erlang:monotonic_time(),
            [beamscale_load_request:observe(
               confirm_time, erlang:convert_time_unit(Now - T, native, microsecond)) || T <- Done],
            Nacked = case Ack of 'basic.nack' -> length(Done); _ -> 0 end,
            %% Tsung's `amqp_confirmed' and `amqp_unconfirmed', a publish each.
            _ = [case Ack of 'basic.nack' -> ?N("unconfirmed"); _ -> ?N("confirmed") end
                 || _ <- Done],
            {confirmed, St#{chans := Cs#{Ch := C#{pending := Left}}, nacked := N + Nacked}};
        _ -> {none, St}
    end.

%% The send times of the publishes a confirm covers, and those left. One publish is taken
%% from the map (a fold over every pending publish per confirm cost more than the publish).
take_confirmed(D, false, P) ->
    case maps:take(D, P) of
        {T, Left} -> {[T], Left};
        error -> {[], P}
    end;
take_confirmed(D, true, P) ->
    maps:fold(fun(Seq, T, {Dn, Lf}) when Seq =< D -> {[T | Dn], maps:remove(Seq, Lf)};
                 (_, _, Acc) -> Acc
              end, {[], P}, P).

%% @doc The next publish sequence number on a channel in confirm mode (`none' if it is not),
%% the publish remembered as pending with its send time.
-spec next_seq(pos_integer(), state()) -> state().
next_seq(Ch, #{chans := Cs} = St) ->
    case Cs of
        #{Ch := #{confirm := true, seq := Seq, pending := P} = C} ->
            St#{chans := Cs#{Ch := C#{seq := Seq + 1,
                                      pending := P#{Seq => erlang:monotonic_time()}}}};
        _ -> St
    end.

%% @doc A channel marked closing (its channel.close sent).
-spec closing(pos_integer(), state()) -> state().
closing(Ch, #{chans := Cs} = St) ->
    case Cs of
        #{Ch := C} -> St#{chans := Cs#{Ch := C#{closing => true}}};
        _ -> St
    end.

%% @doc Publishes not yet confirmed, on every channel.
-spec unconfirmed(state()) -> non_neg_integer().
unconfirmed(#{chans := Cs}) ->
    lists:sum([map_size(P) || #{pending := P} <- maps:values(Cs)]).

%% @doc The heartbeat timer started (half the negotiated interval): its message
%% `{amqp_heartbeat, Socket}' is the socket's, handed to the kind while the user thinks.
-spec arm(state()) -> state().
arm(#{heartbeat_ms := 0} = St) -> St;
arm(#{heartbeat_ms := Ms, sock := S} = St) ->
    St#{timer := erlang:send_after(Ms div 2, self(), {amqp_heartbeat, S})}.

%% @doc The heartbeat timer stopped, its message dropped.
-spec disarm(state()) -> ok.
disarm(#{timer := undefined}) -> ok;
disarm(#{timer := T, sock := S}) ->
    _ = erlang:cancel_timer(T),
    receive {amqp_heartbeat, S} -> ok after 0 -> ok end.

%% @doc A heartbeat sent if its timer fired (before a request, as during a think).
-spec beat(state()) -> state().
beat(#{sock := S} = St) ->
    receive
        {amqp_heartbeat, S} -> heartbeat(St)
    after 0 -> St
    end.

%% @doc A heartbeat sent (its timer fired), the timer started again.
-spec heartbeat(state()) -> state().
heartbeat(St) ->
    _ = send(St, ?CODEC:heartbeat()),
    arm(St).
