%% The floor for bench/xmpp_vs_tsung.sh: the bench's XMPP session by the simplest hand-written
%% client, run in a plain emulator. One process a user, plain gen_tcp ({active, true}), stanzas
%% built once; nothing parsed: it finds the reply it waits for by its marker (the features' end,
%% an iq's id) and counts the chats it receives by their opening tag. No stats, no stamps.
%% The session is the bench's: connect (stream header, wait for the features), legacy auth
%% (iq get, iq set with the password), initial presence, roster get, CHATS chats of 16 bytes
%% each after a think time of THINK ms to a user online (probed at random, as beamscale and
%% Tsung pick one), a last think, the stream's end, close; with SEND false, the think times
%% without the chats (the bench's run without chats); with SEND an integer K, K chats after each
%% think (the bench's run for the marginal cost of a chat). USERS users arrive evenly over SECS
%% seconds, user N being `userN' (password `passN') of domain bs.test.
%% Prints one line, `SENT DELIVERED FAILED_USERS', once every user is done.
%%   erl -noshell -pa DIR -eval 'xmpp_floor:main(Port, Users, Secs, ThinkMs, 10, true), halt().'
-module(xmpp_floor).
-export([main/6]).

-define(DOMAIN, "bs.test").
%% Users probed for one online before a random one is taken (beamscale's ?PROBES).
-define(PROBES, 16).
-define(REPLY_MS, 60000).

main(Port, Users, Secs, Think, Chats, Send) ->
    Online = atomics:new(Users, []),
    Counts = counters:new(2, [write_concurrency]),
    Cfg = #{port => Port, users => Users, think => Think, chats => Chats, send => Send,
            online => Online, counts => Counts, body => binary:copy(<<"x">>, 16)},
    T0 = erlang:monotonic_time(millisecond),
    Gap = Secs * 1000 / Users,
    Mons = [arrive(N, T0 + round((N - 1) * Gap), Cfg) || N <- lists:seq(1, Users)],
    Failed = length([R || Ref <- Mons,
                          R <- [receive {'DOWN', Ref, _, _, R0} -> R0 end], R =/= normal]),
    io:format("~b ~b ~b~n", [counters:get(Counts, 1), counters:get(Counts, 2), Failed]).

arrive(N, At, Cfg) ->
    receive after max(0, At - erlang:monotonic_time(millisecond)) -> ok end,
    {_, Ref} = spawn_monitor(fun() -> user(N, Cfg) end),
    Ref.

user(N, #{port := Port, think := Think, chats := Chats, online := Online} = Cfg) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port,
                              [binary, {active, true}, {nodelay, true}]),
    I = integer_to_binary(N),
    ask(S, ["<?xml version='1.0'?><stream:stream to='" ?DOMAIN "' xmlns='jabber:client' "
            "version='1.0' xmlns:stream='http://etherx.jabber.org/streams'>"],
        <<"</stream:features>">>, Cfg),
    ask(S, ["<iq type='get' id='a1'><query xmlns='jabber:iq:auth'><username>user", I,
            "</username></query></iq>"], id(<<"a1">>), Cfg),
    ask(S, ["<iq type='set' id='a2'><query xmlns='jabber:iq:auth'><username>user", I,
            "</username><resource>tsung</resource><password>pass", I,
            "</password></query></iq>"], id(<<"a2">>), Cfg),
    atomics:put(Online, N, 1),
    ok = gen_tcp:send(S, <<"<presence/>">>),
    ask(S, <<"<iq type='get' id='a3'><query xmlns='jabber:iq:roster'/></iq>">>, id(<<"a3">>),
        Cfg),
    chats(S, N, Chats, Cfg),
    think(S, Think, Cfg),
    ok = gen_tcp:send(S, <<"</stream:stream>">>),
    atomics:put(Online, N, 0),
    gen_tcp:close(S).

id(Id) -> [<<"id='", Id/binary, "'">>, <<"id=\"", Id/binary, "\"">>].

chats(_S, _N, 0, _Cfg) -> ok;
chats(S, N, K, #{think := Think} = Cfg) ->
    think(S, Think, Cfg),
    send(S, N, Cfg),
    chats(S, N, K - 1, Cfg).

send(_S, _N, #{send := false}) -> ok;
send(S, N, #{send := K} = Cfg) when is_integer(K) ->
    lists:foreach(fun(_) -> send(S, N, Cfg#{send := true}) end, lists:seq(1, K));
send(S, N, #{counts := Counts, body := Body} = Cfg) ->
    To = integer_to_binary(dest(N, Cfg, ?PROBES)),
    ok = gen_tcp:send(S, ["<message id='c' to='user", To, "@" ?DOMAIN "' type='chat'><body>",
                          Body, "</body></message>"]),
    counters:add(Counts, 1, 1).

%% An online user other than itself, else (after ?PROBES tries) any.
dest(_Self, #{users := Users}, 0) -> rand:uniform(Users);
dest(Self, #{users := Users, online := Online} = Cfg, K) ->
    case rand:uniform(Users) of
        Self -> dest(Self, Cfg, K - 1);
        D -> case atomics:get(Online, D) of
                 1 -> D;
                 _ -> dest(Self, Cfg, K - 1)
             end
    end.

%% Send and take what comes until the reply's marker; chats met on the way are counted.
ask(S, Bytes, Marker, Cfg) ->
    ok = gen_tcp:send(S, Bytes),
    reply(S, <<>>, Marker, Cfg).

reply(S, Buf, Marker, Cfg) ->
    receive
        {tcp, S, Data} ->
            count(Data, Cfg),
            Buf1 = <<Buf/binary, Data/binary>>,
            case binary:match(Buf1, Marker) of
                nomatch -> reply(S, Buf1, Marker, Cfg);
                _ -> ok
            end;
        {tcp_closed, S} -> exit(closed)
    after ?REPLY_MS -> exit(timeout)
    end.

%% A think: chats received meanwhile counted.
think(S, Ms, Cfg) ->
    Until = erlang:monotonic_time(millisecond) + Ms,
    take(S, Until, Cfg).

take(S, Until, Cfg) ->
    receive
        {tcp, S, Data} -> count(Data, Cfg), take(S, Until, Cfg);
        {tcp_closed, S} -> exit(closed)
    after max(0, Until - erlang:monotonic_time(millisecond)) -> ok
    end.

%% Chats received, counted by their opening tag; the tag may be cut between two reads, so the
%% last bytes of each read (shorter than the tag) are searched again with the next. A bounce
%% (type error: a chat to a user just gone, sent back) is not counted, unless its tag is cut
%% before its type.
count(Data, #{counts := Counts}) ->
    Bytes = case get(tail) of
                undefined -> Data;
                Tail -> <<Tail/binary, Data/binary>>
            end,
    case length([At || {At, _} <- binary:matches(Bytes, pattern(<<"<message ">>)),
                       not bounce(Bytes, At)]) of
        0 -> ok;
        K -> counters:add(Counts, 2, K)
    end,
    Keep = min(8, byte_size(Bytes)),
    put(tail, binary:part(Bytes, byte_size(Bytes) - Keep, Keep)).

bounce(Bytes, At) ->
    Left = byte_size(Bytes) - At,
    Tag = case binary:match(Bytes, pattern(<<">">>), [{scope, {At, Left}}]) of
              {End, _} -> binary:part(Bytes, At, End - At);
              nomatch -> binary:part(Bytes, At, Left)
          end,
    binary:match(Tag, pattern([<<"type='error'">>, <<"type=\"error\"">>])) =/= nomatch.

%% Patterns compiled once a user: compiled at each read they were half of this client's
%% instructions a chat (cachegrind, bench/cg_work.py).
pattern(Key) ->
    case get({pattern, Key}) of
        undefined -> P = binary:compile_pattern(Key), put({pattern, Key}, P), P;
        P -> P
    end.
