%% @doc One user's HTTP/2 connection (RFC 9113) for `beamscale_load_h2': the preface and
%% SETTINGS exchange, then requests of one or several concurrent streams read frame by frame
%% from the bounded reader. Flow control on both levels, PINGs answered, GOAWAY and RST_STREAM
%% turned into named reasons. What a hostile server can do is bounded: header blocks (64 KiB),
%% the HPACK table (4 KiB), DATA past the windows we granted, control frames per request
%% (`?MAX_CONTROL'), and the request's deadline over all of it.
-module(beamscale_load_h2_conn).

-export([connect/1, request/3, close/1]).
-export_type([conn/0]).

-type conn() :: #{s := beamscale_load_tcp:socket(), buf := binary(), atom() => term()}.

-define(FRAME, beamscale_load_h2_frame).
-define(STREAM_WIN, (1 bsl 20)).
-define(CONN_WIN, (16 bsl 20)).
-define(MAX_HEAD, 65536).
-define(MAX_FRAME, 16384).
-define(TABLE, 4096).
%% Control frames (SETTINGS, PING, frames of closed streams, unknown types) a request tolerates.
-define(MAX_CONTROL, 1000).
%% The streams a connection opens at once when the server sets no limit.
-define(DEFAULT_STREAMS, 100).
-define(CONNECT_TIMEOUT, 5000).
-define(ERR(R), {beamscale_load_h2, R}).

%% @doc Connect, with TLS and ALPN `h2' where the target has `tls' (h2c with prior knowledge
%% otherwise), and exchange SETTINGS.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(Target) ->
    T1 = case Target of
             #{tls := Opts} -> Target#{tls := [{alpn_advertised_protocols, [<<"h2">>]} | Opts]};
             _ -> Target
         end,
    case beamscale_load_tcp:connect(T1) of
        {ok, {S, Buf}} ->
            case alpn(S) of
                ok -> handshake(S, Buf, maps:get(connect_timeout_ms, Target, ?CONNECT_TIMEOUT));
                {error, R} -> beamscale_load_tcp:drop(S), {error, R}
            end;
        Error -> Error
    end.

%% h2c over TCP (prior knowledge); over TLS, ALPN must have agreed on h2.
alpn(S) ->
    Transport = beamscale_load_transport:which(S),
    case {Transport:name(), Transport:negotiated_protocol(S)} of
        {tcp, _} -> ok;
        {tls, {ok, <<"h2">>}} -> ok;
        _ -> {error, ?ERR(no_alpn_h2)}
    end.

handshake(S, Buf, Timeout) ->
    Hello = [?FRAME:preface(),
             ?FRAME:settings([{1, ?TABLE}, {2, 0}, {4, ?STREAM_WIN}, {5, ?MAX_FRAME},
                              {6, ?MAX_HEAD}]),
             ?FRAME:window_update(0, ?CONN_WIN - 65535)],
    Conn = #{s => S, buf => Buf, dec => beamscale_load_h2_hpack:new({?TABLE, ?MAX_HEAD}),
             next => 1, max_frame => 16384, max_streams => ?DEFAULT_STREAMS, send_win => 65535,
             peer_win => 65535, recv_win => ?CONN_WIN, goaway => false},
    Deadline = beamscale_load_tcp:deadline(Timeout),
    case beamscale_load_tcp:send(S, Hello) of
        ok -> first_settings(Conn, Deadline);
        {error, R} -> beamscale_load_tcp:drop(S), {error, R}
    end.

%% The server's preface is a SETTINGS frame (RFC 9113, 3.4).
first_settings(#{s := S, buf := Buf} = Conn, Deadline) ->
    case ?FRAME:decode(Buf, ?MAX_FRAME) of
        {ok, {settings, _} = F, Rest} ->
            case control(F, Conn#{buf := Rest}) of
                {ok, Conn1} -> {ok, Conn1};
                {error, R} -> beamscale_load_tcp:drop(S), {error, R}
            end;
        more ->
            case beamscale_load_tcp:recv_more(S, Buf, Deadline) of
                {ok, Buf1} -> first_settings(Conn#{buf := Buf1}, Deadline);
                {error, R} -> beamscale_load_tcp:drop(S), {error, R}
            end;
        _ -> beamscale_load_tcp:drop(S), {error, ?ERR(no_settings)}
    end.

%% @doc Send a request on `Streams' streams (at most the server's MAX_CONCURRENT_STREAMS at
%% once) and read every response: `{ok, Conn, [Response]}' in stream order, or the first error.
-spec request({binary(), binary(), pos_integer(), boolean()}, conn(), pos_integer()) ->
    {ok, conn() | closed, [map()]} | {error, term(), closed}.
request({Block, Body, Streams, Keep}, Conn, Timeout) ->
    Deadline = beamscale_load_tcp:deadline(Timeout),
    R = #{block => Block, body => Body, pending => Streams, active => #{}, done => [],
          control => 0, cont => none, deadline => Deadline, keep => Keep},
    case catch_error(fun() -> open(R, Conn) end) of
        {ok, {Conn1, R1}} -> loop(Conn1, R1);
        {error, Reason, C} -> fail(Reason, C)
    end.

loop(Conn, #{pending := 0, active := A, done := Done}) when map_size(A) =:= 0 ->
    Resps = [Resp || {_, Resp} <- lists:keysort(1, Done)],
    case Conn of
        #{goaway := true} -> close(Conn), {ok, closed, Resps};
        _ -> {ok, Conn, Resps}
    end;
loop(#{s := S, buf := Buf} = Conn, #{deadline := Deadline} = R) ->
    case ?FRAME:decode(Buf, ?MAX_FRAME) of
        {ok, F, Rest} ->
            %% A connection error is thrown by the frame's handling, and caught here only: the
            %% loop stays a tail call.
            case catch_error(fun() -> open_after(frame(F, Conn#{buf := Rest}, R)) end) of
                {ok, {Conn1, R1}} -> loop(Conn1, R1);
                {error, Reason, C} -> fail(Reason, C)
            end;
        more ->
            case beamscale_load_tcp:recv_more(S, Buf, Deadline) of
                {ok, Buf1} -> loop(Conn#{buf := Buf1}, R);
                {error, timeout} -> fail(waited(R, Conn), Conn);
                {error, Reason} -> fail(Reason, Conn)
            end;
        {error, Reason} -> fail(?ERR(Reason), Conn)
    end.

open_after({Conn, R}) -> open(R, Conn).

catch_error(Fun) ->
    try {ok, Fun()}
    catch throw:{conn_error, Reason, C} -> {error, Reason, C}
    end.

%% A request that timed out waiting for a window the server never opened says so.
waited(#{active := A}, #{send_win := W}) ->
    case [x || #{send := B, swin := SW} <- maps:values(A), B =/= <<>>, min(W, SW) =< 0] of
        [] -> timeout;
        _ -> ?ERR(window_closed)
    end.

fail(Reason, #{s := S, next := Next}) ->
    _ = beamscale_load_tcp:send(S, ?FRAME:goaway(max(0, Next - 2), code(Reason))),
    beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

code(?ERR({beamscale_load_h2_hpack, _})) -> 9;
code(?ERR(flow_control)) -> 3;
code(?ERR({flood, _})) -> 11;
code(_) -> 1.

%% Streams opened while the request has some pending and the server allows more; their
%% HEADERS go out in one send (one send per stream cost a fifth of a stream's CPU).
open(R, Conn) -> open(R, Conn, []).

open(#{pending := 0} = R, Conn, Out) -> flush(Conn, Out), {Conn, R};
open(#{active := A} = R, #{max_streams := Max} = Conn, Out) when map_size(A) >= Max ->
    flush(Conn, Out),
    {Conn, R};
open(_R, #{next := Next} = Conn, _Out) when Next > 16#7fffffff ->
    throw({conn_error, ?ERR(streams_exhausted), Conn});
open(#{block := Block, body := Body, pending := P, active := A} = R,
     #{next := Sid, max_frame := MaxF, peer_win := PW} = Conn, Out) ->
    H = ?FRAME:headers(Sid, Block, Body =:= <<>>, MaxF),
    St = #{status => none, headers => [], body => [], win => ?STREAM_WIN, send => Body,
           swin => PW, trailers => [], got => 0, times => []},
    R1 = R#{pending := P - 1},
    case Body of
        <<>> -> open(R1#{active := A#{Sid => St}}, Conn#{next := Sid + 2}, [Out, H]);
        _ ->
            ok = send(Conn, [Out, H]),
            {Conn1, St1} = send_body(Sid, St, Conn#{next := Sid + 2}),
            open(R1#{active := A#{Sid => St1}}, Conn1, [])
    end.

flush(_Conn, []) -> ok;
flush(Conn, Out) -> send(Conn, Out).

send(#{s := S} = Conn, Bytes) ->
    case beamscale_load_tcp:send(S, Bytes) of
        ok -> ok;
        {error, R} -> throw({conn_error, R, Conn})
    end.

%% As much of the body as both windows and the frame size allow.
send_body(_Sid, #{send := <<>>} = St, Conn) -> {Conn, St};
send_body(Sid, #{send := B, swin := SW} = St, #{send_win := W, max_frame := MaxF} = Conn) ->
    case lists:min([byte_size(B), SW, W, MaxF]) of
        N when N =< 0 -> {Conn, St};
        N ->
            <<Part:N/binary, Rest/binary>> = B,
            ok = send(Conn, ?FRAME:data(Sid, Part, Rest =:= <<>>)),
            send_body(Sid, St#{send := Rest, swin := SW - N}, Conn#{send_win := W - N})
    end.

%% A header block continues with CONTINUATIONs of its stream and nothing else.
frame({continuation, Sid, End, More}, Conn, #{cont := {Sid, Es, Acc}} = R) ->
    block(Sid, Es, End, <<Acc/binary, More/binary>>, Conn, count(R, continuation, Conn));
frame(_F, Conn, #{cont := {_, _, _}}) -> throw({conn_error, ?ERR(interleaved_headers), Conn});
frame({continuation, _, _, _}, Conn, _R) -> throw({conn_error, ?ERR(stray_continuation), Conn});
frame({headers, Sid, Es, End, Block}, Conn, R) -> block(Sid, Es, End, Block, Conn, R);
frame({data, Sid, Es, D, Len}, #{recv_win := W} = Conn, #{active := A} = R) ->
    W1 = W - Len,
    W1 < 0 andalso throw({conn_error, ?ERR(flow_control), Conn}),
    Conn1 = case W1 < ?CONN_WIN div 2 of
                true -> ok = send(Conn, ?FRAME:window_update(0, ?CONN_WIN - W1)),
                        Conn#{recv_win := ?CONN_WIN};
                false -> Conn#{recv_win := W1}
            end,
    case A of
        #{Sid := St} -> data(Sid, St, {Es, D, Len}, Conn1, R);
        _ -> {Conn1, count(R, data, Conn)}
    end;
frame({rst_stream, Sid, Code}, Conn, #{active := A}) when is_map_key(Sid, A) ->
    throw({conn_error, ?ERR({reset, ?FRAME:error_name(Code)}), Conn});
frame({window_update, Sid, Incr}, Conn, #{active := A} = R) when Sid > 0 ->
    case A of
        #{Sid := #{swin := SW} = St} ->
            SW + Incr > 16#7fffffff andalso throw({conn_error, ?ERR(flow_control), Conn}),
            {Conn1, St1} = send_body(Sid, St#{swin := SW + Incr}, Conn),
            {Conn1, R#{active := A#{Sid := St1}}};
        _ -> {Conn, count(R, window_update, Conn)}
    end;
frame({push_promise, _}, Conn, _R) -> throw({conn_error, ?ERR(push_promise), Conn});
frame({goaway, Last, Code, _}, Conn, #{active := A, pending := P} = R) ->
    %% Streams above `Last', and those not opened yet, will never be answered.
    case [Sid || Sid <- maps:keys(A), Sid > Last] of
        [] when P =:= 0 -> {Conn#{goaway := true}, R};
        _ -> throw({conn_error, ?ERR({goaway, ?FRAME:error_name(Code)}), Conn})
    end;
frame(F, #{peer_win := PW0} = Conn, R) ->
    case control(F, Conn) of
        {ok, #{peer_win := PW} = Conn1} ->
            resume(Conn1, count(R, tag(F), Conn1), PW - PW0);
        {error, Reason} -> throw({conn_error, Reason, Conn})
    end.

%% Bodies held back by a window sent on when the connection's window opens or the server's
%% SETTINGS_INITIAL_WINDOW_SIZE changes the streams' windows by `Delta' (RFC 9113, 6.9.2).
resume(Conn, #{body := <<>>} = R, _Delta) -> {Conn, R};
resume(Conn, #{active := A} = R, Delta) ->
    {Conn1, A1} = maps:fold(fun(Sid, #{swin := SW} = St, {C, Acc}) ->
                                    {C1, St1} = send_body(Sid, St#{swin := SW + Delta}, C),
                                    {C1, Acc#{Sid => St1}}
                            end, {Conn, #{}}, A),
    {Conn1, R#{active := A1}}.

tag(F) when is_tuple(F) -> element(1, F);
tag(F) -> F.

count(#{control := N}, What, Conn) when N >= ?MAX_CONTROL ->
    throw({conn_error, ?ERR({flood, What}), Conn});
count(#{control := N} = R, _What, _Conn) -> R#{control := N + 1}.

%% Frames of the connection: answered or applied.
control({settings, Pairs}, Conn) ->
    try lists:foldl(fun setting/2, Conn, Pairs) of
        Conn1 -> ok = send(Conn1, ?FRAME:settings_ack()), {ok, Conn1}
    catch throw:bad_setting -> {error, ?ERR(bad_setting)}
    end;
control({ping, Opaque}, Conn) -> ok = send(Conn, ?FRAME:ping(true, Opaque)), {ok, Conn};
control({window_update, 0, 0}, _Conn) -> {error, ?ERR(flow_control)};
control({window_update, 0, Incr}, #{send_win := W} = Conn) when W + Incr =< 16#7fffffff ->
    {ok, Conn#{send_win := W + Incr}};
control({window_update, 0, _}, _Conn) -> {error, ?ERR(flow_control)};
control(_Ignored, Conn) -> {ok, Conn}.

setting({3, N}, Conn) -> Conn#{max_streams := min(N, ?DEFAULT_STREAMS)};
setting({4, N}, _) when N > 16#7fffffff -> throw(bad_setting);
setting({4, N}, Conn) -> Conn#{peer_win := N};
setting({5, N}, _) when N < 16384; N > 16#ffffff -> throw(bad_setting);
setting({5, N}, Conn) -> Conn#{max_frame := N};
setting(_, Conn) -> Conn.

%% A whole header block decoded (the table must follow every block, a stream's or not).
block(_Sid, _Es, false, Block, Conn, _R) when byte_size(Block) > ?MAX_HEAD ->
    throw({conn_error, ?ERR(head_too_big), Conn});
block(Sid, Es, false, Block, Conn, R) -> {Conn, R#{cont := {Sid, Es, Block}}};
block(Sid, Es, true, Block, #{dec := Dec} = Conn, #{active := A} = R0) ->
    byte_size(Block) > ?MAX_HEAD andalso throw({conn_error, ?ERR(head_too_big), Conn}),
    R = R0#{cont := none},
    case beamscale_load_h2_hpack:decode(Block, Dec) of
        {ok, Hs, Dec1} ->
            Conn1 = Conn#{dec := Dec1},
            case A of
                #{Sid := St} -> headers(Sid, St, Es, Hs, Conn1, R);
                _ -> {Conn1, count(R, headers, Conn1)}
            end;
        {error, E} -> throw({conn_error, ?ERR(E), Conn})
    end.

headers(Sid, #{status := none} = St, Es, Hs, Conn, R) ->
    case lists:keyfind(<<":status">>, 1, Hs) of
        {_, <<$1, _, _>>} -> {Conn, R};
        {_, V} ->
            try binary_to_integer(V) of
                Code -> ended(Sid, St#{status := Code, headers := Hs}, Es, Conn, R)
            catch error:badarg -> throw({conn_error, ?ERR(bad_status), Conn})
            end;
        false -> throw({conn_error, ?ERR(bad_status), Conn})
    end;
%% Trailers (gRPC's status).
headers(Sid, St, Es, Hs, Conn, R) -> ended(Sid, St#{trailers := Hs}, Es, Conn, R).

data(Sid, #{win := W} = St, {Es, D, Len}, Conn, #{keep := Keep} = R) ->
    W1 = W - Len,
    W1 < 0 andalso throw({conn_error, ?ERR(flow_control), Conn}),
    St1 = keep(Keep, D, St),
    case not Es andalso W1 < ?STREAM_WIN div 2 of
        true -> ok = send(Conn, ?FRAME:window_update(Sid, ?STREAM_WIN - W1)),
                ended(Sid, St1#{win := ?STREAM_WIN}, Es, Conn, R);
        false -> ended(Sid, St1#{win := W1}, Es, Conn, R)
    end.

%% A kept body, and when each of its DATA frames ended (gRPC's per-message latency).
keep(false, _D, St) -> St;
keep(true, <<>>, St) -> St;
keep(true, D, #{body := B, got := Got, times := Ts} = St) ->
    N = Got + byte_size(D),
    St#{body := [B, D], got := N, times := [{N, erlang:monotonic_time(microsecond)} | Ts]}.

ended(Sid, #{status := St} = S, true, Conn, #{active := A, done := Done} = R) when St =/= none ->
    Resp = maps:with([status, headers, body, trailers, times], S),
    {Conn, R#{active := maps:remove(Sid, A), done := [{Sid, Resp} | Done]}};
ended(_Sid, _S, true, Conn, _R) -> throw({conn_error, ?ERR(bad_status), Conn});
ended(Sid, S, false, Conn, #{active := A} = R) -> {Conn, R#{active := A#{Sid := S}}}.

%% @doc Close the connection (a GOAWAY first, as a polite client does).
-spec close(conn()) -> ok.
close(#{s := S, next := Next}) ->
    _ = beamscale_load_tcp:send(S, ?FRAME:goaway(max(0, Next - 2), 0)),
    beamscale_load_tcp:drop(S).
