%% @doc The TCP transport (`beamscale_load_transport'): gen_tcp and inet.
-module(beamscale_load_transport_tcp).
-behaviour(beamscale_load_transport).

-export([name/0, send/2, recv/3, setopts/2, controlling_process/2, close/1, peername/1,
         messages/0, negotiated_protocol/1]).

%% @doc The transport's name.
-spec name() -> tcp.
name() -> tcp.

%% @doc Send bytes.
-spec send(gen_tcp:socket(), iodata()) -> ok | {error, term()}.
send(S, Bytes) -> gen_tcp:send(S, Bytes).

%% @doc A passive read.
-spec recv(gen_tcp:socket(), non_neg_integer(), timeout()) -> {ok, binary()} | {error, term()}.
recv(S, Length, Timeout) ->
    case gen_tcp:recv(S, Length, Timeout) of
        {ok, Data} when is_binary(Data) -> {ok, Data};
        {ok, Data} -> {ok, iolist_to_binary(Data)};
        {error, _} = Error -> Error
    end.

%% @doc Set socket options.
-spec setopts(gen_tcp:socket(), list()) -> ok | {error, term()}.
setopts(S, Opts) -> inet:setopts(S, Opts).

%% @doc Hand the socket to another process.
-spec controlling_process(gen_tcp:socket(), pid()) -> ok | {error, term()}.
controlling_process(S, Pid) -> gen_tcp:controlling_process(S, Pid).

%% @doc Close the socket.
-spec close(gen_tcp:socket()) -> ok.
close(S) -> gen_tcp:close(S).

%% @doc The peer's address and port.
-spec peername(gen_tcp:socket()) ->
    {ok, {inet:ip_address(), inet:port_number()}} | {error, term()}.
peername(S) -> inet:peername(S).

%% @doc The active mode's message tags.
-spec messages() -> {tcp, tcp_closed, tcp_error, tcp_passive}.
messages() -> {tcp, tcp_closed, tcp_error, tcp_passive}.

%% @doc No ALPN over plain TCP.
-spec negotiated_protocol(gen_tcp:socket()) -> {error, protocol_not_negotiated}.
negotiated_protocol(_S) -> {error, protocol_not_negotiated}.
