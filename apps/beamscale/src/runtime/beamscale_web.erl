%% @doc The live page's HTTP server (`--web PORT'): on 127.0.0.1 only, for the run's own OS
%% user only (`beamscale_peer': another local user's connection gets 403 and is closed at once,
%% before its request is read), it answers `GET /' (the page) and `GET /live.json' (the latest
%% figures), 404 for any other path and 405 for any other method, but `POST /control' once a
%% control is set (`control/3': a load's `beamscale ctl', the page's buttons), which needs the
%% run's token in `X-Beamscale-Token'. It serves the latest bodies it was given (`publish/2'),
%% rendered by the caller, or by a process of its own, one at a time (`feed/3':
%% `beamscale_web_load' for loads); a request never waits for a run. Built on gen_tcp with
%% `{packet, http_bin}': one acceptor, a short-lived process per connection (at most
%% ?MAX_CONNECTIONS at once), one request per connection (`Connection: close').
-module(beamscale_web).
-behaviour(gen_server).

-export([with/2, start/1, stop/1, port/1, url/1, publish/2, feed/2, feed/3, control/3,
         format_error/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2]).
-export_type([web/0, bodies/0, opts/0]).

-type web() :: pid().
%% What `/' and `/live.json' answer with; `/metrics' when given (Prometheus' text).
-type bodies() :: #{page := iodata(), json := iodata(), metrics => iodata()}.
%% port: the TCP port on 127.0.0.1 (0: one the OS picks); bodies: what to serve before the first
%% `publish/2'.
-type opts() :: #{port := inet:port_number(), bodies => bodies()}.

%% A client that sends no complete request (line and headers) within this time is closed: it
%% holds a slot. One deadline for the whole request, not a wait per line: a client sending a
%% header line every few seconds held its slot for minutes.
-define(REQUEST_TIMEOUT_MS, 2000).
%% A handler asks the server for the bodies; the server only hands out binaries it holds.
-define(CALL_TIMEOUT_MS, 5000).
%% More connections wait in the listen backlog. A browser polling once a second needs one; 20
%% slow clients holding 16 slots kept the page from answering for 20 s: each connection is its
%% own process, bounded in time, so many slots cost little (a process and a descriptor each).
-define(MAX_CONNECTIONS, 256).
%% Headers of a request beyond this many are refused (431): nothing from a client is unbounded.
-define(MAX_HEADERS, 64).
-define(LOOPBACK, {127, 0, 0, 1}).
%% After a failed accept (no file descriptor left), before the next try.
-define(ACCEPT_RETRY_MS, 100).
%% After the answer, the client's leftovers are read for at most this long and this much.
-define(LINGER_MS, 1000).
-define(LINGER_BYTES, 65536).
%% As long for another user's connection, refused: its 1 000 idle connections must not keep
%% the owner's `ctl' waiting for a slot (they cost 256 slots 0.2 s each).
-define(REFUSED_LINGER_MS, 200).
%% A control command is a short line (`rate 50'); a longer body is refused (413).
-define(MAX_CONTROL_BYTES, 256).

%% @doc `Fun' with a live page on `Port' (`none': without one, `Fun(none)'): the address is
%% printed first, and the port is closed when `Fun' returns or fails.
%% `quiet': on a free port, its address not printed (a load's control endpoint without a page).
-spec with(inet:port_number() | none | quiet, fun((web() | none) -> R)) ->
    R | {error, {?MODULE, term()}}.
with(none, Fun) -> Fun(none);
with(quiet, Fun) ->
    case start(#{port => 0, bodies => #{page => <<"no page: run the load with --web">>,
                                        json => <<"{}">>}}) of
        {ok, Web} -> try Fun(Web) after stop(Web) end;
        {error, _} = Error -> Error
    end;
with(Port, Fun) ->
    case start(#{port => Port}) of
        {ok, Web} ->
            io:format("live page: ~ts~n", [url(Web)]),
            try Fun(Web)
            after stop(Web)
            end;
        {error, _} = Error -> Error
    end.

%% @doc Listen on 127.0.0.1:`port' and serve; linked to the caller.
-spec start(opts()) -> {ok, web()} | {error, {?MODULE, term()}}.
start(#{port := Port} = Opts) when is_integer(Port), Port >= 0, Port =< 65535 ->
    Bodies = maps:get(bodies, Opts, #{page => <<"waiting for the run">>, json => <<"{}">>}),
    %% Listened here, so a port in use is an error returned rather than a linked crash.
    case gen_tcp:listen(Port, [binary, {ip, ?LOOPBACK}, {packet, http_bin}, {active, false},
                               {reuseaddr, true}, {backlog, ?MAX_CONNECTIONS}]) of
        {ok, Listen} ->
            {ok, Pid} = gen_server:start_link(?MODULE, {Listen, Bodies}, []),
            ok = gen_tcp:controlling_process(Listen, Pid),
            {ok, Pid};
        {error, Reason} -> {error, {?MODULE, {listen, Port, Reason}}}
    end;
start(#{port := Port}) -> {error, {?MODULE, {bad_port, Port}}}.

%% @doc Close the port and stop (the listening socket is closed when this returns).
-spec stop(web()) -> ok.
stop(Web) -> gen_server:stop(Web).

%% @doc The TCP port listened on.
-spec port(web()) -> inet:port_number().
port(Web) -> gen_server:call(Web, port, ?CALL_TIMEOUT_MS).

%% @doc The page's address.
-spec url(web()) -> string().
url(Web) -> lists:flatten(io_lib:format("http://127.0.0.1:~b/", [port(Web)])).

%% @doc Serve these bodies from now on.
-spec publish(web(), bodies()) -> ok.
publish(Web, Bodies) -> gen_server:cast(Web, {publish, Bodies}).

%% @doc Hand the server's feed state (any term, `undefined' at first) to `Fun', keep what it
%% returns and serve its bodies: the caller's figures are kept between seconds without a process
%% of its own. `Fun' runs in the server, so it must be quick (a page render).
-spec feed(web(), fun((term()) -> {term(), bodies()})) -> ok.
feed(Web, Fun) -> gen_server:cast(Web, {feed, Fun}).

%% @doc As `feed/2' for a render that may be slow (a load's page on a busy host): `Update' runs
%% in the server on every call (quick: the figures kept), `Render' on the state in a process of
%% its own, one render at a time. Calls made while one renders leave one render to do, of the
%% latest state, when it is done: renders never queue up, and requests get the last render.
-spec feed(web(), fun((term()) -> term()), fun((term()) -> bodies())) -> ok.
feed(Web, Update, Render) -> gen_server:cast(Web, {feed, Update, Render}).

%% @doc Answer `POST /control' from now on: a request with `Token' in `X-Beamscale-Token' has its
%% body handed to `Fun' (in the connection's process), which says the status and the text
%% to answer; any other token gets 403.
-spec control(web(), binary(), fun((binary()) -> {200 | 400 | 409, iodata()})) -> ok.
control(Web, Token, Fun) -> gen_server:call(Web, {control, Token, Fun}, ?CALL_TIMEOUT_MS).

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({bad_port, P}) -> io_lib:format("option --web: ~0tp is not a TCP port", [P]);
format_error({listen, P, R}) ->
    io_lib:format("option --web: cannot listen on 127.0.0.1:~b: ~ts", [P, inet:format_error(R)]).

%%% The server: the listening socket, the acceptor, the bodies and the feed state.

-spec init({gen_tcp:socket(), bodies()}) -> {ok, map()}.
init({Listen, Bodies}) ->
    process_flag(trap_exit, true),
    {ok, Port} = inet:port(Listen),
    %% What connections read (the port, the bodies, the control) is in a table they read
    %% without asking this process: a page render that takes long here (a long run on a busy
    %% host) delays no answer, `beamscale ctl''s least of all.
    Tab = ets:new(?MODULE, [set, protected, {read_concurrency, true}]),
    true = ets:insert(Tab, [{port, Port}, {bodies, bin(Bodies)}, {control, none}]),
    Acceptor = spawn_link(fun() -> accept(Listen, Tab, 0) end),
    {ok, #{listen => Listen, port => Port, acceptor => Acceptor, bodies => bin(Bodies),
           feed => undefined, tab => Tab, rendering => none, next => none}}.

-spec handle_call(term(), gen_server:from(), map()) -> {reply, term(), map()}.
handle_call(port, _From, #{port := P} = St) -> {reply, P, St};
handle_call(bodies, _From, #{bodies := B} = St) -> {reply, B, St};
handle_call({control, Token, Fun}, _From, #{tab := Tab} = St) ->
    true = ets:insert(Tab, {control, {Token, Fun}}),
    {reply, ok, St}.

-spec handle_cast(term(), map()) -> {noreply, map()}.
handle_cast({publish, Bodies}, St) -> {noreply, served(bin(Bodies), St)};
handle_cast({feed, Fun}, #{feed := F} = St) ->
    {F1, Bodies} = Fun(F),
    {noreply, served(bin(Bodies), St#{feed := F1})};
handle_cast({feed, Update, Render}, #{feed := F, rendering := R} = St) ->
    St1 = St#{feed := Update(F)},
    {noreply, case R of
                  none -> render(Render, St1);
                  _ -> St1#{next := Render}
              end}.

%% The render runs linked (a failing render stops the server, as a failing `feed/2' does).
render(Render, #{feed := F} = St) ->
    Me = self(),
    Pid = spawn_link(fun() -> Me ! {rendered, self(), bin(Render(F))} end),
    St#{rendering := Pid, next := none}.

served(Bodies, #{tab := Tab} = St) ->
    true = ets:insert(Tab, {bodies, Bodies}),
    St#{bodies := Bodies}.

-spec handle_info(term(), map()) -> {noreply, map()} | {stop, term(), map()}.
handle_info({'EXIT', A, Reason}, #{acceptor := A} = St) -> {stop, {acceptor, Reason}, St};
handle_info({rendered, Pid, Bodies}, #{rendering := Pid, next := Next} = St) ->
    St1 = served(Bodies, St#{rendering := none}),
    {noreply, case Next of
                  none -> St1;
                  _ -> render(Next, St1)
              end};
handle_info({'EXIT', Pid, Reason}, #{rendering := Pid} = St) when Reason =/= normal ->
    {stop, {render, Reason}, St};
handle_info(_, St) -> {noreply, St}.

-spec terminate(term(), map()) -> ok.
terminate(_Reason, #{listen := L, acceptor := A, rendering := R}) ->
    [begin unlink(P), exit(P, kill) end || P <- [A, R], is_pid(P)],
    ok = gen_tcp:close(L).

%% Binaries, so handing them to a connection copies nothing.
bin(#{page := P, json := J} = B) ->
    maps:merge(#{page => iolist_to_binary(P), json => iolist_to_binary(J)},
               maps:map(fun(_, M) -> iolist_to_binary(M) end, maps:with([metrics], B))).

%%% The acceptor and the connections.

accept(Listen, Tab, Open) -> accept(Listen, Tab, Open, beamscale_peer:new()).

%% The client's user is told in the acceptor (one read of the kernel's socket table serves a
%% burst of connections); either way the connection is its own process, in a slot.
accept(Listen, Tab, Open, Peers) when Open >= ?MAX_CONNECTIONS ->
    receive {'DOWN', _, process, _, _} -> accept(Listen, Tab, Open - 1, Peers) end;
accept(Listen, Tab, Open, Peers) ->
    case gen_tcp:accept(Listen) of
        {ok, Sock} ->
            {Owner, Peers1} = beamscale_peer:owner(Sock, Peers),
            Serve = case Owner of
                        ok -> fun() -> serve(Sock, Tab) end;
                        {error, Why} -> fun() -> refuse(Sock, Why) end
                    end,
            {Pid, _} = spawn_monitor(fun() -> receive go -> Serve() end end),
            ok = gen_tcp:controlling_process(Sock, Pid),
            Pid ! go,
            accept(Listen, Tab, flush_downs(Open + 1), Peers1);
        {error, closed} -> ok;
        {error, _} ->
            %% e.g. out of file descriptors: wait a little rather than spin.
            timer:sleep(?ACCEPT_RETRY_MS),
            accept(Listen, Tab, flush_downs(Open), Peers)
    end.

flush_downs(Open) ->
    receive {'DOWN', _, process, _, _} -> flush_downs(Open - 1)
    after 0 -> Open
    end.

%% Another local user: told why and closed without reading its request, after a short linger
%% (so its request unread does not reset the answer away), so that its connections, idle or
%% not, hold no slot the run's own user needs for long.
refuse(Sock, Why) ->
    _ = inet:setopts(Sock, [{packet, raw}]),
    _ = send(Sock, {403, <<"text/plain; charset=utf-8">>,
                    [beamscale_peer:format_error(Why), $\n]}),
    linger(Sock, ?REFUSED_LINGER_MS).

serve(Sock, Tab) ->
    Reply = case request(Sock) of
                {ok, Req} -> route(Req, Tab);
                {error, Status} -> response(Status)
            end,
    _ = inet:setopts(Sock, [{packet, raw}]),
    _ = Reply =:= none orelse send(Sock, Reply),
    linger(Sock, ?LINGER_MS).

%% What the client sent beyond the request is read and dropped before closing: closing with
%% unread data resets the connection, and the client could lose the answer.
linger(Sock, Ms) ->
    _ = gen_tcp:shutdown(Sock, write),
    Deadline = erlang:monotonic_time(millisecond) + Ms,
    drain(Sock, Deadline, ?LINGER_BYTES),
    gen_tcp:close(Sock).

drain(_Sock, _Deadline, Left) when Left =< 0 -> ok;
drain(Sock, Deadline, Left) ->
    Wait = max(0, Deadline - erlang:monotonic_time(millisecond)),
    case gen_tcp:recv(Sock, 0, Wait) of
        {ok, Data} -> drain(Sock, Deadline, Left - byte_size(Data));
        {error, _} -> ok
    end.

%% The request line and the headers: `{ok, {Method, Path, Host}}', an error status, or none when
%% the client went away or said nothing in time.
request(Sock) ->
    Deadline = erlang:monotonic_time(millisecond) + ?REQUEST_TIMEOUT_MS,
    case gen_tcp:recv(Sock, 0, left(Deadline)) of
        {ok, {http_request, Method, {abs_path, Path}, _Vsn}} ->
            case headers(Sock, 0, #{host => none}, Deadline) of
                {ok, Hs} -> {ok, {Method, Path, Hs, Sock, Deadline}};
                Error -> Error
            end;
        {ok, {http_request, _, _, _}} -> {error, 404};
        {ok, _} -> {error, 400};
        {error, _} -> {error, none}
    end.

headers(_Sock, N, _Hs, _Deadline) when N > ?MAX_HEADERS -> {error, 431};
headers(Sock, N, Hs, Deadline) ->
    case gen_tcp:recv(Sock, 0, left(Deadline)) of
        {ok, {http_header, _, 'Host', _, V}} -> headers(Sock, N + 1, Hs#{host => V}, Deadline);
        {ok, {http_header, _, 'Content-Length', _, V}} ->
            headers(Sock, N + 1, Hs#{length => V}, Deadline);
        {ok, {http_header, _, Name, _, V}} when is_binary(Name) ->
            Key = case string:lowercase(Name) of
                      <<"x-beamscale-token">> -> token;
                      _ -> other
                  end,
            headers(Sock, N + 1, Hs#{Key => V}, Deadline);
        {ok, {http_header, _, _, _, _}} -> headers(Sock, N + 1, Hs, Deadline);
        {ok, http_eoh} -> {ok, Hs};
        {ok, _} -> {error, 400};
        {error, _} -> {error, none}
    end.

left(Deadline) -> max(0, Deadline - erlang:monotonic_time(millisecond)).

%% Only our own address as Host: a page elsewhere that resolves a name to 127.0.0.1 (DNS
%% rebinding) gets nothing.
route({Method, Path, #{host := Host} = Hs, Sock, Deadline}, Tab) ->
    Port = integer_to_binary(ets:lookup_element(Tab, port, 2)),
    Hosts = [<<"127.0.0.1:", Port/binary>>, <<"localhost:", Port/binary>>],
    case {Method, Path, lists:member(Host, Hosts)} of
        {_, _, false} -> response(421);
        {'POST', <<"/control">>, true} ->
            control_request(ets:lookup_element(Tab, control, 2), Hs, Sock, Deadline);
        {'GET', <<"/">>, true} -> body(Tab, page, <<"text/html; charset=utf-8">>);
        {'GET', <<"/live.json">>, true} -> body(Tab, json, <<"application/json">>);
        {'GET', <<"/metrics">>, true} ->
            body(Tab, metrics, <<"text/plain; version=0.0.4; charset=utf-8">>);
        {'GET', _, true} -> response(404);
        {_, P, true} when P =:= <<"/">>; P =:= <<"/live.json">> -> response(405);
        {_, _, true} -> response(404)
    end.

control_request(none, _Hs, _Sock, _Deadline) -> response(404);
control_request({Token, Fun}, Hs, Sock, Deadline) ->
    Length = try binary_to_integer(maps:get(length, Hs, <<"0">>)) catch error:_ -> -1 end,
    case {maps:get(token, Hs, <<>>), Length} of
        {_, L} when L < 0; L > ?MAX_CONTROL_BYTES -> response(413);
        {T, L} when T =:= Token ->
            ok = inet:setopts(Sock, [{packet, raw}]),
            case L =:= 0 orelse gen_tcp:recv(Sock, L, left(Deadline)) of
                true -> answer(Fun(<<>>));
                {ok, Body} -> answer(Fun(Body));
                {error, _} -> response(400)
            end;
        _ -> response(403)
    end.

answer({Status, Text}) -> {Status, <<"text/plain; charset=utf-8">>, [Text, $\n]}.

body(Tab, Which, Type) ->
    case ets:lookup_element(Tab, bodies, 2) of
        #{Which := Body} -> {200, Type, Body};
        #{} -> response(404)
    end.

response(none) -> none;
response(Status) -> {Status, <<"text/plain; charset=utf-8">>, [reason(Status), $\n]}.

reason(200) -> <<"OK">>;
reason(400) -> <<"Bad Request">>;
reason(403) -> <<"Forbidden">>;
reason(409) -> <<"Conflict">>;
reason(413) -> <<"Content Too Large">>;
reason(404) -> <<"Not Found">>;
reason(405) -> <<"Method Not Allowed">>;
reason(421) -> <<"Misdirected Request">>;
reason(431) -> <<"Request Header Fields Too Large">>.

send(Sock, {Status, Type, Body}) ->
    Allow = [<<"Allow: GET\r\n">> || Status =:= 405],
    Head = [<<"HTTP/1.1 ">>, integer_to_binary(Status), $\s, reason(Status), <<"\r\n">>,
            <<"Content-Type: ">>, Type, <<"\r\nContent-Length: ">>,
            integer_to_binary(iolist_size(Body)), <<"\r\n">>, Allow,
            <<"Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
              "Content-Security-Policy: default-src 'self'; script-src 'unsafe-inline'; "
              "style-src 'unsafe-inline'\r\nConnection: close\r\n\r\n">>],
    _ = inet:setopts(Sock, [{packet, raw}]),
    gen_tcp:send(Sock, [Head, Body]).
