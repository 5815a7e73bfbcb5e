-module(beamscale_amoc_figures_tests).
-include_lib("eunit/include/eunit.hrl").

%% One throttle over two nodes: the events of both, from the first of either to the last; a
%% node that never let one through adds nothing; a coordinator's name as text.
summary_test() ->
    A = #{t => #{released => 51, first_us => 1000000, last_us => 2000000, rate_per_s => 100.0,
                 changes => 1}},
    B = #{t => #{released => 50, first_us => 1005000, last_us => 2005000, rate_per_s => 100.0,
                 changes => 1},
          idle => #{released => 0, first_us => none, last_us => none, rate_per_s => unlimited,
                    changes => 0}},
    C = #{{chat, 1} => #{added => 5, groups => #{<<"2">> => 2}, timeout => 1, reset => 0,
                         stop => 0}},
    #{throttles := [Idle, T], coordinators := [Co]} = beamscale_amoc_figures:summary([A, B], C),
    ?assertMatch(#{name := <<"t">>, released := 101, rate_per_s := 100.0, changes := 1}, T),
    ?assertEqual(1.005, maps:get(span_s, T)),
    ?assertEqual(100 / 1.005, maps:get(achieved_per_s, T)),
    ?assertMatch(#{name := <<"idle">>, released := 0, achieved_per_s := null,
                   rate_per_s := <<"unlimited">>}, Idle),
    ?assertMatch(#{name := <<"{chat,1}">>, added := 5, groups := #{<<"2">> := 2},
                   timeouts := 1}, Co).
