%% @doc One browser connection to `beamscale record''s proxy: a plain-HTTP request passed on to
%% its server, or a `CONNECT host:port' tunnel whose TLS the proxy ends itself with a certificate
%% for that host signed by its CA (`beamscale_record_ca'), so the requests inside are read and
%% passed on over TLS to the real host:port. Each request passed is sent to the owner to record.
%% Hostile input is bounded: a head line of 64 KiB (past it the socket is closed unanswered), a
%% CONNECT target of 255 bytes, a TLS handshake within its deadline, a body of 1 MiB (a chunked
%% one within its deadline too, `beamscale_record_chunked'); a target that cannot be reached is
%% named in the 502 answer. A reply has `reply_ms' from the request's start to pass whole (a
%% server trickling forever would hold a connection slot past every idle timeout): cut there,
%% its status not come yet a 502, else the connection closed and the owner told (`{cut, Text}').
-module(beamscale_record_conn).

-export([serve/2, refuse/3]).
-export_type([ctx/0]).

%% `cert': the chain and key for a host, from the owner (which keeps them per host).
-type ctx() :: #{owner := pid(), handshake_ms := timeout(), body_ms := pos_integer(),
                 reply_ms := pos_integer(),
                 cert := fun((string()) -> {[public_key:der_encoded()],
                                            {'ECPrivateKey', binary()}})}.

-define(MAX_HEAD, 65536).
-define(MAX_HOST, 255).
-define(MAX_BODY, 1048576).
%% A browser's idle keep-alive connection, a server that does not answer: let go after this.
-define(IDLE_MS, 30000).
-define(CONNECT_MS, 10000).
-define(DRAIN_MS, 1000).
%% The owner writes both files of a request within this (or the reply goes on without it).
-define(RECORD_MS, 5000).

%% @doc Serve the browser connection `Sock' (owned by the caller) until it is done; closes it.
-spec serve(gen_tcp:socket(), ctx()) -> ok.
serve(Sock, Ctx) ->
    T = {gen_tcp, Sock},
    case read_request(T, plain, Ctx) of
        {connect, Host, Port} -> tunnel(Sock, Host, Port, Ctx);
        {ok, Req} -> answer(T, Req, Ctx);
        {error, {refused, Why}} -> refuse(T, 400, Why);
        {error, _} -> close(T)
    end.

%%% CONNECT

%% The target is tried first (a refused one is named to the browser before any TLS), then the
%% browser's TLS is ended here within the deadline, with a certificate for the target's host.
tunnel(Sock, Host, Port, #{cert := Cert, handshake_ms := Ms} = Ctx) ->
    T = {gen_tcp, Sock},
    case gen_tcp:connect(Host, Port, [binary, {active, false}], ?CONNECT_MS) of
        {ok, Probe} ->
            ok = gen_tcp:close(Probe),
            _ = send(T, "HTTP/1.1 200 Connection Established\r\n\r\n"),
            {Chain, Key} = Cert(Host),
            case ssl:handshake(Sock, [{cert, Chain}, {key, Key}], Ms) of
                {ok, Tls} ->
                    In = {ssl, Tls},
                    case read_request(In, {https, Host, Port}, Ctx) of
                        {ok, Req} -> answer(In, Req, Ctx);
                        {error, {refused, Why}} -> refuse(In, 400, Why);
                        {error, _} -> close(In)
                    end;
                {error, _} -> close(T)
            end;
        {error, Why} -> bad_gateway(T, {connect, Host, Port, Why})
    end.

%%% A request

answer(T, Req, #{owner := Owner, reply_ms := Ms}) ->
    %% From here it is no longer an idle connection the owner may let go for a new one.
    Owner ! {busy, self()},
    At = erlang:monotonic_time(millisecond),
    case forward(Req, At + Ms) of
        {ok, S, Status, Head} ->
            ok = recorded(Owner, At, Req#{status => Status}),
            _ = relay(S, T, Head, At + Ms) =:= cut andalso (Owner ! {cut, cut_text(Req, Ms)}),
            close(S),
            close(T);
        {error, Why} -> bad_gateway(T, Why)
    end.

cut_text(#{method := M, scheme := Sc, host := H, port := P, path := Path}, Ms) ->
    io_lib:format("record: ~ts ~ts://~ts:~b~ts: the reply not all passed within ~b ms "
                  "(its whole-reply bound): cut, the browser's connection closed",
                  [string:uppercase(atom_to_list(M)), atom_to_list(Sc), H, P,
                   string:slice(Path, 0, 200), Ms]).

%% A read within the idle timeout and what is left of the reply's time: `cut' past the latter.
recv_by(S, Deadline) ->
    case Deadline - erlang:monotonic_time(millisecond) of
        Left when Left =< 0 -> cut;
        Left ->
            case recv(S, 0, min(Left, ?IDLE_MS)) of
                {error, timeout} when Left =< ?IDLE_MS -> cut;
                Other -> Other
            end
    end.

%% The request is in the files before its reply reaches the browser: a recording read once the
%% browser has its page holds it (a test read the files first under load and found none).
recorded(Owner, At, Req) ->
    Ref = monitor(process, Owner),
    Owner ! {request, At, Req, self(), Ref},
    receive
        {Ref, recorded} -> demonitor(Ref, [flush]), ok;
        {'DOWN', Ref, process, _, _} -> ok
    after ?RECORD_MS -> demonitor(Ref, [flush]), ok
    end.

%% The reply passes as it arrives: a connection holds one read, not the reply (64 browsers
%% fetching 16 MB each held 1.3-1.5 GB when replies were read whole first).
relay(S, T, Data, Deadline) ->
    case send(T, Data) of
        ok ->
            case recv_by(S, Deadline) of
                {ok, More} -> relay(S, T, More, Deadline);
                cut -> cut;
                {error, _} -> ok
            end;
        {error, _} -> ok
    end.

read_request(T, Where, Ctx) ->
    ok = setopts(T, [{packet, http_bin}, {packet_size, ?MAX_HEAD}]),
    case recv(T, 0, ?IDLE_MS) of
        {ok, {http_request, <<"CONNECT">>, {scheme, Host, Port}, _}} when Where =:= plain ->
            case headers(T, []) of
                {ok, _} -> connect_target(Host, Port);
                Error -> Error
            end;
        {ok, {http_request, Method, {absoluteURI, http, Host, Port, Path}, _}}
          when Where =:= plain ->
            request(T, Method, #{scheme => http, host => binary_to_list(Host),
                                 port => default(Port, 80), path => binary_to_list(Path)}, Ctx);
        {ok, {http_request, Method, {abs_path, Path}, _}} when Where =/= plain ->
            {https, Host, Port} = Where,
            request(T, Method, #{scheme => https, host => Host, port => Port,
                                 path => binary_to_list(Path)}, Ctx);
        {ok, Other} -> {error, {not_proxied, Other}};
        {error, _} = Error -> Error
    end.

connect_target(Host, _) when byte_size(Host) > ?MAX_HOST ->
    {error, {refused, io_lib:format("CONNECT host over ~b bytes", [?MAX_HOST])}};
connect_target(Host, PortText) ->
    case catch binary_to_integer(PortText) of
        P when is_integer(P), P > 0, P < 65536 -> {connect, binary_to_list(Host), P};
        _ -> {error, {refused, ["CONNECT port not a port number: ", PortText]}}
    end.

request(T, Method, Req, Ctx) ->
    case headers(T, []) of
        {ok, Hs} ->
            ok = setopts(T, [{packet, raw}]),
            case body(T, Hs, Ctx) of
                {ok, Body} when is_atom(Method) ->
                    {ok, Req#{method => method(Method), headers => Hs, body => Body}};
                {ok, _} -> {error, {method, Method}};
                Error -> Error
            end;
        Error -> Error
    end.

default(undefined, Port) -> Port;
default(Port, _) -> Port.

headers(T, Acc) ->
    case recv(T, 0, ?IDLE_MS) of
        {ok, {http_header, _, Name, _, Value}} when length(Acc) < 100 ->
            headers(T, [{name(Name), binary_to_list(Value)} | Acc]);
        {ok, http_eoh} -> {ok, lists:reverse(Acc)};
        {ok, Other} -> {error, {header, Other}};
        {error, _} = Error -> Error
    end.

%% A chunked body is read whole (and passed on with its length); another coding is refused.
body(T, Hs, #{body_ms := Ms}) ->
    case {proplists:get_value("transfer-encoding", Hs),
          proplists:get_value("content-length", Hs)} of
        {undefined, Length} -> sized(T, Length);
        {Coding, _} ->
            case string:lowercase(string:trim(Coding)) of
                "chunked" ->
                    Deadline = erlang:monotonic_time(millisecond) + Ms,
                    beamscale_record_chunked:read(fun(Wait) -> recv(T, 0, Wait) end, <<>>,
                                                  #{max => ?MAX_BODY, deadline => Deadline});
                _ -> {error, {refused, ["transfer-encoding not taken: ",
                                         string:slice(Coding, 0, 60)]}}
            end
    end.

sized(T, Length) ->
    case Length of
        undefined -> {ok, <<>>};
        Text ->
            case string:to_integer(Text) of
                {0, _} -> {ok, <<>>};
                {N, _} when is_integer(N), N > 0, N =< ?MAX_BODY -> recv(T, N, ?IDLE_MS);
                _ -> {error, {body, Text}}
            end
    end.

%% To the server over a fresh connection that it closes (HTTP/1.0: no chunked reply to undo);
%% over TLS for a tunnelled request. The server's certificate is not checked (a test server's
%% own is the common case): the recording is of what the browser asked.
forward(#{scheme := Scheme, method := M, host := H, port := P, path := Path, headers := Hs,
          body := Body}, Deadline) ->
    case upstream(Scheme, H, P) of
        {ok, S} ->
            Hop = ["connection", "proxy-connection", "keep-alive", "content-length",
                   "transfer-encoding"],
            Keep = [{K, V} || {K, V} <- Hs, not lists:member(K, Hop)],
            _ = send(S, [string:uppercase(atom_to_list(M)), " ", Path, " HTTP/1.0\r\n",
                         [[K, ": ", V, "\r\n"] || {K, V} <- Keep],
                         ["content-length: ", integer_to_list(byte_size(Body)), "\r\n"],
                         "connection: close\r\n\r\n", Body]),
            case status(S, <<>>, Deadline) of
                {ok, Status, Head} -> {ok, S, Status, Head};
                {error, bad_reply} -> close(S), {error, {bad_reply, H, P}};
                cut -> close(S), {error, {no_status, H, P}};
                {error, _} = Error -> close(S), Error
            end;
        {error, Why} -> {error, {connect, H, P, Why}}
    end.

%% The reply's status code, read from its first 12 bytes; back with all that came so far.
status(S, Acc, Deadline) ->
    case Acc of
        <<"HTTP/", _:3/binary, " ", Code:3/binary, _/binary>> ->
            case catch binary_to_integer(Code) of
                N when is_integer(N) -> {ok, N, Acc};
                _ -> {error, bad_reply}
            end;
        _ when byte_size(Acc) >= 12 -> {error, bad_reply};
        _ ->
            case recv_by(S, Deadline) of
                {ok, D} -> status(S, <<Acc/binary, D/binary>>, Deadline);
                cut -> cut;
                {error, closed} -> {error, bad_reply};
                {error, _} = Error -> Error
            end
    end.

upstream(http, H, P) ->
    case gen_tcp:connect(H, P, [binary, {active, false}], ?CONNECT_MS) of
        {ok, S} -> {ok, {gen_tcp, S}};
        Error -> Error
    end;
upstream(https, H, P) ->
    Sni = case inet:parse_address(H) of
              {ok, _} -> [{server_name_indication, disable}];
              {error, _} -> []
          end,
    case ssl:connect(H, P, [binary, {active, false}, {verify, verify_none} | Sni], ?CONNECT_MS) of
        {ok, S} -> {ok, {ssl, S}};
        Error -> Error
    end.

bad_gateway(T, Why) -> refuse(T, 502, reason(Why)).

%% @doc Answer `Code' with `Why' in words (body and `X-Beamscale-Record'), then close once the
%% client's bytes are read (bounded): also `beamscale_record''s answer to another user.
-spec refuse({gen_tcp, gen_tcp:socket()} | {ssl, ssl:sslsocket()}, 400 | 403 | 502,
             unicode:chardata()) -> ok.
refuse(T, Code, Why) ->
    Text = lists:flatten(io_lib:format("~ts", [Why])),
    _ = send(T, ["HTTP/1.1 ", integer_to_list(Code), " ", phrase(Code), "\r\n"
                 "Content-Type: text/plain\r\nContent-Length: ", integer_to_list(length(Text) + 1),
                 "\r\nConnection: close\r\nX-Beamscale-Record: ", Text, "\r\n\r\n", Text, "\n"]),
    drain_close(T).

%% Closing with the browser's bytes unread would reset the connection and lose the answer: say
%% we are done, read what is left (bounded in time and size), then close.
drain_close({gen_tcp, S} = T) ->
    _ = gen_tcp:shutdown(S, write),
    ok = inet:setopts(S, [{packet, raw}]),
    _ = drain(S, ?MAX_HEAD, erlang:monotonic_time(millisecond) + ?DRAIN_MS),
    close(T);
drain_close(T) -> close(T).

drain(S, Left, Until) when Left > 0 ->
    Wait = Until - erlang:monotonic_time(millisecond),
    case Wait > 0 andalso gen_tcp:recv(S, 0, Wait) of
        {ok, D} -> drain(S, Left - byte_size(D), Until);
        _ -> ok
    end;
drain(_, _, _) -> ok.

phrase(400) -> "Bad Request";
phrase(403) -> "Forbidden";
phrase(502) -> "Bad Gateway".

%% Why a request was not passed on, in words naming the target.
reason({connect, H, P, Why}) ->
    io_lib:format("~ts:~b: cannot connect: ~ts", [H, P, error_text(Why)]);
reason({bad_reply, H, P}) -> io_lib:format("~ts:~b: not an HTTP reply", [H, P]);
reason({no_status, H, P}) ->
    io_lib:format("~ts:~b: no reply status within the whole-reply bound", [H, P]);
reason(Why) -> io_lib:format("~0tp", [Why]).

error_text(Why) when is_atom(Why) ->
    case inet:format_error(Why) of
        "unknown POSIX error" ++ _ -> atom_to_list(Why);
        Text -> Text
    end;
error_text(Why) -> beamscale_load_reasons:ssl_text(Why).

%% The methods the packet parser knows come as atoms; others are refused (no atom is made).
method(M) -> list_to_atom(string:lowercase(atom_to_list(M))).

name(N) when is_atom(N) -> string:lowercase(atom_to_list(N));
name(N) -> string:lowercase(binary_to_list(N)).

%%% Either transport

send({M, S}, Data) -> M:send(S, Data).
recv({M, S}, N, Ms) -> M:recv(S, N, Ms).
close({M, S}) -> _ = M:close(S), ok.
setopts({gen_tcp, S}, Opts) -> inet:setopts(S, Opts);
setopts({ssl, S}, Opts) -> ssl:setopts(S, Opts).
