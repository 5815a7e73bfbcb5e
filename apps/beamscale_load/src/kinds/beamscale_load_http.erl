%% @doc The `http' request kind: HTTP/1.1 with keep-alive over the user's one connection. The
%% request bytes are built once, at validation; the reply is parsed with `erlang:decode_packet/3'
%% (the emulator's own HTTP parser). Bodies must have a Content-Length (no chunked encoding).
-module(beamscale_load_http).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).

-define(METHODS, [get, head, post, put, delete, patch, options]).

%% @doc `#{method => get, path => "/", headers => [{Name, Value}], body => Bytes,
%% status => 200}' (all optional) against host:port.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := Host, port := Port}) ->
    S = maps:merge(#{method => get, path => "/", headers => [], body => <<>>, status => 200},
                   Spec),
    #{method := M, path := P, headers := H, body := B, status := St} = S,
    Bad = [K || K <- maps:keys(S), not lists:member(K, [method, path, headers, body, status])],
    if Bad =/= [] -> {error, hd(Bad), "unknown key (known: method, path, headers, body, status)"};
       not is_atom(M) -> {error, method, "expected an atom such as get or post"};
       not is_list(P) -> {error, path, "expected a string starting with /"};
       not is_list(H) -> {error, headers, "expected a list of {Name, Value} strings"};
       not (is_binary(B) orelse is_list(B)) -> {error, body, "expected iodata"};
       not is_integer(St) -> {error, status, "expected the expected status code"};
       true -> {ok, #{bytes => bytes(M, P, H, B, Host, Port), status => St,
                      head => M =:= head}}
    end;
check(_Spec, _Target) -> {error, target, "http needs a host:port target"}.

bytes(Method, Path, Headers, Body, Host, Port) ->
    Len = iolist_size(Body),
    iolist_to_binary(
      [string:uppercase(atom_to_list(Method)), " ", Path, " HTTP/1.1\r\n",
       "Host: ", Host, ":", integer_to_list(Port), "\r\n",
       [[N, ": ", V, "\r\n"] || {N, V} <- Headers],
       case Len of 0 -> []; _ -> ["Content-Length: ", integer_to_list(Len), "\r\n"] end,
       "\r\n", Body]).

%% @doc Open the user's connection.
-spec connect(map()) -> {ok, beamscale_load_tcp:conn()} | {error, term()}.
connect(Target) -> beamscale_load_tcp:connect(Target).

%% @doc Send one request and read its response; a status other than the expected one is an error.
-spec request(map(), beamscale_load_tcp:conn(), pos_integer()) ->
    beamscale_load_request:result().
request(#{bytes := Bytes, status := Want} = Spec, {S, Buf}, Timeout) ->
    case beamscale_load_tcp:send(S, Bytes) of
        ok ->
            case response(S, Buf, beamscale_load_tcp:deadline(Timeout), Spec) of
                {ok, Want, Rest, keep} -> {ok, {S, Rest}};
                {ok, Want, _, close} -> gone(S, ok);
                {ok, Got, Rest, keep} -> {error, {status, Got}, {S, Rest}};
                {ok, Got, _, close} -> gone(S, {status, Got});
                {error, Reason} -> gone(S, Reason)
            end;
        {error, Reason} -> gone(S, Reason)
    end.

gone(S, Result) ->
    ok = beamscale_load_tcp:drop(S),
    case Result of
        ok -> {ok, closed};
        Reason -> {error, Reason, closed}
    end.

response(S, Buf, Deadline, Spec) ->
    case erlang:decode_packet(http_bin, Buf, []) of
        {ok, {http_response, _Version, Status, _}, Rest} ->
            headers(S, Rest, Deadline, Spec, #{status => Status, length => 0, conn => keep});
        {ok, Other, _} -> {error, {bad_response, Other}};
        {more, _} -> recv(S, Buf, Deadline, fun(B) -> response(S, B, Deadline, Spec) end);
        {error, Reason} -> {error, {bad_response, Reason}}
    end.

headers(S, Buf, Deadline, Spec, Acc) ->
    case erlang:decode_packet(httph_bin, Buf, []) of
        {ok, http_eoh, Rest} -> body(S, Rest, Deadline, Spec, Acc);
        {ok, {http_header, _, 'Content-Length', _, V}, Rest} ->
            headers(S, Rest, Deadline, Spec, Acc#{length := binary_to_integer(V)});
        {ok, {http_header, _, 'Connection', _, V}, Rest} ->
            Conn = case string:lowercase(V) of <<"close">> -> close; _ -> keep end,
            headers(S, Rest, Deadline, Spec, Acc#{conn := Conn});
        {ok, {http_header, _, 'Transfer-Encoding', _, _}, _} -> {error, chunked_unsupported};
        {ok, {http_header, _, _, _, _}, Rest} -> headers(S, Rest, Deadline, Spec, Acc);
        {more, _} -> recv(S, Buf, Deadline, fun(B) -> headers(S, B, Deadline, Spec, Acc) end);
        {ok, Other, _} -> {error, {bad_header, Other}};
        {error, Reason} -> {error, {bad_header, Reason}}
    end.

body(_S, Buf, _Deadline, #{head := true}, #{status := St, conn := C}) -> {ok, St, Buf, C};
body(_S, Buf, _Deadline, _Spec, #{status := St, length := Len, conn := C})
  when byte_size(Buf) >= Len ->
    <<_:Len/binary, Rest/binary>> = Buf,
    {ok, St, Rest, C};
body(S, Buf, Deadline, Spec, Acc) ->
    recv(S, Buf, Deadline, fun(B) -> body(S, B, Deadline, Spec, Acc) end).

recv(S, Buf, Deadline, Then) ->
    case beamscale_load_tcp:recv_more(S, Buf, Deadline) of
        {ok, Buf1} -> Then(Buf1);
        {error, _} = Error -> Error
    end.

%% @doc Close the user's connection.
-spec close(beamscale_load_tcp:conn()) -> ok.
close(Conn) -> beamscale_load_tcp:close(Conn).
