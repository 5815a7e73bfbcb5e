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
