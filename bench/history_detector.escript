#!/usr/bin/env escript
%%! -pa _build/default/lib/beamscale_stats/ebin -pa _build/default/lib/beamscale_format/ebin
%% bench/history_detector.sh's second half: histories resampled from two measured runs' launches,
%% and the detector's answers on them (see the script).
%% A run of a history is PER_RUN launches (the CI recipe's `--launches 3'): its value the median
%% of PER_RUN launch medians drawn from the measured ones.
%%   escript bench/history_detector.escript SAME_RUN SLOW_RUN HISTORIES BEFORE AFTER PER_RUN
-mode(compile).

main([Same, Slow, H, B, A, K]) ->
    [Histories, Before, After, PerRun] = [list_to_integer(X) || X <- [H, B, A, K]],
    put(per_run, PerRun),
    {SameMeds, SlowMeds} = {launch_medians(Same), launch_medians(Slow)},
    io:format("launch medians: identical ~b (median ~.4f s, sd ~.2f %), slow ~b (median ~.4f s,"
              " ~.1f % slower)~n", [length(SameMeds), median(SameMeds), rsd(SameMeds) * 100,
                              length(SlowMeds), median(SlowMeds),
                              (median(SlowMeds) / median(SameMeds) - 1) * 100]),
    S0 = rand:seed_s(exsss, {52, 31, 60}),
    {Steps, S1} = lists:mapfoldl(fun(_, S) ->
                                         {X, Sa} = draw(SameMeds, Before, S),
                                         {Y, Sb} = draw(SlowMeds, After, Sa),
                                         {changes(X ++ Y), Sb}
                                 end, S0, lists:seq(1, Histories)),
    {Flats, _} = lists:mapfoldl(fun(_, S) ->
                                        {X, Sa} = draw(SameMeds, Before + After, S),
                                        {changes(X), Sa}
                                end, S1, lists:seq(1, Histories)),
    Hit = length([C || [C] <- Steps, abs(C - Before) =< 1]),
    Quiet = length([C || [] = C <- Flats]),
    io:format("a run: the median of ~b launches drawn from those~n", [PerRun]),
    io:format("step histories (~b identical, then ~b slow): change points at ~w (0-based index;"
              " the step at ~b)~n", [Before, After, Steps, Before]),
    io:format("A/A histories (~b identical): change points at ~w~n", [Before + After, Flats]),
    io:format("exactly one change point at run ~b +/- 1: ~b of ~b histories (goal: 9 of 10)~n",
              [Before + 1, Hit, Histories]),
    io:format("no change point on identical code: ~b of ~b histories (goal: 9 of 10)~n",
              [Quiet, Histories]),
    halt(case Hit * 10 >= 9 * Histories andalso Quiet * 10 >= 9 * Histories of
             true -> 0;
             false -> 1
         end);
main(_) ->
    io:format(standard_error, "usage: history_detector.escript SAME SLOW HISTORIES BEFORE "
                              "AFTER PER_RUN~n", []),
    halt(2).

%% The change points `history show' finds, as one series of records through the same code.
changes(Values) ->
    Records = [#{<<"commit">> => integer_to_binary(I), <<"seq">> => I,
                 <<"entries">> => [#{<<"benchmark">> => <<"ci_work">>, <<"metric">> => <<"median">>,
                                     <<"value">> => V, <<"primary">> => true,
                                     <<"better">> => <<"lower">>}]}
               || {I, V} <- lists:enumerate(Values)],
    [{_, Cs}] = beamscale_stats_history:analyse(beamscale_stats_history:series(Records, #{}),
                                                #{}),
    [I || #{index := I} <- Cs].

draw(Pool, N, S0) ->
    T = list_to_tuple(Pool),
    One = fun(S) -> {K, S1} = rand:uniform_s(tuple_size(T), S), {element(K, T), S1} end,
    lists:mapfoldl(fun(_, S) ->
                           {Launches, S1} = lists:mapfoldl(fun(_, Sx) -> One(Sx) end, S,
                                                           lists:seq(1, get(per_run))),
                           {median(Launches), S1}
                   end, S0, lists:seq(1, N)).

%% Each launch's median of measurements.csv's seconds.
launch_medians(Dir) ->
    {ok, Bin} = file:read_file(filename:join(Dir, "measurements.csv")),
    {[Cols | Rows], _} = beamscale_format_csv:parse(Bin),
    {Sec, Launch} = {index(<<"seconds">>, Cols), index(<<"launch">>, Cols)},
    By = lists:foldl(fun(F, M) ->
                             X = beamscale_format_csv:number(lists:nth(Sec, F)),
                             maps:update_with(lists:nth(Launch, F), fun(Xs) -> [X | Xs] end,
                                              [X], M)
                     end, #{}, [R || R <- Rows, length(R) =:= length(Cols)]),
    [median(Xs) || {_, Xs} <- lists:sort(maps:to_list(By))].

index(K, Cols) -> length(lists:takewhile(fun(C) -> C =/= K end, Cols)) + 1.

median(Xs) ->
    S = lists:sort(Xs),
    N = length(S),
    case N rem 2 of
        1 -> lists:nth((N + 1) div 2, S);
        0 -> (lists:nth(N div 2, S) + lists:nth(N div 2 + 1, S)) / 2
    end.

rsd(Xs) ->
    M = lists:sum(Xs) / length(Xs),
    math:sqrt(lists:sum([(X - M) * (X - M) || X <- Xs]) / (length(Xs) - 1)) / M.
