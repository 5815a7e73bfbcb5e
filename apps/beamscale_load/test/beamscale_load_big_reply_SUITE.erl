%% Big good replies read in linear time (issue 55): one 8 MB PostgreSQL DataRow or MySQL row
%% from a server of this suite's own, read whole with no error well within its request's
%% timeout (it took 16 s when each piece was appended to a buffer the decoder had matched, a
%% copy of the whole buffer per piece) and within 2x the HTTP kind's least time for the same
%% bytes (50 ms more allowed for a loaded host); a 20 000-item XMPP roster sent in 1 460-byte
%% pieces (19 s when each piece made the stanza scanned again from its start), a get's mean
%% within 2x HTTP's (10 ms more allowed). Each time bound holds in one of 3 tries.
-module(beamscale_load_big_reply_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([pgsql_row/0, pgsql_row/1, mysql_row/0, mysql_row/1, xmpp_roster/0, xmpp_roster/1]).

-define(ROW, 8 * 1024 * 1024).
-define(QUERIES, 3).
-define(RECV_MS, 10000).
-define(ROSTER_ITEMS, 20000).
-define(ROSTER_GETS, 10).
-define(PIECE, 1460).
%% A row's least time against a GET's for the same bytes: at most this ratio, plus this slack.
-define(MAX_RATIO, 2).
-define(SLACK_MS, 50).
-define(TRIES, 3).
%% A roster get's mean takes 20-50 ms here: 10 ms more than 2x HTTP's.
-define(ROSTER_SLACK_MS, 10).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [pgsql_row, mysql_row, xmpp_roster].

pgsql_row() ->
    [{doc, "3 queries of one 8 MB row each: no error, within 5 s per query and 2x HTTP's."}].
pgsql_row(_Config) ->
    row_vs_http("pgsql", fun pg/2,
                "{pgsql, #{type => connect, database => \"d\", username => \"u\", "
                "timeout_ms => 5000}}",
                "{pgsql, #{type => sql, sql => \"SELECT r\", timeout_ms => 5000}}", []).

mysql_row() ->
    [{doc, "The same for MySQL: one 8 MB row a query (its length in 3 bytes, one packet)."}].
mysql_row(_Config) ->
    row_vs_http("mysql", fun my/2,
                "{mysql, #{type => connect, user => \"u\", password => \"p\", "
                "database => \"d\", timeout_ms => 5000}}",
                "{mysql, #{type => sql, query => \"SELECT r\", timeout_ms => 5000}}",
                ["{mysql, #{type => close}}"]).

%% A session of ?QUERIES queries of an 8 MB row from `Server', and one of as many GETs of an
%% 8 MB body: the rows all read, the least query within ?MAX_RATIO of a GET's (and ?SLACK_MS)
%% in one of ?TRIES pairs of sessions (a 2-core host shared with other tests: one pair in six
%% had its three rows at 315 ms against 65 ms; the quadratic reader took 25x in every pair).
row_vs_http(Kind, Server, Connect, Query, Close) ->
    Row = binary:copy(<<"r">>, ?ROW),
    {Db, StopDb} = serve(fun(S) -> Server(S, Row) end),
    {Http, StopHttp} = serve(fun(S) -> http(S, Row) end),
    try
        Steps = lists:join(", ", [Connect | lists:duplicate(?QUERIES, Query)] ++ Close),
        Get = lists:join(", ", lists:duplicate(?QUERIES, "{http, #{timeout_ms => 5000}}")),
        Pair = fun() -> row_pair(Kind, ["[", Steps, "]"], Db, "[" ++ Get ++ "]", Http) end,
        {Within, Pairs} = tries(Pair, ?SLACK_MS),
        ?assert(Within, {Kind, Pairs})
    after
        StopDb(), StopHttp()
    end.

%% Pairs measured until one is within ?MAX_RATIO (and `SlackMs'), ?TRIES at most: whether
%% one was, and each pair's times (the kind's, HTTP's).
tries(Pair, SlackMs) -> tries(Pair, SlackMs, ?TRIES, []).

tries(_Pair, _SlackMs, 0, Acc) -> {false, Acc};
tries(Pair, SlackMs, N, Acc) ->
    {Kind, Http} = Pair(),
    case Kind =< ?MAX_RATIO * Http + SlackMs of
        true -> {true, [{Kind, Http} | Acc]};
        false -> tries(Pair, SlackMs, N - 1, [{Kind, Http} | Acc])
    end.

%% One session of rows, one of GETs, each read whole: the least time of a row and of a GET.
row_pair(Kind, Steps, Db, Gets, Http) ->
    {DbUs, DbT} = timed(Db, Steps),
    {HttpUs, HttpT} = timed(Http, Gets),
    {DbS, HttpS} = {session_s(DbT), session_s(HttpT)},
    %% The least time of a query against a GET's: a session's mean moves with the host.
    {_, DbMin} = get_ms(DbT, iolist_to_binary([Kind, " sql"])),
    {_, HttpMin} = get_ms(HttpT, <<"GET /">>),
    ct:pal("a session of 8 MB x ~b: ~ts ~.2f s, http ~.2f s, ratio ~.2f (runs of ~.1f "
           "and ~.1f s; a loaded host); least of a row ~.1f ms, of a GET ~.1f ms, ratio ~.2f",
           [?QUERIES, Kind, DbS, HttpS, DbS / HttpS, DbUs / 1.0e6, HttpUs / 1.0e6,
            DbMin, HttpMin, DbMin / HttpMin]),
    Done = maps:get(sessions_done, DbT),
    ?assert(Done >= 1),
    ?assertEqual(#{}, maps:get(reasons, DbT)),
    ?assertEqual(?QUERIES * Done, maps:get(rows, DbT)),
    ?assertEqual(#{}, maps:get(reasons, HttpT)),
    ?assert(maps:get(bytes_received, DbT) > ?QUERIES * ?ROW),
    {DbMin, HttpMin}.

xmpp_roster() ->
    [{doc, "10 gets of a 20 000-item roster sent in pieces: no error, in 5 s each; a get's mean "
           "within 2x HTTP's for the same bytes (10 ms more allowed)."}].
xmpp_roster(_Config) ->
    Items = [["<item jid='user", integer_to_list(I), "@localhost' name='User ", integer_to_list(I),
              "' subscription='both'><group>Friends</group></item>"]
             || I <- lists:seq(1, ?ROSTER_ITEMS)],
    Query = iolist_to_binary(["<query xmlns='jabber:iq:roster'>", Items, "</query>"]),
    {Xmpp, StopXmpp} = serve(fun(S) -> xmpp(S, Query) end),
    {Http, StopHttp} = serve(fun(S) -> http(S, Query) end),
    try
        {Within, Pairs} = tries(fun() -> roster_pair(Query, Xmpp, Http) end, ?ROSTER_SLACK_MS),
        ?assert(Within, {xmpp, Pairs})
    after
        StopXmpp(), StopHttp()
    end.

%% One session of roster gets, one of GETs of the same bytes: each get's mean, in ms.
roster_pair(Query, Xmpp, Http) ->
    Get = lists:join(", ", lists:duplicate(?ROSTER_GETS, "{xmpp, #{type => iq_roster_get, "
                                                         "timeout_ms => 5000}}")),
    {_, XT} = timed(Xmpp, "[{xmpp, #{type => connect}}, " ++ Get ++ ", {xmpp, #{type => close}}]"),
    Gets = lists:join(", ", lists:duplicate(?ROSTER_GETS, "{http, #{timeout_ms => 5000}}")),
    {_, HT} = timed(Http, "[" ++ Gets ++ "]"),
    {XMean, XMin} = get_ms(XT, <<"xmpp iq_roster_get">>),
    {HMean, HMin} = get_ms(HT, <<"GET /">>),
    %% bench/roster_vs_http.sh reads this line (the first of a case: a retry's is not).
    ct:pal("roster get of ~b bytes in ~b-byte pieces: xmpp mean ~.2f ms min ~.2f ms, http "
           "mean ~.2f ms min ~.2f ms, ratio of means ~.2f, of mins ~.2f",
           [byte_size(Query), ?PIECE, XMean, XMin, HMean, HMin, XMean / HMean, XMin / HMin]),
    ?assert(maps:get(sessions_done, XT) >= 1),
    ?assertEqual(#{}, maps:get(reasons, XT)),
    ?assertEqual(#{}, maps:get(reasons, HT)),
    ?assert(maps:get(bytes_received, XT) > ?ROSTER_GETS * byte_size(Query)),
    {XMean, HMean}.

%% A request name's mean and least latency, in milliseconds (the histogram keeps microseconds).
get_ms(#{by_name := #{} = ByName}, Name) ->
    #{Name := #{latency := #{count := N, sum := Sum, min := Min}}} = ByName,
    {Sum / N / 1000, Min / 1000}.

%% The mean time of a session, in seconds (the histogram sums microseconds).
session_s(#{session := #{count := N, sum := Sum}}) when N > 0 -> Sum / N / 1.0e6.

timed(Port, Steps) ->
    S = beamscale_load_servers:scenario(io_lib:format(
          "{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
          "{phases, [{p, #{duration_s => 1, rate => 5, max_users => 1}}]}.\n"
          "{sessions, [{s, #{steps => ~ts}}]}.\n", [Port, Steps])),
    {Us, #{total := T}} = timer:tc(fun() -> beamscale_load_servers:run(S) end),
    {Us, T}.

%% A listener on a free port of 127.0.0.1, each connection to `Handler'; and how to stop it.
serve(Handler) ->
    Parent = self(),
    Pid = spawn(fun() ->
                        {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}},
                                                     {active, false}, {reuseaddr, true},
                                                     {nodelay, true}]),
                        {ok, Port} = inet:port(L),
                        Parent ! {self(), Port},
                        accept(L, Handler)
                end),
    Port = receive {Pid, P} -> P after ?RECV_MS -> error(no_listener) end,
    {Port, fun() -> exit(Pid, kill), ok end}.

accept(L, Handler) ->
    {ok, S} = gen_tcp:accept(L),
    Pid = spawn(fun() -> receive go -> catch Handler(S) end end),
    ok = gen_tcp:controlling_process(S, Pid),
    Pid ! go,
    accept(L, Handler).

%% PostgreSQL: trust authentication, then each query answered with one row of one column.
pg(S, Row) ->
    {ok, <<Len:32>>} = gen_tcp:recv(S, 4, ?RECV_MS),
    {ok, _Startup} = gen_tcp:recv(S, Len - 4, ?RECV_MS),
    ok = gen_tcp:send(S, [<<$R, 8:32, 0:32>>, <<$Z, 5:32, $I>>]),
    pg_loop(S, Row).

pg_loop(S, Row) ->
    case gen_tcp:recv(S, 5, ?RECV_MS) of
        {ok, <<$X, _:32>>} -> gen_tcp:close(S);
        {ok, <<_Type, Len:32>>} ->
            {ok, _} = gen_tcp:recv(S, Len - 4, ?RECV_MS),
            Data = <<1:16, (byte_size(Row)):32, Row/binary>>,
            ok = gen_tcp:send(S, [<<$D, (byte_size(Data) + 4):32>>, Data,
                                  <<$C, 13:32, "SELECT 1", 0>>, <<$Z, 5:32, $I>>]),
            pg_loop(S, Row);
        {error, _} -> ok
    end.

%% MySQL: any login accepted (mysql_native_password, not checked), then each query answered
%% with one column and one row, the row's bytes in ?PIECE-byte pieces as HTTP's body is.
my(S, Row) ->
    Caps = 16#1 bor 16#8 bor 16#200 bor 16#2000 bor 16#8000 bor 16#80000,
    ok = gen_tcp:send(S, my_packet(0, [10, "5.5.0-fake", 0, <<1:32/little>>, <<"abcdefgh">>, 0,
                                       <<(Caps band 16#FFFF):16/little, 45, 2:16/little,
                                         (Caps bsr 16):16/little, 21, 0:80>>,
                                       <<"ijklmnopqrst">>, 0, "mysql_native_password", 0])),
    {ok, _Login} = my_recv(S),
    ok = gen_tcp:send(S, my_packet(2, <<0, 0, 0, 2:16/little, 0:16>>)),
    my_loop(S, Row).

my_loop(S, Row) ->
    case my_recv(S) of
        {ok, <<3, _Sql/binary>>} ->
            N = byte_size(Row),
            Eof = <<16#FE, 0:16, 2:16/little>>,
            Column = [[<<(byte_size(F))>>, F] || F <- [<<"def">>, <<>>, <<>>, <<>>, <<"r">>,
                                                       <<"r">>]],
            ok = gen_tcp:send(S, [my_packet(1, <<1>>), my_packet(2, [Column, 16#0C,
                                                                     <<45:16/little,
                                                                       N:32/little, 253,
                                                                       0:16, 0, 0:16>>]),
                                  my_packet(3, Eof)]),
            Data = <<16#FD, N:24/little, Row/binary>>,
            ok = gen_tcp:send(S, <<(byte_size(Data)):24/little, 4>>),
            ok = pieces(S, Data),
            ok = gen_tcp:send(S, my_packet(5, Eof)),
            my_loop(S, Row);
        _ -> gen_tcp:close(S)
    end.

my_packet(Seq, Payload) -> [<<(iolist_size(Payload)):24/little, Seq>>, Payload].

my_recv(S) ->
    case gen_tcp:recv(S, 4, ?RECV_MS) of
        {ok, <<Len:24/little, _Seq>>} -> gen_tcp:recv(S, Len, ?RECV_MS);
        {error, _} = Error -> Error
    end.

%% HTTP/1.1 keep-alive: each request answered with the row as its body.
http(S, Body) ->
    case read_until(S, <<"\r\n\r\n">>, <<>>) of
        {ok, _} ->
            ok = gen_tcp:send(S, ["HTTP/1.1 200 OK\r\nContent-Length: ",
                                  integer_to_list(byte_size(Body)), "\r\n\r\n"]),
            ok = pieces(S, Body),
            http(S, Body);
        closed -> ok
    end.

%% XMPP without authentication: the stream opened, then each iq answered with the roster.
xmpp(S, Query) ->
    {ok, _} = read_until(S, <<">">>, <<>>),
    ok = gen_tcp:send(S, "<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
                         "xmlns:stream='http://etherx.jabber.org/streams' id='s1' "
                         "from='localhost' version='1.0'><stream:features/>"),
    xmpp_iq(S, Query, <<>>).

xmpp_iq(S, Query, Buf) ->
    case read_until(S, <<"</iq>">>, Buf) of
        {ok, All} ->
            {match, [Id]} = re:run(All, "id='([^']*)'", [{capture, all_but_first, binary}]),
            [_, Rest] = binary:split(All, <<"</iq>">>),
            ok = gen_tcp:send(S, ["<iq type='result' id='", Id, "'>"]),
            ok = pieces(S, <<Query/binary, "</iq>">>),
            xmpp_iq(S, Query, Rest);
        closed -> ok
    end.

%% The same bytes in the same pieces for either kind, as a network's segments bring them.
pieces(S, <<Piece:?PIECE/binary, Rest/binary>>) -> ok = gen_tcp:send(S, Piece), pieces(S, Rest);
pieces(S, Last) -> gen_tcp:send(S, Last).

read_until(S, Seq, Buf) ->
    case binary:match(Buf, Seq) of
        nomatch ->
            case gen_tcp:recv(S, 0, ?RECV_MS) of
                {ok, D} -> read_until(S, Seq, <<Buf/binary, D/binary>>);
                {error, _} -> closed
            end;
        _ -> {ok, Buf}
    end.
