%% Misbehaving HTTP/2 servers in the test's node, one per way a server can hurt a client: each
%% reads the client's preface, sends a SETTINGS frame and then misbehaves for at most
%% ?MAX_MS (a flood stops when the client closes).
-module(beamscale_load_h2_hostile).

-export([names/0, start/1]).

-define(F, beamscale_load_h2_frame).
-define(MAX_MS, 20000).

%% @doc The servers.
names() ->
    [continuation_flood, continuation_empty, header_list_bomb, table_size_bomb, settings_flood,
     ping_flood, window_never_opened, data_past_window, goaway_mid_stream, reset_storm,
     reset_each_stream].

%% @doc Server `Name' on a free port: `{Port, Stop}'.
start(Name) ->
    {L, Port, Acceptor} = beamscale_load_servers:broker(fun(S) -> serve(Name, S) end),
    {Port, fun() -> exit(Acceptor, kill), gen_tcp:close(L) end}.

serve(Name, S) ->
    %% The preface, the client's SETTINGS and WINDOW_UPDATE: read and dropped.
    {ok, _} = gen_tcp:recv(S, 24, 5000),
    ok = gen_tcp:send(S, ?F:settings(settings(Name))),
    Until = erlang:monotonic_time(millisecond) + ?MAX_MS,
    catch act(Name, S, Until),
    gen_tcp:close(S).

settings(window_never_opened) -> [{4, 0}];
settings(_) -> [{3, 100}].

%% The first request's HEADERS (and whatever came before it).
stream(S) -> stream(S, <<>>).
stream(S, Buf) ->
    case ?F:decode(Buf, 1 bsl 24) of
        {ok, {headers, Sid, _, _, _}, _} -> Sid;
        {ok, _, Rest} -> stream(S, Rest);
        more -> {ok, B} = gen_tcp:recv(S, 0, 5000), stream(S, <<Buf/binary, B/binary>>)
    end.

act(continuation_flood, S, Until) ->
    Sid = stream(S),
    ok = gen_tcp:send(S, frame(1, 0, Sid, <<16#88>>)),
    flood(S, Until, frame(9, 0, Sid, binary:copy(<<0>>, 16384)));
act(continuation_empty, S, Until) ->
    Sid = stream(S),
    ok = gen_tcp:send(S, frame(1, 0, Sid, <<16#88>>)),
    flood(S, Until, frame(9, 0, Sid, <<>>));
act(header_list_bomb, S, _Until) ->
    %% One 4000-byte entry added to the table, then named 1000 times by a one-byte index:
    %% 4 KB of block, 4 MB of header list.
    Sid = stream(S),
    Add = [<<16#40, 1>>, "x", <<16#7f, (4000 - 127 - 128):8, 1>>, binary:copy(<<"v">>, 4000)],
    Block = iolist_to_binary([<<16#88>>, Add, binary:copy(<<16#be>>, 1000)]),
    ok = gen_tcp:send(S, frame(1, 16#4 bor 16#1, Sid, Block)),
    hold(S);
act(table_size_bomb, S, _Until) ->
    Sid = stream(S),
    %% A dynamic table size update to 2^28 - 1.
    ok = gen_tcp:send(S, frame(1, 16#5, Sid, <<2#00111111, 16#e0, 16#ff, 16#ff, 16#7f, 16#88>>)),
    hold(S);
act(settings_flood, S, Until) -> flood(S, Until, ?F:settings([{3, 100}]));
act(ping_flood, S, Until) -> flood(S, Until, ?F:ping(false, <<"12345678">>));
act(window_never_opened, S, _Until) -> _ = stream(S), hold(S);
act(data_past_window, S, Until) ->
    Sid = stream(S),
    ok = gen_tcp:send(S, frame(1, 16#4, Sid, <<16#88>>)),
    flood(S, Until, ?F:data(Sid, binary:copy(<<0>>, 16384), false));
act(goaway_mid_stream, S, _Until) ->
    Sid = stream(S),
    ok = gen_tcp:send(S, [frame(1, 16#4, Sid, <<16#88>>), ?F:goaway(0, 0)]),
    hold(S);
act(reset_storm, S, Until) ->
    _ = stream(S),
    flood(S, Until, [?F:rst_stream(Sid, 8) || Sid <- lists:seq(1001, 1099, 2)]);
act(reset_each_stream, S, _Until) ->
    Sid = stream(S),
    ok = gen_tcp:send(S, ?F:rst_stream(Sid, 7)),
    hold(S).

frame(Type, Flags, Sid, P) ->
    [<<(iolist_size(P)):24, Type:8, Flags:8, 0:1, Sid:31>>, P].

flood(S, Until, Bytes) ->
    erlang:monotonic_time(millisecond) < Until orelse exit(done),
    case gen_tcp:send(S, Bytes) of
        ok -> flood(S, Until, Bytes);
        {error, _} -> ok
    end.

%% Read and drop what the client sends until it closes.
hold(S) ->
    case gen_tcp:recv(S, 0, ?MAX_MS) of
        {ok, _} -> hold(S);
        _ -> ok
    end.
