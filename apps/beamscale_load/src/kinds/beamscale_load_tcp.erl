%% @doc The `tcp' request kind: send bytes over the user's connection and read a reply of a given
%% length, up to a delimiter, or none. Also the stream helpers of the `http', `raw' and
%% `websocket' kinds, over TCP or TLS (a target with `tls', see `beamscale_load_tls').
-module(beamscale_load_tcp).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1, recv_more/3, deadline/1, drop/1, send/2,
         tls/2]).
-export([name/0]).
-export_type([conn/0, socket/0]).

%% A TCP port, or a TLS socket over one (`beamscale_load_transport').
-type socket() :: beamscale_load_transport:socket().
%% A socket and the bytes received but not yet used.
-type conn() :: {socket(), binary()}.

-define(CONNECT_TIMEOUT, 5000).
%% Never `{active, true}': a server streaming while the user thinks filled its mailbox (3 GB);
%% `beamscale_load_reader' keeps a few messages at most, the rest in the kernel's buffer.
-define(SOCKET_OPTS, [binary, {nodelay, true}, {packet, raw}]).

%% @doc `#{send => Bytes, reply => {length, N} | {until, Delimiter} | none}' against host:port.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := _}) ->
    Send = maps:get(send, Spec, undefined),
    Reply = maps:get(reply, Spec, none),
    case {iodata(Send), Reply} of
        {false, _} -> {error, send, "expected the bytes to send (iodata)"};
        {_, none} -> {ok, #{send => iolist_to_binary(Send), reply => none}};
        {_, {length, N}} when is_integer(N), N > 0 -> {ok, #{send => iolist_to_binary(Send),
                                                          reply => {length, N}}};
        {_, {until, D}} -> case iodata(D) andalso iolist_size(D) > 0 of
                               true -> {ok, #{send => iolist_to_binary(Send),
                                              reply => {until, iolist_to_binary(D)}}};
                               false -> {error, reply, "expected a non-empty delimiter"}
                           end;
        _ -> {error, reply, "expected {length, N}, {until, Delimiter} or none"}
    end;
check(_Spec, _Target) -> {error, target, "tcp needs a host:port target"}.

iodata(D) ->
    try iolist_size(D) >= 0
    catch error:badarg -> false
    end.

%% @doc Open the user's connection (and its TLS handshake when the target has `tls'). The time
%% it takes is the connect time that `beamscale_load_request' records.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(#{host := Host, port := Port} = Target) ->
    %% Passive until TLS takes the socket over (ssl wants it so); TLS arms it again.
    Active = case Target of
                 #{tls := _} -> {active, false};
                 _ -> beamscale_load_reader:active()
             end,
    %% The user's source address (`source_ips'), if the scenario gives some.
    Buffers = [{K, N} || K <- [recbuf, sndbuf], N <- [maps:get(K, Target, none)], N =/= none]
        ++ beamscale_load_source:local_port(Target),
    case gen_tcp:connect(beamscale_load_source:peer(Host), Port,
                         beamscale_load_source:connect_opts() ++ Buffers ++ [Active | ?SOCKET_OPTS],
                         maps:get(connect_timeout_ms, Target, ?CONNECT_TIMEOUT)) of
        {ok, S} -> ok = beamscale_load_transport:held(S, beamscale_load_transport_tcp),
                   tls(S, Target);
        {error, Reason} -> {error, {connect, Reason}}
    end.

%% @doc The TLS handshake over an open TCP socket, in passive mode, when the target has `tls'
%% (for a protocol that starts TLS inside itself, as PostgreSQL does, after its own request).
-spec tls(gen_tcp:socket(), map()) -> {ok, conn()} | {error, term()}.
tls(S, #{tls := Opts, host := Host, port := Port} = Target) ->
    case beamscale_load_tls:handshake(S, {Host, Port}, Opts,
                                      maps:get(connect_timeout_ms, Target, ?CONNECT_TIMEOUT)) of
        {ok, T} -> ok = beamscale_load_reader:opened(T, Target), {ok, {T, <<>>}};
        {error, {_, Reason}} -> _ = drop(S), {error, Reason}
    end;
tls(S, Target) ->
    ok = beamscale_load_reader:opened(S, Target),
    {ok, {S, <<>>}}.

%% @doc Send bytes, counted for the run's `bytes_sent'.
-spec send(socket(), iodata()) -> ok | {error, term()}.
send(S, Bytes) ->
    beamscale_load_request:count(bytes_sent, iolist_size(Bytes)),
    beamscale_load_dump:capture(sent, Bytes),
    (beamscale_load_transport:which(S)):send(S, Bytes).

%% @doc Send and read the reply.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{send := Bytes, reply := Reply}, {S, Buf} = Conn, Timeout) ->
    case send(S, Bytes) of
        ok when Reply =:= none -> {ok, Conn};
        ok -> reply(Reply, S, Buf, deadline(Timeout));
        {error, Reason} -> gone(S, Reason)
    end.

reply({length, N}, S, Buf, _Deadline) when byte_size(Buf) >= N ->
    <<_:N/binary, Rest/binary>> = Buf,
    {ok, {S, Rest}};
reply({until, D}, S, Buf, Deadline) -> until(D, S, Buf, 0, Deadline);
reply(Reply, S, Buf, Deadline) ->
    case recv_more(S, Buf, Deadline) of
        {ok, Buf1} -> reply(Reply, S, Buf1, Deadline);
        {error, Reason} -> gone(S, Reason)
    end.

%% The delimiter searched for from `From' only: the bytes before were searched already (a reply
%% without it would cost a scan of all its bytes per read otherwise).
until(D, S, Buf, From, Deadline) ->
    case binary:match(Buf, D, [{scope, {From, byte_size(Buf) - From}}]) of
        {At, Len} -> {ok, {S, binary:part(Buf, At + Len, byte_size(Buf) - At - Len)}};
        nomatch ->
            Next = max(0, byte_size(Buf) - byte_size(D) + 1),
            case recv_more(S, Buf, Deadline) of
                {ok, Buf1} -> until(D, S, Buf1, Next, Deadline);
                {error, Reason} -> gone(S, Reason)
            end
    end.

%% @doc Append what the socket has (waiting until `Deadline' at most) to `Buf'; counted for the
%% run's `bytes_received' and bounded by the reply's maximum (`beamscale_load_reader').
-spec recv_more(socket(), binary(), integer()) -> {ok, binary()} | {error, term()}.
recv_more(S, Buf, Deadline) -> beamscale_load_reader:recv(S, Buf, Deadline).

%% @doc The monotonic time (ms) a request of `Timeout' ms started now must end by.
-spec deadline(pos_integer()) -> integer().
deadline(Timeout) -> beamscale_load_reader:start(Timeout).

%% A failed or timed-out exchange leaves the stream in an unknown state: drop the connection.
gone(S, Reason) ->
    ok = drop(S),
    {error, Reason, closed}.

%% @doc Close the user's connection.
-spec close(conn()) -> ok.
close({S, _}) -> drop(S).

%% @doc Close a socket and drop what it delivered but nobody read.
-spec drop(socket()) -> ok.
drop(S) ->
    ok = (beamscale_load_transport:which(S)):close(S),
    beamscale_load_reader:closed(S).

%% @doc The kind's step name.
-spec name() -> tcp.
name() -> tcp.
