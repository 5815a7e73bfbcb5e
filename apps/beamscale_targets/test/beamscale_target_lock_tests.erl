%% A directory lock: refused while a live emulator holds it, taken over from one gone or from a
%% process that is not an emulator, this emulator's own taken again, released.
-module(beamscale_target_lock_tests).
-include_lib("eunit/include/eunit.hrl").

-define(L, beamscale_target_lock).
%% A fresh emulator starts in well under a second; a loaded host may take several.
-define(START_TIMEOUT, 60000).

lock_test_() ->
    {timeout, 120, {setup, fun tmp_dir/0, fun(Dir) -> file:del_dir_r(Dir) end,
                    fun(Dir) -> [fun() -> other_emulator(Dir) end,
                                 fun() -> not_an_emulator(Dir) end,
                                 fun() -> own(Dir) end] end}}.

other_emulator(Dir) ->
    File = filename:join(Dir, "other.lock"),
    Port = open_port({spawn_executable, os:find_executable("erl")},
                     [{args, ["-noshell", "-eval", "io:format(\"~s~n\", [os:getpid()])"]},
                      {line, 100}]),
    Pid = receive {Port, {data, {eol, P}}} -> P
          after ?START_TIMEOUT -> error(no_emulator)
          end,
    ok = file:write_file(File, [Pid, " node other (OS pid ", Pid, ")"]),
    ?assertEqual({in_use, "node other (OS pid " ++ Pid ++ ")"}, ?L:take(File, "me")),
    _ = os:cmd("kill -9 " ++ Pid),
    ok = wait_gone(Pid, 100),
    ?assertEqual(ok, ?L:take(File, "me")),
    ?assertEqual({ok, list_to_binary([os:getpid(), " me"])}, file:read_file(File)),
    ok = ?L:release(File),
    ?assertNot(filelib:is_file(File)).

not_an_emulator(Dir) ->
    File = filename:join(Dir, "sh.lock"),
    ok = file:write_file(File, "1 init, not an emulator"),
    ?assertEqual(ok, ?L:take(File, "me")),
    ok = file:write_file(File, "garbage"),
    ?assertEqual(ok, ?L:take(File, "me")).

own(Dir) ->
    File = filename:join(Dir, "own.lock"),
    ok = ?L:take(File, "first"),
    ?assertEqual(ok, ?L:take(File, "again")),
    ok = ?L:release(File),
    ok = ?L:release(File).

wait_gone(_Pid, 0) -> {error, still_running};
wait_gone(Pid, Tries) ->
    case file:read_file("/proc/" ++ Pid ++ "/stat") of
        {error, enoent} -> ok;
        {ok, Stat} ->
            case binary:match(Stat, <<") Z">>) of
                nomatch -> timer:sleep(100), wait_gone(Pid, Tries - 1);
                _ -> ok
            end
    end.

tmp_dir() ->
    Dir = string:trim(os:cmd("mktemp -d /tmp/beamscale-lock-tests.XXXXXX")),
    true = filelib:is_dir(Dir),
    Dir.
