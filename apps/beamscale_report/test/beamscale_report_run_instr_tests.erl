%% The instruction clock's sections of a run page (beamscale_report_run_instr).
-module(beamscale_report_run_instr_tests).

-include_lib("eunit/include/eunit.hrl").

key(Otp) -> {<<"bang">>, <<"bang">>, <<"[64]">>, Otp, <<"default">>, 1, 1}.

html(Sections) -> iolist_to_binary([[T, B] || {T, B} <- Sections]).

none_when_not_counted_test() ->
    ?assertEqual([], beamscale_report_run_instr:sections(#{}, [], [])).

per_iteration_and_verdict_test() ->
    Counts = #{key(<<"25">>) => [[1000, 1010], [1002]], key(<<"27">>) => [[800, 805], [801]]},
    Rows = [#{benchmark => <<"bang">>, phase => <<"bang">>, args => <<"[64]">>, otp => <<"25">>,
              erl_args => <<"default">>, schedulers => 1, nodes => 1, median => 0.5}],
    Html = html(beamscale_report_run_instr:sections(Counts, Rows,
                                                     beamscale_stats_otp:counts(Counts))),
    %% 25's launches' least counts 1000 and 1002: median 1001.
    ?assertMatch({_, _}, binary:match(Html, <<">1001<">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"Releases compared in instructions">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"27 faster by 20.0 % in instructions">>)).
