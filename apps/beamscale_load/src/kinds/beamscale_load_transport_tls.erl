%% @doc The TLS transport (`beamscale_load_transport'): ssl. The handshake itself, its options
%% and the user's saved sessions are `beamscale_load_tls''s.
-module(beamscale_load_transport_tls).
-behaviour(beamscale_load_transport).

-export([name/0, send/2, recv/3, setopts/2, controlling_process/2, close/1, peername/1,
         messages/0, negotiated_protocol/1]).

%% @doc The transport's name.
-spec name() -> tls.
name() -> tls.

%% @doc Send bytes.
-spec send(ssl:sslsocket(), iodata()) -> ok | {error, term()}.
send(S, Bytes) -> ssl:send(S, Bytes).

%% @doc A passive read.
-spec recv(ssl:sslsocket(), non_neg_integer(), timeout()) -> {ok, binary()} | {error, term()}.
recv(S, Length, Timeout) ->
    case ssl:recv(S, Length, Timeout) of
        {ok, Data} when is_binary(Data) -> {ok, Data};
        {ok, Data} -> {ok, iolist_to_binary(Data)};
        {error, _} = Error -> Error
    end.

%% @doc Set socket options.
-spec setopts(ssl:sslsocket(), list()) -> ok | {error, term()}.
setopts(S, Opts) -> ssl:setopts(S, Opts).

%% @doc Hand the socket to another process.
-spec controlling_process(ssl:sslsocket(), pid()) -> ok | {error, term()}.
controlling_process(S, Pid) -> ssl:controlling_process(S, Pid).

%% @doc Close the socket: a close may fail when the peer has gone already; the socket is gone
%% either way.
-spec close(ssl:sslsocket()) -> ok.
close(S) ->
    _ = ssl:close(S),
    ok.

%% @doc The peer's address and port.
-spec peername(ssl:sslsocket()) ->
    {ok, {inet:ip_address(), inet:port_number()}} | {error, term()}.
peername(S) -> ssl:peername(S).

%% @doc The active mode's message tags.
-spec messages() -> {ssl, ssl_closed, ssl_error, ssl_passive}.
messages() -> {ssl, ssl_closed, ssl_error, ssl_passive}.

%% @doc The protocol ALPN agreed on.
-spec negotiated_protocol(ssl:sslsocket()) -> {ok, binary()} | {error, term()}.
negotiated_protocol(S) -> ssl:negotiated_protocol(S).
