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

%% A Tsung file's warnings are kept in the scenario (run.json's `warnings'): the settings that
%% change nothing on one line, each one not applied on its own.
warnings_kept_test() ->
    Path = copy("rpc_echo.xml", "warned.xml"),
    {ok, Text} = file:read_file(Path),
    Opts = <<"<options><option name=\"rate_limit\" value=\"1\"/>"
             "<option name=\"hibernate\" value=\"1\"/></options>\n<sessions>">>,
    ok = file:write_file(Path, binary:replace(Text, <<"<sessions>">>, Opts)),
    {ok, #{warnings := Ws}} = beamscale_scenario_file:read(Path),
    ?assertMatch([<<"ignored, as they do not change the load sent: ", _/binary>>,
                  <<"not applied: <option name=\"rate_limit\"> (", _/binary>>], Ws),
    ?assertMatch({_, _}, binary:match(hd(Ws), <<"<option name=\"hibernate\">">>)).
