%% `beamscale record' against its own user and another local one (issue 55): thousands of idle
%% connections do not lock the browser out, 64 large replies pass without being held, and a CA
%% another user planted (files, a symlink, a directory others can write) is refused in words.
-module(beamscale_record_bounds_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([idle_connections/1, big_replies/1, planted_ca/1, trickled_reply/1]).
-export([idle_connections/0, big_replies/0, planted_ca/0, trickled_reply/0]).

-define(IDLE, 10000).
-define(REPLIES, 64).
-define(REPLY_MB, 16).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [planted_ca, idle_connections, big_replies, trickled_reply].

init_per_suite(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_record_bounds"),
    Www = filename:join(Dir, "www"),
    ok = filelib:ensure_path(Www),
    ok = file:write_file(filename:join(Www, "small.txt"), "small\n"),
    {ok, Fd} = file:open(filename:join(Www, "big.bin"), [write, raw, binary]),
    Mb = binary:copy(<<"0123456789abcdef">>, 65536),
    ok = lists:foreach(fun(_) -> ok = file:write(Fd, Mb) end, lists:seq(1, ?REPLY_MB)),
    ok = file:close(Fd),
    Port = beamscale_load_servers:free_port(),
    Temps = [[T, "_temp_path ", Dir, ";\n"]
             || T <- ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]],
    Conf = io_lib:format("user root;\nerror_log ~ts/error.log;\nevents {}\n"
                         "http {\n access_log off;\n~ts server {\n  listen 127.0.0.1:~b;\n"
                         "  root ~ts;\n }\n}\n", [Dir, Temps, Port, Www]),
    Stop = beamscale_load_servers:nginx(Dir, Port, Conf),
    [{nginx, {Stop, Port}} | Config].

end_per_suite(Config) ->
    {Stop, _} = ?config(nginx, Config),
    Stop().

idle_connections() ->
    [{doc, "10 000 idle connections of the owner: the browser's request still served in 1 s."}].
idle_connections(Config) ->
    {Proxy, P} = proxy(Config, "idle"),
    {_, Port} = ?config(nginx, Config),
    Idle = [S || _ <- lists:seq(1, ?IDLE),
                 {ok, S} <- [gen_tcp:connect({127, 0, 0, 1}, P, [binary, {active, false}], 5000)]],
    ?assertEqual(?IDLE, length(Idle)),
    T0 = erlang:monotonic_time(millisecond),
    Reply = get(P, ["http://127.0.0.1:", integer_to_list(Port), "/small.txt"]),
    Ms = erlang:monotonic_time(millisecond) - T0,
    ct:pal("served beside ~b idle connections in ~b ms", [?IDLE, Ms]),
    ?assertMatch(<<"HTTP/1.1 200 ", _/binary>>, Reply),
    %% Served at all is the check (the old proxy closed it unanswered); the time is printed, not
    %% gated: 331 ms at load 7, 1 223 ms in make test beside a CPU hog per core.
    ?assert(Ms < 10000, Ms),
    %% The cap held: all but the newest few hundred were let go (closed by the proxy).
    Closed = length([S || S <- Idle, gen_tcp:recv(S, 0, 0) =:= {error, closed}]),
    ct:pal("~b of ~b idle connections closed by the proxy", [Closed, ?IDLE]),
    ?assert(Closed >= ?IDLE - 256, Closed),
    [gen_tcp:close(S) || S <- Idle],
    ?assertEqual(1, beamscale_record:stop(Proxy)).

big_replies() ->
    [{doc, "64 replies of 16 MiB at once pass whole, the node under 300 MB resident meanwhile."}].
big_replies(Config) ->
    {Proxy, P} = proxy(Config, "big"),
    {_, Port} = ?config(nginx, Config),
    Url = ["http://127.0.0.1:", integer_to_list(Port), "/big.bin"],
    Me = self(),
    Before = rss(),
    Sampler = spawn_link(fun() -> sample(Me, 0) end),
    Pids = [spawn_link(fun() -> Me ! {self(), fetch_size(P, Url)} end)
            || _ <- lists:seq(1, ?REPLIES)],
    Sizes = [receive {Pid, Size} -> Size after 120000 -> ct:fail(reply_timeout) end
             || Pid <- Pids],
    Sampler ! {stop, Me},
    Peak = receive {peak, B} -> B end,
    ct:pal("~b replies of ~b MiB; resident peak ~b MB (before: ~b MB)",
           [?REPLIES, ?REPLY_MB, Peak div 1000000, Before div 1000000]),
    Body = ?REPLY_MB * 1048576,
    ?assertEqual([], [S || S <- Sizes, S =/= Body]),
    ?assert(Peak < 300000000, Peak),
    ?assertEqual(?REPLIES, beamscale_record:stop(Proxy)).

planted_ca() ->
    [{doc, "A CA another user planted, a symlink, a shared or readable key: each refused."}].
planted_ca(_Config) ->
    Shared = string:trim(os:cmd("mktemp -d /tmp/beamscale_record_ca.XXXXXX")),
    User = beamscale_test_user:create(),
    try
        %% Like /tmp: everyone may write, only a file's owner remove it (file:change_mode keeps
        %% only the permission bits).
        "" = os:cmd("chmod 1777 " ++ Shared),
        Pem = filename:join(Shared, "beamscale-record-ca.pem"),
        Key = filename:join(Shared, "beamscale-record-ca.key"),
        %% The other user's files: refused before a byte of them is read.
        {0, _} = beamscale_test_user:run(User, ["sh", "-c", "umask 077; echo x > " ++ Pem ++
                                                "; echo y > " ++ Key], 10000),
        refused(Shared, "owned by uid [0-9]+, not by this user"),
        ok = file:delete(Pem), ok = file:delete(Key),
        %% A dangling symlink where the key would go: the key is not written through it.
        Victim = filename:join(Shared, "victim"),
        {0, _} = beamscale_test_user:run(User, ["ln", "-s", Victim, Key], 10000),
        refused(Shared, "a symlink, not a regular file"),
        ?assertEqual(false, filelib:is_file(Victim)),
        ok = file:delete(Key),
        %% The sticky directory is fine for a CA of its own, kept for the next proxy.
        {ok, Ca} = beamscale_record_ca:open(Shared),
        {ok, Again} = beamscale_record_ca:open(Shared),
        ?assertEqual(beamscale_record_ca:spki_sha256(Ca), beamscale_record_ca:spki_sha256(Again)),
        ok = file:change_mode(Key, 8#644),
        refused(Shared, "mode 644 lets other users read the CA's key"),
        ok = file:change_mode(Key, 8#600),
        ok = file:change_mode(Shared, 8#777),
        refused(Shared, "mode 777 lets other users write there")
    after
        beamscale_test_user:remove(User),
        os:cmd("rm -rf " ++ Shared)
    end.

%% A server of the test's own that trickles a reply forever (a byte every 100 ms after its
%% head), and one that never answers: each cut at the proxy's whole-reply bound (1.5 s here),
%% not held for as long as the server goes on; named, in the 502 or in the owner's line.
trickled_reply() ->
    [{doc, "A reply trickled forever, or no reply: cut at the whole-reply bound, named."}].
trickled_reply(Config) ->
    Priv = ?config(priv_dir, Config),
    {L, Port, Acceptor} = beamscale_load_servers:broker(fun trickle/1),
    ct:capture_start(),
    {ok, Proxy} = beamscale_record:start(#{port => 0, base => filename:join(Priv, "trickle"),
                                           ca_dir => filename:join(Priv, "trickle_ca"),
                                           reply_ms => 1500}),
    try
        P = beamscale_record:port(Proxy),
        Url = ["http://127.0.0.1:", integer_to_list(Port)],
        %% Closed by the proxy long before this bound (the server never stops).
        Reply = until_closed(P, [Url, "/trickle"], erlang:monotonic_time(millisecond) + 20000),
        ?assertMatch(<<"HTTP/1.1 200 OK\r\n\r\nx", _/binary>>, Reply),
        NoStatus = until_closed(P, [Url, "/silent"], erlang:monotonic_time(millisecond) + 20000),
        ?assertMatch({match, _}, re:run(NoStatus, "^HTTP/1.1 502 .*X-Beamscale-Record: "
                                        "127.0.0.1:[0-9]+: no reply status within the "
                                        "whole-reply bound", [dotall])),
        %% The trickled one is recorded (its status came); the one never answered is not.
        ?assertEqual(1, beamscale_record:stop(Proxy)),
        Lines = [L1 || L1 <- string:lexemes(iolist_to_binary(ct:capture_get([])), "\n"),
                       string:prefix(L1, "record: ") =/= nomatch],
        ?assertMatch([<<"record: GET http://127.0.0.1:", _/binary>>], Lines),
        ?assertMatch({match, _}, re:run(hd(Lines), "/trickle: the reply not all passed within "
                                                   "1500 ms \\(its whole-reply bound\\): cut"))
    after
        ct:capture_stop(),
        exit(Acceptor, kill),
        gen_tcp:close(L)
    end.

%% GET `Url' through the proxy: what came until the proxy closed (a failure past `Until').
until_closed(P, Url, Until) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, P, [binary, {active, false}], 5000),
    ok = gen_tcp:send(S, ["GET ", Url, " HTTP/1.1\r\nHost: x\r\n\r\n"]),
    closed(S, <<>>, Until).

closed(S, Acc, Until) ->
    case erlang:monotonic_time(millisecond) < Until of
        false -> gen_tcp:close(S), ct:fail({not_cut, Acc});
        true ->
            case gen_tcp:recv(S, 0, 1000) of
                {ok, D} -> closed(S, <<Acc/binary, D/binary>>, Until);
                {error, timeout} -> closed(S, Acc, Until);
                {error, _} -> gen_tcp:close(S), Acc
            end
    end.

%% /trickle: the head, then `x' every 100 ms while the client stays; /silent: nothing.
trickle(S) ->
    {ok, Req} = gen_tcp:recv(S, 0, 5000),
    case binary:match(Req, <<"/trickle">>) of
        nomatch -> _ = gen_tcp:recv(S, 0, 60000), ok;
        _ -> ok = gen_tcp:send(S, "HTTP/1.1 200 OK\r\n\r\n"), drip(S)
    end.

drip(S) ->
    case gen_tcp:send(S, "x") of
        ok -> timer:sleep(100), drip(S);
        {error, _} -> ok
    end.

%%% Helpers

proxy(Config, Name) ->
    Priv = ?config(priv_dir, Config),
    {ok, Proxy} = beamscale_record:start(#{port => 0, base => filename:join(Priv, Name),
                                           ca_dir => filename:join(Priv, Name ++ "_ca")}),
    {Proxy, beamscale_record:port(Proxy)}.

refused(Dir, Pattern) ->
    {error, Why} = beamscale_record_ca:open(Dir),
    Text = beamscale_record_ca:format_error(element(2, Why)),
    ct:log("~ts", [Text]),
    ?assertMatch({match, _}, re:run(Text, Pattern), Text).

get(P, Url) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, P, [binary, {active, false}], 5000),
    ok = gen_tcp:send(S, ["GET ", Url, " HTTP/1.1\r\nHost: x\r\n\r\n"]),
    read_all(S, <<>>).

read_all(S, Acc) ->
    case gen_tcp:recv(S, 0, 10000) of
        {ok, D} -> read_all(S, <<Acc/binary, D/binary>>);
        {error, _} -> gen_tcp:close(S), Acc
    end.

%% The body's size of a reply through the proxy, its bytes counted and dropped as they come.
fetch_size(P, Url) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, P, [binary, {active, false}], 5000),
    ok = gen_tcp:send(S, ["GET ", Url, " HTTP/1.1\r\nHost: x\r\n\r\n"]),
    body(S, <<>>).

body(S, Head) ->
    case binary:split(Head, <<"\r\n\r\n">>) of
        [_, Rest] -> count(S, byte_size(Rest));
        [_] ->
            {ok, D} = gen_tcp:recv(S, 0, 30000),
            body(S, <<Head/binary, D/binary>>)
    end.

count(S, N) ->
    case gen_tcp:recv(S, 0, 30000) of
        {ok, D} -> count(S, N + byte_size(D));
        {error, _} -> gen_tcp:close(S), N
    end.

%% The OS process's resident memory (VmRSS), the recorder's and this node's: what the host
%% gives, allocators' cached carriers included, not only what the emulator has in use.
sample(Parent, Peak) ->
    receive
        {stop, Parent} -> Parent ! {peak, max(Peak, rss())}
    after 20 -> sample(Parent, max(Peak, rss()))
    end.

rss() ->
    {ok, Status} = file:read_file("/proc/self/status"),
    {match, [Kb]} = re:run(Status, "VmRSS:\\s+([0-9]+) kB", [{capture, all_but_first, list}]),
    list_to_integer(Kb) * 1024.
