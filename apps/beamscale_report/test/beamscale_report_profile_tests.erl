%% The profile sections and the flame graph: what a reader of the page relies on.
-module(beamscale_report_profile_tests).
-include_lib("eunit/include/eunit.hrl").

point(S, Folded) ->
    #{bench => <<"ets_hammer">>, env => <<"default/default/", (integer_to_binary(S))/binary,
                                          "/1">>,
      schedulers => S, group => <<"default/default/nodes 1">>, folded => Folded,
      meta => #{<<"rate_hz">> => 999, <<"window_ms">> => 1000, <<"overhead_pct">> => 2.5,
                <<"median_with_s">> => 0.0123, <<"median_without_s">> => 0.012}}.

one() -> #{[<<"scheduler">>, <<"m:f/1">>, <<"db_put_hash">>] => 9,
           [<<"scheduler">>, <<"m:f/1">>] => 1}.
two() -> #{[<<"scheduler">>, <<"ets_insert_2">>, <<"ethr_rwmutex_rwlock">>] => 6,
           [<<"scheduler">>, <<"m:f/1">>, <<"db_put_hash">>] => 4}.

sections_test() ->
    {[{GrewTitle, Grew}], [{_, Points}]} =
        beamscale_report_profile:sections([point(2, two()), point(1, one())], []),
    ?assertEqual("What grew with schedulers (profiles)", GrewTitle),
    G = iolist_to_binary(Grew),
    %% Locks first (0 to 60 % of samples), as a row marked as grown.
    {Locks, _} = binary:match(G, <<">locks</span></td><td>0.0</td><td>60.0</td><td>60.0">>),
    {Ets, _} = binary:match(G, <<">ets</span></td>">>),
    ?assert(Locks < Ets),
    ?assertNotEqual(nomatch, binary:match(G, <<"1 to 2 schedulers">>)),
    P = iolist_to_binary(Points),
    %% Each point: its flame graph (ids in page order), figures, top functions.
    ?assertNotEqual(nomatch, binary:match(P, <<"<svg id=\"flame1\"">>)),
    ?assertNotEqual(nomatch, binary:match(P, <<"<svg id=\"flame2\"">>)),
    ?assertNotEqual(nomatch, binary:match(P, <<"overhead 2.5 %">>)),
    ?assertNotEqual(nomatch, binary:match(P, <<"No lock counting">>)),
    ?assertNotEqual(nomatch, binary:match(P, <<"function bsFlame">>)).

no_points_test() ->
    ?assertEqual({[], []}, beamscale_report_profile:sections([], [])).

error_point_test() ->
    Bad = (point(1, #{}))#{meta => #{<<"error">> => <<"perf not found: install linux-perf">>}},
    {_, [{_, Points}]} = beamscale_report_profile:sections([Bad], []),
    P = iolist_to_binary(Points),
    ?assertNotEqual(nomatch, binary:match(P, <<"No profile: perf not found">>)),
    ?assertEqual(nomatch, binary:match(P, <<"<svg">>)).

%% The emulator's sampling where perf could not run: said on the point, with no perf rate.
sampled_point_test() ->
    Note = <<"perf cannot run (perf not found: install linux-perf): sampled by the emulator "
             "(process_info)">>,
    #{meta := Meta} = Point = point(1, one()),
    {_, [{_, Points}]} = beamscale_report_profile:sections([Point#{meta := Meta#{<<"note">> =>
                                                                                     Note}}],
                                                           none),
    P = iolist_to_binary(Points),
    ?assertNotEqual(nomatch, binary:match(P, <<"10 samples over 1000 ms; overhead 2.5 %">>)),
    ?assertNotEqual(nomatch, binary:match(P, <<Note/binary, ": no C functions">>)),
    ?assertEqual(nomatch, binary:match(P, <<"999 Hz">>)).

flame_test() ->
    Svg = iolist_to_binary(beamscale_report_flame:svg(two(), "f9")),
    %% One frame per distinct node of the tree: scheduler, ets_insert_2, the lock, m:f/1 and
    %% db_put_hash; each with its hover title.
    ?assertEqual(5, length(binary:matches(Svg, <<"<rect ">>))),
    ?assertEqual(5, length(binary:matches(Svg, <<"<title>">>))),
    ?assertNotEqual(nomatch,
                    binary:match(Svg, <<"<title>ethr_rwmutex_rwlock (6 samples, 60.0%)">>)),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"oninput=\"bsFlame(this, 'f9')\"">>)),
    %% The root spans the width; the lock's frame is drawn in the locks colour.
    ?assertNotEqual(nomatch, binary:match(Svg, <<"width=\"1200.0\"">>)),
    Red = list_to_binary(beamscale_report_flame:colour(locks)),
    ?assertNotEqual(nomatch, binary:match(Svg, Red)).

flame_escapes_test() ->
    Svg = iolist_to_binary(beamscale_report_flame:svg(#{[<<"t">>, <<"m:'<x>'/0">>] => 1}, "f")),
    ?assertEqual(nomatch, binary:match(Svg, <<"<x>">>)),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"&lt;x&gt;">>)).
