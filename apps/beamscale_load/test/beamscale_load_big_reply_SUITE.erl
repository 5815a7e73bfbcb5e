%% Big good replies read in linear time (issue 55): one 8 MB PostgreSQL DataRow from a server of
%% this suite's own, read whole with no error well within its request's timeout (it took 16 s
%% when each piece was appended to a buffer the decoder had matched, a copy of the whole buffer
%% per piece); beside it the HTTP kind's time for an 8 MB body, printed as a ratio.
-module(beamscale_load_big_reply_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([pgsql_row/0, pgsql_row/1]).

-define(ROW, 8 * 1024 * 1024).
-define(QUERIES, 3).
-define(RECV_MS, 10000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [pgsql_row].

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
                                                     {active, false}, {reuseaddr, true}]),
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
    case read_head(S, <<>>) of
        ok ->
            ok = gen_tcp:send(S, ["HTTP/1.1 200 OK\r\nContent-Length: ",
                                  integer_to_list(byte_size(Body)), "\r\n\r\n", Body]),
            http(S, Body);
        closed -> ok
    end.

read_head(S, Buf) ->
    case binary:match(Buf, <<"\r\n\r\n">>) of
        nomatch ->
            case gen_tcp:recv(S, 0, ?RECV_MS) of
                {ok, D} -> read_head(S, <<Buf/binary, D/binary>>);
                {error, _} -> closed
            end;
        _ -> ok
    end.
