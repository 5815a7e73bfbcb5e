%% Locks that grew between the fewest and the most schedulers, from lcnt.csv rows: summed over
%% launches, sorted by the rise of their collision share; one scheduler count gives no table.
-module(beamscale_report_lcnt_tests).
-include_lib("eunit/include/eunit.hrl").

row(Env, Lock, Tries, Colls) ->
    #{benchmark => <<"ets_hammer">>, env => Env, node => <<"n">>, status => <<"ok">>,
      lock => Lock, tries => integer_to_binary(Tries), collisions => integer_to_binary(Colls),
      collision_pct => <<>>, wait_us => <<"0">>}.

grew_test() ->
    One = <<"25-lcnt/default/1/1">>,
    Two = <<"25-lcnt/default/2/1">>,
    Rows = [row(One, <<"db_tab">>, 1000, 0), row(One, <<"run_queue">>, 500, 5),
            row(Two, <<"db_tab">>, 600, 300), row(Two, <<"db_tab">>, 400, 100),
            row(Two, <<"run_queue">>, 500, 10), row(Two, <<"proc_main">>, 100, 1),
            (row(Two, <<>>, 0, 0))#{status := <<"not_available">>}],
    [{<<"ets_hammer">>, <<"25-lcnt/default/nodes 1">>, 1, 2, Locks}] =
        beamscale_report_lcnt:grew(Rows),
    ?assertEqual([<<"db_tab">>, <<"proc_main">>, <<"run_queue">>],
                 [L || #{lock := L} <- Locks]),
    [Db | _] = Locks,
    ?assertEqual(#{lock => <<"db_tab">>, pct_low => 0.0, pct_high => 40.0, colls_low => 0,
                   colls_high => 400}, Db),
    Html = iolist_to_binary(beamscale_report_lcnt:grew_html(Rows)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"Locks that grew: ets_hammer">>)),
    ?assertEqual([], beamscale_report_lcnt:grew([R || #{env := E} = R <- Rows, E =:= One])).
