%% The Mnesia target on a real peer node, in a directory under priv_dir: writes and reads in
%% transactions and dirty, the settings reach Mnesia, and the table reopens with its records.
-module(beamscale_target_mnesia_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([write_and_read/1, reopen/1]).
-export([write_and_read/0, reopen/0]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [write_and_read, reopen].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

write_and_read() -> [{doc, "Mnesia target: writes and reads both ways, settings applied."}].
write_and_read(Config) ->
    {ok, #{node := Node} = H} = beamscale_target_peer:start("mnesia"),
    try
        Dir = filename:join(?config(priv_dir, Config), "mnesia1"),
        Call = fun(F, A) -> erpc:call(Node, beamscale_target_mnesia, F, A, 30000) end,
        ?assertMatch({ok, #{records := 0}},
                     Call(start, [#{dir => Dir, dump_log_write_threshold => 5000,
                                    dc_dump_limit => 40}])),
        ?assertEqual(5000, erpc:call(Node, mnesia, system_info, [dump_log_write_threshold])),
        ?assertEqual(40, erpc:call(Node, mnesia, system_info, [dc_dump_limit])),
        ?assertEqual(disc_copies, erpc:call(Node, mnesia, table_info, [subscriber, storage_type])),
        ?assertEqual({ok, #{written => 300}}, Call(write, [300])),
        ?assertEqual({ok, #{written => 200}}, Call(write, [200, async_dirty])),
        ?assertEqual({ok, #{read => 400, found => 400}}, Call(read, [400])),
        ?assertEqual({ok, #{read => 400, found => 400}}, Call(read, [400, async_dirty])),
        ?assertEqual(500, erpc:call(Node, mnesia, table_info, [subscriber, size])),
        [Rec] = erpc:call(Node, mnesia, dirty_read, [subscriber, <<"240010000000007">>]),
        ?assertEqual(21, tuple_size(Rec))
    after
        beamscale_target_peer:stop(H)
    end.

%% Stop Mnesia and start it again on the same directory: the records are there, new keys follow.
reopen() -> [{doc, "Mnesia restarted on its directory keeps its records."}].
reopen(Config) ->
    {ok, #{node := Node} = H} = beamscale_target_peer:start("mnesia"),
    try
        Dir = filename:join(?config(priv_dir, Config), "mnesia2"),
        Call = fun(F, A) -> erpc:call(Node, beamscale_target_mnesia, F, A, 30000) end,
        {ok, #{records := 0}} = Call(start, [#{dir => Dir}]),
        {ok, #{written := 100}} = Call(write, [100]),
        ok = Call(stop, []),
        ?assertMatch({ok, #{records := 100}}, Call(start, [#{dir => Dir}])),
        {ok, #{written := 50}} = Call(write, [50]),
        ?assertEqual(150, erpc:call(Node, mnesia, table_info, [subscriber, size])),
        ?assertEqual({ok, #{read => 50, found => 50}}, Call(read, [50, async_dirty]))
    after
        beamscale_target_peer:stop(H)
    end.
