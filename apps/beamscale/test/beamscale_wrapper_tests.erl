%% The `./beamscale' script's rebuild: only when a source of the escript is newer than it, not a
%% test file. Run in a throwaway tree of the script's layout, where `rebar3' (first on PATH) only
%% notes that it was called and touches the escript: what is tested is the script's choice.
-module(beamscale_wrapper_tests).

-include_lib("eunit/include/eunit.hrl").

rebuilds_for_sources_only_test() ->
    Root = tree(),
    try
        Old = "200001010000",
        [touch(Root, F, Old) || F <- ["rebar.config", "apps/a/src/a.erl", "apps/a/test/t.erl"]],
        ?assertEqual({"ran", 0}, run(Root)),
        touch(Root, "apps/a/test/t.erl", now),
        ?assertEqual({"ran", 0}, run(Root)),
        touch(Root, "apps/a/src/a.erl", now),
        ?assertEqual({"ran", 1}, run(Root)),
        ?assertEqual({"ran", 1}, run(Root))
    after
        ok = file:del_dir_r(Root)
    end.

%% The script, a stand-in escript that says "ran", a rebar3 that logs its calls.
tree() ->
    Root = string:trim(os:cmd("mktemp -d")),
    Script = filename:join(code:lib_dir(beamscale), "../../../../beamscale"),
    {ok, _} = file:copy(Script, filename:join(Root, "beamscale")),
    Files = [{"rebar.config", "{erl_opts, []}.\n"},
             {"apps/a/src/a.erl", "-module(a).\n"},
             {"apps/a/test/t.erl", "-module(t).\n"},
             {"_build/default/bin/beamscale", "#!/bin/sh\necho ran\n"},
             {"fakebin/rebar3", "#!/bin/sh\necho built >> \"$REBAR_LOG\"\n"
                                "touch _build/default/bin/beamscale\n"}],
    [begin
         Path = filename:join(Root, F),
         ok = filelib:ensure_dir(Path),
         ok = file:write_file(Path, Text)
     end || {F, Text} <- Files],
    [ok = file:change_mode(filename:join(Root, F), 8#755)
     || F <- ["beamscale", "_build/default/bin/beamscale", "fakebin/rebar3"]],
    Root.

touch(Root, File, now) -> touch_cmd(["touch ", filename:join(Root, File)]);
touch(Root, File, Stamp) -> touch_cmd(["touch -t ", Stamp, " ", filename:join(Root, File)]).

touch_cmd(Cmd) -> ?assertEqual("", os:cmd(lists:flatten(Cmd))).

%% What the script printed, and how many times rebar3 was called so far.
run(Root) ->
    Log = filename:join(Root, "rebar.log"),
    Out = os:cmd(lists:flatten(["cd ", Root, " && REBAR_LOG=", Log, " PATH=", Root,
                                "/fakebin:$PATH ./beamscale list < /dev/null"])),
    Calls = case file:read_file(Log) of
                {ok, B} -> length(binary:matches(B, <<"built">>));
                {error, enoent} -> 0
            end,
    {string:trim(Out), Calls}.
