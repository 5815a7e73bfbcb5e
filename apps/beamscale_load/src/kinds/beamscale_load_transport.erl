%% @doc The transport behaviour of the stream kinds' sockets, TCP or TLS (as ranch's
%% `ranch_transport'): the kinds call a socket's module rather than telling a port from a TLS
%% socket. `beamscale_load_transport_tcp' and `beamscale_load_transport_tls' implement it.
%%
%% A socket's module is recorded where the socket is made (`held/2': `beamscale_load_tcp' for a
%% connection, `beamscale_load_tls' for a handshake), in the user's process, which is the only
%% one that uses its sockets; `which/1' reads it, `forget/1' drops it when the socket closes
%% (`beamscale_load_reader:closed/1'). The connection terms the kinds keep (a socket and its
%% buffer) stay as they are: the servers' messages name the bare socket, and pushes are routed
%% by it.
-module(beamscale_load_transport).

-export([held/2, which/1, forget/1, nudge/1]).
-export_type([socket/0]).

-type socket() :: gen_tcp:socket() | ssl:sslsocket().

%% The transport's name, as a target's `tls' says it.
-callback name() -> tcp | tls.
-callback send(socket(), iodata()) -> ok | {error, term()}.
%% A passive read: `Length' bytes (0: what there is), waiting `Timeout' ms at most.
-callback recv(socket(), non_neg_integer(), timeout()) -> {ok, binary()} | {error, term()}.
-callback setopts(socket(), list()) -> ok | {error, term()}.
-callback controlling_process(socket(), pid()) -> ok | {error, term()}.
%% Closes the socket; a peer already gone is no error.
-callback close(socket()) -> ok.
-callback peername(socket()) ->
    {ok, {inet:ip_address(), inet:port_number()}} | {error, term()}.
%% The tags of the active mode's messages: `{Data, S, Bytes}', `{Closed, S}',
%% `{Error, S, Reason}', `{Passive, S}'.
-callback messages() -> {Data :: atom(), Closed :: atom(), Error :: atom(), Passive :: atom()}.
%% The protocol ALPN agreed on (`{error, protocol_not_negotiated}' over TCP).
-callback negotiated_protocol(socket()) -> {ok, binary()} | {error, term()}.

-define(KEY(S), {?MODULE, S}).

%% @doc Record `Module' as the transport of the socket `S'.
-spec held(socket(), module()) -> ok.
held(S, Module) ->
    put(?KEY(S), Module),
    ok.

%% @doc The transport module of `S': the one recorded, else TCP's (a socket this user did not
%% make through the kinds, such as a test's own, is a plain port).
-spec which(socket()) -> module().
which(S) ->
    case get(?KEY(S)) of
        undefined -> beamscale_load_transport_tcp;
        Module -> Module
    end.

%% @doc Forget the transport of a closed socket.
-spec forget(socket()) -> ok.
forget(S) ->
    _ = erase(?KEY(S)),
    ok.

%% @doc An empty data message of `S' to this process: bytes a kind holds in its buffer behind an
%% answer reach the handler of what the server pushes, which watches the mailbox.
-spec nudge(socket()) -> ok.
nudge(S) ->
    {Data, _, _, _} = (which(S)):messages(),
    self() ! {Data, S, <<>>},
    ok.
