%% The Mnesia target on a real peer node, in a directory under priv_dir: writes and reads in
%% transactions and dirty, the settings reach Mnesia, and the table reopens with its records.
-module(beamscale_target_mnesia_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([write_and_read/1, reopen/1, dir_in_use/1]).
-export([write_and_read/0, reopen/0, dir_in_use/0]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [write_and_read, reopen, dir_in_use].

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

%% Two nodes on one directory: the second is refused at once, naming the holder, and the files
%% are left alone; once the holder is gone, its schema is said to be another node's.
dir_in_use() -> [{doc, "A Mnesia directory held by another node, or left by one: refused."}].
dir_in_use(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "mnesia_SUITE_in_use"),
    {ok, #{node := First} = H1} = beamscale_target_peer:start("mnesia"),
    {ok, #{node := Second} = H2} = beamscale_target_peer:start("mnesia"),
    Call = fun(Node, F, A) -> erpc:call(Node, beamscale_target_mnesia, F, A, 60000) end,
    try
        {ok, #{records := 0}} = Call(First, start, [#{dir => Dir}]),
        {ok, #{written := 10}} = Call(First, write, [10]),
        {error, {beamscale_target_mnesia, {in_use, Dir, _}} = E} =
            Call(Second, start, [#{dir => Dir}]),
        Text = lists:flatten(beamscale_target_mnesia:format_error(element(2, E))),
        ct:pal("~ts", [Text]),
        ?assertNotEqual(nomatch, string:find(Text, atom_to_list(First))),
        ?assertEqual(no, erpc:call(Second, mnesia, system_info, [is_running])),
        %% The holder still works on its files.
        {ok, #{written := 10}} = Call(First, write, [10]),
        %% The holder killed (its lock stays, stale): its schema is not the second node's.
        beamscale_target_peer:stop(H1),
        gone(maps:get(os_pid, H1), 100),
        T0 = erlang:monotonic_time(millisecond),
        ?assertMatch({error, {beamscale_target_mnesia, {foreign_schema, Dir, [First]}}},
                     Call(Second, start, [#{dir => Dir}])),
        %% At once, not after the table timeout (30 s).
        ?assert(erlang:monotonic_time(millisecond) - T0 < 20000)
    after
        [catch beamscale_target_peer:stop(H) || H <- [H1, H2]]
    end.

%% Wait (100 ms a try) until an OS process has ended (gone, or a zombie).
gone(_OsPid, 0) -> ct:fail(still_running);
gone(OsPid, Tries) ->
    case file:read_file(["/proc/", OsPid, "/stat"]) of
        {ok, Stat} ->
            [_, <<State, _/binary>>] = string:split(Stat, ") "),
            [begin timer:sleep(100), gone(OsPid, Tries - 1) end || State =/= $Z],
            ok;
        {error, _} -> ok
    end.
