%% Test helper: a relay on 127.0.0.1 in front of a real server that passes the client's bytes
%% on as they come and sends the server's back one byte per TCP segment (issue 55: every kind
%% reads a well-behaved server whose replies arrive in the smallest pieces). Stopped by the fun
%% it returns, which closes every connection it holds.
-module(beamscale_load_trickle).

-export([start/1, with/2]).

-define(CONNECT_MS, 5000).

%% @doc A relay to 127.0.0.1:`Port': its own port and the fun that stops it.
-spec start(inet:port_number()) -> {inet:port_number(), fun(() -> ok)}.
start(Port) ->
    Parent = self(),
    Pid = spawn(fun() ->
                        {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}},
                                                     {active, false}, {reuseaddr, true}]),
                        {ok, Mine} = inet:port(L),
                        Parent ! {self(), Mine},
                        %% A relay ending (its connection closed) does not end the others.
                        process_flag(trap_exit, true),
                        accept(L, Port)
                end),
    Mine = receive {Pid, P} -> P after ?CONNECT_MS -> error(no_relay) end,
    {Mine, fun() -> exit(Pid, kill), ok end}.

%% @doc `Test(RelayPort)' through a relay to `Port', stopped after it.
-spec with(inet:port_number(), fun((inet:port_number()) -> Result)) -> Result.
with(Port, Test) ->
    {Relay, Stop} = start(Port),
    try Test(Relay)
    after Stop()
    end.

accept(L, Port) ->
    {ok, C} = gen_tcp:accept(L),
    %% Linked: the relays die with the acceptor when the test stops it.
    Pid = spawn_link(fun() -> receive go -> relay(C, Port) end end),
    ok = gen_tcp:controlling_process(C, Pid),
    Pid ! go,
    accept(L, Port).

%% Both directions in one process (active once): the server's bytes a byte a send, no delay.
relay(C, Port) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, once}, {nodelay, true}],
                              ?CONNECT_MS),
    ok = inet:setopts(C, [{active, once}, {nodelay, true}]),
    loop(C, S).

loop(C, S) ->
    receive
        {tcp, C, Data} ->
            ok = forward(gen_tcp:send(S, Data)),
            ok = inet:setopts(C, [{active, once}]),
            loop(C, S);
        {tcp, S, Data} ->
            ok = bytes(C, Data),
            ok = inet:setopts(S, [{active, once}]),
            loop(C, S);
        {tcp_closed, _} -> gen_tcp:close(C), gen_tcp:close(S);
        {tcp_error, _, _} -> gen_tcp:close(C), gen_tcp:close(S)
    end.

forward(ok) -> ok;
forward({error, _}) -> exit(normal).

bytes(_C, <<>>) -> ok;
bytes(C, <<B, Rest/binary>>) ->
    ok = forward(gen_tcp:send(C, <<B>>)),
    bytes(C, Rest).
