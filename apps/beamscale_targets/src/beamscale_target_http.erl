%% @doc A small HTTP/1.1 server to load in tests and examples: keep-alive, one acceptor per
%% scheduler, a fixed small body, port 0 by default. With `stall => {StallMs, EveryMs}' it holds
%% every reply during the last StallMs of each EveryMs window (a target that stalls, to show
%% coordinated omission).
-module(beamscale_target_http).

-export([start/1, stop/1, port/1, start_link_node/0]).

-type opts() :: #{port => inet:port_number(), body => binary(),
                  stall => none | {pos_integer(), pos_integer()}}.
-type server() :: #{pid := pid(), port := inet:port_number()}.
-export_type([opts/0, server/0]).

-define(START_TIMEOUT, 5000).
%% Packets a connection takes as messages before it asks for more: reads as messages spare a
%% `gen_tcp:recv/2' call per read (a bare client loop cost 21 against 36 us per request,
%% docs/scenario.md), and the bound keeps a flooding client from filling the mailbox.
-define(ACTIVE_N, 64).

%% @doc Start the server; it stops with `stop/1' (its listener and every connection).
-spec start(opts()) -> {ok, server()} | {error, term()}.
start(Opts0) ->
    Opts = maps:merge(#{port => 0, body => <<"hello from beamscale\n">>, stall => none}, Opts0),
    Caller = self(),
    Pid = spawn(fun() -> init(Caller, Opts) end),
    receive
        {Pid, {ok, Port}} -> {ok, #{pid => Pid, port => Port}};
        {Pid, {error, _} = Error} -> Error
    after ?START_TIMEOUT -> exit(Pid, kill), {error, timeout}
    end.

%% @doc Start a server on port 0 for a target node's init (`M:F(A)' of a scenario) and return
%% its port; it lives as long as the node.
-spec start_link_node() -> inet:port_number().
start_link_node() ->
    {ok, #{port := Port}} = start(#{}),
    Port.

%% @doc The port it listens on.
-spec port(server()) -> inet:port_number().
port(#{port := Port}) -> Port.

%% @doc Stop the server.
-spec stop(server()) -> ok.
stop(#{pid := Pid}) ->
    Ref = monitor(process, Pid),
    Pid ! stop,
    receive {'DOWN', Ref, process, Pid, _} -> ok end.

init(Caller, #{port := Port0} = Opts) ->
    process_flag(trap_exit, true),
    case gen_tcp:listen(Port0, [binary, {active, ?ACTIVE_N}, {reuseaddr, true}, {nodelay, true},
                                {ip, {127, 0, 0, 1}}, {backlog, 1024}]) of
        {ok, L} ->
            {ok, Port} = inet:port(L),
            Reply = reply(maps:get(body, Opts)),
            Epoch = erlang:monotonic_time(millisecond),
            {ok, Length} = re:compile("\r\ncontent-length:\\s*([0-9]+)", [caseless]),
            Conf = #{reply => Reply, stall => maps:get(stall, Opts), epoch => Epoch,
                     server => self(), length => Length},
            [spawn_acceptor(L, Conf) || _ <- lists:seq(1, erlang:system_info(schedulers_online))],
            Caller ! {self(), {ok, Port}},
            wait_stop();
        {error, _} = Error -> Caller ! {self(), Error}
    end.

%% Connections end on their own (their exits are ignored); `stop' takes every one down.
wait_stop() ->
    receive
        stop -> exit(shutdown);
        {link, Pid} -> link(Pid), wait_stop();
        {'EXIT', _, _} -> wait_stop()
    end.

reply(Body) ->
    iolist_to_binary(["HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ",
                      integer_to_list(byte_size(Body)), "\r\n\r\n", Body]).

%% Every acceptor (and the connection it then serves) is linked to the server process, so that
%% stopping the server ends them all; it starts only once linked.
spawn_acceptor(L, Conf) ->
    Server = maps:get(server, Conf),
    Pid = spawn(fun() -> receive go -> accept(L, Conf) end end),
    Server ! {link, Pid},
    Pid ! go,
    ok.

%% Each connection is served by the process that accepted it; a new acceptor takes its place.
accept(L, Conf) ->
    case gen_tcp:accept(L) of
        {ok, S} ->
            spawn_acceptor(L, Conf),
            serve(S, <<>>, Conf);
        {error, _} -> ok
    end.

serve(S, Buf, Conf) ->
    case binary:match(Buf, <<"\r\n\r\n">>) of
        {At, 4} ->
            Need = At + 4 + content_length(binary:part(Buf, 0, At), Conf),
            case byte_size(Buf) >= Need of
                true ->
                    stall(Conf),
                    case gen_tcp:send(S, maps:get(reply, Conf)) of
                        ok -> serve(S, binary:part(Buf, Need, byte_size(Buf) - Need), Conf);
                        {error, _} -> gen_tcp:close(S)
                    end;
                false -> more(S, Buf, Conf)
            end;
        nomatch -> more(S, Buf, Conf)
    end.

%% The socket was accepted active (it inherits the listener's options): reads arrive as
%% messages, `?ACTIVE_N' at a time.
more(S, Buf, Conf) ->
    receive
        {tcp, S, Data} -> serve(S, <<Buf/binary, Data/binary>>, Conf);
        {tcp_passive, S} ->
            case inet:setopts(S, [{active, ?ACTIVE_N}]) of
                ok -> more(S, Buf, Conf);
                {error, _} -> gen_tcp:close(S)
            end;
        {tcp_closed, S} -> ok;
        {tcp_error, S, _} -> gen_tcp:close(S)
    end.

content_length(Head, #{length := Length}) ->
    case re:run(Head, Length, [{capture, [1], binary}]) of
        {match, [N]} -> binary_to_integer(N);
        nomatch -> 0
    end.

stall(#{stall := none}) -> ok;
stall(#{stall := {Stall, Every}, epoch := Epoch}) ->
    In = (erlang:monotonic_time(millisecond) - Epoch) rem Every,
    case In >= Every - Stall of
        true -> timer:sleep(Every - In);
        false -> ok
    end.
