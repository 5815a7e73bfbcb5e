-module(beamscale_stats_saturate_tests).
-include_lib("eunit/include/eunit.hrl").

%% A second of a load run: N sessions started and done, each request taking Ms from its
%% intended start and half that from its send.
second(T, N, Done, Ms) ->
    Hist = fun(V) -> H = beamscale_stats_hist:new(),
                     [beamscale_stats_hist:record(H, V) || _ <- lists:seq(1, N)],
                     beamscale_stats_hist:take(H) end,
    #{t_s => T, sessions_started => N, sessions_done => Done, requests => N, errors => 0,
      timeouts => 0, latency => Hist(Ms * 1000), sent => Hist(Ms * 500),
      session => Hist(Ms * 1000)}.

%% The warm-up second and the drain seconds are left out of the figures.
figures_test() ->
    Rows = [second(1, 100, 100, 1000), second(2, 100, 80, 10), second(3, 100, 80, 10),
            second(4, 0, 40, 1000)],
    F = beamscale_stats_saturate:figures(Rows, #{rate => 100, hold_s => 3, warmup_s => 1}),
    ?assertEqual(2, maps:get(seconds, F)),
    ?assertEqual(80.0, maps:get(achieved_per_s, F)),
    ?assertEqual(0.8, maps:get(achieved_ratio, F)),
    ?assert(abs(maps:get(p99_ms, F) - 10) < 0.5),
    ?assert(abs(maps:get(p99_sent_ms, F) - 5) < 0.5),
    ?assertEqual(0.0, maps:get(error_ratio, F)).

%% Errors by reason are summed over the measured seconds, most frequent first; the backlog counts
%% every second; the sample summary gives CPU, utilisation and busy-wait.
reasons_backlog_samples_test() ->
    R = fun(Row, Reasons) -> Row#{reasons => Reasons} end,
    Rows = [R(second(1, 10, 10, 5), #{<<"warm">> => 9}),
            R(second(2, 10, 8, 5), #{<<"timeout">> => 1, <<"closed">> => 2}),
            R(second(3, 10, 8, 5), #{<<"closed">> => 1}), second(4, 0, 1, 5)],
    Samples = #{os_cpu_all_pct => 150.25, util_pct => 80.0, busy_wait_all_pct => 70.25},
    F = beamscale_stats_saturate:figures(Rows, #{rate => 10, hold_s => 3, warmup_s => 1,
                                                 samples => Samples}),
    ?assertEqual(<<"3 closed; 1 timeout">>, maps:get(errors_by_reason, F)),
    ?assertEqual(3, maps:get(backlog, F)),
    ?assertMatch(#{cpu_pct := 150.25, util_pct := 80.0, busy_wait_pct := 70.25}, F),
    ?assertMatch(#{cpu_pct := null}, beamscale_stats_saturate:figures(
                                        Rows, #{rate => 10, hold_s => 3, warmup_s => 1})).

%% A row written to levels.csv and read back gives the figures the summary and page use.
row_round_trip_test() ->
    F0 = beamscale_stats_saturate:figures([second(1, 10, 10, 5), second(2, 10, 10, 7)],
                                          #{rate => 10, hold_s => 2, warmup_s => 0}),
    F = F0#{held => false, broken => [<<"p99">>, <<"achieved">>], limited_by => <<"achieved">>,
            wall_s => 3.5, idle_wait_s => 1.25, idle_timeout => <<"true">>},
    Line = beamscale_format_csv:line(beamscale_stats_saturate:row(F)),
    Header = beamscale_format_csv:line(beamscale_stats_saturate:columns()),
    File = filename:join(test_dir(), "levels.csv"),
    ok = file:write_file(File, [Header, Line]),
    [Row] = beamscale_store_rows(File),
    Back = beamscale_stats_saturate:from_row(Row),
    ?assertMatch(#{offered_per_s := 10.0, held := false, broken := [<<"p99">>, <<"achieved">>],
                   limited_by := <<"achieved">>, cpu_pct := null, users := null, wall_s := 3.5,
                   requests := 20, error_ratio := 0.0, idle_wait_s := 1.25,
                   idle_timeout := <<"true">>}, Back),
    ?assertEqual(maps:get(p99_ms, F), maps:get(p99_ms, Back)).

%% levels.csv as beamscale_store:read_rows/1 reads it (that module is in an app above this one).
beamscale_store_rows(File) ->
    {ok, Bin} = file:read_file(File),
    {[Header | Rows], _} = beamscale_format_csv:parse(Bin),
    [maps:from_list(lists:zip([binary_to_atom(H) || H <- Header], Row)) || Row <- Rows].

test_dir() ->
    Dir = filename:join(["/tmp", "beamscale_stats_saturate_tests", os:getpid()]),
    ok = filelib:ensure_path(Dir),
    Dir.

%% limited_by is the term broken at the level not held just above the capacity (its last run),
%% not at the first level not held: the climb overshoots the edge, where every term breaks.
summary_test() ->
    Level = fun(Rate, Held, Broken) -> #{offered_per_s => Rate, held => Held, broken => Broken,
                                         limited_by => case Broken of
                                                           [] -> none;
                                                           _ -> lists:last(Broken)
                                                       end} end,
    Levels = [Level(10.0, true, []), Level(40.0, false, [<<"p99">>, <<"achieved">>]),
              Level(20.0, true, []), Level(30.0, false, [<<"errors">>]), Level(20.0, true, []),
              Level(30.0, false, [<<"p99">>])],
    S = beamscale_stats_saturate:summary(<<"p99<1ms">>, #{low => 20.0, high => 30.0,
                                                           why => converged}, Levels, #{}),
    ?assertMatch(#{capacity_per_s := 20.0, capacity_low_per_s := 20.0,
                   capacity_high_per_s := 30.0, limited_by := <<"p99">>,
                   broken_first := [<<"p99">>], levels := 6}, S),
    Held = beamscale_stats_saturate:summary(<<"p99<1ms">>, #{low => 40.0, high => none,
                                                              why => max_rate},
                                            [Level(40.0, true, [])], #{}),
    ?assertMatch(#{limited_by := null, broken_first := []}, Held).
