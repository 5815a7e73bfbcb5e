-module(beamscale_report_micro_tests).
-include_lib("eunit/include/eunit.hrl").

row(Extra) ->
    maps:merge(#{label => <<"lists:seq(1,100).">>, input => <<"-">>, ns => 700.0,
                 ns_low => 690.0, ns_high => 720.0, calls_s => 1.4e6, reductions => 43.0,
                 words => 200.0, schedulers => 2, cv => 0.01}, Extra).

%% The time clock's table has no instruction columns; the instruction clock's adds them and
%% names its counter.
instructions_test() ->
    Plain = iolist_to_binary(beamscale_report_micro:text(#{mode => time, rows => [row(#{})]})),
    ?assertEqual(nomatch, binary:match(Plain, <<"instr/call">>)),
    Counted = iolist_to_binary(beamscale_report_micro:text(
                                 #{mode => time,
                                   rows => [row(#{counter => valgrind, instructions => 4389.9,
                                                  instructions_spread => 0.0068,
                                                  counted_heap_words => 4096})]})),
    ?assertMatch({match, _}, re:run(Counted, "instr/call +instr spread")),
    ?assertMatch({match, _}, re:run(Counted, "4390 +0.68 %")),
    ?assertMatch({match, _}, re:run(Counted, "counted by Valgrind")),
    ?assertMatch({match, _}, re:run(Counted, "fresh process with a heap of 4096 words")),
    Json = iolist_to_binary(beamscale_report_micro:json(
                              #{mode => time, rows => [row(#{counter => pmu,
                                                             instructions => 10.0})]})),
    ?assertMatch({match, _}, re:run(Json, "\"counter\":\"pmu\"")).
