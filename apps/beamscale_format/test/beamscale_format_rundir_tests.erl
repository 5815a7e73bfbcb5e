-module(beamscale_format_rundir_tests).
-include_lib("eunit/include/eunit.hrl").

%% Two entries of one name (or one id) would let a writer and a reader part ways.
unique_test() ->
    All = beamscale_format_rundir:all(),
    Files = [F || #{file := F} <- All],
    Names = [N || #{name := N} <- All],
    ?assertEqual(length(Files), length(lists:usort(Files))),
    ?assertEqual(length(Names), length(lists:usort(Names))).

path_test() ->
    ?assertEqual("runs/x/run.json", beamscale_format_rundir:path("runs/x", run_json)),
    ?assertEqual("runs/x/output", beamscale_format_rundir:path("runs/x", output)),
    ?assertEqual("runs/x/profiles/b/e.json",
                 beamscale_format_rundir:path("runs/x", profiles, ["b", "e.json"])),
    ?assertEqual("runs/.x.lock", beamscale_format_rundir:beside("runs/x", load_lock)),
    ?assertError({unknown_run_file, nope}, beamscale_format_rundir:name(nope)).
