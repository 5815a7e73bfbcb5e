%% `beamscale load' under faults (issue 31), through the command line as a user runs it against
%% a real HTTP server on 127.0.0.1: a second load of the same --name at once, SIGTERM, and
%% Ctrl-C in a terminal (script(1), through the ./beamscale script), a full disk (a small tmpfs
%% mounted here; the suite runs as root) and a read-only output directory.
-module(beamscale_cmd_load_faults_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_testcase/2, end_per_testcase/2]).
-export([same_name_at_once/1, sigterm_drains/1, sigterm_twice/1, ctrl_c_drains/1, full_disk/1,
         read_only/1]).
-export([same_name_at_once/0, sigterm_drains/0, sigterm_twice/0, ctrl_c_drains/0, full_disk/0,
         read_only/0]).

%% A load of a few seconds, its emulator's start included, on a loaded host.
-define(RUN_TIMEOUT, 60000).
%% load.csv gets a row a second: 30 s covers a slow start.
-define(ROWS_TRIES, 300).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [same_name_at_once, sigterm_drains, sigterm_twice, ctrl_c_drains, full_disk, read_only].

init_per_testcase(_Case, Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    [{server, Srv} | Config].

end_per_testcase(_Case, Config) ->
    beamscale_target_http:stop(?config(server, Config)).

%% A scenario of `Secs' seconds at 20 users/s against the suite's server.
scenario(Config, Secs) -> scenario(Config, Secs, 200, 5).

%% The same, each session thinking `ThinkMs' between its requests, `DrainS' the drain.
scenario(Config, Secs, ThinkMs, DrainS) ->
    Port = beamscale_target_http:port(?config(server, Config)),
    File = filename:join(?config(priv_dir, Config), "faults.scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.\n"
        "{phases, [{p, #{duration_s => ~b, rate => 20}}]}.\n"
        "{sessions, [{s, #{steps => [{http, #{target => web}}, {think, ~b}, "
        "{http, #{target => web}}]}}]}.\n{drain_s, ~b}.\n", [Port, Secs, ThinkMs, DrainS])),
    File.

same_name_at_once() ->
    [{doc, "A second load of a --name still running exits 2 naming its holder; the first ends 0."}].
same_name_at_once(Config) ->
    Out = ?config(priv_dir, Config),
    Args = ["load", scenario(Config, 4), "--name", "twice", "--out", Out, "--quiet"],
    First = beamscale_test_cli:open(Args),
    {os_pid, OsPid} = erlang:port_info(First, os_pid),
    ok = wait_rows(filename:join([Out, "twice", "load.csv"]), 1, ?ROWS_TRIES),
    {2, Text} = beamscale_test_cli:run(Args),
    Holder = lists:flatten(io_lib:format("is in use by a load of OS pid ~b", [OsPid])),
    ?assertNotEqual(nomatch, string:find(Text, Holder), Text),
    {0, _} = beamscale_test_cli:wait(First, ?RUN_TIMEOUT),
    %% The lock went with the first load: the name is free again (--replace: the directory is
    %% that load's).
    {0, _} = beamscale_test_cli:run(Args ++ ["--replace"]).

sigterm_drains() ->
    [{doc, "kill -TERM: arrivals stop, sessions in flight end, summary and page written, "
      "\"interrupted\", exit 143."}].
sigterm_drains(Config) ->
    Out = ?config(priv_dir, Config),
    Port = beamscale_test_cli:open(["load", scenario(Config, 60), "--name", "term",
                                    "--out", Out]),
    {os_pid, OsPid} = erlang:port_info(Port, os_pid),
    ok = wait_rows(filename:join([Out, "term", "load.csv"]), 2, ?ROWS_TRIES),
    _ = os:cmd("kill -TERM " ++ integer_to_list(OsPid)),
    {_, Text} = Ended = beamscale_test_cli:wait(Port, ?RUN_TIMEOUT),
    drained(filename:join(Out, "term"), 143, Ended),
    %% Said at once (issue 55: a load that seemed to ignore its first SIGTERM).
    ?assertNotEqual(nomatch, string:find(Text, "beamscale load: stopping: no new users"), Text).

%% Issue 55: a load's second SIGTERM said "run the same command again to continue", which a
%% load cannot do (a rerun starts afresh).
sigterm_twice() ->
    [{doc, "A second kill -TERM while the load drains: it ends at once, exit 143, in words of "
      "its own, never \"run the same command again\"."}].
sigterm_twice(Config) ->
    Out = ?config(priv_dir, Config),
    %% Sessions think 5 s: the first SIGTERM's drain has users to wait for that long.
    Port = beamscale_test_cli:open(["load", scenario(Config, 60, 5000, 20), "--name", "term2",
                                    "--out", Out]),
    {os_pid, OsPid} = erlang:port_info(Port, os_pid),
    ok = wait_rows(filename:join([Out, "term2", "load.csv"]), 2, ?ROWS_TRIES),
    Kill = "kill -TERM " ++ integer_to_list(OsPid),
    _ = os:cmd(Kill),
    %% Two signals at once may come as one: the second a moment later, while the drain waits.
    timer:sleep(500),
    T0 = erlang:monotonic_time(millisecond),
    _ = os:cmd(Kill),
    {Status, Text} = beamscale_test_cli:wait(Port, ?RUN_TIMEOUT),
    Ms = erlang:monotonic_time(millisecond) - T0,
    ct:log("~b ms after the second SIGTERM:~n~ts", [Ms, Text]),
    ?assertEqual(143, Status, Text),
    ?assertNotEqual(nomatch, string:find(Text, "beamscale load: interrupted again: ended at "
                                               "once"), Text),
    ?assertNotEqual(nomatch, string:find(Text, "a second SIGTERM ends it at once"), Text),
    ?assertEqual(nomatch, string:find(Text, "run the same command again"), Text),
    %% The drain (sessions thinking 5 s) was not waited for.
    ?assert(Ms < 4000).

ctrl_c_drains() ->
    [{doc, "Ctrl-C in a terminal (./beamscale): as SIGTERM, but exit 130."}].
ctrl_c_drains(Config) ->
    Out = ?config(priv_dir, Config),
    Args = ["load", scenario(Config, 60), "--name", "ctrlc", "--out", Out],
    %% As cmd_run_SUITE:ctrl_c_then_resume: env(1) restores a SIGINT a background runner
    %% ignores; script(1) gives the command a terminal, where ETX is the Ctrl-C key.
    Cmd = lists:join(" ", [[$', A, $'] || A <- ["env", "--default-signal=INT",
                                                filename:join(root(), "beamscale") | Args]]),
    Port = open_port({spawn_executable, os:find_executable("script")},
                     [{args, ["-qfec", Cmd, "/dev/null"]}, exit_status, binary, stderr_to_stdout]),
    ok = wait_rows(filename:join([Out, "ctrlc", "load.csv"]), 2, ?ROWS_TRIES),
    true = port_command(Port, <<3>>),
    drained(filename:join(Out, "ctrlc"), 130, beamscale_test_cli:wait(Port, ?RUN_TIMEOUT)).

%% The load ended with `Status', said so, and wrote its summary and page: every session started
%% ended (each takes 200 ms, the drain 5 s), long before the 60 s the phase asks.
drained(Dir, Status, {Got, Text}) ->
    ct:log("~ts", [Text]),
    ?assertEqual(Status, Got, Text),
    ?assertNotEqual(nomatch, string:find(Text, "beamscale load: interrupted"), Text),
    ?assertNotEqual(nomatch, string:find(Text, "interrupted after"), Text),
    #{<<"stopped">> := <<"interrupted">>, <<"duration_s">> := Secs,
      <<"sessions_started">> := Started, <<"sessions_done">> := Done} =
        beamscale_test_load:json(Dir, "summary.json"),
    ?assert(Started > 0),
    ?assertEqual(Started, Done),
    ?assert(Secs < 40),
    ?assert(filelib:is_regular(filename:join(Dir, "index.html"))).

full_disk() ->
    [{doc, "A disk that fills at different files: exit 2, one line naming the file and "
      "\"no space left on device\", no .tmp file left."}].
full_disk(Config) ->
    File = scenario(Config, 1),
    %% 4 kB pages: the disk fills at samples.csv, load.csv, ..., index.html as it grows.
    [begin
         Out = mounted(Config, "full" ++ Size, "size=" ++ Size),
         try
             {Code, Text} = beamscale_test_cli:run(["load", File, "--out", Out, "--quiet"]),
             one_line(2, Code, Text, Out, "no space left on device"),
             %% Issue 55: a file that could not be written leaves no `.tmp' of itself.
             ?assertEqual([], filelib:wildcard("**/*.tmp", Out), Size)
         after
             umount(Out)
         end
     end || Size <- ["4k", "12k", "24k", "32k"]].

read_only() ->
    [{doc, "A read-only output directory: exit 2, one line naming the file and the reason."}].
read_only(Config) ->
    Out = mounted(Config, "ro", "size=64k,ro"),
    try
        {Code, Text} = beamscale_test_cli:run(["load", scenario(Config, 1), "--out", Out]),
        one_line(2, Code, Text, Out, "read-only file system")
    after
        umount(Out)
    end.

%% A tmpfs of these options on a fresh directory of priv_dir.
mounted(Config, Name, Opts) ->
    Dir = filename:join(?config(priv_dir, Config), Name),
    ok = filelib:ensure_path(Dir),
    {0, Out} = os_cmd(["mount", "-t", "tmpfs", "-o", Opts, "tmpfs", Dir]),
    ct:log("mounted ~ts (~ts): ~ts", [Dir, Opts, Out]),
    Dir.

umount(Dir) -> {0, _} = os_cmd(["umount", Dir]).

os_cmd([Exe | Args]) ->
    Port = open_port({spawn_executable, os:find_executable(Exe)},
                     [{args, Args}, exit_status, stderr_to_stdout, binary]),
    beamscale_test_cli:wait(Port, ?RUN_TIMEOUT).

%% The command ended with `Status' and said one line naming a file under `Dir' and `Reason',
%% not an internal error.
one_line(Status, Code, Text, Dir, Reason) ->
    ct:log("~ts", [Text]),
    ?assertEqual(Status, Code, Text),
    ?assertMatch([_], string:lexemes(Text, "\n"), Text),
    ?assertNotEqual(nomatch, string:find(Text, ": cannot "), Text),
    ?assertNotEqual(nomatch, string:find(Text, Dir ++ "/"), Text),
    ?assertNotEqual(nomatch, string:find(Text, Reason), Text),
    ?assertEqual(nomatch, string:find(Text, "badmatch"), Text).

%% The repository (its `beamscale' script): four levels above this file, apps/beamscale/test.
root() -> filename:dirname(filename:dirname(filename:dirname(filename:dirname(?FILE)))).

%% Wait until `File' has `N' rows after its header.
wait_rows(_File, _N, 0) -> {error, no_rows};
wait_rows(File, N, Tries) ->
    Rows = case file:read_file(File) of
               {ok, Bin} -> length(binary:matches(Bin, <<"\n">>)) - 1;
               {error, _} -> 0
           end,
    case Rows >= N of
        true -> ok;
        false -> timer:sleep(100), wait_rows(File, N, Tries - 1)
    end.
