%% The pure random parts of a load: Poisson arrivals, think times, weights.
-module(beamscale_load_arrival_tests).

-include_lib("eunit/include/eunit.hrl").

rand0() -> rand:seed_s(exsss, {1, 2, 3}).

%% 100 users/s over 600 s: 60000 expected, a Poisson count has sd ~245; 2 % is > 4 sd.
poisson_rate_test() ->
    Times = beamscale_load_arrival:schedule(100.0, 600, rand0()),
    ?assert(abs(length(Times) - 60000) < 1200),
    ?assertEqual(Times, lists:sort(Times)),
    %% Exponential gaps: mean 10 ms, and about 1/e of them longer than the mean.
    Gaps = [B - A || {A, B} <- lists:zip(lists:droplast(Times), tl(Times))],
    Mean = lists:sum(Gaps) / length(Gaps),
    ?assert(abs(Mean - 0.01) < 0.0003),
    Long = length([G || G <- Gaps, G > 0.01]) / length(Gaps),
    ?assert(abs(Long - math:exp(-1)) < 0.01).

think_test_() ->
    Draw = fun(D) -> element(1, lists:mapfoldl(fun(_, R) -> beamscale_load_arrival:think(D, R) end,
                                                rand0(), lists:seq(1, 20000))) end,
    Mean = fun(L) -> lists:sum(L) / length(L) end,
    [?_assertEqual([7.0, 7.0], lists:sublist(Draw({constant, 7}), 2)),
     ?_assert(abs(Mean(Draw({exponential, 10})) - 10) < 0.3),
     ?_assert(lists:all(fun(X) -> X >= 2 andalso X =< 4 end, Draw({uniform, 2, 4}))),
     ?_assert(abs(Mean(Draw({uniform, 2, 4})) - 3) < 0.05),
     ?_assertEqual({ok, {constant, 5}}, beamscale_load_arrival:check_dist(5)),
     ?_assertEqual(error, beamscale_load_arrival:check_dist({uniform, 4, 2}))].

weights_test() ->
    Items = [#{name => a, weight => 1}, #{name => b, weight => 3}],
    {Picks, _} = lists:mapfoldl(fun(_, R) -> beamscale_load_arrival:pick(Items, R) end, rand0(),
                                lists:seq(1, 20000)),
    B = length([x || #{name := b} <- Picks]) / 20000,
    ?assert(abs(B - 0.75) < 0.02).
