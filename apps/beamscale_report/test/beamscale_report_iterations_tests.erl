%% Iteration points beside the medians on the run page's time charts.
-module(beamscale_report_iterations_tests).
-include_lib("eunit/include/eunit.hrl").

m(S, Sec) ->
    #{benchmark => <<"big">>, phase => <<"big">>, args => <<"[8]">>, otp => <<"otp">>,
      erl_args => <<"default">>, schedulers => integer_to_binary(S), nodes => <<"1">>,
      seconds => Sec}.

by_key_test() ->
    Iters = beamscale_report_iterations:by_key([m(1, <<"2.0">>), m(1, <<"2.5">>),
                                                m(2, <<"1">>), m(2, <<"x">>)]),
    ?assertEqual([2.0, 2.5], lists:sort(maps:get({<<"big">>, <<"big">>, <<"[8]">>, <<"otp">>,
                                                  <<"default">>, 1, 1}, Iters))),
    ?assertEqual([1.0], maps:get({<<"big">>, <<"big">>, <<"[8]">>, <<"otp">>, <<"default">>, 2,
                                  1}, Iters)).

%% The run page: the time chart gets one more series, of points only, one point per iteration
%% (3 iterations at 1 and 2 schedulers); the speedup chart none.
page_test() ->
    Ms = [m(S, Sec) || {S, Sec} <- [{1, <<"2.0">>}, {1, <<"2.2">>}, {1, <<"2.9">>},
                                    {2, <<"1.1">>}, {2, <<"1.0">>}, {2, <<"1.2">>}]],
    Rows = beamscale_stats:report_stats(Ms),
    Html = iolist_to_binary(beamscale_report_run:index(
                              #{run => #{}, rows => Rows, sanity => [], failures => [],
                                iterations => beamscale_report_iterations:by_key(Ms)})),
    [Time, Speedup] = [C || C <- binary:split(Html, <<"<svg">>, [global]),
                            binary:match(C, <<"data-series">>) =/= nomatch],
    ?assertNotEqual(nomatch, binary:match(Time, <<"data-series=\"2\"">>)),
    [_, Points] = binary:split(Time, <<"data-name=\"iterations\">">>),
    [Group | _] = binary:split(Points, <<"</g>\n">>),
    ?assertEqual(nomatch, binary:match(Group, <<"<polyline">>)),
    ?assertEqual(6, length(binary:matches(Group, <<"<circle">>))),
    ?assertNotEqual(nomatch, binary:match(Group, <<"iterations: x=1, y=2.9">>)),
    ?assertEqual(nomatch, binary:match(Speedup, <<"iterations">>)),
    %% The key/value run table starts with a data row, not an empty header.
    ?assertEqual(nomatch, binary:match(Html, <<"<th></th>">>)).
