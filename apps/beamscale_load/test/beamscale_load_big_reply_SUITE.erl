%% Big good replies read in linear time (issue 55): one 8 MB PostgreSQL DataRow from a server of
%% this suite's own, read whole with no error well within its request's timeout (it took 16 s
%% when each piece was appended to a buffer the decoder had matched, a copy of the whole buffer
%% per piece); a 20 000-item XMPP roster sent in 1 460-byte pieces (19 s when each piece made
%% the stanza scanned again from its start); beside each the HTTP kind's time for the same
%% bytes, printed as a ratio.
-module(beamscale_load_big_reply_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([pgsql_row/0, pgsql_row/1, xmpp_roster/0, xmpp_roster/1]).

-define(ROW, 8 * 1024 * 1024).
-define(QUERIES, 3).
-define(RECV_MS, 10000).
-define(ROSTER_ITEMS, 20000).
-define(ROSTER_GETS, 10).
-define(PIECE, 1460).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [pgsql_row, xmpp_roster].

pgsql_row() -> [{doc, "3 queries of one 8 MB row each: no error, within 5 s per query."}].
pgsql_row(_Config) ->
    Row = binary:copy(<<"r">>, ?ROW),
    {Pg, StopPg} = serve(fun(S) -> pg(S, Row) end),
    {Http, StopHttp} = serve(fun(S) -> http(S, Row) end),
    try
        Sql = lists:join(", ", lists:duplicate(?QUERIES, "{pgsql, #{type => sql, sql => "
                                                         "\"SELECT r\", timeout_ms => 5000}}")),
        {PgUs, PgT} = timed(Pg, "[{pgsql, #{type => connect, database => \"d\", username => "
                                "\"u\", timeout_ms => 5000}}, " ++ Sql ++ "]"),
        Get = lists:join(", ", lists:duplicate(?QUERIES, "{http, #{timeout_ms => 5000}}")),
        {HttpUs, HttpT} = timed(Http, "[" ++ Get ++ "]"),
        {PgS, HttpS} = {session_s(PgT), session_s(HttpT)},
        ct:pal("a session of 8 MB x ~b: pgsql ~.2f s, http ~.2f s, ratio ~.2f (runs of ~.1f "
               "and ~.1f s; a loaded host)",
               [?QUERIES, PgS, HttpS, PgS / HttpS, PgUs / 1.0e6, HttpUs / 1.0e6]),
        Done = maps:get(sessions_done, PgT),
        ?assert(Done >= 1),
        ?assertEqual(#{}, maps:get(reasons, PgT)),
        ?assertEqual(?QUERIES * Done, maps:get(rows, PgT)),
        ?assertEqual(#{}, maps:get(reasons, HttpT)),
        ?assert(maps:get(bytes_received, PgT) > ?QUERIES * ?ROW)
    after
        StopPg(), StopHttp()
    end.

xmpp_roster() ->
    [{doc, "10 gets of a 20 000-item roster sent in pieces: no error, in 5 s each; its time a "
           "get printed against HTTP's for the same bytes."}].
xmpp_roster(_Config) ->
    Items = [["<item jid='user", integer_to_list(I), "@localhost' name='User ", integer_to_list(I),
              "' subscription='both'><group>Friends</group></item>"]
             || I <- lists:seq(1, ?ROSTER_ITEMS)],
    Query = iolist_to_binary(["<query xmlns='jabber:iq:roster'>", Items, "</query>"]),
    {Xmpp, StopXmpp} = serve(fun(S) -> xmpp(S, Query) end),
    {Http, StopHttp} = serve(fun(S) -> http(S, Query) end),
    try
        Get = lists:join(", ", lists:duplicate(?ROSTER_GETS, "{xmpp, #{type => iq_roster_get, "
                                                             "timeout_ms => 5000}}")),
        {_, XT} = timed(Xmpp, "[{xmpp, #{type => connect}}, " ++ Get
                        ++ ", {xmpp, #{type => close}}]"),
        Gets = lists:join(", ", lists:duplicate(?ROSTER_GETS, "{http, #{timeout_ms => 5000}}")),
        {_, HT} = timed(Http, "[" ++ Gets ++ "]"),
        {XMean, XMin} = get_ms(XT, <<"xmpp iq_roster_get">>),
        {HMean, HMin} = get_ms(HT, <<"GET /">>),
        %% bench/roster_vs_http.sh reads this line.
        ct:pal("roster get of ~b bytes in ~b-byte pieces: xmpp mean ~.2f ms min ~.2f ms, http "
               "mean ~.2f ms min ~.2f ms, ratio of means ~.2f, of mins ~.2f",
               [byte_size(Query), ?PIECE, XMean, XMin, HMean, HMin, XMean / HMean, XMin / HMin]),
        ?assert(maps:get(sessions_done, XT) >= 1),
        ?assertEqual(#{}, maps:get(reasons, XT)),
        ?assertEqual(#{}, maps:get(reasons, HT)),
        ?assert(maps:get(bytes_received, XT) > ?ROSTER_GETS * byte_size(Query))
    after
        StopXmpp(), StopHttp()
    end.

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
