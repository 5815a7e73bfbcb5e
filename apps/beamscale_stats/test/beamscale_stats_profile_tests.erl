%% beamscale_stats_profile on folded stacks of a real profile: `ets_hammer' (one ETS set
%% without write_concurrency, a writer per scheduler) at 1 and 2 schedulers, the largest
%% stacks of each, recorded here by `beamscale run --profile' (perf, dwarf stacks).
-module(beamscale_stats_profile_tests).
-include_lib("eunit/include/eunit.hrl").

-define(CALL, "scheduler;global::call_light_bif_shared;ets_insert_2;").

one() ->
    folded(<<"scheduler;ets_hammer:insert/3 35\n"
             ?CALL "db_put_hash 33\n"
             ?CALL "db_put_hash;db_store_term;copy_struct_x 33\n"
             ?CALL "db_put_hash;db_store_term 14\n"
             ?CALL "db_put_hash;make_internal_hash;asm_sysvec_reschedule_ipi [k];"
             "irqentry_exit_to_user_mode [k];schedule [k];__schedule [k];"
             "finish_task_switch.isra.0 [k] 3\n"
             "scheduler;global::garbage_collect;erts_garbage_collect_nobump;[beam.smp] 3\n">>).

two() ->
    folded(<<?CALL "[beam.smp];ethr_rwmutex_rwlock;[beam.smp];ethr_event_swait;__GI_sched_yield;"
             "entry_SYSCALL_64_after_hwframe [k];do_syscall_64 [k];__x64_sys_sched_yield [k];"
             "schedule [k];__schedule [k];finish_task_switch.isra.0 [k] 54\n"
             ?CALL "[beam.smp];ethr_rwmutex_rwlock;[beam.smp];ethr_event_swait 35\n"
             ?CALL "[beam.smp];ethr_rwmutex_rwlock 14\n"
             ?CALL "[beam.smp] 5\n"
             "scheduler;ets_hammer:insert/3 3\n">>).

folded(Bin) -> beamscale_format_perf:parse_folded(Bin).

category_test() ->
    C = fun beamscale_stats_profile:category/1,
    ?assertEqual(locks, C(<<"ethr_rwmutex_rwlock">>)),
    ?assertEqual(locks, C(<<"___pthread_mutex_lock">>)),
    ?assertEqual(wait, C(<<"__GI_sched_yield">>)),
    ?assertEqual(wait, C(<<"futex_wait [k]">>)),
    ?assertEqual(scheduler, C(<<"erts_schedule">>)),
    ?assertEqual(gc, C(<<"erts_garbage_collect_nobump">>)),
    ?assertEqual(ets, C(<<"db_put_hash">>)),
    ?assertEqual(messages, C(<<"erts_send_message">>)),
    ?assertEqual(io, C(<<"tcp_sendmsg [k]">>)),
    ?assertEqual(alloc, C(<<"erts_alcu_alloc_thr_pref">>)),
    ?assertEqual(erlang, C(<<"ets_hammer:insert/3">>)),
    ?assertEqual(erlang, C(<<"global::call_light_bif_shared">>)),
    ?assertEqual(gc, C(<<"global::garbage_collect">>)),
    ?assertEqual(ets, C(<<"ets:select/2">>)),
    ?assertEqual(io, C(<<"prim_inet:send/3">>)),
    ?assertEqual(kernel, C(<<"irqentry_exit_to_user_mode [k]">>)),
    ?assertEqual(emulator, C(<<"erts_new_local_fun_thing">>)),
    ?assertEqual(none, C(<<"[beam.smp]">>)),
    ?assertEqual(none, C(<<"__schedule [k]">>)).

shares_test() ->
    One = maps:from_list(beamscale_stats_profile:category_shares(one())),
    ?assertEqual(lists:sort(beamscale_stats_profile:categories()), lists:sort(maps:keys(One))),
    ?assert(abs(lists:sum(maps:values(One)) - 100) < 1.0e-9),
    %% ETS's own code at one scheduler: the copy into the table and an interrupt in its hash
    %% are ETS's too.
    ?assertEqual(83 * 100 / 121, maps:get(ets, One)),
    ?assertEqual(35 * 100 / 121, maps:get(erlang, One)),
    ?assertEqual(0.0, maps:get(locks, One)),
    Two = maps:from_list(beamscale_stats_profile:category_shares(two())),
    %% The wait under the rwlock (sched_yield, the thread event) is the lock's.
    ?assertEqual(103 * 100 / 111, maps:get(locks, Two)),
    ?assertEqual(0.0, maps:get(scheduler, Two)).

wait_without_caller_test() ->
    %% A stack cut short (frame pointers): a scheduler's spin.
    F = folded(<<"scheduler;__sched_yield 4\nscheduler;erts_schedule;ethr_event_swait 1\n">>),
    ?assertEqual(100.0, proplists:get_value(scheduler,
                                            beamscale_stats_profile:category_shares(F))).

weak_frames_test() ->
    %% The emulator's C code is its caller's: the user's Erlang code here.
    F = folded(<<"scheduler;m:f/1;erts_new_local_fun_thing 2\nscheduler;erts_foo 1\n"
                 "scheduler;[beam.smp];irq_exit [k] 1\n">>),
    Shares = beamscale_stats_profile:category_shares(F),
    ?assertEqual({50.0, 25.0, 25.0}, {proplists:get_value(erlang, Shares),
                                      proplists:get_value(emulator, Shares),
                                      proplists:get_value(kernel, Shares)}).

top_test() ->
    [{First, Self, Total} | _] = beamscale_stats_profile:top(one(), 3),
    ?assertEqual(<<"ets_hammer:insert/3">>, First),
    ?assertEqual(35 * 100 / 121, Self),
    ?assertEqual(Self, Total),
    Top = beamscale_stats_profile:top(two(), 10),
    {_, S, T} = lists:keyfind(<<"ethr_rwmutex_rwlock">>, 1, Top),
    ?assertEqual({14 * 100 / 111, 103 * 100 / 111}, {S, T}).

grew_test() ->
    #{categories := [{Cat, 0.0, Large, Growth} | _] = Cats, functions := Funs} =
        beamscale_stats_profile:grew(one(), two(), 5),
    ?assertEqual(locks, Cat),
    ?assertEqual(Large, Growth),
    Growths = [D || {_, _, _, D} <- Cats],
    ?assertEqual(lists:reverse(lists:sort(Growths)), Growths),
    ?assert(length(Funs) =< 5),
    ?assert(lists:all(fun({_, _, _, D}) -> D > 0 end, Funs)),
    ?assert(lists:keymember(<<"ethr_rwmutex_rwlock">>, 1, Funs)),
    %% Nothing grows from a profile to itself.
    #{functions := []} = beamscale_stats_profile:grew(one(), one(), 5).
