%% @doc XMPP over WebSocket (RFC 7395) for the `xmpp' kind: the opening handshake (the
%% `websocket' kind's, subprotocol `xmpp'), each send one masked text frame, and received frames
%% turned back into XML text for the stanza cutter (pings answered, a close frame ends the
%% stream). The stream is opened with `<open/>' and ended with `<close/>'.
-module(beamscale_load_xmpp_ws).

-export([upgrade/4, send/2, feed/3, open/1, close/0]).

-define(NS, "urn:ietf:params:xml:ns:xmpp-framing").
-define(F, beamscale_load_ws_frame).

%% @doc The opening handshake on the user's socket `S' (to `{Host, Port}', at `Path'): the bytes
%% that came after it, or the error (the connection closed).
-spec upgrade(beamscale_load_tcp:socket(), {string(), inet:port_number()}, binary(),
              pos_integer()) -> {ok, binary()} | {error, term(), closed}.
upgrade(S, {Host, Port}, Path, Timeout) ->
    {ok, Spec} = beamscale_load_websocket:check(
                   #{type => connect, path => binary_to_list(Path), subprotocols => "xmpp"},
                   #{host => Host, port => Port}),
    case beamscale_load_websocket:request(Spec, {ws, S, <<>>, false}, Timeout) of
        {ok, {ws, S, Rest, true}} -> {ok, Rest};
        {error, R, _} -> {error, R, closed}
    end.

%% @doc The stream's opening element to `Domain'.
-spec open(binary()) -> iodata().
open(Domain) ->
    ["<open xmlns='" ?NS "' to='", beamscale_load_xmpp_stanza:escape(Domain),
     "' version='1.0'/>"].

%% @doc The stream's closing element.
-spec close() -> iodata().
close() -> "<close xmlns='" ?NS "'/>".

%% @doc Send `Bytes' as one text frame.
-spec send(beamscale_load_tcp:socket(), iodata()) -> ok | {error, term()}.
send(S, Bytes) -> beamscale_load_tcp:send(S, ?F:encode({text, true}, Bytes, rand:bytes(4))).

%% @doc Bytes received (`Raw', frames not yet whole, then `Data'): the XML text of the whole
%% frames appended to `Buf', and the bytes left; pings answered.
-spec feed(beamscale_load_tcp:socket(), {binary(), binary()}, binary()) ->
    {ok, binary(), binary()} | {error, term()}.
feed(S, {Raw, Buf}, Data) -> frames(S, <<Raw/binary, Data/binary>>, Buf).

frames(S, Raw, Buf) ->
    case ?F:decode(Raw, beamscale_load_reader:max(S)) of
        {ok, #{opcode := Op, payload := P}, Rest} when Op =:= text; Op =:= continuation ->
            frames(S, Rest, <<Buf/binary, P/binary>>);
        {ok, #{opcode := ping, payload := P}, Rest} ->
            _ = beamscale_load_tcp:send(S, ?F:encode({pong, true}, P, rand:bytes(4))),
            frames(S, Rest, Buf);
        {ok, #{opcode := close}, _} -> {error, {beamscale_load_xmpp, stream_end}};
        {ok, _Other, Rest} -> frames(S, Rest, Buf);
        more -> {ok, Raw, Buf};
        {error, R} -> {error, {beamscale_load_xmpp, {websocket, R}}}
    end.
