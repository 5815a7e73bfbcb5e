%% The output of `beamscale compare' from results made by hand (no statistics run).
-module(beamscale_report_compare_tests).
-include_lib("eunit/include/eunit.hrl").

result(Ratio, Significant) ->
    #{key => {<<"big">>, <<"big">>, <<"[128]">>, <<"otp">>, <<"default">>, 2, 1}, n_a => 5,
      n_b => 5, median_a => 1.0, median_b => Ratio, ratio => Ratio, ratio_low => Ratio - 0.1,
      ratio_high => Ratio + 0.1, p => 0.01, significant => Significant}.

text_test() ->
    ?assertEqual(<<"no benchmark, phase, args and environment measured in both runs\n">>,
                 iolist_to_binary(beamscale_report_compare:text([]))),
    Text = iolist_to_binary(beamscale_report_compare:text([result(1.5, true),
                                                           result(1.0, false)])),
    ?assertMatch({match, _}, re:run(Text, "^big \\[128\\] @ otp/default/s2/n1  1.5x .* slower",
                                    [multiline])),
    ?assertMatch({match, _}, re:run(Text, "1 significantly slower, 0 significantly faster")).

html_test() ->
    Html = iolist_to_binary(beamscale_report_compare:html([result(0.5, true)],
                                                          #{a => "a<b", b => "b"})),
    ?assertEqual(1, length(binary:matches(Html, <<"class=\"faster\"">>))),
    ?assertEqual(nomatch, binary:match(Html, <<"a<b">>)).
