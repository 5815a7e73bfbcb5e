%% The TCP proxy on real loopback sockets, with both inet backends: bytes go both ways (an echo
%% backend), a large transfer arrives whole, and stop closes the port.
-module(beamscale_target_proxy_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, inet/1, socket/1]).
-export([inet/0, socket/0]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [inet, socket].

inet() -> [{doc, "The proxy (inet backend) forwards both ways; stop closes it."}].
inet(_Config) -> forwards(inet).

socket() -> [{doc, "The proxy (socket backend) forwards both ways; stop closes it."}].
socket(_Config) -> forwards(socket).

forwards(Backend) ->
    {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false}]),
    {ok, EchoPort} = inet:port(L),
    Echo = spawn_link(fun() -> echo(L) end),
    {ok, Port} = beamscale_target_proxy:start(#{backend => {{127, 0, 0, 1}, EchoPort},
                                                inet_backend => Backend,
                                                socket_opts => [{nodelay, true}]}),
    ?assert(Port > 0),
    Big = crypto:strong_rand_bytes(300000),
    [begin
         {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}]),
         ok = gen_tcp:send(S, <<"hello">>),
         ?assertEqual({ok, <<"hello">>}, gen_tcp:recv(S, 5, 5000)),
         ok = gen_tcp:send(S, Big),
         ?assertEqual({ok, Big}, gen_tcp:recv(S, byte_size(Big), 5000)),
         ok = gen_tcp:close(S)
     end || _ <- [1, 2]],
    ok = beamscale_target_proxy:stop(Port),
    ?assertEqual({error, econnrefused}, gen_tcp:connect({127, 0, 0, 1}, Port, [])),
    unlink(Echo),
    exit(Echo, kill),
    gen_tcp:close(L).

echo(L) ->
    {ok, S} = gen_tcp:accept(L),
    spawn(fun() -> echo_loop(S) end) ! go,
    echo(L).

echo_loop(S) ->
    receive go -> ok end,
    case gen_tcp:recv(S, 0) of
        {ok, D} -> ok = gen_tcp:send(S, D), self() ! go, echo_loop(S);
        {error, _} -> gen_tcp:close(S)
    end.
