%% Shares of a load over agents: together they offer the whole load.
-module(beamscale_load_agent_tests).

-include_lib("eunit/include/eunit.hrl").

scenario(Phases) -> #{phases => Phases}.

share_sums_test_() ->
    S = scenario([#{name => a, duration_s => 1, rate => 100.0, max_users => 7},
                  #{name => b, duration_s => 2, rate => 30.0, max_users => infinity}]),
    [begin
         Shares = [beamscale_load_agent:share(S, I, N) || I <- lists:seq(1, N)],
         Phase = fun(Name, Sh) -> hd([P || #{name := X} = P <- maps:get(phases, Sh), X =:= Name])
                 end,
         ?_test(begin
                    ?assertEqual(100.0, lists:sum([maps:get(rate, Phase(a, Sh)) || Sh <- Shares])),
                    ?assertEqual(7, lists:sum([maps:get(max_users, Phase(a, Sh)) || Sh <- Shares])),
                    ?assertEqual([infinity], lists:usort([maps:get(max_users, Phase(b, Sh))
                                                          || Sh <- Shares]))
                end)
     end || N <- [1, 2, 3, 10]].
