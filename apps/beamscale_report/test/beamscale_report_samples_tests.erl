-module(beamscale_report_samples_tests).
-include_lib("eunit/include/eunit.hrl").

row(E, A, Node, T, Cpu, Util) ->
    #{benchmark => <<"b<x>">>, env => E, args => A, node => Node, status => <<"ok">>,
      t_s => T, interval_s => <<"1.0">>, os_cpu_all_pct => Cpu, util_pct => Util,
      busy_wait_all_pct => <<"5.0">>, msacc_sched_emulator => <<"20.0">>,
      msacc_sched_sleep => <<"80.0">>}.

rows() ->
    [row(<<"otp/a/1/1">>, <<"[1]">>, <<"n1">>, <<"1.0">>, <<"50.0">>, <<"40.0">>),
     row(<<"otp/a/1/1">>, <<"[1]">>, <<"n1">>, <<"2.0">>, <<"70.0">>, <<"60.0">>),
     row(<<"otp/a/1/1">>, <<"[2]">>, <<"n1">>, <<"3.0">>, <<"10.0">>, <<"5.0">>),
     row(<<"otp/b/2/1">>, <<"[1]">>, <<"n2">>, <<"1.0">>, <<"90.0">>, <<"80.0">>),
     (row(<<"otp/b/2/1">>, <<"[1]">>, <<"n2">>, <<"2.0">>, <<>>, <<>>))#{status => <<"down">>}].

data_test() ->
    #{series := Series, tables := [Table], msacc := Bars} = beamscale_report_samples:data(rows()),
    [#{node := <<"n1">>, points := [{1.0, 50.0, 40.0, 5.0}, {2.0, 70.0, 60.0, 5.0}, _]},
     #{node := <<"n2">>, points := [_]}] = Series,
    #{envs := [<<"otp/a/1/1">>, <<"otp/b/2/1">>], args := [<<"[1]">>, <<"[2]">>],
      cells := Cells} = Table,
    ?assertMatch(#{cpu_pct := 60.0, util_pct := 50.0},
                 maps:get({<<"otp/a/1/1">>, <<"[1]">>}, Cells)),
    ?assertEqual(error, maps:find({<<"otp/b/2/1">>, <<"[2]">>}, Cells)),
    [#{env := <<"otp/a/1/1">>, parts := Parts}, _] = Bars,
    ?assertEqual(20.0, proplists:get_value(<<"emulator">>, Parts)),
    ?assertEqual(80.0, proplists:get_value(<<"sleep">>, Parts)).

lcnt_html_test() ->
    Na = iolist_to_binary(beamscale_report_samples:lcnt_html(
                            [#{status => <<"not_available">>, benchmark => <<"b">>}])),
    ?assertNotEqual(nomatch, binary:match(Na, <<"not available">>)),
    Row = #{status => <<"ok">>, benchmark => <<"b">>, env => <<"e">>, lock => <<"run<queue>">>,
            tries => <<"10">>, collisions => <<"2">>, collision_pct => <<"20.0">>,
            wait_us => <<"5">>},
    Html = iolist_to_binary(beamscale_report_samples:lcnt_html([Row])),
    ?assertNotEqual(nomatch, binary:match(Html, <<"<td>run&lt;queue&gt;</td>">>)).

html_test() ->
    Html = iolist_to_binary(beamscale_report_samples:html_table(rows())),
    ?assertNotEqual(nomatch, binary:match(Html, <<"b&lt;x&gt;">>)),
    ?assertEqual(nomatch, binary:match(Html, <<"b<x>">>)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"<td>60.0 (50.0, 5.0)</td>">>)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"<td>-</td>">>)).
