%% bench's launches: each round a permutation of the points, numbered alike whatever the order,
%% the order from the seed; a point's figures over its launch medians; ratios within an input.
-module(beamscale_micro_launches_tests).
-include_lib("eunit/include/eunit.hrl").

jobs_test() ->
    Points = [{1, a}, {2, b}, {3, c}],
    Jobs = beamscale_micro_launches:jobs(Points, 4, 7),
    ?assertEqual(12, length(Jobs)),
    [?assertEqual([a, b, c], lists:sort([P || {_, L1, _, P} <- Jobs, L1 =:= L]))
     || L <- lists:seq(1, 4)],
    [?assertEqual((L - 1) * 3 + N, J) || {J, L, N, _} <- Jobs],
    ?assertEqual(Jobs, beamscale_micro_launches:jobs(Points, 4, 7)),
    %% Some seed orders a round otherwise than the points: the order is not fixed.
    ?assert(lists:any(fun(Seed) ->
                              [N || {_, _, N, _} <- beamscale_micro_launches:jobs(Points, 1, Seed)]
                                  =/= [1, 2, 3]
                      end, lists:seq(1, 20))).

row(Point, Launch, Input, Ns) ->
    #{point => Point, launch => Launch, input => Input, ns => Ns, per_call => [Ns, Ns + 1],
      words => 2.0, reductions => 1.0, label => <<"x">>}.

merge_and_ratio_test() ->
    Rows = [row(1, L, <<"i">>, 100.0 + L) || L <- [1, 2, 3]]
        ++ [row(2, L, <<"i">>, 200.0 + L) || L <- [3, 1, 2]]
        ++ [row(3, L, <<"j">>, 50.0) || L <- [1, 2, 3]],
    [A, B, C] = beamscale_micro_launches:ratios(beamscale_micro_launches:merge(Rows)),
    ?assertMatch(#{ns := 102.0, min := 101.0, max := 103.0, launches := 3}, A),
    ?assertNot(is_map_key(ratio, A)),
    #{ratio := #{ratio := R, significant := true, floor := F}} = B,
    ?assert(R > 1.9 andalso R < 2.1),
    ?assert(F > 0.0 andalso F < 0.03),
    %% Another input is its own base: no ratio to the first input's row.
    ?assertNot(is_map_key(ratio, C)).

%% Counted launches: the median of their counts, and each launch's counted samples kept in
%% launch order (compare reads them from instructions.csv).
merge_instructions_test() ->
    Rows = [(row(1, L, <<"i">>, 100.0))#{instructions => 2970.0 + L,
                                         instructions_per_call => [2970.0 + L, 2975.0 + L]}
            || L <- [2, 1, 3]],
    [#{instructions := I, launch_instructions := Is, launch_instructions_per_call := Ps}] =
        beamscale_micro_launches:merge(Rows),
    ?assertEqual(2972.0, I),
    ?assertEqual([2971.0, 2972.0, 2973.0], Is),
    ?assertEqual([[2971.0, 2976.0], [2972.0, 2977.0], [2973.0, 2978.0]], Ps).
