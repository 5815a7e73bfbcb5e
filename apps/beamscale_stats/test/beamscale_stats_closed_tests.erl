-module(beamscale_stats_closed_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% Run a closed search against a throughput function of the users; returns the outcome and the
%% numbers of users run.
search(Opts, PerS) -> search(beamscale_stats_closed:new(Opts), PerS, []).

search(St, PerS, Ran) when length(Ran) < 100 ->
    case beamscale_stats_closed:next(St) of
        {done, Out} -> {Out, lists:reverse(Ran)};
        {run, N} ->
            {P, Held} = PerS(N),
            search(beamscale_stats_closed:record(St, N, P, Held), PerS, [N | Ran])
    end.

%% Throughput rising with the users up to 4, flat after: the peak is at 4, found after two
%% levels that gave no more.
peaked_test() ->
    {Out, Ran} = search(#{}, fun(N) -> {50.0 * min(N, 4), true} end),
    ?assertEqual([1, 2, 4, 8, 16], Ran),
    ?assertEqual(#{peak_users => 4, peak_per_s => 200.0, why => peaked}, Out).

%% A rise within the gain does not move the peak; the factor is rounded, at least one more.
gain_and_factor_test() ->
    {Out, Ran} = search(#{factor => 1.2}, fun(N) -> {100.0 + N, true} end),
    ?assertEqual([1, 2, 3], Ran),
    ?assertMatch(#{peak_users := 1, why := peaked}, Out).

errors_and_limits_test() ->
    ?assertMatch({#{peak_users := 2, why := errors}, [1, 2, 4]},
                 search(#{}, fun(N) -> {10.0 * N, N < 4} end)),
    ?assertMatch({#{peak_users := none, why := below_start}, [1]},
                 search(#{}, fun(_) -> {1.0, false} end)),
    ?assertMatch({#{peak_users := 5, why := max_users}, [1, 2, 4, 5]},
                 search(#{max_users => 5}, fun(N) -> {10.0 * N, true} end)),
    St = beamscale_stats_closed:record(beamscale_stats_closed:new(#{}), 1, 3.0, true),
    ?assertEqual({done, #{peak_users => 1, peak_per_s => 3.0, why => budget}},
                 beamscale_stats_closed:next(beamscale_stats_closed:stop(St))).

%% Replaying an earlier run's levels continues the same search; another start is refused.
replay_test() ->
    PerS = fun(N) -> {50.0 * min(N, 4), true} end,
    {Out, Ran} = search(#{}, PerS),
    {ok, St} = beamscale_stats_closed:replay(beamscale_stats_closed:new(#{}),
                                             [{N, element(1, PerS(N)), true}
                                              || N <- lists:sublist(Ran, 3)]),
    ?assertEqual({Out, lists:nthtail(3, Ran)}, search(St, PerS, [])),
    ?assertEqual({error, {mismatch, 1, 2}},
                 beamscale_stats_closed:replay(beamscale_stats_closed:new(#{}), [{2, 1.0, true}])).

%% For a throughput that rises to a peak at some P users and stays flat, the search ends with
%% the peak's throughput, at P users or within one factor step above it.
prop_finds_plateau() ->
    ?FORALL({P, Rate}, {range(1, 500), range(1, 10000)},
            begin
                {#{peak_users := N, peak_per_s := T, why := Why}, _} =
                    search(#{}, fun(U) -> {float(Rate * min(U, P)), true} end),
                Why =:= peaked andalso T >= 0.95 * Rate * P andalso N >= P div 2 andalso
                    N =< 2 * P
            end).

plateau_test_() ->
    {timeout, 60, ?_assert(proper:quickcheck(prop_finds_plateau(), [{numtests, 300}, quiet]))}.
