%% @doc The `websocket' request kind, Tsung's `ts_websocket': an RFC 6455 client over the user's
%% TCP (or TLS) connection. `connect' is the opening handshake (the `Sec-WebSocket-Accept'
%% checked, a subprotocol offered), `message' sends a text or binary message and waits for the
%% server's next whole message (fragments reassembled) unless `no_ack', `close' is the closing
%% handshake. Pings the server sends while a reply is awaited are answered with pongs. With
%% `respond => true' (set by the scenario for variables taken from, or checks on, the reply) a
%% message's reply is returned as the body of a response, and a connect's status and headers.
-module(beamscale_load_websocket).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1, format_error/1]).
-export([name/0, features/0, tsung/0, from_tsung/3]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/2, attr/3, req/3, fail/4]).
-export_type([conn/0]).

%% The stream, the bytes received but not used, and whether the handshake is done.
-type conn() :: {ws, beamscale_load_tcp:socket(), binary(), boolean()}.

%% The largest handshake response: headers are read before any length is known.
-define(MAX_HEADERS, 64 * 1024).
%% Status 1000: a normal closure (RFC 6455, 7.4.1).
-define(NORMAL, <<1000:16>>).

%% @doc `#{type => connect, path => "/", subprotocols => "chat, v2", origin => "http://a"}'
%% (an `Origin' header in the handshake, Tsung's `origin'), `#{type => message,
%% data => Bytes, frame => text | binary, ack => reply | no_ack}' or `#{type => close}'.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(#{type := Type} = Spec0, #{host := Host, port := Port}) ->
    Respond = maps:get(respond, Spec0, false),
    Spec = maps:remove(respond, Spec0),
    Checked = case {Type, maps:keys(maps:remove(type, Spec))} of
                  {connect, Keys} -> only(Keys, [path, subprotocols, origin],
                                          fun() -> connect_spec(Spec, Host, Port) end);
                  {message, Keys} -> only(Keys, [data, frame, ack],
                                          fun() -> message_spec(Spec) end);
                  {close, Keys} -> only(Keys, [], fun() -> {ok, #{type => close}} end);
                  _ -> {error, type, "expected connect, message or close"}
              end,
    respond(Checked, Respond);
check(#{type := _}, _Target) -> {error, target, "websocket needs a host:port target"};
check(_Spec, _Target) -> {error, type, "missing (connect, message or close)"}.

only(Keys, Known, Then) ->
    case Keys -- Known of
        [] -> Then();
        [K | _] -> {error, K, "unknown key (known: type, " ++
                       lists:join(", ", [atom_to_list(X) || X <- Known]) ++ ")"}
    end.

%% Only a reply can be read: a close or a message sent with no_ack gets none.
respond({ok, Spec}, false) -> {ok, Spec#{respond => false}};
respond({ok, #{type := close}}, true) ->
    {error, respond, "a close gets no reply to take variables from or to check"};
respond({ok, #{ack := no_ack}}, true) ->
    {error, respond, "a message with ack no_ack waits for no reply to take variables from or "
                     "to check"};
respond({ok, Spec}, true) -> {ok, Spec#{respond => true}};
respond({ok, _}, _) -> {error, respond, "expected true or false"};
respond(Error, _) -> Error.

connect_spec(Spec, Host, Port) ->
    case [K || K <- [path, subprotocols, origin], crlf(maps:get(K, Spec, ""))] of
        [K | _] -> {error, K, "CR or LF would split the request line or header (injection)"};
        [] -> connect_spec_(Spec, Host, Port)
    end.

%% Whether a string of the handshake holds CR or LF (it would end its line: header injection).
crlf(Str) when is_list(Str) -> lists:member($\r, Str) orelse lists:member($\n, Str);
crlf(_) -> false.

connect_spec_(Spec, Host, Port) ->
    case {maps:get(path, Spec, "/"), maps:get(subprotocols, Spec, ""),
          maps:get(origin, Spec, "")} of
        {_, _, O} when not is_list(O) -> {error, origin, "expected a string (an origin URL)"};
        {"/" ++ _ = Path, Sub, Origin} when is_list(Sub) ->
            Offered = [string:trim(P) || P <- string:split(Sub, ",", all), string:trim(P) =/= ""],
            {ok, #{type => connect, path => Path, subprotocols => Offered, origin => Origin,
                   host => [Host, ":", integer_to_list(Port)]}};
        {"/" ++ _, _, _} -> {error, subprotocols, "expected a string: names separated by commas"};
        _ -> {error, path, "expected a string starting with /"}
    end.

message_spec(Spec) ->
    Data = maps:get(data, Spec, undefined),
    case {maps:get(frame, Spec, text), maps:get(ack, Spec, reply)} of
        _ when not (is_binary(Data) orelse is_list(Data)) ->
            {error, data, "expected the message (iodata)"};
        {F, _} when F =/= text, F =/= binary -> {error, frame, "expected text or binary"};
        {_, A} when A =/= reply, A =/= no_ack -> {error, ack, "expected reply or no_ack"};
        {F, A} ->
            try iolist_to_binary(Data) of
                B -> {ok, #{type => message, data => B, frame => F, ack => A}}
            catch error:badarg -> {error, data, "expected the message (iodata)"}
            end
    end.

%% @doc Open the TCP (or TLS) connection; the `connect' request does the handshake over it.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(Target) ->
    case beamscale_load_tcp:connect(Target) of
        {ok, {S, Buf}} -> {ok, {ws, S, Buf, false}};
        {error, _} = Error -> Error
    end.

%% @doc One step: the opening handshake, a message (and its reply), or the closing handshake.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{type := connect} = Spec, {ws, S, Buf, false}, Timeout) ->
    Key = beamscale_load_ws_frame:key(rand:bytes(16)),
    case beamscale_load_tcp:send(S, handshake(Spec, Key)) of
        ok -> upgraded(response(S, Buf, deadline(Timeout), Spec, Key), S, Spec);
        {error, Reason} -> gone(S, Reason)
    end;
request(#{type := connect}, {ws, _, _, true} = Conn, _Timeout) ->
    {error, {?MODULE, already_connected}, Conn};
request(_Spec, {ws, S, _, false}, _Timeout) -> gone(S, {?MODULE, not_connected});
request(#{type := message, data := D, frame := F, ack := Ack} = Spec, {ws, S, Buf, true},
        Timeout) ->
    case send(S, {F, true}, D) of
        ok when Ack =:= no_ack -> {ok, {ws, S, Buf, true}};
        ok -> replied(reply(S, Buf, deadline(Timeout), {0, []}), Spec);
        {error, Reason} -> gone(S, Reason)
    end;
request(#{type := close}, {ws, S, Buf, true}, Timeout) ->
    case send(S, {close, true}, ?NORMAL) of
        ok -> closing(S, Buf, deadline(Timeout));
        {error, Reason} -> gone(S, Reason)
    end.

deadline(Timeout) -> beamscale_load_tcp:deadline(Timeout).

handshake(#{path := Path, host := Host, subprotocols := Sub} = Spec, Key) ->
    ["GET ", Path, " HTTP/1.1\r\nHost: ", Host, "\r\nUpgrade: websocket\r\n"
     "Connection: Upgrade\r\nSec-WebSocket-Key: ", Key, "\r\nSec-WebSocket-Version: 13\r\n",
     [["Sec-WebSocket-Protocol: ", lists:join(", ", Sub), "\r\n"] || Sub =/= []],
     [["Origin: ", O, "\r\n"] || O <- [maps:get(origin, Spec, "")], O =/= ""], "\r\n"].

upgraded({ok, Rest, Headers}, S, #{respond := true}) ->
    {ok, {ws, S, Rest, true}, #{status => 101, headers => Headers, body => <<>>}};
upgraded({ok, Rest, _}, S, _) -> {ok, {ws, S, Rest, true}};
upgraded({error, Reason}, S, _) -> gone(S, Reason).

%% The reply as a response has a body only: no status or headers to take or check.
replied({ok, Conn, Message}, #{respond := true}) -> {ok, Conn, #{body => Message}};
replied({ok, Conn, _}, _) -> {ok, Conn};
replied(Error, _) -> Error.

%% The server's 101 response: status, Upgrade, Connection, the accept value, and a subprotocol
%% only among those offered (RFC 6455, 4.1, the client's checks).
response(S, Buf, Deadline, Spec, Key) ->
    case erlang:decode_packet(http_bin, Buf, []) of
        {ok, {http_response, _, 101, _}, Rest} -> headers(S, Rest, Deadline, Spec, Key, #{});
        {ok, {http_response, _, Status, _}, _} -> {error, {?MODULE, {status, Status}}};
        {more, _} when byte_size(Buf) > ?MAX_HEADERS -> {error, {?MODULE, headers_too_big}};
        {more, _} -> more(S, Buf, Deadline, fun(B) -> response(S, B, Deadline, Spec, Key) end);
        _ -> {error, {?MODULE, bad_response}}
    end.

headers(S, Buf, Deadline, Spec, Key, Acc) ->
    case erlang:decode_packet(httph_bin, Buf, []) of
        {ok, http_eoh, Rest} -> check_upgrade(Acc, Spec, Key, Rest);
        {ok, {http_header, _, Name, _, V}, Rest} ->
            headers(S, Rest, Deadline, Spec, Key, Acc#{header(Name) => V});
        {more, _} when byte_size(Buf) > ?MAX_HEADERS -> {error, {?MODULE, headers_too_big}};
        {more, _} -> more(S, Buf, Deadline,
                          fun(B) -> headers(S, B, Deadline, Spec, Key, Acc) end);
        _ -> {error, {?MODULE, bad_response}}
    end.

%% Header names as binaries, lower case: the emulator's parser gives atoms only for those it
%% knows, so the others stay binaries (no atom is made from input).
header(Name) when is_atom(Name) -> string:lowercase(atom_to_binary(Name));
header(Name) -> string:lowercase(Name).

check_upgrade(H, #{subprotocols := Offered}, Key, Rest) ->
    Lower = fun(K) -> string:lowercase(maps:get(K, H, <<>>)) end,
    Tokens = [string:trim(T) || T <- string:split(Lower(<<"connection">>), ",", all)],
    Sub = maps:get(<<"sec-websocket-protocol">>, H, none),
    Accept = maps:get(<<"sec-websocket-accept">>, H, none),
    case {Lower(<<"upgrade">>), lists:member(<<"upgrade">>, Tokens)} of
        {<<"websocket">>, true} when Accept =/= none ->
            case Accept =:= beamscale_load_ws_frame:accept(Key) of
                false -> {error, {?MODULE, bad_accept}};
                true when Sub =/= none ->
                    subprotocol(binary_to_list(Sub), Offered, {ok, Rest, maps:to_list(H)});
                true -> {ok, Rest, maps:to_list(H)}
            end;
        {<<"websocket">>, true} -> {error, {?MODULE, {no_upgrade, 'Sec-WebSocket-Accept'}}};
        {<<"websocket">>, false} -> {error, {?MODULE, {no_upgrade, 'Connection: Upgrade'}}};
        _ -> {error, {?MODULE, {no_upgrade, 'Upgrade: websocket'}}}
    end.

subprotocol(Sub, Offered, Ok) ->
    case lists:member(Sub, Offered) of
        true -> Ok;
        false -> {error, {?MODULE, unoffered_subprotocol}}
    end.

more(S, Buf, Deadline, Then) ->
    case beamscale_load_tcp:recv_more(S, Buf, Deadline) of
        {ok, B} -> Then(B);
        {error, _} = Error -> Error
    end.

%% The server's next whole message (returned with the connection): fragments (a text or binary
%% frame, then continuations) joined, with their size so far; pings answered and pongs skipped
%% between them; a close answered and the connection ended. A message above the connection's
%% `max_reply_bytes' (beamscale_load_reader) fails as soon as a frame header says so.
reply(S, Buf, Deadline, {Size, _} = Parts) ->
    Max = beamscale_load_reader:max(S),
    case beamscale_load_ws_frame:decode(Buf, Max - Size) of
        {ok, Frame, Rest} -> frame(Frame, S, Rest, Deadline, Parts);
        more -> case beamscale_load_tcp:recv_more(S, Buf, Deadline) of
                    {ok, B} -> reply(S, B, Deadline, Parts);
                    {error, Reason} -> gone(S, Reason)
                end;
        {error, {frame_too_big, _}} -> gone(S, {beamscale_load_reader, {too_big, Max}});
        {error, Reason} -> gone(S, {?MODULE, Reason})
    end.

frame(#{opcode := ping, payload := P}, S, Rest, Deadline, Parts) ->
    case send(S, {pong, true}, P) of
        ok -> reply(S, Rest, Deadline, Parts);
        {error, Reason} -> gone(S, Reason)
    end;
frame(#{opcode := pong}, S, Rest, Deadline, Parts) -> reply(S, Rest, Deadline, Parts);
frame(#{opcode := close, payload := P}, S, _Rest, _Deadline, _Parts) ->
    _ = send(S, {close, true}, P),
    gone(S, {?MODULE, {closed_by_server, close_code(P)}});
frame(#{opcode := Op}, S, _Rest, _Deadline, {_, Parts})
  when (Op =:= continuation) =:= (Parts =:= []) ->
    %% A continuation with nothing to continue, or a new message in the middle of one.
    gone(S, {?MODULE, bad_fragment});
frame(#{fin := false, payload := P}, S, Rest, Deadline, {Size, Parts}) ->
    reply(S, Rest, Deadline, {Size + byte_size(P), [Parts, P]});
frame(#{fin := true, payload := P}, S, Rest, _Deadline, {_, []}) -> {ok, {ws, S, Rest, true}, P};
frame(#{fin := true, payload := P}, S, Rest, _Deadline, {_, Parts}) ->
    {ok, {ws, S, Rest, true}, iolist_to_binary([Parts, P])}.

close_code(<<Code:16, _/binary>>) -> Code;
close_code(_) -> none.

%% After our close: the server's close ends the connection (RFC 6455, 7.1.1: the client waits
%% for the server to close the TCP connection first; a deadline bounds that wait).
closing(S, Buf, Deadline) ->
    case beamscale_load_ws_frame:decode(Buf, beamscale_load_reader:max(S)) of
        {ok, #{opcode := close}, _} -> done(S);
        {ok, _Other, Rest} -> closing(S, Rest, Deadline);
        more -> case beamscale_load_tcp:recv_more(S, Buf, Deadline) of
                    {ok, B} -> closing(S, B, Deadline);
                    {error, closed} -> done(S);
                    {error, Reason} -> gone(S, Reason)
                end;
        {error, Reason} -> gone(S, {?MODULE, Reason})
    end.

done(S) ->
    ok = beamscale_load_tcp:drop(S),
    {ok, closed}.

send(S, Op, Payload) ->
    beamscale_load_tcp:send(S, beamscale_load_ws_frame:encode(Op, Payload, rand:bytes(4))).

gone(S, Reason) ->
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% @doc Close the connection (without the closing handshake: the session is over).
-spec close(conn()) -> ok.
close({ws, S, _, _}) -> beamscale_load_tcp:drop(S).

%% @doc The text of a WebSocket error.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error(already_connected) -> "connect on a WebSocket already open";
format_error(not_connected) -> "a message or close before the WebSocket connect";
format_error({status, N}) -> io_lib:format("the handshake got status ~b, not 101", [N]);
format_error(headers_too_big) -> "handshake response headers above 64 KiB";
format_error(bad_response) -> "not an HTTP handshake response";
format_error({no_upgrade, H}) -> io_lib:format("the handshake response lacks ~ts", [H]);
format_error(bad_accept) -> "wrong Sec-WebSocket-Accept";
format_error(unoffered_subprotocol) -> "the server chose a subprotocol not offered";
format_error(bad_fragment) -> "a fragment out of order";
format_error({closed_by_server, Code}) -> io_lib:format("closed by the server (~tp)", [Code]);
format_error(Other) -> io_lib:format("protocol error: ~tp", [Other]).

%% @doc The kind's step name.
-spec name() -> websocket.
name() -> websocket.

%% @doc Variables and checks on the reply; placeholders in a Tsung element.
-spec features() -> [beamscale_load_request:feature()].
features() -> [extract, match, subst].

%% @doc Tsung's `ts_websocket' sessions and their `<websocket>' element.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_websocket", element => websocket, servers => ["tcp", "ssl"],
             attributes => [type, path, subprotocols, origin, frame, ack]}.

%% @doc A `<websocket>' element (below) and the request's `<dyn_variable>'s and `<match>'es,
%% which need a reply.
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(Req, E, Ctx) ->
    beamscale_load_tsung_dyn:calls(E, beamscale_load_tsung_request:values(E), Ctx),
    {Spec, Used} = tsung_websocket(E, Ctx),
    Keys = beamscale_load_tsung_dyn:request_keys(Req, none, Ctx),
    [fail(Req, Ctx, "<dyn_variable> and <match> need a reply: not on a close or a message "
                    "with ack=\"no_ack\"", [])
     || Keys =/= #{}, maps:get(type, Spec) =:= close orelse
            maps:get(ack, Spec, reply) =:= no_ack],
    {maps:merge(Spec, Keys), Used}.

%% `ts_websocket': `<websocket type="connect" path subprotocols>', `<websocket type="message"
%% frame="text|binary" ack="no_ack">DATA</websocket>' (without no_ack: wait for the reply),
%% `<websocket type="close">', to the `<server>' (tcp or ssl).
tsung_websocket(E, Ctx) ->
    check_attrs(E, Ctx),
    Spec = case req(E, type, Ctx) of
               "connect" -> maps:merge(#{type => connect, path => attr(E, path, "/")},
                                       maps:from_list([{K, V}
                                                       || K <- [subprotocols, origin],
                                                          V <- [attr(E, K)],
                                                          V =/= undefined]));
               "message" -> #{type => message,
                              data => unicode:characters_to_binary(
                                        beamscale_load_tsung_request:text(E)),
                              frame => beamscale_load_tsung_request:choice(
                                         E, frame, ["text", "binary"], Ctx),
                              ack => ack(E, Ctx)};
               "close" -> #{type => close};
               T -> fail(E, Ctx, "type=\"~ts\" (expected connect, message or close)", [T])
           end,
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    {Spec#{target => Name}, [{Name, Target}]}.

%% Tsung's `parse', its default, waits for the server's next whole message, as `reply' does.
ack(E, Ctx) ->
    case attr(E, ack) of
        "no_ack" -> no_ack;
        A when A =:= undefined; A =:= "parse" -> reply;
        A -> fail(E, Ctx, "ack=\"~ts\" (expected no_ack, or parse or none to wait for the "
                          "reply)", [A])
    end.
