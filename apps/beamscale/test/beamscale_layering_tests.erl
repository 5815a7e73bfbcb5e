%% The layering of docs/architecture.md, checked on the compiled code with xref: calls between
%% apps point one way, and no modules call each other in a cycle.
-module(beamscale_layering_tests).
-include_lib("eunit/include/eunit.hrl").

%% Each app and the apps of ours it may call.
allowed() ->
    #{beamscale_format => [],
      beamscale_stats => [beamscale_format],
      beamscale_report => [beamscale_format, beamscale_stats],
      beamscale_bench => [],
      beamscale_targets => [],
      beamscale_load => [beamscale_format, beamscale_stats],
      beamscale_amoc => [beamscale_format, beamscale_stats, beamscale_load],
      beamscale => [beamscale_format, beamscale_stats, beamscale_report, beamscale_bench,
                    beamscale_targets, beamscale_load, beamscale_amoc]}.

%% xref's queries over the whole build take seconds on a busy host: past EUnit's 5 s default.
layering_test_() ->
    {setup, fun xref_server/0, fun xref:stop/1,
     fun(X) ->
             [{"calls between apps follow the layering",
               {timeout, 120, ?_assertEqual([], against_layering(X))}},
              {"no cycle between modules", {timeout, 120, ?_assertEqual([], cycles(X))}}]
     end}.

xref_server() ->
    {ok, X} = xref:start([{xref_mode, functions}]),
    ok = xref:set_default(X, [{warnings, false}, {verbose, false}]),
    _ = [{ok, _} = xref:add_application(X, code:lib_dir(App), [])
         || App <- maps:keys(allowed())],
    X.

against_layering(X) ->
    {ok, Edges} = xref:q(X, "AE"),
    Allowed = allowed(),
    [{From, To} || {From, To} <- Edges, From =/= To, maps:is_key(To, Allowed),
                   not lists:member(To, maps:get(From, Allowed))].

cycles(X) ->
    {ok, Components} = xref:q(X, "components ME"),
    [C || C <- Components, length(C) > 1].
