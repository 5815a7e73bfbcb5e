#!/usr/bin/env escript
%%! -pa _build/default/lib/beamscale_stats/ebin
%% The cost of one beamscale_stats_hist:record/2 against one bare atomics:add/3, measured side by side
%% in one run. Run from the repository root after `rebar3 compile':
%%   escript bench/hist_record.escript
-mode(compile).

-define(N, 2000000).
-define(ROUNDS, 5).

main(_) ->
    H = beamscale_stats_hist:new(),
    A = atomics:new(1, []),
    %% Latency-like values: mostly 100 µs .. 10 ms.
    Values = list_to_tuple([100 + rand:uniform(10000) || _ <- lists:seq(1, 1024)]),
    Results = [{time(fun() -> rec(H, Values, ?N) end), time(fun() -> add(A, Values, ?N) end),
                time(fun() -> loop(Values, ?N) end)} || _ <- lists:seq(1, ?ROUNDS)],
    %% The median round, minus the cost of the bare loop that both share.
    Med = fun(L) -> lists:nth((length(L) + 1) div 2, lists:sort(L)) end,
    Loop = Med([L || {_, _, L} <- Results]),
    Rec = Med([R || {R, _, _} <- Results]) - Loop,
    Add = Med([D || {_, D, _} <- Results]) - Loop,
    io:format("beamscale_stats_hist:record/2  ~6.1f ns~natomics:add/3          ~6.1f ns~n"
              "ratio record/add        ~6.2f   (goal: record under 100 ns)~n",
              [Rec, Add, Rec / Add]).

time(F) ->
    T0 = erlang:monotonic_time(nanosecond),
    F(),
    (erlang:monotonic_time(nanosecond) - T0) / ?N.

rec(_H, _V, 0) -> ok;
rec(H, V, N) -> beamscale_stats_hist:record(H, element((N band 1023) + 1, V)), rec(H, V, N - 1).

add(_A, _V, 0) -> ok;
add(A, V, N) -> atomics:add(A, 1, element((N band 1023) + 1, V)), add(A, V, N - 1).

loop(_V, 0) -> ok;
loop(V, N) -> _ = element((N band 1023) + 1, V), loop(V, N - 1).
