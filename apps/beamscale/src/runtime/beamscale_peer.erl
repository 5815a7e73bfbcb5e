%% @doc Who is on the other end of a loopback connection: the local user (uid) owning the
%% client's socket, read from the kernel's table of TCP sockets (`/proc/net/tcp'), and whether
%% it is the user running beamscale. Every listener beamscale opens (the live page and `ctl''s
%% endpoint, the recorder) serves only its own user: another local user can neither read a page
%% (and the control token in it) nor steer, and its connections are closed at once, so they
%% hold no slot (issue 55). Chosen over a token alone because the browser then needs nothing
%% but the printed address, and over a Unix socket because a browser cannot open one.
%% Linux only: without `/proc/net/tcp' nobody is served (fail closed, said in words).
-module(beamscale_peer).

-export([new/0, owner/2, own_uid/0, format_error/1]).
-export_type([cache/0]).

-define(TCP_TABLE, "/proc/net/tcp").
%% A table read serves the connections accepted in the next moment: 1 000 connections at once
%% cost one read of the table (14 ms with 3 000 sockets, on a loaded host), not 1 000.
-define(CACHE_MS, 100).
%% `st' of the sockets that own no connection: TIME_WAIT (uid 0, no process), CLOSE, LISTEN.
%% Every other state is a client's socket, owned by its user: one that already sent its request
%% and half-closed (FIN_WAIT) is still served.
-define(NOT_CONNECTED, [<<"06">>, <<"07">>, <<"0A">>]).

%% The clients' sockets as last read: "LOCAL REMOTE" (the kernel's hex) to the owner's uid.
-opaque cache() :: {integer(), #{binary() => non_neg_integer()}}.

%% @doc Nothing read yet.
-spec new() -> cache().
new() -> {erlang:monotonic_time(millisecond) - ?CACHE_MS - 1, #{}}.

%% @doc `ok' when the client of `Sock' (a connection accepted on 127.0.0.1) runs as our user,
%% with the table read at most ?CACHE_MS ago when it lists the client. Each socket read vouches
%% for one connection only (it leaves the cache): a client that reuses the address of one gone
%% a moment ago makes the table read again.
-spec owner(inet:socket(), cache()) -> {ok | {error, {?MODULE, term()}}, cache()}.
owner(Sock, Cache) ->
    case key(Sock) of
        {ok, Key} ->
            case lookup(Key, Cache) of
                {{ok, Uid}, Cache1} -> {verdict(Uid), Cache1};
                {{error, _} = Error, Cache1} -> {Error, Cache1}
            end;
        {error, _} = Error -> {Error, Cache}
    end.

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({other_user, Uid, Own}) ->
    io_lib:format("refused: the client runs as uid ~b, not the run's user (uid ~b)",
                  [Uid, Own]);
format_error({no_table, Why}) ->
    io_lib:format("refused: cannot tell the client's user (~ts: ~ts)",
                  [?TCP_TABLE, file:format_error(Why)]);
format_error(not_found) -> "refused: the client's socket is not in " ?TCP_TABLE;
format_error(not_ipv4) -> "refused: not an IPv4 loopback client";
format_error({gone, _}) -> "the client went away".

%%% Internals

%% @doc The effective uid of this OS process, read once.
-spec own_uid() -> non_neg_integer().
own_uid() ->
    case persistent_term:get({?MODULE, uid}, none) of
        none ->
            {ok, Status} = file:read_file("/proc/self/status"),
            {match, [Uid]} = re:run(Status, "^Uid:\\s+\\d+\\s+(\\d+)",
                                    [multiline, {capture, all_but_first, binary}]),
            U = binary_to_integer(Uid),
            persistent_term:put({?MODULE, uid}, U),
            U;
        U -> U
    end.

verdict(Uid) ->
    case own_uid() of
        Uid -> ok;
        Own -> {error, {?MODULE, {other_user, Uid, Own}}}
    end.

%% The client's socket: its local address is our peer, its remote ourselves.
key(Sock) ->
    case {inet:peername(Sock), inet:sockname(Sock)} of
        {{ok, {{_, _, _, _} = PeerIp, PeerPort}}, {ok, {{_, _, _, _} = Ip, Port}}} ->
            {ok, iolist_to_binary([hex_addr(PeerIp, PeerPort), $\s, hex_addr(Ip, Port)])};
        {{ok, _}, {ok, _}} -> {error, {?MODULE, not_ipv4}};
        {{error, Why}, _} -> {error, {?MODULE, {gone, Why}}};
        {_, {error, Why}} -> {error, {?MODULE, {gone, Why}}}
    end.

lookup(Key, {At, Map} = Cache) ->
    Fresh = erlang:monotonic_time(millisecond) - At =< ?CACHE_MS,
    case {Map, Fresh} of
        {#{Key := Uid}, true} -> {{ok, Uid}, {At, maps:remove(Key, Map)}};
        _ ->
            case read() of
                {ok, Cache1} -> lookup_read(Key, Cache1);
                {error, _} = Error -> {Error, Cache}
            end
    end.

lookup_read(Key, {At, Map}) ->
    case Map of
        #{Key := Uid} -> {{ok, Uid}, {At, maps:remove(Key, Map)}};
        #{} -> {{error, {?MODULE, not_found}}, {At, Map}}
    end.

%% The moment kept is the read's end: with 10 000 connections the kernel takes 90 ms to print
%% the table, and a moment from its start would leave no time to use it.
read() ->
    case file:read_file(?TCP_TABLE) of
        {ok, Table} ->
            Map = parse(binary:split(Table, <<"\n">>, [global, trim]), #{}),
            {ok, {erlang:monotonic_time(millisecond), Map}};
        {error, Why} -> {error, {?MODULE, {no_table, Why}}}
    end.

%% Lines `sl: local remote st tx:rx tr:when retrnsmt uid ...' (the header line has no uid), in
%% the kernel's fixed widths, matched as binaries: 20 000 lines in 13 ms, against 170 ms split
%% into words (the acceptor reads the table again for every connection it has not seen).
parse([], Map) -> Map;
parse([Line | Lines], Map) ->
    case binary:match(Line, <<": ">>) of
        {At, 2} -> parse(Lines, line(binary:part(Line, At + 2, byte_size(Line) - At - 2), Map));
        nomatch -> parse(Lines, Map)
    end.

line(<<Pair:27/binary, " ", St:2/binary, " ", _Queues:17/binary, " ", _Timer:11/binary, " ",
       _Retr:8/binary, " ", Rest/binary>>, Map) ->
    case {lists:member(St, ?NOT_CONNECTED), uid(Rest, none)} of
        {false, U} when is_integer(U) -> Map#{Pair => U};
        _ -> Map
    end;
line(_, Map) -> Map.

%% The uid column: right-aligned digits, then a space.
uid(<<" ", Rest/binary>>, none) -> uid(Rest, none);
uid(<<D, Rest/binary>>, N) when D >= $0, D =< $9 ->
    uid(Rest, case N of none -> D - $0; _ -> N * 10 + D - $0 end);
uid(<<" ", _/binary>>, N) -> N;
uid(_, _) -> none.

%% As the kernel prints it: the address's 32 bits as the host holds them, the port in hex.
hex_addr({A, B, C, D}, Port) ->
    Word = case erlang:system_info(endian) of
               little -> <<D, C, B, A>>;
               big -> <<A, B, C, D>>
           end,
    [binary:encode_hex(Word), $:, io_lib:format("~4.16.0B", [Port])].
