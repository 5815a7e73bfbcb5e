-module(beamscale_report_compare_instr_tests).
-include_lib("eunit/include/eunit.hrl").

key(B) -> {B, B, <<"-">>, <<"25">>, <<"default">>, 1, 1}.

results() ->
    beamscale_stats_instr:compare_runs(#{key(<<"same">>) => [[100, 101], [100.5]],
                                         key(<<"up">>) => [[100], [100.2]]},
                                       #{key(<<"same">>) => [[100.4], [100.8]],
                                         key(<<"up">>) => [[103], [103.1]]}).

runs(CA, CB) -> #{a => "runs/a", b => "runs/b", counter_a => CA, counter_b => CB}.

%% The clock and its counter named; each verdict says what it was computed over.
text_test() ->
    Text = lists:flatten(io_lib:format("~ts", [beamscale_report_compare_instr:text(
                                                 results(), runs(<<"valgrind">>,
                                                                 <<"valgrind">>))])),
    [?assertNotEqual(nomatch, string:find(Text, S), S)
     || S <- ["clock: instructions retired per call", "counted by valgrind in both runs",
              "same in instructions (within the floor", "more instructions by 2.9",
              "over 2 and 2 launches", "2 compared in instructions, 1 with more in B"]],
    Other = lists:flatten(io_lib:format("~ts", [beamscale_report_compare_instr:text(
                                                  results(), runs(<<"valgrind">>, <<"pmu">>))])),
    ?assertNotEqual(nomatch, string:find(Other, "valgrind in A and pmu in B")).

%% The page escapes what the run directories' names hold.
html_test() ->
    Nasty = <<"<script>x</script>">>,
    Html = iolist_to_binary(beamscale_report_compare_instr:html(
                              results(), (runs(<<"valgrind">>, <<"valgrind">>))#{a => Nasty})),
    ?assertEqual(nomatch, binary:match(Html, Nasty)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"instructions/call A">>)).
