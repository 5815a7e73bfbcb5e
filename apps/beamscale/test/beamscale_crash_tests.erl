%% The crash file: what a bug report needs, in the run's directory or here.
-module(beamscale_crash_tests).

-include_lib("eunit/include/eunit.hrl").

write_test() ->
    Dir = tmp_dir(),
    Stack = try error(badarg) catch error:badarg:S -> S end,
    {ok, File} = beamscale_crash:write(Dir, ["run", "--name", "it's"], {error, badarg, Stack}),
    ?assertEqual(filename:join(Dir, "beamscale-crash.log"), File),
    {ok, Bin} = file:read_file(File),
    Text = binary_to_list(Bin),
    [?assertNotEqual(nomatch, string:find(Text, Part))
     || Part <- ["command: beamscale run --name 'it'\\''s'", "error:badarg",
                 atom_to_list(?MODULE), "OTP: " ++ erlang:system_info(otp_release)]],
    ok = file:del_dir_r(Dir).

%% A directory that is not there is no place for it: the error says so, nothing is made.
unwritable_test() ->
    Dir = filename:join(tmp_dir(), "gone"),
    ?assertEqual({error, enoent}, beamscale_crash:write(Dir, [], {throw, x, []})),
    ok = file:del_dir_r(filename:dirname(Dir)).

dir_test() ->
    Root = tmp_dir(),
    ok = file:make_dir(filename:join(Root, "r")),
    ?assertEqual(filename:join(Root, "r"), beamscale_crash:dir(#{out => Root, name => "r"})),
    ?assertEqual(".", beamscale_crash:dir(#{out => Root, name => "missing"})),
    ?assertEqual(".", beamscale_crash:dir(#{name => "r"})),
    ok = file:del_dir_r(Root).

tmp_dir() ->
    Dir = filename:join(os:getenv("TMPDIR", "/tmp"),
                        "beamscale_crash_" ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = file:make_dir(Dir),
    Dir.
