-module(beamscale_bench_icount_tests).
-include_lib("eunit/include/eunit.hrl").

%% The head of a dump as callgrind 3.19 writes it.
head(Events, Summary) ->
    iolist_to_binary(["# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 15674\n"
                      "cmd:  /usr/lib/erlang/erts-13.1.5/bin/beam.smp -S 1 -- -root x\n"
                      "part: 1\n\ndesc: I1 cache: \ndesc: Trigger: Client Request: beamscale\n\n"
                      "positions: line\n", Events, Summary, "\n\nob=(2) ???\n"]).

summary_test() ->
    ?assertEqual({ok, 3535354},
                 beamscale_bench_icount:summary(head("events: Ir\n", "summary: 3535354"))).

refused_test_() ->
    [?_assertMatch({error, {beamscale_bench_icount, {dump, no_summary}}},
                   beamscale_bench_icount:summary(head("events: Ir\n", ""))),
     ?_assertMatch({error, {beamscale_bench_icount, {dump, no_events}}},
                   beamscale_bench_icount:summary(head("", "summary: 12"))),
     ?_assertMatch({error, {beamscale_bench_icount, {dump, {not_ir, [<<"Dr">>]}}}},
                   beamscale_bench_icount:summary(head("events: Dr\n", "summary: 12"))),
     ?_assertMatch({error, {beamscale_bench_icount, {dump, bad_summary}}},
                   beamscale_bench_icount:summary(head("events: Ir\n", "summary: 12x"))),
     ?_assertMatch({error, {beamscale_bench_icount, {dump, bad_summary}}},
                   beamscale_bench_icount:summary(head("events: Ir\n", "summary: -3"))),
     %% Cut before its summary (the head read is bounded).
     ?_assertMatch({error, _}, beamscale_bench_icount:summary(<<"# callgrind format\nevents:">>))].

%% Each error has its words.
format_error_test() ->
    [?assert(is_binary(iolist_to_binary(beamscale_bench_icount:format_error(E))))
     || E <- [{load, "/x", "bad"}, {pmu, "No such file or directory"}, {dumps, "/d", 2},
              {dump, no_summary}, {crashed, badarg}]].
