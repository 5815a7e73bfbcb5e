%% beamscale_format_perf on real `perf script' output: four samples of a contended ETS table
%% (two schedulers inserting into one set), recorded here with
%% `perf record -F 999 --call-graph dwarf,8192 -p PID' on an OTP 25 node run with +JPperf true.
-module(beamscale_format_perf_tests).
-include_lib("eunit/include/eunit.hrl").

script() ->
    "1_scheduler 12982   887.932725:    1001001 cpu-clock:pppH: \n"
    "\tffffffff813a2413 finish_task_switch.isra.0+0x93 ([kernel.kallsyms])\n"
    "\tffffffff821f8914 __schedule+0x3d4 ([kernel.kallsyms])\n"
    "\tffffffff821f94c3 schedule+0x23 ([kernel.kallsyms])\n"
    "\tffffffff813cd15a __x64_sys_sched_yield+0xa ([kernel.kallsyms])\n"
    "\tffffffff821ed511 do_syscall_64+0x71 ([kernel.kallsyms])\n"
    "\tffffffff81000130 entry_SYSCALL_64_after_hwframe+0x76 ([kernel.kallsyms])\n"
    "\t           ee017 __GI_sched_yield+0x7 (inlined)\n"
    "\t          2ea5ee ethr_event_swait+0x3e (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          2e7d89 [unknown] (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          2e966c ethr_rwmutex_rwlock+0x29c (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          1c9049 [unknown] (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          1cbebd ets_insert_2+0x21d (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t    7fbc2f21a47a $global::call_light_bif_shared+0x5a (/tmp/perf-12947.map)\n"
    "\n"
    "1_scheduler 12982   888.083505:    1001001 cpu-clock:pppH: \n"
    "\t    7fbbec398c8e $h:ins/3+0x4e (/tmp/perf-12947.map)\n"
    "\n"
    "1_scheduler 12982   888.043211:    1001001 cpu-clock:pppH: \n"
    "\t          1570a2 copy_struct_x+0x4e2 (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          1d68e4 db_store_term+0x94 (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          1e5eb4 db_put_hash+0x3d4 (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          1cbe08 ets_insert_2+0x168 (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t    7fbc2f21a47a $global::call_light_bif_shared+0x5a (/tmp/perf-12947.map)\n"
    "\n"
    "2_scheduler 12988   888.073954:    1001001 cpu-clock:pppH: \n"
    "\t          2037d2 [unknown] (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          20572c [unknown] (/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t          206986 erts_garbage_collect_nobump+0x46 "
    "(/usr/lib/erlang/erts-13.1.5/bin/beam.smp)\n"
    "\t    7fbc2f21a904 $global::garbage_collect+0x44 (/tmp/perf-12947.map)\n"
    "\n"
    "\n".

fold_test() ->
    F = beamscale_format_perf:fold(script()),
    ?assertEqual(4, lists:sum(maps:values(F))),
    Lock = [<<"scheduler">>, <<"global::call_light_bif_shared">>, <<"ets_insert_2">>,
            <<"[beam.smp]">>, <<"ethr_rwmutex_rwlock">>, <<"[beam.smp]">>,
            <<"ethr_event_swait">>, <<"__GI_sched_yield">>,
            <<"entry_SYSCALL_64_after_hwframe [k]">>, <<"do_syscall_64 [k]">>,
            <<"__x64_sys_sched_yield [k]">>, <<"schedule [k]">>, <<"__schedule [k]">>,
            <<"finish_task_switch.isra.0 [k]">>],
    ?assertEqual(1, maps:get(Lock, F)),
    ?assertEqual(1, maps:get([<<"scheduler">>, <<"h:ins/3">>], F)),
    ?assert(lists:any(fun(S) -> lists:last(S) =:= <<"copy_struct_x">> end, maps:keys(F))).

not_samples_test() ->
    %% A line perf prints that is no sample (a warning) adds nothing; a missing blank line
    %% between samples still separates them.
    Text = <<"Warning: lost 3 chunks\n"
             "2_scheduler 1 1.0: 1 cpu-clock:pppH:\n\t 1 f+0x1 (/x/beam.smp)\n"
             "2_dirty_cpu_sch 1 1.0: 1 cpu-clock:pppH:\n\t 2 [unknown] ([unknown])\n"
             "\t 3 [unknown] (/memfd:vmem (deleted))\n">>,
    ?assertEqual(#{[<<"scheduler">>, <<"f">>] => 1,
                   [<<"dirty_cpu_sch">>, <<"[jit]">>, <<"[unknown]">>] => 1},
                 beamscale_format_perf:fold(Text)).

folded_text_round_trip_test() ->
    F = beamscale_format_perf:fold(script()),
    Text = iolist_to_binary(beamscale_format_perf:text(F)),
    ?assertEqual(F, beamscale_format_perf:parse_folded(Text)),
    ?assertEqual(#{}, beamscale_format_perf:parse_folded(<<"no count here\n\n x 0\n">>)).

thread_kind_test() ->
    ?assertEqual(<<"scheduler">>, beamscale_format_perf:thread_kind(<<"12_scheduler">>)),
    ?assertEqual(<<"dirty_io_sch">>, beamscale_format_perf:thread_kind(<<"3_dirty_io_sch">>)),
    ?assertEqual(<<"erts_dios">>, beamscale_format_perf:thread_kind(<<"erts_dios_1">>)),
    ?assertEqual(<<"beam.smp">>, beamscale_format_perf:thread_kind(<<"beam.smp">>)).
