%% Shares of a load over agents: together they offer the whole load.
-module(beamscale_load_agent_tests).

-include_lib("eunit/include/eunit.hrl").

scenario(Phases) -> #{phases => Phases}.

share_sums_test_() ->
    S = scenario([#{name => a, duration_s => 1, rate => 100.0, max_users => 7},
                  #{name => b, duration_s => 2, rate => 30.0, max_users => infinity}]),
    [begin
         Shares = [beamscale_load_agent:share(S, I, Ws) || I <- lists:seq(1, length(Ws))],
         Phase = fun(Name, Sh) -> hd([P || #{name := X} = P <- maps:get(phases, Sh), X =:= Name])
                 end,
         ?_test(begin
                    ?assertEqual(100.0, lists:sum([maps:get(rate, Phase(a, Sh)) || Sh <- Shares])),
                    ?assertEqual(7, lists:sum([maps:get(max_users, Phase(a, Sh)) || Sh <- Shares])),
                    ?assertEqual([infinity], lists:usort([maps:get(max_users, Phase(b, Sh))
                                                          || Sh <- Shares]))
                end)
     end || Ws <- [[1], [1, 1], [1, 1, 1], lists:duplicate(10, 1), [3, 1], [0.5, 2, 1.5]]].

%% Tsung's weights: a client of weight 3 gets three times the arrivals of one of weight 1.
weighted_share_test() ->
    S = scenario([#{name => a, duration_s => 1, rate => 100.0, max_users => 10}]),
    [#{rate := R1, max_users := M1}] = maps:get(phases, beamscale_load_agent:share(S, 1, [3, 1])),
    [#{rate := R2, max_users := M2}] = maps:get(phases, beamscale_load_agent:share(S, 2, [3, 1])),
    ?assertEqual({75.0, 25.0}, {R1, R2}),
    ?assertEqual({8, 2}, {M1, M2}).
