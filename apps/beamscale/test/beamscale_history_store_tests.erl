%% The history store: appends numbered records, refuses overwrites and a second writer, reads
%% past a crashed write, refuses what is not a record.
-module(beamscale_history_store_tests).
-include_lib("eunit/include/eunit.hrl").

-define(S, beamscale_history_store).

tmp() ->
    Dir = filename:join(["/tmp", "beamscale-history-tests-" ++ os:getpid() ++ "-"
                         ++ integer_to_list(erlang:unique_integer([positive]))]),
    ok = filelib:ensure_path(Dir),
    Dir.

rec(Commit, Run) ->
    #{<<"commit">> => Commit, <<"run">> => Run,
      <<"entries">> => [#{<<"benchmark">> => <<"b">>, <<"metric">> => <<"median">>,
                          <<"value">> => 1.5}]}.

with_store(F) ->
    Dir = tmp(),
    try F(filename:join(Dir, "store"))
    after os:cmd("rm -rf '" ++ Dir ++ "'")
    end.

append_numbers_records_test() ->
    with_store(fun(St) ->
        {ok, [F1]} = ?S:append(St, [rec(<<"c1">>, <<"r">>)]),
        {ok, [F2, F3]} = ?S:append(St, [rec(<<"c2">>, <<"r">>), rec(<<"c2">>, <<"r-2">>)]),
        ?assertEqual(["00000001-c1-r.json", "00000002-c2-r.json", "00000003-c2-r-2.json"],
                     [filename:basename(F) || F <- [F1, F2, F3]]),
        {ok, Rs} = ?S:records(St),
        ?assertEqual([1, 2, 3], [S || #{<<"seq">> := S} <- Rs]),
        ?assertEqual([1.5], [V || #{<<"entries">> := [#{<<"value">> := V}]} <- tl(tl(Rs))]),
        ?assertNot(filelib:is_regular(filename:join(St, "lock")))
    end).

never_overwrites_test() ->
    with_store(fun(St) ->
        {ok, _} = ?S:append(St, [rec(<<"c1">>, <<"r">>)]),
        ?assertMatch({error, {?S, {already_recorded, "" ++ _}}},
                     ?S:append(St, [rec(<<"c2">>, <<"x">>), rec(<<"c1">>, <<"r">>)])),
        %% Nothing of the refused append was written, not even its first record.
        {ok, Rs} = ?S:records(St),
        ?assertEqual(1, length(Rs)),
        ?assertMatch({error, {?S, {already_recorded, _}}},
                     ?S:append(St, [rec(<<"c3">>, <<"y">>), rec(<<"c3">>, <<"y">>)]))
    end).

second_writer_refused_test() ->
    with_store(fun(St) ->
        {ok, _} = ?S:append(St, [rec(<<"c1">>, <<"r">>)]),
        Lock = filename:join(St, "lock"),
        %% Another live emulator holds the lock, as a writer in another process would.
        {Port, Other} = live_beam_not_me(),
        ok = file:write_file(Lock, [Other, " another writer"]),
        try
            ?assertMatch({error, {?S, {locked, _, "another writer"}}},
                         ?S:append(St, [rec(<<"c2">>, <<"r">>)]))
        after
            _ = os:cmd("kill " ++ Other),
            catch port_close(Port)
        end,
        ok = file:delete(Lock),
        ?assertMatch({ok, [_]}, ?S:append(St, [rec(<<"c2">>, <<"r">>)]))
    end).

crash_mid_write_test() ->
    with_store(fun(St) ->
        {ok, _} = ?S:append(St, [rec(<<"c1">>, <<"r">>)]),
        Tmp = filename:join([St, "records", ".tmp-00000002-c2-r.json"]),
        ok = file:write_file(Tmp, <<"{\"seq\":2,">>),
        ?assertEqual([Tmp], ?S:leftovers(St)),
        ?assertMatch({ok, [#{<<"seq">> := 1}]}, ?S:records(St)),
        ?assertMatch({ok, [_]}, ?S:append(St, [rec(<<"c2">>, <<"r">>)])),
        ?assertMatch({ok, [_, #{<<"seq">> := 2}]}, ?S:records(St))
    end).

refuses_what_is_not_a_record_test() ->
    with_store(fun(St) ->
        ?assertMatch({error, {?S, {not_a_store, _}}}, ?S:records(St)),
        {ok, _} = ?S:append(St, [rec(<<"c1">>, <<"r">>)]),
        Bad = filename:join([St, "records", "00000009-x-y.json"]),
        ok = file:write_file(Bad, <<"[1,2]">>),
        {error, {?S, {bad_record, Bad}} = E} = ?S:records(St),
        ?assertMatch({match, _}, re:run(?S:format_error(element(2, E)), "not a history record"))
    end).

%% The OS pid of a live emulator other than this one: a child `erl' kept alive meanwhile.
live_beam_not_me() ->
    Port = open_port({spawn_executable, os:find_executable("erl")},
                     [{args, ["-noshell", "-eval", "io:format(\"~s~n\", [os:getpid()]), "
                                                   "timer:sleep(20000), halt()."]},
                      {line, 100}]),
    receive {Port, {data, {eol, Pid}}} -> {Port, Pid} after 30000 -> error(no_child) end.
