-module(beamscale_host_calc_tests).
-include_lib("eunit/include/eunit.hrl").

-define(STAT(User, Idle), <<"cpu  ", (integer_to_binary(User))/binary, " 0 100 ",
                            (integer_to_binary(Idle))/binary, " 0 0 0 0 0 0\n"
                            "cpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\nintr 5\n">>).
-define(NET(Rx, Tx), <<"Inter-|   Receive\n face |bytes    packets\n    lo: ",
                       (integer_to_binary(Rx))/binary, " 1 0 0 0 0 0 0 ",
                       (integer_to_binary(Tx))/binary, " 1 0 0 0 0 0 0\n  eth0: 10 1 0 0 0 0 0 0 "
                       "20 1 0 0 0 0 0 0\n">>).

cpu_modes_test() ->
    ?assertEqual({2, #{user => 5, nice => 0, system => 100, idle => 7, iowait => 0, irq => 0,
                       softirq => 0, steal => 0}}, beamscale_host_calc:cpu_modes(?STAT(5, 7))).

files_test() ->
    ?assertEqual(#{total => 2048, available => 1024},
                 beamscale_host_calc:meminfo(<<"MemTotal:  2 kB\nMemFree: 1 kB\n"
                                               "MemAvailable:    1 kB\n">>)),
    ?assertEqual({0.5, 1, 2.25}, beamscale_host_calc:loadavg(<<"0.50 1 2.25 1/100 42\n">>)),
    ?assertEqual({110, 220}, beamscale_host_calc:netdev(?NET(100, 200))),
    %% sda counts; its partition sda1, loop0 and dm-0 are not counted again.
    Disk = <<"   8  0 sda 4 0 10 0 2 0 20 0 0 0 0\n   8  1 sda1 4 0 10 0 2 0 20 0 0 0 0\n"
             "   7  0 loop0 1 0 99 0 1 0 99 0 0 0 0\n 253 0 dm-0 1 0 99 0 1 0 99 0 0 0 0\n">>,
    ?assertEqual({5120, 10240}, beamscale_host_calc:diskstats(Disk)),
    ?assertEqual({ok, <<"42">>, {7, 3}}, beamscale_host_calc:pid_stat(stat(42, 7, 3))),
    ?assertEqual(4096, beamscale_host_calc:rss(<<"Name:\tx\nVmRSS:\t    4 kB\n">>)),
    ?assertEqual(0, beamscale_host_calc:rss(<<"Name:\tzombie\n">>)).

%% Two readings one second apart: host shares per mode, bytes of the interval, and a process
%% whose one pid went on (its ticks since) and whose new pid counts whole.
rows_test() ->
    R0 = reading(?STAT(0, 0), ?NET(100, 200), [{{name, "w"}, [{stat(1, 10, 0), <<>>}]}]),
    R1 = reading(?STAT(100, 200), ?NET(150, 260),
                 [{{name, "w"}, [{stat(1, 60, 0), <<"VmRSS: 8 kB\n">>},
                                 {stat(2, 20, 10), <<"VmRSS: 4 kB\n">>}]}]),
    [{host, H}, {{name, "w"}, P}] = beamscale_host_calc:rows(100, 1.0, R0, R1),
    %% 100 user and 200 idle ticks of 2 cores: a third busy, two thirds of one core.
    ?assertMatch(#{cpu_user_pct := 33.33, cpu_idle_pct := 66.67, cpu_system_pct := 0.0,
                   host_cpu_pct := 33.33, os_cpu_all_pct := 33.33, os_cpu_pct := 66.67,
                   net_rx_bytes := 50, net_tx_bytes := 60, host_mem_used := 1024,
                   load1 := 1}, H),
    ?assertMatch(#{os_cpu_user_pct := 70.0, os_cpu_sys_pct := 10.0, os_cpu_pct := 80.0,
                   os_cpu_all_pct := 40.0, pids := 2, rss_bytes := 12288}, P).

stat(Pid, U, S) ->
    iolist_to_binary(io_lib:format("~b (a b) S 1 1 1 0 -1 0 0 0 0 0 ~b ~b 0 0 20 0 1 0 5",
                                   [Pid, U, S])).

reading(Stat, Net, Procs) ->
    #{mono => 0, wall => 0, procs => Procs,
      files => #{stat => Stat, netdev => Net, meminfo => <<"MemTotal: 2 kB\nMemAvailable: 1 kB\n">>,
                 loadavg => <<"1 2 3 1/1 1\n">>, diskstats => <<>>}}.
