%% Releases compared in instructions within one run (beamscale_stats_otp:counts/1).
-module(beamscale_stats_otp_counts_tests).

-include_lib("eunit/include/eunit.hrl").

key(Otp) -> {<<"bang">>, <<"bang">>, <<"[64]">>, Otp, <<"default">>, 1, 1}.

one_erl_no_pair_test() ->
    ?assertEqual([], beamscale_stats_otp:counts(#{key(<<"25">>) => [[100, 101]]})).

oldest_is_base_and_fewer_is_called_test() ->
    Counts = #{key(<<"27">>) => [[80, 81], [80, 82]], key(<<"25">>) => [[100, 101], [100, 102]],
               key(<<"29">>) => [[99, 103], [101, 104]]},
    [#{base := <<"25">>, other := <<"27">>, results := [R27]},
     #{base := <<"25">>, other := <<"29">>, results := [R29]}] = beamscale_stats_otp:counts(Counts),
    ?assertMatch(#{verdict := fewer, key := {<<"bang">>, _, _, <<>>, _, 1, 1}}, R27),
    ?assertEqual(0.8, maps:get(ratio, R27)),
    %% 29's least counts 99 and 101 overlap 25's 100 and 100: no call.
    ?assertMatch(#{verdict := same}, R29).
