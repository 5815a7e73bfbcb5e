%% The pure workload of ets_bench: sizes, sequences, splitting, the mix of operations.
-module(beamscale_bench_ets_workload_tests).
-include_lib("eunit/include/eunit.hrl").

-define(W, beamscale_bench_ets_workload).

sizes_test() ->
    {LK, LO} = ?W:sizes(long),
    ?assertEqual({1048576, 16777216}, {LK, LO}),
    ?assertEqual(2097152, ?W:key_range(LK)),
    ?assertEqual({LK div 8, LO div 8}, ?W:sizes(intermediate)),
    ?assertEqual({LK div 64, LO div 64}, ?W:sizes(short)).

insert_keys_test() ->
    Bin = ?W:insert_keys(7, 1000),
    Keys = ?W:words(Bin),
    ?assertEqual(1000, length(Keys)),
    ?assert(lists:all(fun(K) -> K >= 1 andalso K =< 2000 end, Keys)),
    ?assertEqual(Bin, ?W:insert_keys(7, 1000)),
    ?assertNotEqual(Bin, ?W:insert_keys(8, 1000)),
    %% Drawn as rand draws them from the seed: computed here without the module.
    {Expected, _} = lists:mapfoldl(fun(_, S) -> rand:uniform_s(2000, S) end,
                                   rand:seed_s(exsss, {7, 16#e75, 1}), lists:seq(1, 1000)),
    ?assertEqual(Expected, Keys).

split_test() ->
    Bin = ?W:insert_keys(1, 1001),
    [?assertEqual(Bin, iolist_to_binary(?W:split(Bin, N))) || N <- [1, 2, 3, 7, 64]],
    Sizes = [byte_size(C) div 4 || C <- ?W:split(Bin, 7)],
    ?assertEqual(7, length(Sizes)),
    ?assert(lists:max(Sizes) - lists:min(Sizes) =< 1).

mix_test_() ->
    [?_assertEqual(#{lookup => 5000, insert => 0, delete => 0},
                   ?W:counts(?W:operations(1, 5000, 100, 100))),
     fun() ->
             #{lookup := L, insert := I, delete := D} =
                 ?W:counts(?W:operations(1, 20000, 100, 90)),
             ?assertEqual(20000, L + I + D),
             ?assert(abs(L / 20000 - 0.9) < 0.01),
             ?assert(abs(I - D) < 0.2 * (I + D))
     end,
     fun() ->
             #{insert := I, delete := D} = ?W:counts(?W:operations(1, 100000, 100, 99)),
             ?assert(I > 300 andalso D > 300)
     end].

delete_keys_test() ->
    Ins = ?W:insert_keys(3, 500),
    Ops = ?W:operations(3, 4000, 1000, 90),
    Del = ?W:words(?W:delete_keys(Ins, Ops)),
    ?assertEqual(lists:usort(Del), Del),
    ?assertEqual(lists:usort(?W:words(Ins) ++ ?W:inserted_by_access(Ops)), Del).

options_test() ->
    [?assertEqual(8, length(?W:options(T))) || T <- [set, ordered_set]],
    ?assertEqual([set, public], ?W:table_options(set, none)),
    ?assertEqual([ordered_set, public, {read_concurrency, true}, {write_concurrency, true}],
                 ?W:table_options(ordered_set, rw)),
    ?assertEqual([set, public, {read_concurrency, true},
                  {write_concurrency, {debug_hash_fixed_number_of_locks, 256}}],
                 ?W:table_options(set, {locks, 256})).
