-module(beamscale_loadtest_ctl_tests).
-include_lib("eunit/include/eunit.hrl").

-define(C, beamscale_loadtest_ctl).

%% `users N' (no sign) sets an externally_controlled phase's users; signed ones move users.
parse_test() ->
    ?assertEqual({ok, {set_users, 8}}, ?C:parse(<<"users 8">>)),
    ?assertEqual({ok, {set_users, 0}}, ?C:parse(<<" users 0\n">>)),
    ?assertEqual({ok, {users, 5}}, ?C:parse(<<"users +5">>)),
    ?assertEqual({ok, {users, -2}}, ?C:parse(<<"users -2">>)),
    ?assertEqual({ok, {rate, 40}}, ?C:parse(<<"rate 40">>)),
    [?assertEqual(error, ?C:parse(B))
     || B <- [<<"users">>, <<"users +0">>, <<"users eight">>, <<"users 2.5">>, <<"rate 0">>]].
