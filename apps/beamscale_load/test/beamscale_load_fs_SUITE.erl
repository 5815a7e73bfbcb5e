%% The fs kind in a directory of priv_dir: every operation with its bytes, errors by reason,
%% paths that try to leave the directory, and Tsung's fs-nfs.xml (its eval fun included).
-module(beamscale_load_fs_SUITE).

-include_lib("stdlib/include/assert.hrl").
-include_lib("kernel/include/file.hrl").

-export([all/0, suite/0]).
-export([operations/1, errors/1, not_regular/1, escapes/1, tsung_example/1, copy_position/1,
         copy_bounds/1]).
-export([operations/0, errors/0, not_regular/0, escapes/0, tsung_example/0, copy_position/0,
         copy_bounds/0]).

-import(beamscale_load_servers, [scenario/1, run/1]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [operations, errors, not_regular, escapes, tsung_example, copy_position, copy_bounds].

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

copy_position() ->
    [{doc, "copy, and position on write_file, read_file, read_chunk and write_chunk: the bytes "
           "counted and the files as each put them."}].
copy_position(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_fs_SUITE_copy"),
    P = fun(Name) -> "\"u%%_id%%/" ++ Name ++ "\"" end,
    Steps = "[" ++ lists:join(
                     ", ",
                     ["{setvars, [id], {random_string, 12}}",
                      fs("make_dir", ", path => \"u%%_id%%\""),
                      fs("write_file", ", path => " ++ P("f") ++ ", size => 1000"),
                      %% Past the end: a hole of zeros from 1000 to 2000.
                      fs("write_file", ", path => " ++ P("f") ++ ", size => 10, position => 2000"),
                      fs("copy", ", path => " ++ P("f") ++ ", dest => " ++ P("g")),
                      fs("open", ", path => " ++ P("g")),
                      fs("read_chunk", ", size => 10, position => 2000"),
                      %% On from 2010: the end of the file, nothing read.
                      fs("read_chunk", ", size => 100"),
                      fs("close", ""),
                      fs("read_file", ", path => " ++ P("g") ++ ", position => 1990"),
                      fs("open", ", path => " ++ P("h") ++ ", mode => write"),
                      fs("write_chunk", ", size => 5, position => 100"),
                      fs("write_chunk", ", size => 5"),
                      fs("close", "")]) ++ "]",
    #{total := T} = run(scenario(Dir, Steps)),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 5),
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(13 * Done, maps:get(requests, T)),
    ?assertEqual((1000 + 10 + 2010 + 5 + 5) * Done, maps:get(bytes_sent, T)),
    ?assertEqual((2010 + 10 + 20) * Done, maps:get(bytes_received, T)),
    {ok, Users} = file:list_dir(Dir),
    ?assertEqual(Done, length(Users)),
    [begin
         {ok, F} = file:read_file(filename:join([Dir, U, "f"])),
         ?assertEqual(2010, byte_size(F)),
         ?assertEqual(<<0:(1000 * 8)>>, binary:part(F, 1000, 1000)),
         ?assertEqual({ok, F}, file:read_file(filename:join([Dir, U, "g"]))),
         {ok, H} = file:read_file(filename:join([Dir, U, "h"])),
         ?assertEqual(110, byte_size(H)),
         ?assertEqual(<<0:800>>, binary:part(H, 0, 100))
     end || U <- Users].

copy_bounds() ->
    [{doc, "copy keeps the kind's bounds: a FIFO or device either side, a source above "
           "max_reply_bytes, a destination out of the directory, the request's timeout."}].
copy_bounds(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_fs_SUITE_copyb"),
    _ = os:cmd("mkfifo '" ++ filename:join(Dir, "pipe") ++ "'"),
    ok = file:write_file(filename:join(Dir, "big"), binary:copy(<<"x">>, 2000)),
    ok = file:write_file(filename:join(Dir, "small"), <<"abc">>),
    %% 48 MiB read and written in 768 chunks of 64 KiB cannot end within 1 ms.
    ok = file:write_file(filename:join(Dir, "huge"), binary:copy(<<0>>, 48 * 1024 * 1024)),
    C = fun(From, To) ->
                fs("copy", ", target => d, path => \"" ++ From ++ "\", dest => \"" ++ To ++ "\"")
        end,
    Steps = "[" ++ lists:join(", ", [C("pipe", "x"), C("small", "pipe"), C("big", "y"),
                                     C("small", "../out"), C("none", "z"),
                                     C("small", "small2"),
                                     fs("copy", ", target => dev, path => \"zero\", "
                                                "dest => \"null\"")]) ++ "]",
    S = scenario(io_lib:format(
                   "{targets, [{d, #{dir => \"~ts\", max_reply_bytes => 1000}},"
                   " {dev, #{dir => \"/dev\"}}]}.\n"
                   "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
                   "{sessions, [{s, #{steps => ~ts}}]}.\n", [Dir, Steps])),
    #{total := T} = run(S),
    Done = maps:get(sessions_done, T),
    ?assert(Done >= 1),
    ?assertEqual(#{<<"fs copy: not a regular file: FIFO">> => 2 * Done,
                   <<"fs copy: file above max_reply_bytes (1000)">> => Done,
                   <<"fs copy: path outside its directory (.. or a link out of it)">> => Done,
                   <<"fs copy: no such file or directory">> => Done,
                   <<"fs copy: not a regular file: character device">> => Done},
                 maps:get(reasons, T)),
    ?assertEqual({ok, <<"abc">>}, file:read_file(filename:join(Dir, "small2"))),
    ?assertEqual({error, enoent}, file:read_file_info(filename:join(Dir, "y"))),
    Slow = scenario(io_lib:format(
                      "{targets, [{d, #{dir => \"~ts\", max_reply_bytes => 67108864}}]}.\n"
                      "{phases, [{p, #{duration_s => 1, rate => 2}}]}.\n"
                      "{sessions, [{s, #{steps => [~ts]}}]}.\n",
                      [Dir, fs("copy", ", path => \"huge\", dest => \"huge2\", timeout_ms => 1")])),
    #{total := T2} = run(Slow),
    ?assertEqual([<<"timeout">>], maps:keys(maps:get(reasons, T2))),
    ?assertEqual(maps:get(requests, T2), maps:get(timeouts, T2)),
    {ok, #file_info{size = Part}} = file:read_file_info(filename:join(Dir, "huge2")),
    ?assert(Part < 48 * 1024 * 1024, Part).

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
