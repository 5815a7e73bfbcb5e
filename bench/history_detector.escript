#!/usr/bin/env escript
%%! -pa _build/default/lib/beamscale_stats/ebin -pa _build/default/lib/beamscale_format/ebin
%% bench/history_detector.sh's second half: histories resampled from two measured runs' launches,
%% and the detector's answers on them (see the script).
%% A run of a history is PER_RUN launches (the CI recipe's `--launches 3'): its value the median
%% of PER_RUN launch medians drawn from the measured ones.
%% CLOCK instructions: a launch's figure is its least count of instructions.csv (as `bench'
%% takes it) in place of its median time.
%%   escript bench/history_detector.escript SAME_RUN SLOW_RUN HISTORIES BEFORE AFTER PER_RUN
%%                                          [time|instructions]
-mode(compile).

main(["gauss", R, H]) -> gauss(list_to_float(R), list_to_integer(H));
main([Same, Slow, H, B, A, K]) -> main([Same, Slow, H, B, A, K, "time"]);
main([Same, Slow, H, B, A, K, Clock]) when Clock =:= "time"; Clock =:= "instructions" ->
    [Histories, Before, After, PerRun] = [list_to_integer(X) || X <- [H, B, A, K]],
    put(per_run, PerRun),
    put(clock, Clock),
    {SameMeds, SlowMeds} = {launch_medians(Same), launch_medians(Slow)},
    io:format("launch figures (~s): identical ~b (median ~.4f, sd ~.4f %), slow ~b (median ~.4f,"
              " ~.2f % more)~n", [Clock, length(SameMeds), median(SameMeds),
                                  rsd(SameMeds) * 100, length(SlowMeds), median(SlowMeds),
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
    %% The time clock's goal is 9 of 10; the instruction clock's (a 2 % step) 10 of 10.
    {Goal, Tenths} = case Clock of "time" -> {"9 of 10", 9}; _ -> {"10 of 10", 10} end,
    io:format("exactly one change point at run ~b +/- 1: ~b of ~b histories (goal: ~s)~n",
              [Before + 1, Hit, Histories, Goal]),
    io:format("no change point on identical code: ~b of ~b histories (goal: ~s)~n",
              [Quiet, Histories, Goal]),
    halt(case Hit * 10 >= Tenths * Histories andalso Quiet * 10 >= Tenths * Histories of
             true -> 0;
             false -> 1
         end);
main(_) ->
    io:format(standard_error, "usage: history_detector.escript SAME SLOW HISTORIES BEFORE "
                              "AFTER PER_RUN~n", []),
    halt(2).

%% `gauss RATIO HISTORIES': the same counts on synthetic histories, 30 runs then 30 a step of 1
%% higher, each run's noise normal of sd RATIO (the noise-to-step ratio), seeded: where the
%% detector's placement of a step within +/- 1 run stops, apart from any host.
gauss(Ratio, Histories) ->
    Run = fun(Mean, S) -> {Z, S1} = rand:normal_s(S), {100 + Mean + Ratio * Z, S1} end,
    Series = fun(Means, S) -> lists:mapfoldl(Run, S, Means) end,
    {Hits, S1} = lists:mapfoldl(fun(_, S) ->
                                        {X, Sa} = Series([0 || _ <- lists:seq(1, 30)] ++
                                                             [1 || _ <- lists:seq(1, 30)], S),
                                        {case changes(X) of [C] when abs(C - 30) =< 1 -> 1;
                                                            _ -> 0 end, Sa}
                                end, rand:seed_s(exsss, {52, 31, 61}), lists:seq(1, Histories)),
    {Quiet, _} = lists:mapfoldl(fun(_, S) ->
                                        {X, Sa} = Series([0 || _ <- lists:seq(1, 60)], S),
                                        {case changes(X) of [] -> 1; _ -> 0 end, Sa}
                                end, S1, lists:seq(1, Histories)),
    io:format("noise/step ~.2f: one change at run 31 +/- 1 in ~b of ~b, none on A/A in ~b of ~b~n",
              [Ratio, lists:sum(Hits), Histories, lists:sum(Quiet), Histories]).

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

%% Each launch's median of measurements.csv's seconds, or its least of instructions.csv's counts,
%% over the run directories in `Dirs' (comma-separated: the chunks measured in turn).
launch_medians(Dirs) ->
    lists:append([dir_launch_medians(D) || D <- string:split(Dirs, ",", all)]).

dir_launch_medians(Dir) ->
    {File, Col, Of} = case get(clock) of
                          "time" -> {"measurements.csv", <<"seconds">>, fun median/1};
                          "instructions" -> {"instructions.csv", <<"instructions">>,
                                             fun lists:min/1}
                      end,
    {ok, Bin} = file:read_file(filename:join(Dir, File)),
    {[Cols | Rows], _} = beamscale_format_csv:parse(Bin),
    {Sec, Launch} = {index(Col, Cols), index(<<"launch">>, Cols)},
    By = lists:foldl(fun(F, M) ->
                             X = beamscale_format_csv:number(lists:nth(Sec, F)),
                             maps:update_with(lists:nth(Launch, F), fun(Xs) -> [X | Xs] end,
                                              [X], M)
                     end, #{}, [R || R <- Rows, length(R) =:= length(Cols)]),
    [Of(Xs) || {_, Xs} <- lists:sort(maps:to_list(By))].

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
