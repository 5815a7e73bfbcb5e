%% Releases compared within a run: the oldest release is the base, each other erl is compared
%% with it at the keys both ran, and the page's verdict names the faster and by how much.
-module(beamscale_report_otp_tests).
-include_lib("eunit/include/eunit.hrl").

rows(Otp, S, Seconds) ->
    [#{benchmark => <<"b">>, phase => <<"b">>, args => <<"[]">>, otp => Otp,
       erl_args => <<"default">>, schedulers => S, nodes => 1, seconds => X} || X <- Seconds].

one_erl_test() ->
    ?assertEqual([], beamscale_stats_otp:compare(rows(<<"25">>, 1, [1.0, 1.1, 1.2]))).

base_is_oldest_test() ->
    Slow = [1.00, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.00],
    Fast = [X / 2 || X <- Slow],
    Rows = rows(<<"27-emu">>, 1, Slow) ++ rows(<<"27">>, 1, Fast) ++ rows(<<"25">>, 1, Slow)
        ++ rows(<<"25">>, 2, Slow),
    [#{base := <<"25">>, other := <<"27">>, results := [R27]},
     #{base := <<"25">>, other := <<"27-emu">>, results := [Emu]}]
        = beamscale_stats_otp:compare(Rows),
    ?assertMatch(#{key := {<<"b">>, _, _, <<>>, _, 1, 1}, significant := true}, R27),
    ?assert(abs(maps:get(ratio, R27) - 0.5) < 1.0e-9),
    ?assertMatch(<<"27 faster by 50.0 % (", _/binary>>,
                 beamscale_report_otp:verdict(<<"25">>, <<"27">>, R27)),
    ?assertEqual(<<"no clear difference">>,
                 beamscale_report_otp:verdict(<<"25">>, <<"27-emu">>, Emu)),
    Slower = R27#{ratio := 2.0, ratio_low := 1.8, ratio_high := 2.2},
    ?assertMatch(<<"25 faster by 50.0 % (44.4 to 54.5 %)">>,
                 beamscale_report_otp:verdict(<<"25">>, <<"27">>, Slower)).

sample(Env, Status, Figures) ->
    maps:merge(#{benchmark => <<"b">>, env => Env, args => <<"[]">>, node => <<"n@h">>,
                 time => <<"t">>, t_s => <<"1.0">>, interval_s => <<"1.0">>, status => Status},
               Figures).

%% A figure one release leaves empty in all its rows is named with that release; one read as 0
%% is read; one no erl read is none of the run's figures; status rows (timeout, down) hold no
%% figures and say nothing.
unread_test() ->
    Rows = [sample(<<"27/default/1/1">>, <<"ok">>, #{util_pct => <<"0.0">>, msacc_async_aux => <<>>,
                                                     mem_atom => <<>>}),
            sample(<<"27/default/2/1">>, <<"ok">>, #{util_pct => <<"1.0">>, msacc_async_aux => <<>>,
                                                     mem_atom => <<"7">>}),
            sample(<<"25/default/1/1">>, <<"ok">>, #{util_pct => <<"2.0">>, msacc_async_aux => <<>>,
                                                     mem_atom => <<>>}),
            sample(<<"25/default/1/1">>, <<"timeout">>, #{util_pct => <<>>})],
    ?assertEqual({[<<"25">>, <<"27">>], [{mem_atom, [<<"25">>]}]},
                 beamscale_stats_otp:unread(Rows)),
    ?assertEqual({[<<"25">>], []}, beamscale_stats_otp:unread(tl(tl(Rows)))),
    [{"Releases compared", Html}] =
        beamscale_report_otp:sections([], beamscale_stats_otp:unread(Rows)),
    Text = iolist_to_binary(Html),
    ?assertNotEqual(nomatch, binary:match(Text, <<"mem_atom</td><td class=\"t\">25</td>">>)),
    ?assertEqual([], beamscale_report_otp:sections([], {[<<"25">>], []})).
