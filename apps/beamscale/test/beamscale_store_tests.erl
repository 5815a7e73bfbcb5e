-module(beamscale_store_tests).
-include_lib("eunit/include/eunit.hrl").

-define(OLD_HEADER, "benchmark,phase,args,otp,erl_args,schedulers,nodes,iteration,seconds\n").

%% A run directory from before launches: read as it is (no launch field), and continued with
%% its rows given launch 1, its iterations still done, new rows in the same columns.
old_run_directory_test() ->
    Dir = filename:join(tmp_dir(), "old"),
    ok = filelib:ensure_path(Dir),
    File = filename:join(Dir, "measurements.csv"),
    ok = file:write_file(File, [?OLD_HEADER, "big,big,[1],default,default,1,1,1,0.5\n",
                                "big,big,[1],default,default,1,1,2,0.25\n"]),
    [Row1, _] = beamscale_store:measurements(Dir),
    ?assertNot(is_map_key(launch, Row1)),
    {ok, Store} = beamscale_store:open(Dir),
    Key = {<<"big">>, <<"[1]">>, <<"default/default/1/1">>},
    ?assert(beamscale_store:done(Store, Key, 2)),
    ?assertNot(beamscale_store:done(Store, Key, 3)),
    Store1 = beamscale_store:record(Store, Key, 3, 2, [{"big", 0.125}]),
    ok = beamscale_store:close(Store1),
    ?assertEqual([{<<"1">>, <<"1">>}, {<<"2">>, <<"1">>}, {<<"3">>, <<"2">>}],
                 [{I, L} || #{iteration := I, launch := L} <- beamscale_store:measurements(Dir)]),
    {ok, Store2} = beamscale_store:open(Dir),
    ?assert(beamscale_store:done(Store2, Key, 3)),
    ok = beamscale_store:close(Store2),
    ?assertEqual(3, length(beamscale_store:measurements(Dir))),
    ok = file:del_dir_r(filename:dirname(Dir)).

tmp_dir() ->
    Dir = string:trim(os:cmd("mktemp -d /tmp/beamscale-store-tests.XXXXXX")),
    true = filelib:is_dir(Dir),
    Dir.

%% A measurements.csv from elsewhere makes no atoms of its header: a column that is not a name
%% like ours, or too many of them, is an error naming the file (one line on the command line).
hostile_header_test() ->
    Dir = filename:join(tmp_dir(), "hostile"),
    ok = filelib:ensure_path(Dir),
    File = filename:join(Dir, "measurements.csv"),
    Atoms = erlang:system_info(atom_count),
    Many = lists:join(",", ["c" ++ integer_to_list(I) || I <- lists:seq(1, 5000)]),
    ok = file:write_file(File, [Many, "\n"]),
    ?assertError({beamscale_store, {header, File, _}}, beamscale_store:measurements(Dir)),
    ok = file:write_file(File, "benchmark,Ünïcode column\nbig,1\n"),
    ?assertError({beamscale_store, {header, File, _}}, beamscale_store:measurements(Dir)),
    ?assert(erlang:system_info(atom_count) - Atoms < 10),
    ok = file:del_dir_r(filename:dirname(Dir)).

%% Issue 55: a write that fails leaves no `.tmp' beside the file (a full disk left
%% `index.html.tmp'). Here the rename fails: the name is a directory that is not empty.
failed_write_leaves_no_tmp_test() ->
    Dir = filename:join(tmp_dir(), "failed"),
    File = filename:join(Dir, "index.html"),
    ok = filelib:ensure_path(filename:join(File, "inside")),
    ?assertError({beamscale_format_file, {write, File, _}},
                 beamscale_store:write_file(File, <<"page">>)),
    ?assertEqual([], filelib:wildcard("*.tmp", Dir)),
    ?assert(filelib:is_dir(File)),
    ok = file:del_dir_r(filename:dirname(Dir)).
