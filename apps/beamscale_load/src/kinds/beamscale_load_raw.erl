%% @doc The `raw' request kind, Tsung's `ts_raw': send bytes (given, or a size of them) over the
%% user's TCP (or TLS) connection or UDP socket, and either go on at once (`no_ack') or wait for
%% the first bytes that come back, whatever they are (`local': Tsung acknowledges a raw request
%% on the first packet received). What a reply brings is used up by that request.
-module(beamscale_load_raw).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).
-export([name/0, tsung/0, from_tsung/3]).
-export([push_socket/1, handle_push/3]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/2, attr/3, positive_integer/3, fail/4]).
-export_type([conn/0]).

-type conn() :: beamscale_load_tcp:conn() | {udp, gen_udp:socket()}.

%% The largest `datasize': the bytes are built once per request spec and held by every user, so
%% a size from the scenario must not ask for unbounded memory. A UDP datagram holds at most 65507.
-define(MAX_DATASIZE, 16 * 1024 * 1024).
-define(MAX_UDP, 65507).
%% Passive as for tcp (beamscale_load_reader): datagrams wait in the kernel's buffer, not in the
%% user's mailbox.
-define(UDP_OPTS, [binary, {active, false}]).

%% @doc `#{data => Bytes} or #{datasize => N}, ack => local | no_ack' against host:port (a
%% target with `transport => udp' sends datagrams).
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := _} = Target) ->
    Max = case Target of
              #{transport := udp} -> ?MAX_UDP;
              _ -> ?MAX_DATASIZE
          end,
    case {[K || K <- maps:keys(Spec), not lists:member(K, [data, datasize, ack])],
          bytes(Spec, Max), maps:get(ack, Spec, local)} of
        {[K | _], _, _} -> {error, K, "unknown key (known: data, datasize, ack)"};
        {_, {error, K, Msg}, _} -> {error, K, Msg};
        {_, {ok, B}, Ack} when Ack =:= local; Ack =:= no_ack -> {ok, #{send => B, ack => Ack}};
        _ -> {error, ack, "expected local or no_ack"}
    end;
check(_Spec, _Target) -> {error, target, "raw needs a host:port target"}.

bytes(#{data := _, datasize := _}, _Max) -> {error, datasize, "give data or datasize, not both"};
bytes(#{data := D}, Max) ->
    try iolist_to_binary(D) of
        B when byte_size(B) =< Max -> {ok, B};
        _ -> {error, data, too_big(Max)}
    catch error:badarg -> {error, data, "expected the bytes to send (iodata)"}
    end;
%% Tsung sends `datasize' bytes of its own choosing; zeros here.
bytes(#{datasize := N}, Max) when is_integer(N), N > 0, N =< Max -> {ok, <<0:(N * 8)>>};
bytes(#{datasize := _}, Max) -> {error, datasize, "expected a size above 0; " ++ too_big(Max)};
bytes(_, _Max) -> {error, data, "missing (or datasize)"}.

too_big(Max) -> "at most " ++ integer_to_list(Max) ++ " bytes".

%% @doc Open the user's TCP connection (TLS if the target says so) or UDP socket.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(#{transport := udp, host := Host, port := Port}) ->
    %% Bound to the user's source address (or the one its route gives) and connected to the
    %% server: the kernel then drops datagrams from any other address or port, which a socket
    %% on 0.0.0.0 counted as replies.
    case gen_udp:open(0, beamscale_load_source:opts() ++ ?UDP_OPTS) of
        {ok, S} ->
            case gen_udp:connect(S, beamscale_load_source:peer(Host), Port) of
                ok -> {ok, {udp, S}};
                {error, Reason} -> ok = gen_udp:close(S), {error, {connect, Reason}}
            end;
        {error, Reason} -> {error, {connect, Reason}}
    end;
connect(Target) -> beamscale_load_tcp:connect(Target).

%% @doc Send, and wait for the first bytes back unless `no_ack'.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{send := B, ack := Ack}, {udp, S} = Conn, Timeout) ->
    beamscale_load_request:count(bytes_sent, byte_size(B)),
    beamscale_load_dump:capture(sent, B),
    case gen_udp:send(S, B) of
        ok when Ack =:= no_ack -> {ok, Conn};
        ok -> datagram(S, Conn, Timeout);
        {error, Reason} -> close(Conn), {error, Reason, closed}
    end;
request(#{send := B, ack := Ack}, {S, Buf} = Conn, Timeout) ->
    case beamscale_load_tcp:send(S, B) of
        ok when Ack =:= no_ack -> {ok, Conn};
        %% Bytes already here (a late echo of an earlier request) acknowledge this one, as the
        %% first packet after the send does in Tsung.
        ok when Buf =/= <<>> -> {ok, {S, <<>>}};
        ok -> case beamscale_load_tcp:recv_more(S, Buf, beamscale_load_tcp:deadline(Timeout)) of
                  {ok, _} -> {ok, {S, <<>>}};
                  {error, Reason} -> gone(S, Reason)
              end;
        {error, Reason} -> gone(S, Reason)
    end.

%% The server's next datagram (the socket is connected: no other sender's reaches it).
datagram(S, Conn, Timeout) ->
    case gen_udp:recv(S, 0, Timeout) of
        {ok, {_Ip, _Port, Data}} ->
            beamscale_load_request:count(bytes_received, byte_size(Data)),
            beamscale_load_dump:capture(received, Data),
            {ok, Conn};
        {error, Reason} -> {error, Reason, Conn}
    end.

gone(S, Reason) ->
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% @doc Close the user's connection or socket.
-spec close(conn()) -> ok.
close({udp, S}) -> gen_udp:close(S);
close(Conn) -> beamscale_load_tcp:close(Conn).

%% @doc The kind's step name.
-spec name() -> raw.
name() -> raw.

%% @doc Tsung's `ts_raw' sessions and their `<raw>' element, to a tcp, ssl or udp server.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_raw", element => raw, servers => ["tcp", "ssl", "udp"],
             attributes => [data, datasize, ack]}.

%% @doc A `<raw>' element (below).
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) -> tsung_raw(E, Ctx).

%% `ts_raw': `data' or `datasize' bytes to the `<server>' (tcp, ssl or udp); `ack' local waits
%% for the first bytes back, no_ack does not; `global' sends as no_ack, then waits for the
%% other users at a rendezvous of `<option name="global_number">' users (as Tsung's barrier).
tsung_raw(E, Ctx) ->
    check_attrs(E, Ctx),
    Bytes = case {attr(E, data), attr(E, datasize)} of
                {undefined, undefined} -> fail(E, Ctx, "<raw> needs data or datasize", []);
                {D, undefined} -> #{data => unicode:characters_to_binary(D)};
                {undefined, _} -> #{datasize => positive_integer(E, datasize, Ctx)};
                _ -> fail(E, Ctx, "<raw> has both data and datasize", [])
            end,
    Ack = case attr(E, ack, "local") of
              "local" -> local;
              "no_ack" -> no_ack;
              "global" -> global;
              A -> fail(E, Ctx, "ack=\"~ts\" (expected local, no_ack or global)", [A])
          end,
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    Spec = case Ack of
               global -> Bytes#{ack => no_ack};
               _ -> Bytes#{ack => Ack}
           end,
    %% Checked here too, so that a size too big names the <raw> element's line.
    case check(Spec, maps:merge(#{host => "", port => 0}, maps:with([transport], Target))) of
        {ok, _} when Ack =:= global ->
            {Spec#{target => Name, rendezvous => global(E, Ctx)}, [{Name, Target}]};
        {ok, _} -> {Spec#{target => Name}, [{Name, Target}]};
        {error, Key, Msg} -> fail(E, Ctx, "~ts: ~ts", [Key, Msg])
    end.

%% @doc The socket whose messages are this connection's pushes.
-spec push_socket(conn()) -> term().
push_socket({udp, S}) -> S;
push_socket({S, _Buf}) -> S.

%% @doc Bytes the server sent unasked (in a `bidi' session's wait): counted as received and as
%% one push, then dropped (not added to the connection's buffer); `Store' counts the pushes.
-spec handle_push(term(), conn(), non_neg_integer() | undefined) ->
    {push | ignore, conn() | closed, non_neg_integer()}.
handle_push(Msg, Conn, undefined) -> handle_push(Msg, Conn, 0);
handle_push({udp, _S, _Ip, _Port, Data}, Conn, N) -> pushed(Data, Conn, N);
handle_push({T, _S, Data}, Conn, N) when T =:= tcp; T =:= ssl -> pushed(Data, Conn, N);
%% A socket of `{active, N}' that delivered its N messages: armed again, nothing dropped.
handle_push({Passive, S}, {S, _} = Conn, N) when Passive =:= tcp_passive;
                                                   Passive =:= ssl_passive ->
    ok = beamscale_load_reader:arm(S),
    {ignore, Conn, N};
handle_push(_Closed, {udp, _} = Conn, N) -> {ignore, Conn, N};
handle_push(_Closed, {S, _}, N) ->
    ok = beamscale_load_tcp:drop(S),
    {ignore, closed, N}.

pushed(Data, Conn, N) ->
    beamscale_load_request:count(bytes_received, byte_size(Data)),
    {push, Conn, N + 1}.

global(E, #{global_number := none} = Ctx) ->
    fail(E, Ctx, "ack=\"global\" needs <option name=\"global_number\" value=\"N\">: how many "
                 "users meet there", []);
global(_E, #{global_number := N}) -> N.
