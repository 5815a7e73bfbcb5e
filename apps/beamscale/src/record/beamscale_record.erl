%% @doc `beamscale record': an HTTP proxy on 127.0.0.1 that passes a browser's requests on to
%% their servers and writes what passed as a scenario (docs/record.md): after each request the
%% whole Tsung XML file and terms file are rewritten (`beamscale_record_write', pure), so a
%% recording stopped at any time is complete up to its last request. Plain HTTP only; bounded:
%% request heads of 64 KiB, bodies of 1 MiB, replies of 16 MiB, 64 connections at once.
-module(beamscale_record).

-export([start/1, stop/1, port/1]).

-define(MAX_HEAD, 65536).
-define(MAX_BODY, 1048576).
-define(MAX_REPLY, 16777216).
-define(MAX_CONNS, 64).
%% A browser's idle keep-alive connection, a server that does not answer: let go after this.
-define(IDLE_MS, 30000).
-define(CONNECT_MS, 10000).

%% @doc Start the proxy on 127.0.0.1:`port' (0: any), writing `base'.xml and `base'.scenario.
-spec start(#{port := inet:port_number(), base := file:filename()}) ->
    {ok, pid()} | {error, term()}.
start(#{port := Port, base := Base}) ->
    Me = self(),
    Pid = spawn(fun() -> init(Me, Port, Base) end),
    receive
        {Pid, Result} -> Result
    after 5000 -> exit(Pid, kill), {error, timeout}
    end.

%% @doc The port it listens on.
-spec port(pid()) -> inet:port_number().
port(Pid) -> call(Pid, port).

%% @doc Stop it; the files hold every request recorded. Returns how many.
-spec stop(pid()) -> non_neg_integer().
stop(Pid) -> call(Pid, stop).

call(Pid, Req) ->
    Ref = monitor(process, Pid),
    Pid ! {Req, self(), Ref},
    receive
        {Ref, Reply} -> demonitor(Ref, [flush]), Reply
    end.

init(Parent, Port, Base) ->
    case gen_tcp:listen(Port, [binary, {ip, {127, 0, 0, 1}}, {active, false},
                               {reuseaddr, true}, {packet, raw}]) of
        {ok, L} ->
            Parent ! {self(), {ok, self()}},
            Me = self(),
            spawn_link(fun() -> accept(L, Me) end),
            loop(#{listen => L, base => Base, reqs => [], conns => 0,
                   t0 => erlang:monotonic_time(millisecond)});
        {error, Why} -> Parent ! {self(), {error, {listen, Why}}}
    end.

loop(#{listen := L, reqs := Reqs, conns := N} = S) ->
    receive
        {accepted, Sock} when N >= ?MAX_CONNS -> gen_tcp:close(Sock), loop(S);
        {accepted, Sock} ->
            Me = self(),
            Pid = spawn(fun() -> receive go -> serve(Sock, Me) end end),
            ok = gen_tcp:controlling_process(Sock, Pid),
            monitor(process, Pid),
            Pid ! go,
            loop(S#{conns := N + 1});
        {'DOWN', _, process, _, _} -> loop(S#{conns := N - 1});
        {request, At, R} ->
            Reqs1 = [R#{at => At} | Reqs],
            ok = write(S#{reqs := Reqs1}),
            loop(S#{reqs := Reqs1});
        {port, From, Ref} -> {ok, P} = inet:port(L), From ! {Ref, P}, loop(S);
        {stop, From, Ref} -> gen_tcp:close(L), From ! {Ref, length(Reqs)}
    end.

write(#{base := Base, reqs := Reqs}) ->
    Recorded = lists:reverse(Reqs),
    ok = beamscale_store:write_file(Base ++ ".xml", beamscale_record_write:tsung(Recorded)),
    beamscale_store:write_file(Base ++ ".scenario", beamscale_record_write:terms(Recorded)).

accept(L, Owner) ->
    case gen_tcp:accept(L) of
        {ok, Sock} ->
            ok = gen_tcp:controlling_process(Sock, Owner),
            Owner ! {accepted, Sock},
            accept(L, Owner);
        {error, closed} -> ok
    end.

%% One browser connection: requests one after another (keep-alive), each to its server over a
%% fresh connection that the server closes (HTTP/1.0 upstream: no chunked reply to undo).
serve(Sock, Owner) ->
    case read_request(Sock) of
        {ok, Req} ->
            At = erlang:monotonic_time(millisecond),
            case forward(Req) of
                {ok, Status, Reply} ->
                    Owner ! {request, At, Req#{status => Status}},
                    _ = gen_tcp:send(Sock, Reply),
                    gen_tcp:close(Sock);
                {error, Why} ->
                    _ = gen_tcp:send(Sock, ["HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                                            "Connection: close\r\nX-Beamscale-Record: ",
                                            io_lib:format("~0p", [Why]), "\r\n\r\n"]),
                    gen_tcp:close(Sock)
            end;
        {error, _} -> gen_tcp:close(Sock)
    end.

read_request(Sock) ->
    ok = inet:setopts(Sock, [{packet, http_bin}, {packet_size, ?MAX_HEAD}]),
    case gen_tcp:recv(Sock, 0, ?IDLE_MS) of
        {ok, {http_request, Method, {absoluteURI, http, Host, Port, Path}, _}} ->
            case headers(Sock, []) of
                {ok, Hs} ->
                    ok = inet:setopts(Sock, [{packet, raw}]),
                    case body(Sock, Hs) of
                        {ok, Body} when is_atom(Method) ->
                            {ok, #{method => method(Method), host => binary_to_list(Host),
                                   port => case Port of undefined -> 80; _ -> Port end,
                                   path => binary_to_list(Path), headers => Hs, body => Body}};
                        {ok, _} -> {error, {method, Method}};
                        Error -> Error
                    end;
                Error -> Error
            end;
        {ok, Other} -> {error, {not_proxied, Other}};
        {error, _} = Error -> Error
    end.

headers(Sock, Acc) ->
    case gen_tcp:recv(Sock, 0, ?IDLE_MS) of
        {ok, {http_header, _, Name, _, Value}} when length(Acc) < 100 ->
            headers(Sock, [{name(Name), binary_to_list(Value)} | Acc]);
        {ok, http_eoh} -> {ok, lists:reverse(Acc)};
        {ok, Other} -> {error, {header, Other}};
        {error, _} = Error -> Error
    end.

body(Sock, Hs) ->
    case proplists:get_value("content-length", Hs) of
        undefined -> {ok, <<>>};
        Text ->
            case string:to_integer(Text) of
                {0, _} -> {ok, <<>>};
                {N, _} when is_integer(N), N > 0, N =< ?MAX_BODY ->
                    gen_tcp:recv(Sock, N, ?IDLE_MS);
                _ -> {error, {body, Text}}
            end
    end.

forward(#{method := M, host := H, port := P, path := Path, headers := Hs, body := Body}) ->
    case gen_tcp:connect(H, P, [binary, {active, false}], ?CONNECT_MS) of
        {ok, S} ->
            Hop = ["connection", "proxy-connection", "keep-alive", "content-length"],
            Keep = [{K, V} || {K, V} <- Hs, not lists:member(K, Hop)],
            ok = gen_tcp:send(S, [string:uppercase(atom_to_list(M)), " ", Path, " HTTP/1.0\r\n",
                                  [[K, ": ", V, "\r\n"] || {K, V} <- Keep],
                                  ["content-length: ", integer_to_list(byte_size(Body)), "\r\n"],
                                  "connection: close\r\n\r\n", Body]),
            Reply = reply(S, []),
            gen_tcp:close(S),
            case Reply of
                {ok, <<"HTTP/", _:3/binary, " ", Code:3/binary, _/binary>> = Bin} ->
                    {ok, binary_to_integer(Code), Bin};
                {ok, _} -> {error, bad_reply};
                Error -> Error
            end;
        {error, Why} -> {error, {connect, Why}}
    end.

reply(S, Acc) ->
    case gen_tcp:recv(S, 0, ?IDLE_MS) of
        {ok, D} ->
            case iolist_size(Acc) + byte_size(D) > ?MAX_REPLY of
                true -> {error, reply_over};
                false -> reply(S, [Acc, D])
            end;
        {error, closed} -> {ok, iolist_to_binary(Acc)};
        {error, _} = Error -> Error
    end.

%% The methods the packet parser knows come as atoms; others are refused (no atom is made).
method(M) -> list_to_atom(string:lowercase(atom_to_list(M))).

name(N) when is_atom(N) -> string:lowercase(atom_to_list(N));
name(N) -> string:lowercase(binary_to_list(N)).
