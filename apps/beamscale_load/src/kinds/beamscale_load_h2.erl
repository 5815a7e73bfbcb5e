%% @doc The `http2' request kind: HTTP/2 (RFC 9113) over TLS with ALPN `h2' (a target with
%% `tls') or over cleartext with prior knowledge (h2c). Each user owns one connection, as
%% h2load's clients do; a request step sends `streams => N' concurrent streams of the same
%% request on it (h2load's `-m'), at most the server's SETTINGS_MAX_CONCURRENT_STREAMS at once
%% (more wait for a free one), and ends when all are answered: 8 users with `streams => 10' are
%% h2load's `-c 8 -m 10'. The header block is HPACK-encoded once, at validation
%% (`beamscale_load_h2_hpack'); the connection is `beamscale_load_h2_conn'. Responses are
%% returned to the user as the `http' kind returns them (status, headers, body), so variables,
%% extraction, checks, cookies and credentials work the same.
-module(beamscale_load_h2).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1, name/0, features/0, format_error/1]).

-define(VERSION, "0.1.0").
-define(KEYS, [method, path, headers, body, status, respond, streams]).
%% Headers HTTP/2 forbids (RFC 9113, 8.2.2); `host' is the `:authority' pseudo-header.
-define(CONNECTION_HEADERS, [<<"connection">>, <<"keep-alive">>, <<"proxy-connection">>,
                             <<"transfer-encoding">>, <<"upgrade">>, <<"host">>]).
-define(MAX_STREAMS, 1000).

%% @doc `#{method => get, path => "/", headers => [{Name, Value}], body => Bytes,
%% status => 200, respond => false, streams => 1}' (all optional) against host:port.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := Host, port := Port} = Target) ->
    S = maps:merge(#{method => get, path => "/", headers => [], body => <<>>, status => 200,
                     respond => false, streams => 1}, Spec),
    try
        [throw({bad, K, "unknown key (known: " ++ known() ++ ")"})
         || K <- maps:keys(S), not lists:member(K, ?KEYS)],
        {ok, built(S, Host, Port, maps:is_key(tls, Target))}
    catch throw:{bad, Key, Msg} -> {error, Key, Msg}
    end;
check(_Spec, _Target) -> {error, target, "http2 needs a host:port target"}.

known() -> lists:join(", ", [atom_to_list(K) || K <- ?KEYS]).

built(#{method := M, path := P, headers := H, body := B, status := St, respond := R,
        streams := N}, Host, Port, Tls) ->
    is_list(P) andalso P =/= [] orelse throw({bad, path, "expected a string starting with /"}),
    is_list(H) orelse throw({bad, headers, "expected a list of {Name, Value} strings"}),
    Body = try iolist_to_binary(B)
           catch error:badarg -> throw({bad, body, "expected iodata"})
           end,
    is_boolean(R) orelse R =:= body orelse throw({bad, respond, "expected true, false or body"}),
    is_integer(N) andalso N >= 1 andalso N =< ?MAX_STREAMS
        orelse throw({bad, streams, "expected a number of streams from 1 to 1000"}),
    Fields = [{<<":method">>, method(M)}, {<<":scheme">>, scheme(Tls)},
              {<<":authority">>, iolist_to_binary([Host, ":", integer_to_list(Port)])},
              {<<":path">>, text(path, P)}]
        ++ headers(H)
        ++ [{<<"content-length">>, integer_to_binary(byte_size(Body))} || Body =/= <<>>],
    #{block => beamscale_load_h2_hpack:encode(Fields), body => Body, streams => N,
      status => statuses(St), respond => R}.

scheme(true) -> <<"https">>;
scheme(false) -> <<"http">>.

method(M) when is_atom(M) -> method(string:uppercase(atom_to_list(M)));
method(M) when is_list(M), M =/= [], length(M) =< 24 ->
    case beamscale_load_http:method(M) of
        bad -> throw({bad, method, "a method name is an HTTP token"});
        B -> B
    end;
method(_) -> throw({bad, method, "expected an atom such as get, or a name such as \"PROPFIND\""}).

%% Names in lower case (RFC 9113, 8.2); a user agent unless the scenario gives its own.
headers(H) ->
    Hs = [{lower(text(headers, N)), text(headers, V)} || {N, V} <- pairs(H)],
    [{<<"user-agent">>, <<"beamscale/", ?VERSION>>}
     || not lists:keymember(<<"user-agent">>, 1, Hs)]
        ++ [F || {N, _} = F <- Hs, not lists:member(N, ?CONNECTION_HEADERS)].

pairs(H) ->
    [case P of
         {_, _} -> P;
         _ -> throw({bad, headers, "expected a list of {Name, Value} strings"})
     end || P <- H].

%% CR, LF or NUL in a field would be a malformed request (RFC 9113, 8.2.1), or an injection.
text(Key, T) ->
    B = try unicode:characters_to_binary(T)
        catch error:badarg -> throw({bad, Key, "expected a string"})
        end,
    is_binary(B) orelse throw({bad, Key, "expected a string"}),
    case binary:match(B, [<<"\r">>, <<"\n">>, <<0>>]) of
        nomatch -> B;
        _ -> throw({bad, Key, "CR, LF or NUL in a field (injection)"})
    end.

lower(B) -> << <<(case C of C when C >= $A, C =< $Z -> C + 32; _ -> C end)>> || <<C>> <= B >>.

statuses(St) when is_integer(St) -> [St];
statuses([_ | _] = L) ->
    lists:all(fun is_integer/1, L) orelse throw({bad, status, "expected status codes"}),
    L;
statuses(_) -> throw({bad, status, "expected the expected status code or a list of them"}).

%% @doc Open the user's connection and exchange SETTINGS.
-spec connect(map()) -> {ok, beamscale_load_h2_conn:conn()} | {error, term()}.
connect(Target) -> beamscale_load_h2_conn:connect(Target).

%% @doc Send the request on its streams and read every response; a status other than an
%% expected one (of any stream) is an error. The first stream's response is the user's.
-spec request(map(), beamscale_load_h2_conn:conn(), pos_integer()) ->
    beamscale_load_request:result().
request(#{block := Block, body := Body, streams := N, status := Want, respond := R}, Conn,
        Timeout) ->
    case beamscale_load_h2_conn:request({Block, Body, N, R =/= false}, Conn, Timeout) of
        {ok, Conn1, [#{status := First} | _] = Resps} ->
            ok = beamscale_load_request:status(First),
            Bad = [S || #{status := S} <- Resps, not lists:member(S, Want)],
            result(R, Bad, Conn1, hd(Resps));
        {error, Reason, closed} -> {error, Reason, closed}
    end.

result(false, [], Conn, _) -> {ok, Conn};
result(false, [S | _], Conn, _) -> {error, {status, S}, Conn};
result(R, Bad, Conn, #{status := St, headers := Hs, body := B}) ->
    Resp = case R of
               body -> #{status => St, body => iolist_to_binary(B)};
               true -> #{status => St, body => iolist_to_binary(B),
                         headers => [H || {<<C, _/binary>>, _} = H <- Hs, C =/= $:]}
           end,
    case Bad of
        [] -> {ok, Conn, Resp};
        [S | _] -> {error, {status, S}, Conn, Resp}
    end.

%% @doc Close the user's connection.
-spec close(beamscale_load_h2_conn:conn()) -> ok.
close(Conn) -> beamscale_load_h2_conn:close(Conn).

%% @doc The kind's step name.
-spec name() -> http2.
name() -> http2.

%% @doc Variables, checks, cookies and credentials, as the `http' kind (no compiled head: a
%% dynamic request is filled and encoded again).
-spec features() -> [beamscale_load_request:feature()].
features() -> [extract, match, cookies, auth, headers].

%% @doc The text of the kind's reasons.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({beamscale_load_h2_hpack, _} = R) -> beamscale_load_h2_hpack:format_error(R);
format_error({beamscale_load_h2_frame, _} = R) -> beamscale_load_h2_frame:format_error(R);
format_error({goaway, Code}) -> io_lib:format("HTTP/2 GOAWAY (~0tp) before the response", [Code]);
format_error({reset, Code}) -> io_lib:format("HTTP/2 stream reset (RST_STREAM ~0tp)", [Code]);
format_error({flood, What}) ->
    io_lib:format("HTTP/2 flood: above 1000 control frames (~ts) in one request", [What]);
format_error(window_closed) -> "HTTP/2 flow-control window never opened by the server";
format_error(flow_control) -> "HTTP/2 flow-control error (DATA past the window, or overflow)";
format_error(head_too_big) -> "HTTP/2 header block above 64 KiB";
format_error(no_alpn_h2) -> "TLS server did not choose h2 by ALPN";
format_error(no_settings) -> "HTTP/2 server preface is not a SETTINGS frame";
format_error(bad_setting) -> "HTTP/2 SETTINGS value out of range";
format_error(bad_status) -> "HTTP/2 response without a valid :status";
format_error(push_promise) -> "HTTP/2 PUSH_PROMISE although push is disabled";
format_error(interleaved_headers) -> "HTTP/2 frame inside a header block (CONTINUATION expected)";
format_error(stray_continuation) -> "HTTP/2 CONTINUATION outside a header block";
format_error(streams_exhausted) -> "HTTP/2 stream identifiers exhausted";
format_error(R) -> io_lib:format("HTTP/2: ~0tp", [R]).
