-module(beamscale_stats_search_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% Run a search against a hold function; returns the outcome and the rates run.
search(Opts, Held) -> search(beamscale_stats_search:new(Opts), Held, [], 200).

search(_St, _Held, Ran, 0) -> {too_many_levels, lists:reverse(Ran)};
search(St, Held, Ran, N) ->
    case beamscale_stats_search:next(St) of
        {done, Outcome} -> {Outcome, lists:reverse(Ran)};
        {run, R} -> search(beamscale_stats_search:record(St, R, Held(R)), Held, [R | Ran], N - 1)
    end.

climb_then_bisect_test() ->
    {Out, Ran} = search(#{start => 10, factor => 2, tolerance => 0.05}, fun(R) -> R =< 200 end),
    ?assertEqual([10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 240.0, 200.0, 220.0, 210.0, 200.0,
                  210.0], Ran),
    ?assertEqual(#{low => 200.0, high => 210.0, why => converged}, Out).

%% A search replayed over the levels of an earlier run stopped half way continues where it was,
%% and ends where the uninterrupted search ends; a level the search would not run is refused.
replay_test() ->
    Held = fun(R) -> R =< 200 end,
    Opts = #{start => 10, factor => 2, tolerance => 0.05},
    {Out, Ran} = search(Opts, Held),
    {Half, _} = lists:split(7, Ran),
    {ok, St} = beamscale_stats_search:replay(beamscale_stats_search:new(Opts),
                                             [{R, Held(R)} || R <- Half]),
    {Out2, Rest} = search(St, Held, [], 200),
    ?assertEqual(Out, Out2),
    ?assertEqual(Ran, Half ++ Rest),
    %% Rates as levels.csv rounds them are the same rates.
    ?assertMatch({ok, _}, beamscale_stats_search:replay(beamscale_stats_search:new(#{start => 1/3}),
                                                        [{0.333, true}])),
    ?assertEqual({error, {mismatch, 10.0, 12}},
                 beamscale_stats_search:replay(beamscale_stats_search:new(Opts), [{12, true}])).

below_start_test() ->
    ?assertMatch({#{low := none, high := 10.0, why := below_start}, [10.0]},
                 search(#{start => 10}, fun(_) -> false end)).

max_rate_test() ->
    ?assertMatch({#{low := 100.0, high := none, why := max_rate}, _},
                 search(#{start => 10, max_rate => 100}, fun(_) -> true end)).

%% The low end fails on its second run: the search continues below it.
confirm_fails_test() ->
    Counter = counters:new(1, []),
    Held = fun(R) when R == 200.0 -> counters:add(Counter, 1, 1), counters:get(Counter, 1) < 2;
              (R) -> R < 200 end,
    {#{low := L, high := H, why := converged}, _} = search(#{start => 10}, Held),
    ?assert(L < 200 andalso H =< 200.0 andalso (H - L) / L =< 0.05).

%% The high end is held on its second run: the search goes on above it, and ends with both
%% ends confirmed.
confirm_high_held_test() ->
    Counter = counters:new(1, []),
    Held = fun(R) when R == 210.0 -> counters:add(Counter, 1, 1), counters:get(Counter, 1) >= 2;
              (R) -> R =< 212 end,
    {#{low := L, high := H, why := converged}, Ran} = search(#{start => 10}, Held),
    ?assertEqual({210.0, 220.0}, {L, H}),
    %% 210 not held, the low end 200 confirmed, 210 held on its rerun, [210, 220] narrow enough:
    %% both ends confirmed.
    ?assertEqual([210.0, 200.0, 210.0, 210.0, 220.0], lists:nthtail(9, Ran)).

%% The high end held on its rerun with nothing missed above it: a step of twice the tolerance
%% above it, then the climb goes on from there.
confirm_high_nothing_above_test() ->
    Counter = counters:new(1, []),
    Held = fun(R) when R == 210.0 -> counters:add(Counter, 1, 1), counters:get(Counter, 1) >= 2;
              (R) -> R =< 200 end,
    {Out, Ran} = search(#{start => 200, factor => 1.05}, Held),
    ?assertEqual([200.0, 210.0, 200.0, 210.0, 231.0, 220.5, 210.0, 220.5],
                 [round(R * 10) / 10 || R <- Ran]),
    ?assertEqual(#{low => 210.0, high => 220.5, why => converged}, Out).

%% For any capacity and any monotone hold function, the search ends with the capacity in its
%% bracket and the bracket within the tolerance.
prop_bisection_converges() ->
    ?FORALL({Cap, Start, Factor, Tol},
            {range(1, 1000000), range(1, 1000), range(11, 40), range(1, 20)},
            begin
                Opts = #{start => Start, factor => Factor / 10, tolerance => Tol / 100,
                         max_rate => 10000000},
                {Out, Ran} = search(Opts, fun(R) -> R =< Cap end),
                case Out of
                    #{why := below_start, high := H} -> Cap < Start andalso H == Start;
                    #{why := converged, low := L, high := H} ->
                        L =< Cap andalso Cap < H andalso (H - L) / L =< Tol / 100 + 1.0e-9
                            andalso length(Ran) < 100
                end
            end).

bisection_converges_test() ->
    ?assert(proper:quickcheck(prop_bisection_converges(), [{numtests, 500}, {to_file, user}])).
