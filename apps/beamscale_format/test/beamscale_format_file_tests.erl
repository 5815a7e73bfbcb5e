%% Input files read within bounds (issue 31): only regular files, at most the bound.
-module(beamscale_format_file_tests).

-include_lib("eunit/include/eunit.hrl").

tmp(Name) ->
    Dir = filename:join("/tmp", "beamscale_format_file_tests." ++ os:getpid()),
    ok = filelib:ensure_path(Dir),
    filename:join(Dir, Name).

regular_test() ->
    F = tmp("ok.txt"),
    ok = file:write_file(F, <<"abc">>),
    ?assertEqual({ok, <<"abc">>}, beamscale_format_file:read(F, 3)),
    ?assertMatch({error, {beamscale_format_file, {too_big, 3, 2}}},
                 beamscale_format_file:read(F, 2)),
    ?assertEqual("3 bytes, more than the 2 read: refused",
                 beamscale_format_file:format_error(element(2, beamscale_format_file:read(F, 2)))).

%% /dev/zero (through a symlink) and a FIFO with no writer are refused at once: not read, not
%% waited on.
special_files_test() ->
    Zero = tmp("zero"),
    _ = file:delete(Zero),
    ok = file:make_symlink("/dev/zero", Zero),
    Fifo = tmp("fifo"),
    _ = file:delete(Fifo),
    "" = os:cmd("mkfifo " ++ Fifo),
    ?assertEqual({error, {beamscale_format_file, {not_regular, device}}},
                 beamscale_format_file:read(Zero, 1024)),
    ?assertEqual({error, {beamscale_format_file, {not_regular, other}}},
                 beamscale_format_file:read(Fifo, 1024)),
    ?assertEqual({error, {beamscale_format_file, {not_regular, directory}}},
                 beamscale_format_file:read("/tmp", 1024)),
    ?assertEqual("no such file or directory", beamscale_format_file:format_error(
                                                element(2, beamscale_format_file:read(
                                                             tmp("none"), 1)))).

written_test() ->
    ?assertEqual(ok, beamscale_format_file:written(ok, "f")),
    ?assertError({beamscale_format_file, {write, "f", enospc}},
                 beamscale_format_file:written({error, enospc}, "f")),
    ?assertEqual("cannot write f: no space left on device",
                 beamscale_format_file:format_error({write, "f", enospc})).
