%% The one scenario reader of `load' and `saturate': XML by extension or by content.
-module(beamscale_scenario_file_tests).
-include_lib("eunit/include/eunit.hrl").

examples() -> filename:join(code:lib_dir(beamscale), "../../../../examples").

copy(Example, As) ->
    Dir = filename:join(string:trim(os:cmd("mktemp -d")), "scenario_file"),
    ok = filelib:ensure_path(Dir),
    Path = filename:join(Dir, As),
    {ok, _} = file:copy(filename:join(examples(), Example), Path),
    Path.

xml_by_content_test() ->
    %% A Tsung file under another name is read as Tsung, as with its .xml extension.
    Path = copy("rpc_echo.xml", "echo.tsung"),
    ?assert(beamscale_scenario_file:is_xml(Path)),
    {ok, ByContent} = beamscale_scenario_file:read(Path),
    {ok, ByExt} = beamscale_scenario_file:read(filename:join(examples(), "rpc_echo.xml")),
    ?assertEqual(maps:remove(file, ByExt), maps:remove(file, ByContent)).

terms_by_content_test() ->
    Path = copy("rpc_echo.scenario", "echo.txt"),
    ?assertNot(beamscale_scenario_file:is_xml(Path)),
    ?assertMatch({ok, #{sessions := [_ | _]}}, beamscale_scenario_file:read(Path)).

missing_file_is_terms_error_test() ->
    ?assertNot(beamscale_scenario_file:is_xml("/nonexistent/x")),
    ?assertMatch({error, {beamscale_load_scenario, _}},
                 beamscale_scenario_file:read("/nonexistent/x")).
