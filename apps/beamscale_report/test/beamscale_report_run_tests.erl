%% The run page: a benchmark's failed sanity check and failed iterations stand next to its
%% graphs, not only in the tables at the bottom.
-module(beamscale_report_run_tests).
-include_lib("eunit/include/eunit.hrl").

rows() ->
    Ms = [#{benchmark => B, phase => B, args => <<"[1]">>, otp => <<"default">>,
            erl_args => <<"default">>, schedulers => S, nodes => 1, seconds => T}
          || B <- [<<"aaa">>, <<"zzz">>], S <- [1, 2], T <- [0.1, 0.11, 0.12]],
    beamscale_stats:report_stats(Ms).

page(Sanity, Failures) ->
    iolist_to_binary(beamscale_report_run:index(#{run => #{}, rows => rows(), sanity => Sanity,
                                                  failures => Failures})).

%% The text between the graphs' heading of `aaa' and that of `zzz'.
aaa_graphs(Html) ->
    {A, _} = binary:match(Html, <<"<h3>aaa [1]</h3>">>),
    {Z, _} = binary:match(Html, <<"<h3>zzz [1]</h3>">>),
    binary:part(Html, A, Z - A).

sanity_beside_graphs_test() ->
    Html = page([{<<"aaa">>, <<"failed">>, <<"printed 41, expected 42">>},
                 {<<"zzz">>, <<"passed">>, <<>>}], []),
    Beside = aaa_graphs(Html),
    ?assertNotEqual(nomatch, binary:match(Beside, <<"sanity check failed">>)),
    ?assertNotEqual(nomatch, binary:match(Beside, <<"printed 41, expected 42">>)),
    ?assertEqual(nomatch, binary:match(aaa_graphs(page([], [])), <<"sanity check failed">>)).

failures_beside_graphs_test() ->
    Failure = #{benchmark => <<"aaa">>, args => <<"[1]">>, iteration => <<"2">>,
                reason => <<"deliberate_crash">>},
    Beside = aaa_graphs(page([], [Failure])),
    ?assertNotEqual(nomatch, binary:match(Beside, <<"1 iteration failed">>)).

%% Only the flag sets measured are named; a benchmark's own flags for an alias name it.
flag_sets_used_test() ->
    Run = #{<<"config">> => #{<<"erl_args">> => #{<<"default">> => <<"+sbwt none">>,
                                                 <<"dropped">> => <<"+sbt db">>}},
            <<"overrides">> => #{<<"zzz">> => #{<<"erl_args">> =>
                                                    #{<<"default">> => <<"+P 400000">>}}}},
    Html = iolist_to_binary(beamscale_report_run:index(#{run => Run, rows => rows(),
                                                         sanity => [], failures => []})),
    ?assertNotEqual(nomatch, binary:match(Html, <<"+sbwt none">>)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"flags default (zzz)">>)),
    ?assertEqual(nomatch, binary:match(Html, <<"dropped">>)).
