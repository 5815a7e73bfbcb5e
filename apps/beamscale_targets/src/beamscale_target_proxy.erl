%% @doc A TCP proxy as an IO-bound target: it accepts clients on a port of 127.0.0.1 and forwards
%% bytes both ways between each client and a new connection to the backend. The socket options
%% and the `inet_backend' (`inet' or `socket', the newer NIF one) are arguments, so the same
%% proxy runs under each IO configuration.
-module(beamscale_target_proxy).

-export([defaults/1, start/1, stop/1, format_error/1]).
-export_type([opts/0]).

-type opts() :: #{backend := {inet:hostname() | inet:ip_address(), inet:port_number()},
                  port := inet:port_number(), inet_backend := inet | socket,
                  socket_opts := [gen_tcp:option()], connect_timeout := timeout()}.

-define(CONNECT_TIMEOUT, 5000).
-define(START_TIMEOUT, 5000).
%% Options the forwarding relies on: binaries and one message at a time (flow control).
-define(FIXED_OPTS, [binary, {active, once}]).

%% @doc Options with defaults filled in.
-spec defaults(#{backend := {inet:hostname() | inet:ip_address(), inet:port_number()},
                 atom() => term()}) -> opts().
defaults(Opts) ->
    maps:merge(#{port => 0, inet_backend => inet, socket_opts => [{nodelay, true}],
                 connect_timeout => ?CONNECT_TIMEOUT}, Opts).

%% @doc Start the proxy (linked to nobody); the port it listens on.
-spec start(map()) -> {ok, inet:port_number()} | {error, {?MODULE, term()}}.
start(Opts0) ->
    Opts = defaults(Opts0),
    Caller = self(),
    Ref = make_ref(),
    {Pid, Mon} = spawn_monitor(fun() -> listen(Caller, Ref, Opts) end),
    receive
        {Ref, {ok, Port}} ->
            demonitor(Mon, [flush]),
            true = register(name(Port), Pid),
            {ok, Port};
        {'DOWN', Mon, process, Pid, Why} -> {error, {?MODULE, Why}}
    after ?START_TIMEOUT ->
        exit(Pid, kill),
        {error, {?MODULE, start_timeout}}
    end.

%% @doc Stop the proxy on `Port' and every connection it forwards.
-spec stop(inet:port_number()) -> ok.
stop(Port) ->
    case whereis(name(Port)) of
        undefined -> ok;
        Pid ->
            Mon = monitor(process, Pid),
            exit(Pid, shutdown),
            receive {'DOWN', Mon, process, Pid, _} -> ok end
    end.

%% @doc One line for an error of `start/1'.
-spec format_error(term()) -> iodata().
format_error({listen, Posix}) ->
    ["cannot listen on 127.0.0.1: ", inet:format_error(Posix)];
format_error(start_timeout) ->
    io_lib:format("the proxy did not start listening within ~b ms", [?START_TIMEOUT]);
format_error(Why) ->
    io_lib:format("the proxy stopped while starting: ~0tp", [Why], [{chars_limit, 400}]).

%%% Internals

name(Port) -> list_to_atom("beamscale_target_proxy_" ++ integer_to_list(Port)).

%% `inet_backend' must come first in an option list.
sock_opts(#{inet_backend := B, socket_opts := O}) -> [{inet_backend, B} | ?FIXED_OPTS ++ O].

listen(Caller, Ref, #{port := Port} = Opts) ->
    process_flag(trap_exit, true),
    case gen_tcp:listen(Port, sock_opts(Opts) ++ [{ip, {127, 0, 0, 1}}, {reuseaddr, true}]) of
        {ok, L} ->
            {ok, Real} = inet:port(L),
            Caller ! {Ref, {ok, Real}},
            Acceptor = spawn_link(fun() -> accept(L, Opts) end),
            ok = gen_tcp:controlling_process(L, Acceptor),
            wait(L, Acceptor);
        {error, Why} -> exit({listen, Why})
    end.

%% The registered process holds the acceptor and the pairs: when it goes they go (links). It
%% closes the listening socket itself so that the port is closed when `stop/1' returns.
wait(L, Acceptor) ->
    receive
        {'EXIT', _, shutdown} -> _ = gen_tcp:close(L), exit(shutdown);
        {'EXIT', Acceptor, Why} -> exit(Why);
        _ -> wait(L, Acceptor)
    end.

accept(L, Opts) ->
    case gen_tcp:accept(L) of
        {ok, Client} ->
            Pair = spawn(fun() -> pair(Opts) end),
            link(Pair),
            ok = gen_tcp:controlling_process(Client, Pair),
            Pair ! {client, Client},
            accept(L, Opts);
        {error, Why} -> exit({accept, Why})
    end.

pair(#{backend := {Host, Port}, connect_timeout := T} = Opts) ->
    Client = receive {client, C} -> C end,
    case gen_tcp:connect(Host, Port, sock_opts(Opts), T) of
        {ok, Backend} ->
            ok = inet:setopts(Client, [{active, once}]),
            forward(Client, Backend);
        {error, _} -> gen_tcp:close(Client)
    end.

forward(Client, Backend) ->
    receive
        {tcp, Client, Data} -> relay(Backend, Client, Data), forward(Client, Backend);
        {tcp, Backend, Data} -> relay(Client, Backend, Data), forward(Client, Backend);
        {tcp_closed, _} -> close(Client, Backend);
        {tcp_error, _, _} -> close(Client, Backend)
    end.

relay(To, From, Data) ->
    _ = gen_tcp:send(To, Data),
    _ = inet:setopts(From, [{active, once}]),
    ok.

close(A, B) ->
    _ = gen_tcp:close(A),
    _ = gen_tcp:close(B),
    ok.
