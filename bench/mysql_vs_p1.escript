#!/usr/bin/env escript
%%! +sbtu +A1 +sbwt none +sbwtdcpu none +sbwtdio none
%% Client CPU per query: beamscale's mysql kind against a loop of the same query through
%% Debian's p1_mysql driver (p1_mysql_conn), in this one emulator, with the same number of
%% connections each sending the same count of queries, rounds alternating. Run by
%% bench/mysql_vs_p1.sh (which starts the MariaDB); from the repository's root:
%%   escript bench/mysql_vs_p1.escript HOST PORT USER PASSWORD DATABASE CONNS COUNT ROUNDS
%%       CLK_TCK QUERY
%% The emulator flags are the beamscale command's scheduler flags (no busy waiting, so that CPU
%% is work, not spinning). CPU is this OS process's user + system time (/proc/self/stat), taken
%% around each side's run.
-mode(compile).

%% A query of the bench answers in milliseconds; a stuck server should not hang the bench.
-define(QUERY_TIMEOUT_MS, 30000).
%% Time for all connections to log in; MariaDB answers in milliseconds.
-define(CONNECT_TIMEOUT_MS, 30000).

main([Host, Port, User, Password, Db, Conns, Count, Rounds, Tck, Query]) ->
    %% This build's code (rebar3 compile), from the repository's root.
    ok = code:add_pathsa([filename:join(["_build/default/lib", A, "ebin"])
                          || A <- ["beamscale_load", "beamscale_stats", "beamscale_format"]]),
    Cfg = #{host => Host, port => list_to_integer(Port), user => User, password => Password,
            db => Db, conns => list_to_integer(Conns), count => list_to_integer(Count),
            tck => list_to_integer(Tck), 'query' => list_to_binary(Query)},
    {ok, _} = application:ensure_all_started(p1_mysql),
    %% A round not counted: code loaded, connections' first use, on both sides.
    _ = round(1, Cfg#{count := min(100, maps:get(count, Cfg))}),
    Results = [round(I, Cfg) || I <- lists:seq(1, list_to_integer(Rounds))],
    Med = fun(L) -> lists:nth((length(L) + 1) div 2, lists:sort(L)) end,
    Bs = Med([B || {B, _} <- Results]),
    P1 = Med([P || {_, P} <- Results]),
    io:format("~b connections x ~b queries a run: ~ts~n",
              [maps:get(conns, Cfg), maps:get(count, Cfg), Query]),
    io:format("beamscale mysql kind: ~.2f us CPU/query (median; rounds ~ts)~n",
              [Bs, fmt([B || {B, _} <- Results])]),
    io:format("p1_mysql_conn loop:   ~.2f us CPU/query (median; rounds ~ts)~n",
              [P1, fmt([P || {_, P} <- Results])]),
    io:format("ratio beamscale/p1_mysql: ~.3f (goal <= 1.0)~n", [Bs / P1]);
main(_) ->
    io:format(standard_error, "usage: see the comment at the top of this file~n", []),
    halt(2).

fmt(L) -> lists:join(" ", [io_lib:format("~.2f", [X]) || X <- L]).

%% One round: which side goes first alternates, so a drift in the host's load hits both alike.
round(I, Cfg) when I rem 2 =:= 1 ->
    B = cpu_per_query(fun beamscale/1, Cfg),
    {B, cpu_per_query(fun p1/1, Cfg)};
round(_, Cfg) ->
    P = cpu_per_query(fun p1/1, Cfg),
    {cpu_per_query(fun beamscale/1, Cfg), P}.

cpu_per_query(Run, #{conns := N, count := C, tck := Tck} = Cfg) ->
    erlang:garbage_collect(),
    T0 = cpu_ticks(),
    ok = Run(Cfg),
    (cpu_ticks() - T0) * 1.0e6 / Tck / (N * C).

cpu_ticks() ->
    {ok, Stat} = file:read_file("/proc/self/stat"),
    %% After the command's name (in parentheses, which may hold blanks): fields 3 onwards;
    %% utime and stime are fields 14 and 15.
    [_, After] = binary:split(Stat, <<") ">>),
    Fields = binary:split(After, <<" ">>, [global]),
    binary_to_integer(lists:nth(12, Fields)) + binary_to_integer(lists:nth(13, Fields)).

%% beamscale: `Conns' users arriving at once, each logging in, sending `Count' queries and
%% closing; every query must succeed.
beamscale(#{host := H, port := P, user := U, password := Pw, db := D, conns := N, count := C,
            'query' := Q}) ->
    Text = io_lib:format(
             "{targets, [{db, #{address => \"~s:~b\"}}]}.~n"
             "{phases, [{p, #{duration_s => 1, rate => 1000, max_users => ~b}}]}.~n"
             "{drain_s, 600}.~n{time_limit_s, 1200}.~n"
             "{sessions, [{s, #{steps => [{mysql, #{type => connect, user => ~tp, password => ~tp,"
             " database => ~tp}}, {loop, ~b, [{mysql, #{type => sql, 'query' => ~tp}}]},"
             " {mysql, #{type => close}}]}}]}.~n", [H, P, N, U, Pw, D, C, Q]),
    {ok, Entries} = beamscale_format_terms:parse(lists:flatten(Text)),
    {ok, S} = beamscale_load_scenario:check("bench", Entries),
    {ok, #{total := T}} = beamscale_load_run:run(S, maps:get(targets, S), #{seed => 1}),
    Want = N * (C + 2),
    case {maps:get(requests, T), maps:get(errors, T)} of
        {Want, 0} -> ok;
        Got -> error({beamscale, {requests_errors, Got}, {expected, Want, 0}})
    end.

%% p1_mysql: `Conns' processes, each with its connection, sending `Count' queries one after
%% the other.
p1(#{host := H, port := P, user := U, password := Pw, db := D, conns := N, count := C,
     'query' := Q}) ->
    Quiet = fun(_Level, _Format, _Args) -> ok end,
    Parent = self(),
    Pids = [spawn_link(fun() ->
                               {ok, Conn} = p1_mysql_conn:start(H, P, U, Pw, D,
                                                                ?CONNECT_TIMEOUT_MS, Quiet),
                               [{data, _} = p1_mysql_conn:fetch(Conn, Q, self(),
                                                                ?QUERY_TIMEOUT_MS)
                                || _ <- lists:seq(1, C)],
                               p1_mysql_conn:stop(Conn),
                               Parent ! {done, self()}
                       end) || _ <- lists:seq(1, N)],
    [receive {done, Pid} -> ok end || Pid <- Pids],
    ok.
