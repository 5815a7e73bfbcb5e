#!/usr/bin/env escript
%%! +sbtu +A1 +sbwt none +sbwtdcpu none +sbwtdio none
%% Client cost per request of dynamic HTTP requests (one `%%_u%%' substitution in the path and
%% one regular-expression extraction from the body) against the same requests without them, in
%% this one emulator (no command start-up in either figure). Run by bench/dyn_vs_static.sh
%% (which starts the nginx); from the repository's root:
%%   escript bench/dyn_vs_static.escript PORT USERS COUNT ROUNDS CLK_TCK
%% Each side runs twice a round: USERS users sending COUNT requests each, and the same with
%% one request each; the difference over USERS x (COUNT - 1) requests is the cost per request
%% without the run's own set-up (its processes, metrics and report). Cost: this OS process's
%% user + system CPU (/proc/self/stat) and the emulator's reductions, which a loaded host does
%% not swing. The emulator flags are the beamscale command's scheduler flags.
-mode(compile).

main([Port, Users, Count, Rounds, Tck]) ->
    ok = code:add_pathsa([filename:join(["_build/default/lib", A, "ebin"])
                          || A <- ["beamscale_load", "beamscale_stats", "beamscale_format"]]),
    Cfg = #{port => list_to_integer(Port), users => list_to_integer(Users),
            count => list_to_integer(Count), tck => list_to_integer(Tck)},
    %% A round not counted: code loaded, the first connections.
    _ = round(1, Cfg#{count := min(100, maps:get(count, Cfg))}),
    Results = [round(I, Cfg) || I <- lists:seq(1, list_to_integer(Rounds))],
    io:format("requests per run: ~b (~b users x ~b), minus a run of 1 request per user~n",
              [maps:get(users, Cfg) * maps:get(count, Cfg), maps:get(users, Cfg),
               maps:get(count, Cfg)]),
    {SC, SR} = side("static: ", [S || {S, _} <- Results]),
    {DC, DR} = side("dynamic:", [D || {_, D} <- Results]),
    io:format("ratio dynamic/static: ~.3f CPU, ~.3f reductions (goal <= 1.2)~n",
              [DC / SC, DR / SR]);
main(_) ->
    io:format(standard_error, "usage: see the comment at the top of this file~n", []),
    halt(2).

side(Name, Costs) ->
    Cpu = median([C || {C, _} <- Costs]),
    Red = median([R || {_, R} <- Costs]),
    io:format("~s ~.2f us CPU/request (median; rounds ~ts), ~.1f reductions/request "
              "(median; rounds ~ts)~n",
              [Name, Cpu, fmt([C || {C, _} <- Costs]), Red, fmt([R || {_, R} <- Costs])]),
    {Cpu, Red}.

median(L) -> lists:nth((length(L) + 1) div 2, lists:sort(L)).

fmt(L) -> lists:join(" ", [io_lib:format("~.2f", [X]) || X <- L]).

%% One round: which side goes first alternates, so a drift in the host's load hits both alike.
round(I, Cfg) when I rem 2 =:= 1 ->
    S = per_request(static, Cfg),
    {S, per_request(dynamic, Cfg)};
round(_, Cfg) ->
    D = per_request(dynamic, Cfg),
    {per_request(static, Cfg), D}.

per_request(Side, #{users := N, count := C} = Cfg) ->
    {Cpu, Red} = cost(Side, Cfg),
    {Cpu1, Red1} = cost(Side, Cfg#{count := 1}),
    Requests = N * (C - 1),
    {(Cpu - Cpu1) / Requests, (Red - Red1) / Requests}.

%% CPU microseconds and the emulator's reductions of one run.
cost(Side, #{tck := Tck} = Cfg) ->
    erlang:garbage_collect(),
    T0 = cpu_ticks(),
    {R0, _} = erlang:statistics(exact_reductions),
    ok = run(Side, Cfg),
    {R1, _} = erlang:statistics(exact_reductions),
    {(cpu_ticks() - T0) * 1.0e6 / Tck, R1 - R0}.

cpu_ticks() ->
    {ok, Stat} = file:read_file("/proc/self/stat"),
    %% After the command's name (in parentheses, which may hold blanks): fields 3 onwards;
    %% utime and stime are fields 14 and 15.
    [_, After] = binary:split(Stat, <<") ">>),
    Fields = binary:split(After, <<" ">>, [global]),
    binary_to_integer(lists:nth(12, Fields)) + binary_to_integer(lists:nth(13, Fields)).

step(static) -> "{http, #{path => \"/p?u=1\"}}";
step(dynamic) ->
    "{http, #{path => \"/p?u=%%_u%%\", extract => [{re, t, \"<title>(.*)</title>\"}]}}".

%% `Users' users arriving within a second, each on its one keep-alive connection sending
%% `Count' requests; every request must succeed.
run(Side, #{port := P, users := N, count := C}) ->
    Text = io_lib:format(
             "{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.~n"
             "{phases, [{run, #{duration_s => 1, rate => 1000, max_users => ~b}}]}.~n"
             "{sessions, [{s, #{steps => [{setvars, [u], user_number}, {loop, ~b, [~s]}]}}]}.~n"
             "{drain_s, 600}.~n{time_limit_s, 1200}.~n", [P, N, C, step(Side)]),
    {ok, Entries} = beamscale_format_terms:parse(lists:flatten(Text)),
    {ok, S} = beamscale_load_scenario:check("bench", Entries),
    {ok, #{total := T}} = beamscale_load_run:run(S, maps:get(targets, S), #{seed => 1}),
    Want = N * C,
    case {maps:get(requests, T), maps:get(errors, T)} of
        {Want, 0} -> ok;
        Got -> error({Side, {requests_errors, Got}, {expected, Want, 0}})
    end.
