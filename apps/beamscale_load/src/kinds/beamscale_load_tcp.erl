%% @doc The `tcp' request kind: send bytes over the user's connection and read a reply of a given
%% length, up to a delimiter, or none. Also the socket helpers of the `http' kind.
-module(beamscale_load_tcp).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1, recv_more/3, deadline/1, drop/1]).
-export_type([conn/0]).

%% A socket and the bytes received but not yet used.
-type conn() :: {gen_tcp:socket(), binary()}.

-define(CONNECT_TIMEOUT, 5000).
%% Active: replies arrive as messages, with no call into the socket per read (measured cheaper
%% than passive gen_tcp:recv/3 on the hot path; bench/load_http_vs_tsung_wrk.sh). Only the
%% user that opened the socket gets them, and it reads them only while it waits for a reply.
-define(SOCKET_OPTS, [binary, {active, true}, {nodelay, true}, {packet, raw}]).

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

%% @doc Open the user's connection.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(#{host := Host, port := Port}) ->
    case gen_tcp:connect(Host, Port, ?SOCKET_OPTS, ?CONNECT_TIMEOUT) of
        {ok, S} -> {ok, {S, <<>>}};
        {error, Reason} -> {error, {connect, Reason}}
    end.

%% @doc Send and read the reply.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{send := Bytes, reply := Reply}, {S, Buf} = Conn, Timeout) ->
    case gen_tcp:send(S, Bytes) of
        ok when Reply =:= none -> {ok, Conn};
        ok -> reply(Reply, S, Buf, deadline(Timeout));
        {error, Reason} -> gone(S, Reason)
    end.

reply({length, N}, S, Buf, _Deadline) when byte_size(Buf) >= N ->
    <<_:N/binary, Rest/binary>> = Buf,
    {ok, {S, Rest}};
reply({until, D}, S, Buf, Deadline) ->
    case binary:match(Buf, D) of
        {At, Len} -> {ok, {S, binary:part(Buf, At + Len, byte_size(Buf) - At - Len)}};
        nomatch -> more({until, D}, S, Buf, Deadline)
    end;
reply(Reply, S, Buf, Deadline) -> more(Reply, S, Buf, Deadline).

more(Reply, S, Buf, Deadline) ->
    case recv_more(S, Buf, Deadline) of
        {ok, Buf1} -> reply(Reply, S, Buf1, Deadline);
        {error, Reason} -> gone(S, Reason)
    end.

%% @doc Append what the socket has (waiting until `Deadline' at most) to `Buf'.
-spec recv_more(gen_tcp:socket(), binary(), integer()) -> {ok, binary()} | {error, term()}.
recv_more(S, Buf, Deadline) ->
    Left = Deadline - erlang:monotonic_time(millisecond),
    receive
        {tcp, S, Data} when Buf =:= <<>> -> {ok, Data};
        {tcp, S, Data} -> {ok, <<Buf/binary, Data/binary>>};
        {tcp_closed, S} -> {error, closed};
        {tcp_error, S, Reason} -> {error, Reason}
    after max(Left, 0) -> {error, timeout}
    end.

%% @doc The monotonic time (ms) a request of `Timeout' ms started now must end by.
-spec deadline(pos_integer()) -> integer().
deadline(Timeout) -> erlang:monotonic_time(millisecond) + Timeout.

%% A failed or timed-out exchange leaves the stream in an unknown state: drop the connection.
gone(S, Reason) ->
    ok = drop(S),
    {error, Reason, closed}.

%% @doc Close the user's connection.
-spec close(conn()) -> ok.
close({S, _}) -> drop(S).

%% @doc Close a socket and drop what it delivered but nobody read.
-spec drop(gen_tcp:socket()) -> ok.
drop(S) ->
    ok = gen_tcp:close(S),
    flush(S).

flush(S) ->
    receive
        {tcp, S, _} -> flush(S);
        {tcp_closed, S} -> flush(S);
        {tcp_error, S, _} -> flush(S)
    after 0 -> ok
    end.
