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
