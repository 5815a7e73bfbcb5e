%% The fs kind in a directory of priv_dir: every operation with its bytes, errors by reason,
%% paths that try to leave the directory, and Tsung's fs-nfs.xml (its eval fun included).
-module(beamscale_load_fs_SUITE).

-include_lib("stdlib/include/assert.hrl").
-include_lib("kernel/include/file.hrl").

-export([all/0, suite/0]).
-export([operations/1, errors/1, not_regular/1, escapes/1, tsung_example/1]).
-export([operations/0, errors/0, not_regular/0, escapes/0, tsung_example/0]).

-import(beamscale_load_servers, [scenario/1, run/1]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [operations, errors, not_regular, escapes, tsung_example].

scenario(Dir, Steps) ->
    scenario(io_lib:format(
               "{targets, [{d, #{dir => \"~ts\"}}]}.\n"
               "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
               "{sessions, [{s, #{steps => ~ts}}]}.\n", [Dir, Steps])).

fs(Type, Rest) -> "{fs, #{type => " ++ Type ++ Rest ++ "}}".

operations() ->
    [{doc, "Every operation in its own directory per user: bytes counted, no errors."}].
operations(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_fs_SUITE_ops"),
    U = "\"u%%_id%%\"",
    F = "\"u%%_id%%/f\"",
    Steps = lists:join(", ",
                       ["[{setvars, [id], {random_string, 12}}",
                        fs("make_dir", ", path => " ++ U),
                        fs("make_dir", ", path => " ++ U),
                        fs("open", ", path => " ++ F ++ ", mode => write")]
                       ++ lists:duplicate(3, fs("write_chunk", ", size => 4096"))
                       ++ [fs("close", ""), fs("open", ", path => " ++ F)]
                       ++ lists:duplicate(4, fs("read_chunk", ", size => 4096"))
                       ++ [fs("close", ""), fs("stat", ", path => " ++ F),
                           fs("read_file", ", path => " ++ F),
                           fs("write_file", ", path => \"u%%_id%%/g\", size => 1000"),
                           fs("delete", ", path => " ++ F),
                           fs("delete", ", path => \"u%%_id%%/g\""),
                           fs("del_dir", ", path => " ++ U) ++ "]"]),
    #{total := T} = run(scenario(Dir, Steps)),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(19 * Done, maps:get(requests, T)),
    ?assertEqual((3 * 4096 + 1000) * Done, maps:get(bytes_sent, T)),
    %% Three chunks, then end of file; the whole file again.
    ?assertEqual(6 * 4096 * Done, maps:get(bytes_received, T)),
    ?assertEqual({ok, []}, file:list_dir(Dir)).

errors() -> [{doc, "Missing files and no open file: the operation and the error in words."}].
errors(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_fs_SUITE_errors"),
    Steps = "[" ++ fs("delete", ", path => \"nothing\"") ++ ", "
            ++ fs("read_chunk", ", size => 10") ++ ", "
            ++ fs("open", ", path => \"no/such\"") ++ ", "
            ++ fs("del_dir", ", path => \"\"") ++ "]",
    #{total := T} = run(scenario(Dir, Steps)),
    ?assertEqual([<<"fs del_dir: empty path (the directory itself)">>,
                  <<"fs delete: no such file or directory">>,
                  <<"fs open: no such file or directory">>,
                  <<"fs read_chunk: no file open">>],
                 lists:sort(maps:keys(maps:get(reasons, T)))).

not_regular() ->
    [{doc, "/dev/zero, a FIFO and a directory: each a named error at once, the run on time."}].
not_regular(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_fs_SUITE_special"),
    Fifo = filename:join(Dir, "pipe"),
    _ = os:cmd("mkfifo '" ++ Fifo ++ "'"),
    {ok, #file_info{type = other}} = file:read_file_info(Fifo),
    ok = file:make_dir(filename:join(Dir, "sub")),
    Zero = ", target => dev, path => \"zero\"",
    Steps = "[" ++ lists:join(", ",
                              [fs("open", Zero), fs("read_file", Zero),
                               fs("open", Zero ++ ", mode => write"),
                               fs("open", ", target => d, path => \"pipe\""),
                               fs("open", ", target => d, path => \"pipe\", mode => write"),
                               fs("read_file", ", target => d, path => \"pipe\""),
                               fs("write_file", ", target => d, path => \"pipe\", size => 10"),
                               fs("open", ", target => d, path => \"sub\""),
                               fs("read_file", ", target => d, path => \"sub\"")]) ++ "]",
    S = scenario(io_lib:format(
                   "{targets, [{d, #{dir => \"~ts\"}}, {dev, #{dir => \"/dev\"}}]}.\n"
                   "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
                   "{sessions, [{s, #{steps => ~ts}}]}.\n", [Dir, Steps])),
    {Us, #{total := T}} = timer:tc(fun() -> run(S) end),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(#{<<"fs open: not a regular file: character device">> => 2 * Done,
                   <<"fs read_file: not a regular file: character device">> => Done,
                   <<"fs open: not a regular file: FIFO">> => 2 * Done,
                   <<"fs read_file: not a regular file: FIFO">> => Done,
                   <<"fs write_file: not a regular file: FIFO">> => Done,
                   <<"fs open: not a regular file: directory">> => Done,
                   <<"fs read_file: not a regular file: directory">> => Done},
                 maps:get(reasons, T)),
    ?assertEqual(0, maps:get(bytes_received, T)),
    %% One second of arrivals, nothing waited on: well within the drain.
    ?assert(Us < 10000000, Us).

escapes() -> [{doc, "A variable holding .. or an absolute path, a link out: refused, untouched."}].
escapes(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_fs_SUITE_escapes"),
    Outside = beamscale_load_servers:tmp_dir(Config, "beamscale_load_fs_SUITE_outside"),
    ok = file:write_file(filename:join(Outside, "secret"), "s"),
    ok = file:make_symlink(Outside, filename:join(Dir, "link")),
    Steps = "[{setvars, [up], {value, \"../beamscale_load_fs_SUITE_outside\"}},"
            " {setvars, [abs], {value, \"" ++ Outside ++ "\"}}, "
            ++ fs("delete", ", path => \"%%_up%%/secret\"") ++ ", "
            ++ fs("delete", ", path => \"%%_abs%%/secret\"") ++ ", "
            ++ fs("delete", ", path => \"link/secret\"") ++ ", "
            ++ fs("read_file", ", path => \"x/../../beamscale_load_fs_SUITE_outside/secret\"")
            ++ "]",
    #{total := T} = run(scenario(Dir, Steps)),
    Done = maps:get(sessions_done, T),
    ?assertEqual(#{<<"fs delete: path outside its directory (.. or a link out of it)">> => 3 * Done,
                   <<"fs read_file: path outside its directory (.. or a link out of it)">> => Done},
                 maps:get(reasons, T)),
    ?assertEqual({ok, <<"s">>}, file:read_file(filename:join(Outside, "secret"))).

tsung_example() ->
    [{doc, "Tsung's fs-nfs.xml: each user writes its files, then reads those of the user its "
           "eval fun names (with ts_dynvars:lookup/2)."}].
tsung_example(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_fs_SUITE_nfs"),
    %% Besides the path and the durations: 2 files of 3 chunks each (100 of 101 in the file,
    %% 650 MB per user). Its 4 phases of 10 users a second each: the eval fun has users 1 to 8
    %% read users 10 to 17, the others the user 9 before them (within 32, then 64 users).
    Phases = [{"duration=\"" ++ M ++ "\" unit=\"minute\"", "duration=\"1\" unit=\"second\""}
              || M <- ["10", "20", "30", "45"]],
    S = beamscale_load_servers:tsung_example(
          "fs-nfs.xml",
          [{"/mnt/bench/", Dir ++ "/"},
           %% A torque batch (hosts from the batch system): this host.
           {"type=\"batch\" batch=\"torque\"", "host=\"localhost\""},
           {"to=\"100\" var=\"file\"", "to=\"2\" var=\"file\""},
           {"from=\"0\" to=\"100\" var=\"chunk\"", "from=\"0\" to=\"2\" var=\"chunk\""},
           {"from=\"1\" to=\"100\" var=\"chunk\"", "from=\"1\" to=\"4\" var=\"chunk\""},
           {"value=\"1\"/>", "value=\"0.1\"/>"},
           {"min=\"30\" max=\"31\"", "min=\"2\" max=\"3\""} | Phases]),
    #{total := T} = run(S),
    Done = maps:get(sessions_done, T),
    ct:pal("~b sessions, reasons ~p", [Done, maps:get(reasons, T)]),
    ?assert(Done >= 30),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(2 * 3 * 65536 * Done, maps:get(bytes_sent, T)),
    ?assertEqual(2 * 3 * 65536 * Done, maps:get(bytes_received, T)),
    {ok, Users} = file:list_dir(Dir),
    ?assertEqual(Done, length(Users)).
