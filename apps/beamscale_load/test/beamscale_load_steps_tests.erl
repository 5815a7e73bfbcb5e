%% The one walker of the step tree: every container is entered, at any depth.
-module(beamscale_load_steps_tests).
-include_lib("eunit/include/eunit.hrl").

req(N) -> {request, beamscale_load_rpc, sut, #{n => N}, 5000}.

tree() ->
    [req(0), {think, {constant, 10}},
     {loop, 2, [{transaction, t, [req(1)]}]},
     {'if', {<<"x">>, eq, 1}, [req(2), {think, {constant, 20}}]},
     {repeat, 3, [req(3)], {while, {<<"x">>, eq, 1}}},
     {for, <<"i">>, 1, 5, 2, [{dyn, #{}, req(4)}]}].

fold_sees_every_request_test() ->
    Ns = beamscale_load_steps:fold(fun({request, _, _, #{n := N}, _}, A) -> [N | A];
                                      (_, A) -> A
                                   end, [], tree()),
    ?assertEqual([0, 1, 2, 3, 4], lists:sort(Ns)).

all_puts_a_container_before_its_body_test() ->
    All = beamscale_load_steps:all([{loop, 2, [{transaction, t, [req(1)]}]}]),
    ?assertMatch([{loop, 2, _}, {transaction, t, _}, {request, _, _, #{n := 1}, _}], All).

map_drops_at_any_depth_test() ->
    NoThink = beamscale_load_steps:map(fun({think, _}) -> []; (S) -> [S] end, tree()),
    ?assertEqual([], [S || {think, _} = S <- beamscale_load_steps:all(NoThink)]),
    ?assertEqual(length(beamscale_load_steps:all(tree())) - 2,
                 length(beamscale_load_steps:all(NoThink))).

times_test() ->
    ?assertEqual(3, beamscale_load_steps:times({for, <<"i">>, 1, 5, 2, []})),
    ?assertEqual(0, beamscale_load_steps:times({for, <<"i">>, 5, 1, 1, []})),
    ?assertEqual(2, beamscale_load_steps:times({loop, 2, []})),
    ?assertEqual(1, beamscale_load_steps:times({'if', c, []})).

think_ms_counts_each_body_as_often_as_it_runs_test() ->
    %% 10 + loop 2 x 0 + if 20 + for 3 x (uniform at its max 7, exponential at its mean 4).
    Tree = tree() ++ [{for, <<"j">>, 1, 3, 1, [{think, {uniform, 1, 7}},
                                                {think, {exponential, 4}}]},
                      {think, {var, <<"t">>, 1000, constant}}],
    ?assertEqual(10 + 20 + 3 * (7 + 4), beamscale_load_steps:think_ms(Tree)),
    ?assertEqual(10, beamscale_load_steps:drain_s([[req(1)], []])),
    ?assertEqual(10 + 3, beamscale_load_steps:drain_s([[{think, {constant, 2001}}], [req(1)]])),
    ?assertEqual(3600, beamscale_load_steps:drain_s([[{loop, 100000, [{think, 1000}]}]])).
