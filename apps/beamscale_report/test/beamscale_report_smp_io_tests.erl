-module(beamscale_report_smp_io_tests).
-include_lib("eunit/include/eunit.hrl").

row(T, O, C, L, Off, Held, Ms) ->
    #{target => T, op => O, config => C, level => L, offered_per_s => Off,
      ops_per_session => <<"100">>, held => Held, why => <<"ok">>, mean_session_ms => Ms,
      cpu_pct => <<"50.0">>, util_pct => <<"20.0">>, busy_wait_pct => <<"30.0">>,
      achieved_per_s => Off, requests_per_s => Off, p99_session_ms => Ms, p99_ms => Ms,
      errors => <<"0">>}.

rows() ->
    [row(<<"mnesia">>, <<"read">>, <<"smp_auto">>, <<"1">>, <<"10.0">>, <<"true">>, <<"8.0">>),
     row(<<"mnesia">>, <<"read">>, <<"smp_auto">>, <<"2">>, <<"40.0">>, <<"false">>, <<"900">>),
     row(<<"mnesia">>, <<"read">>, <<"<b>x</b>">>, <<"1">>, <<"10.0">>, <<"true">>, <<"9.0">>),
     row(<<"mnesia">>, <<"read">>, <<"<b>x</b>">>, <<"2">>, <<"40.0">>, <<"true">>, <<"12.0">>),
     row(<<"mnesia">>, <<"read_dirty">>, <<"smp_auto">>, <<"1">>, <<"10.0">>, <<"true">>,
         <<"2.0">>)].

meta() ->
    #{size => short, ops_per_session => 100, hold_s => 3, otp_release => <<"25">>,
      logical_cores => 2, configs => [#{config => <<"smp_auto">>, thesis => <<"SMP auto">>,
                                        flags => <<"+S 2:2">>, erl => <<"erl">>}]}.

html() -> iolist_to_binary(beamscale_report_smp_io:html(meta(), rows())).

count(Bin, Pat) -> length(binary:matches(Bin, Pat)).

%% Bars, without each chart's background rectangle.
bars(Html) -> count(Html, <<"<rect x=">>).

charts_test() ->
    H = html(),
    %% Session charts for mnesia read and read_dirty, and the transaction-vs-dirty chart.
    ?assertEqual(3, count(H, <<"<svg">>)),
    %% Three held bars of mnesia read (level 2 of smp_auto is missing), one of read_dirty,
    %% and in the dirty chart three transaction bars and one dirty bar.
    ?assertEqual(3 + 1 + 4, bars(H)).

escaped_test() ->
    H = html(),
    ?assertEqual(nomatch, binary:match(H, <<"<b>x</b>">>)),
    ?assertMatch({_, _}, binary:match(H, <<"&lt;b&gt;x&lt;/b&gt;">>)).

not_held_is_dash_test() ->
    T = iolist_to_binary(beamscale_report_smp_io:metric_table(
                           [R || #{op := <<"read">>} = R <- rows()], cpu_pct, "CPU %")),
    ?assertEqual(1, count(T, <<">-</td>">>)),
    ?assertEqual(3, count(T, <<">50</td>">>) + count(T, <<">50.0</td>">>)).

ratio_test() ->
    H = html(),
    %% smp_auto at 10/s: 8.0 ms in transactions, 2.0 ms dirty.
    ?assertMatch({_, _}, binary:match(H, <<"<td>4.0</td>">>)).

%% The pollset report: one bar per held level, wrk's section or the note that it is missing.
pollset_test() ->
    Rows = [(row(<<"http">>, <<"get">>, C, L, Off, Held, <<"5.0">>))#{p50_ms => <<"1.0">>}
            || {C, L, Off, Held} <- [{<<"io_t1/s1">>, <<"1">>, <<"40.0">>, <<"true">>},
                                     {<<"io_t1/s1">>, <<"2">>, <<"120.0">>, <<"false">>},
                                     {<<"io_t2/s1">>, <<"1">>, <<"40.0">>, <<"true">>},
                                     {<<"io_t2/s1">>, <<"2">>, <<"120.0">>, <<"true">>}]],
    NoWrk = iolist_to_binary(beamscale_report_pollset:html(meta(), Rows, [])),
    ?assertEqual(2, count(NoWrk, <<"<svg">>)),
    ?assertEqual(2 * 3, bars(NoWrk)),
    ?assertMatch({_, _}, binary:match(NoWrk, <<"wrk is not installed">>)),
    Wrk = [#{config => <<"io_t1/s1">>, status => <<"ok">>, requests_per_s => <<"1000.5">>,
             p99_ms => <<"2.5">>},
           #{config => <<"io_t2/s1">>, status => <<"failed">>, requests_per_s => <<>>}],
    With = iolist_to_binary(beamscale_report_pollset:html(meta(), Rows, Wrk)),
    ?assertEqual(3, count(With, <<"<svg">>)),
    ?assertEqual(2 * 3 + 1, bars(With)),
    ?assertMatch({_, _}, binary:match(With, <<"<td>1000.5</td>">>)).

%% The capacity section: a bar per configuration with its interval as a whisker (capped at both
%% ends, or only below when no rate above was not held), and the table; none without rows.
capacity_test() ->
    Cap = fun(C, Low, High) ->
                  #{target => <<"mnesia">>, op => <<"write">>, config => C, capacity_per_s => Low,
                    capacity_low_per_s => Low, capacity_high_per_s => High,
                    limited_by => <<"slow">>, stopped => <<"budget">>, levels => <<"5">>}
          end,
    H = iolist_to_binary(beamscale_report_smp_io:html(meta(), rows(),
                                                      [Cap(<<"smp_auto">>, <<"160.0">>,
                                                           <<"240.0">>),
                                                       Cap(<<"smp_1">>, <<"80.0">>, <<>>)])),
    ?assertEqual(3 + 1, count(H, <<"<svg">>)),
    ?assertEqual(2, count(H, <<"class=\"whisker\"">>)),
    ?assertMatch({_, _}, binary:match(H, <<"[160, 240)">>)),
    ?assertMatch({_, _}, binary:match(H, <<"[80, -)">>)),
    ?assertEqual(nomatch, binary:match(html(), <<"Capacity per configuration">>)).
