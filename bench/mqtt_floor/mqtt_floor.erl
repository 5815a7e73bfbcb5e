%% The floor of bench/mqtt_vs_tsung.sh: the same MQTT publishes by the simplest hand-written
%% client, in a plain emulator. USERS processes, each with a plain gen_tcp connection, send
%% CONNECT and read CONNACK, then publish PUBLISHES QoS 1 messages (the Tsung file's topic and
%% payload), each awaiting its PUBACK, then DISCONNECT. No timing, no counters, no checks
%% beyond the packets' bytes.
%%   erl -noshell -pa DIR -eval 'mqtt_floor:main(PORT, USERS, PUBLISHES, ACTIVE), halt().'
%% ACTIVE is the socket's mode: `true' (the cheapest, and the default of main/3), `false' (a
%% `recv' per answer), `once' (re-armed per answer) or N (re-armed every N answers). `false'
%% and `once' cost a poll re-arm (epoll_ctl) and an extra read per answer: measured 40 % more
%% CPU per publish than `true'.
-module(mqtt_floor).
-export([main/3, main/4]).

-define(TOPIC, <<"bench/t">>).
-define(PAYLOAD, <<"test_message">>).

%% Returns once every user has disconnected.
-spec main(inet:port_number(), pos_integer(), non_neg_integer()) -> ok.
main(Port, Users, Publishes) -> main(Port, Users, Publishes, true).

-spec main(inet:port_number(), pos_integer(), non_neg_integer(),
           boolean() | once | pos_integer()) -> ok.
main(Port, Users, Publishes, Active) ->
    Self = self(),
    Pids = [spawn_link(fun() -> user(Port, Publishes, Active), Self ! {done, self()} end)
            || _ <- lists:seq(1, Users)],
    lists:foreach(fun(Pid) -> receive {done, Pid} -> ok end end, Pids).

user(Port, Publishes, Active) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port,
                              [binary, {active, Active}, {nodelay, true}, {packet, raw}]),
    %% MQTT 3.1.1, clean session, keepalive 30 s, an empty client id (the broker names it).
    ok = gen_tcp:send(S, <<16#10, 12, 4:16, "MQTT", 4, 2, 30:16, 0:16>>),
    {ok, <<16#20, 2, 0, 0>>} = recv(S, Active),
    publish(S, Active, 1, Publishes),
    ok = gen_tcp:send(S, <<16#E0, 0>>),
    gen_tcp:close(S).

publish(_S, _Active, _Id, 0) -> ok;
publish(S, Active, Id, Left) ->
    Len = 2 + byte_size(?TOPIC) + 2 + byte_size(?PAYLOAD),
    ok = gen_tcp:send(S, [<<16#32, Len, (byte_size(?TOPIC)):16>>, ?TOPIC, <<Id:16>>,
                          ?PAYLOAD]),
    {ok, <<16#40, 2, Id:16>>} = recv(S, Active),
    publish(S, Active, Id rem 65535 + 1, Left - 1).

%% The next 4 bytes (CONNACK, PUBACK): loopback delivers each answer whole.
recv(S, false) -> gen_tcp:recv(S, 4);
recv(S, true) -> receive {tcp, S, B} -> {ok, B} end;
recv(S, once) ->
    receive {tcp, S, B} -> ok = inet:setopts(S, [{active, once}]), {ok, B} end;
recv(S, N) ->
    receive
        {tcp, S, B} -> {ok, B};
        {tcp_passive, S} -> ok = inet:setopts(S, [{active, N}]), recv(S, N)
    end.
