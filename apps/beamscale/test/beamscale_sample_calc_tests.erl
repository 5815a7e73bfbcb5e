-module(beamscale_sample_calc_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% A /proc/PID/stat line whose command holds spaces and parentheses.
pid_stat_test() ->
    Line = <<"4242 (beam.smp (x) y) S 1 4242 4242 0 -1 4194560 1 0 0 0 1234 567 0 0 20 0 30 0 "
             "100 0 0\n">>,
    ?assertEqual({ok, {1234, 567}}, beamscale_sample_calc:parse_pid_stat(Line)),
    ?assertEqual(error, beamscale_sample_calc:parse_pid_stat(<<"4242 (x) S 1 2">>)),
    ?assertEqual(error, beamscale_sample_calc:parse_pid_stat(<<"garbage">>)).

host_stat_test() ->
    Text = <<"cpu  100 5 50 800 20 1 2 3 7 0\ncpu0 1 1 1 1 1 1 1 1 0 0\nintr 1\n">>,
    %% busy = total - idle - iowait = 981 - 800 - 20
    ?assertEqual({ok, {161, 981}}, beamscale_sample_calc:parse_host_stat(Text)),
    ?assertEqual(error, beamscale_sample_calc:parse_host_stat(<<"intr 1\n">>)).

prop_pid_stat_round_trip() ->
    ?FORALL({Name, U, S}, {list(oneof([$a, $\s, $(, $)])), non_neg_integer(), non_neg_integer()},
            begin
                Line = iolist_to_binary(io_lib:format("1 (~s) R 0 0 0 0 -1 0 0 0 0 0 ~b ~b 0 0 "
                                                      "20 0 1 0 5 0 0~n", [Name, U, S])),
                beamscale_sample_calc:parse_pid_stat(Line) =:= {ok, {U, S}}
            end).

pid_stat_prop_test() ->
    ?assert(proper:quickcheck(prop_pid_stat_round_trip(), [{numtests, 300}, {to_file, user}])).

%% Two normal schedulers half and fully busy, one dirty CPU idle, one dirty IO a quarter busy.
utilisation_test() ->
    Prev = [{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}],
    Cur = [{1, 50, 100}, {2, 100, 100}, {3, 0, 100}, {4, 25, 100}],
    {Util, Dirty, Io, Busy} = beamscale_sample_calc:utilisation(Prev, Cur, {2, 1}),
    ?assertEqual(75.0, Util),
    ?assertEqual(0.0, Dirty),
    ?assertEqual(25.0, Io),
    ?assertEqual(150.0, Busy).

%% Utilisation stays within 0-100 and busy time within 0-100 per counted scheduler.
prop_utilisation_bounds() ->
    ?FORALL(Ds, non_empty(list({non_neg_integer(), pos_integer()})),
            begin
                Cur = [{I, min(A, T), T} || {I, {A, T}} <- lists:zip(lists:seq(1, length(Ds)), Ds)],
                Prev = [{I, 0, 0} || {I, _, _} <- Cur],
                N = length(Cur),
                {U, D, Io, Busy} = beamscale_sample_calc:utilisation(Prev, Cur, {N, 0}),
                U >= 0 andalso U =< 100.0000001 andalso D == 0 andalso Io == 0
                    andalso Busy >= 0 andalso Busy =< 100 * N + 0.0000001
            end).

utilisation_prop_test() ->
    ?assert(proper:quickcheck(prop_utilisation_bounds(), [{numtests, 300}, {to_file, user}])).

msacc_test() ->
    T = fun(Type, Emu, Sleep) ->
                #{type => Type, id => 1,
                  counters => #{emulator => Emu, sleep => Sleep, gc => 0}}
        end,
    Prev = [T(scheduler, 0, 0), T(scheduler, 0, 0), T(poll, 0, 0)],
    Cur = [T(scheduler, 30, 70), T(scheduler, 10, 90), T(poll, 0, 50)],
    Shares = beamscale_sample_calc:msacc(Prev, Cur),
    ?assertEqual(20.0, maps:get({scheduler, emulator}, Shares)),
    ?assertEqual(80.0, maps:get({scheduler, sleep}, Shares)),
    ?assertEqual(100.0, maps:get({poll, sleep}, Shares)),
    ?assertEqual(0.0, maps:get({poll, gc}, Shares)),
    %% msacc off for the whole interval: no shares for that type, not zeros.
    Off = beamscale_sample_calc:msacc(Cur, Cur ++ [T(aux, 0, 0)]),
    ?assertEqual(#{}, Off).

%% A whole row from two readings one second apart.
row_test() ->
    Meta = #{bench => <<"b">>, env => <<"otp/x/2/1">>, args => <<"[1]">>, node => <<"n@h">>,
             t0 => 0, cores => 2, ticks => 100, schedulers => 2, dirty_cpu => 1},
    Vm = fun(A, T, In) ->
                 #{swt => [{1, A, T}, {2, A, T}, {3, 0, T}, {4, 0, T}],
                   msacc => undefined, run_queues => [1, 2, 0, 3], io => {In, 0},
                   processes => 40, ports => 5, memory => [{total, 1000}, {ets, 10}]}
         end,
    R0 = #{mono => 0, wall => 0, proc => {0, 0}, host => {0, 0}, vm => Vm(0, 0, 0)},
    R1 = #{mono => 1000000, wall => 1000000, proc => {60, 20}, host => {100, 200},
           vm => Vm(250, 1000, 64)},
    Row = maps:from_list(lists:zip(beamscale_sample_calc:columns(),
                                   beamscale_sample_calc:row(Meta, R0, R1))),
    ?assertMatch(#{status := ok, t_s := 1.0, os_cpu_pct := 80.0, os_cpu_all_pct := 40.0,
                   host_cpu_pct := 50.0, util_pct := 25.0, sched_cpu_pct := 50.0,
                   busy_wait_pct := 30.0, busy_wait_all_pct := 15.0, run_queue := 3,
                   run_queue_dirty_cpu := 0, run_queue_dirty_io := 3, io_in_bytes := 64,
                   mem_total := 1000, mem_ets := 10, msacc_sched_sleep := <<>>}, Row),
    ?assertEqual(length(beamscale_sample_calc:columns()),
                 length(beamscale_sample_calc:status_row(Meta, R1, down))).

lcnt_top_test() ->
    Data = [{duration, {1, 0}},
            {locks, [{run_queue, 1, mutex, [{{"a.c", 1}, {100, 10, {0, 5000, 2}}, {}},
                                            {{"a.c", 2}, {50, 5, {1, 0, 1}}, {}}]},
                     {run_queue, 2, mutex, [{{"a.c", 1}, {10, 1, {0, 0, 0}}, {}}]},
                     {proc_main, 7, mutex, [{{"b.c", 3}, {1000, 40, {0, 0, 0}}}]},
                     {quiet, 0, mutex, [{{"c.c", 3}, {5, 0, {0, 0, 0}}}]}]}],
    ?assertEqual([{<<"proc_main">>, 1000, 40, 0}, {<<"run_queue">>, 160, 16, 1000005}],
                 beamscale_sample_calc:lcnt_top(Data, 2)).
