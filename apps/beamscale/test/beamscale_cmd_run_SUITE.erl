%% `beamscale run' through the real command line: failures said at once in their own words and
%% counted in the exit code.
-module(beamscale_cmd_run_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([bad_flag/1, bad_flag_load_target/1, closed_stdout/1, rerun_other_config/1,
         sigterm_then_resume/1, ctrl_c_then_resume/1, same_name_at_once/1, report_after_kill/1,
         quiet_nodes/1, own_app/1]).
-export([bad_flag/0, bad_flag_load_target/0, closed_stdout/0, rerun_other_config/0,
         sigterm_then_resume/0, ctrl_c_then_resume/0, same_name_at_once/0, report_after_kill/0,
         quiet_nodes/0, own_app/0]).

%% A node that cannot start is said by the emulator's preflight in well under a second on an
%% idle host; 10 s leaves room for a loaded 2-core host and is still far below the 30 s boot
%% timeout that used to be the only sign.
-define(BAD_FLAG_TIMEOUT, 10000).
%% `beamscale list' takes well under a second; a loaded host may take a few.
-define(LIST_TIMEOUT, 20000).
%% `rebar3 compile' of a one-module application: a few seconds, more on a loaded host.
-define(BUILD_TIMEOUT, 120000).
%% A run of a few 150 ms iterations, node start included, on a loaded host.
-define(RUN_TIMEOUT, 60000).
%% Rows of a killed run appear every 150 ms; 30 s covers a slow node start.
-define(ROWS_TRIES, 300).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [bad_flag, bad_flag_load_target, closed_stdout, rerun_other_config,
          sigterm_then_resume, ctrl_c_then_resume, same_name_at_once, report_after_kill,
          quiet_nodes, own_app].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

bad_flag() -> [{doc, "A typo flag: exit 1 within 10 s, the emulator's words in failures.csv."}].
bad_flag(Config) ->
    Conf = write_config(Config, "typo.config",
                        [{benchmarks, [big]}, {schedulers, [1]}, {iterations, 2},
                         {launches, 1}, {warmups, 0}, {sample, false},
                         {erl_args, [{typo, "+sbwt nonee"}]}]),
    Out = out(Config),
    Words = "bad scheduler busy wait threshold",
    {Status, Text} = beamscale_test_cli:wait(
                       beamscale_test_cli:open(["run", "--config", Conf, "--name", "typo",
                                                "--out", Out]), ?BAD_FLAG_TIMEOUT),
    ?assertEqual(1, Status, Text),
    ?assertNotEqual(nomatch, string:find(Text, Words), Text),
    Failures = beamscale_store:failures(filename:join(Out, "typo")),
    ?assertMatch([#{benchmark := <<"big">>, erl_args := <<"typo">>}], Failures),
    [#{reason := Reason}] = Failures,
    ?assertNotEqual(nomatch, string:find(Reason, Words), Reason),
    {ok, Html} = file:read_file(filename:join([Out, "typo", "index.html"])),
    ?assertNotEqual(nomatch, string:find(Html, Words)),
    beamscale_test_cli:no_strays().

bad_flag_load_target() -> [{doc, "A load target with a typo flag fails at once in its words."}].
bad_flag_load_target(Config) ->
    File = filename:join(?config(priv_dir, Config), "typo.scenario"),
    Scenario = [{targets, [{sut, #{start => #{erl => "erl", flags => "+sbwt nonee",
                                              init => {beamscale_target_echo, noop, []}}}}]},
                {phases, [{only, #{duration_s => 1, rate => 5}}]},
                {sessions, [{echo, #{weight => 1,
                                     steps => [{rpc, #{call => {beamscale_target_echo, echo,
                                                                [hi]}}}]}}]}],
    ok = file:write_file(File, [io_lib:format("~0tp.~n", [E]) || E <- Scenario]),
    {Status, Text} = beamscale_test_cli:wait(
                       beamscale_test_cli:open(["load", File, "--name", "typo_load",
                                                "--out", out(Config), "--quiet"]),
                       ?BAD_FLAG_TIMEOUT),
    ?assertNotEqual(0, Status, Text),
    ?assertNotEqual(nomatch, string:find(Text, "target sut: "), Text),
    ?assertNotEqual(nomatch, string:find(Text, "bad scheduler busy wait threshold: nonee"), Text),
    beamscale_test_cli:no_strays().

%% As `beamscale list | head -1': the reader takes one line and closes the pipe. The shell
%% between keeps the command's standard error and exit status apart from the closed pipe. A
%% handler listed last is slow to give its sizes, so the command still writes after the close
%% (else its few kilobytes may all sit in the pipe's buffer before the reader closes it).
closed_stdout() -> [{doc, "list with its stdout closed after a line: quiet, SIGPIPE's 141."}].
closed_stdout(Config) ->
    Priv = ?config(priv_dir, Config),
    Slow = filename:join(Priv, "slow"),
    ok = filelib:ensure_path(Slow),
    ok = file:write_file(filename:join(Slow, "zz_slow.erl"),
                         "-module(zz_slow).\n-export([bench_args/2, run/3]).\n"
                         "bench_args(_, _) -> timer:sleep(1000), [[1]].\n"
                         "run(_, _, _) -> ok.\n"),
    [Err, Status] = [filename:join(Priv, F) || F <- ["list.err", "list.status"]],
    Cmd = lists:join(" ", [quote(A) || A <- beamscale_test_cli:command(["list", "--bench-path",
                                                                        Slow])]),
    Script = Cmd ++ " 2>" ++ quote(Err) ++ "; echo $? >" ++ quote(Status),
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", Script]}, binary, {line, 200}, exit_status]),
    receive {Port, {data, {eol, First}}} -> ?assertEqual(<<"bang">>, First)
    after ?LIST_TIMEOUT -> ct:fail(no_line)
    end,
    port_close(Port),
    ok = wait_file(Status, ?LIST_TIMEOUT div 100),
    ?assertEqual({ok, <<>>}, file:read_file(Err)),
    ?assertEqual({ok, <<"141\n">>}, file:read_file(Status)).

rerun_other_config() -> [{doc, "A --name rerun with other settings exits 2 naming them."}].
rerun_other_config(Config) ->
    Args = nap_run(Config, "other", ["--iterations", "2"]),
    {0, _} = beamscale_test_cli:run(Args),
    {2, Text} = beamscale_test_cli:run(Args ++ ["--iterations", "3", "--warmups", "1"]),
    ?assertNotEqual(nomatch, string:find(Text, "started with another configuration"), Text),
    ?assertNotEqual(nomatch, string:find(Text, "iterations was 2, now 3"), Text),
    ?assertNotEqual(nomatch, string:find(Text, "warmups was 0, now 1"), Text),
    ?assertEqual(2, length(beamscale_store:measurements(filename:join(out(Config), "other")))),
    {0, Again} = beamscale_test_cli:run(Args),
    ?assertNotEqual(nomatch, string:find(Again, "resuming: 2 of 2 iterations done"), Again).

sigterm_then_resume() -> [{doc, "kill -TERM: says interrupted, 143; the rerun says resuming."}].
sigterm_then_resume(Config) ->
    Args = nap_run(Config, "term", ["--iterations", "8"]),
    Port = beamscale_test_cli:open(Args),
    {os_pid, OsPid} = erlang:port_info(Port, os_pid),
    ok = wait_rows(filename:join([out(Config), "term", "measurements.csv"]), 2, ?ROWS_TRIES),
    _ = os:cmd("kill -TERM " ++ integer_to_list(OsPid)),
    interrupted_then_resumes(Config, "term", Port, 143, Args).

ctrl_c_then_resume() ->
    [{doc, "Ctrl-C in a terminal (./beamscale): says interrupted, 130; the rerun resumes."}].
ctrl_c_then_resume(Config) ->
    Args = nap_run(Config, "ctrlc", ["--iterations", "8"]),
    %% A user's terminal delivers SIGINT; a runner started in the background (`make test &')
    %% ignores it, and a shell cannot undo an ignored signal, so env(1) restores it first.
    Cmd = lists:join(" ", [quote(A) || A <- ["env", "--default-signal=INT",
                                             filename:join(root(), "beamscale") | Args]]),
    %% script(1) runs the command on a terminal of its own; ETX written to that terminal is the
    %% Ctrl-C key: the terminal signals SIGINT to its foreground processes.
    Port = open_port({spawn_executable, os:find_executable("script")},
                     [{args, ["-qfec", Cmd, "/dev/null"]}, exit_status, binary, stderr_to_stdout]),
    Dir = filename:join(out(Config), "ctrlc"),
    ok = wait_rows(filename:join(Dir, "measurements.csv"), 2, ?ROWS_TRIES),
    true = port_command(Port, <<3>>),
    interrupted_then_resumes(Config, "ctrlc", Port, 130, Args).

%% The interrupted run `Name' (8 iterations) ends with `Status' saying how to continue, leaves
%% no node, and its rerun says how far it had come.
interrupted_then_resumes(Config, Name, Port, Status, Args) ->
    {Got, Text} = beamscale_test_cli:wait(Port, ?RUN_TIMEOUT),
    ?assertEqual(Status, Got, Text),
    ?assertNotEqual(nomatch, string:find(Text, "beamscale run: interrupted; run the same command "
                                         "again to continue"), Text),
    N = length(beamscale_store:measurements(filename:join(out(Config), Name))),
    ?assert(N < 8),
    ok = no_nodes_naming(nap_dir(Config), ?ROWS_TRIES),
    {0, Again} = beamscale_test_cli:run(Args),
    Resuming = lists:flatten(io_lib:format("resuming: ~b of 8 iterations done", [N])),
    ?assertNotEqual(nomatch, string:find(Again, Resuming), Again).

same_name_at_once() ->
    [{doc, "A second run of a --name still running exits 2 naming it; none measured twice."}].
same_name_at_once(Config) ->
    %% 40 naps (6 s) after the first row: the second command's start, seconds on a busy host,
    %% must fall inside the first run (with 8, it once saw the run finished).
    Args = nap_run(Config, "twice", ["--iterations", "40"]),
    First = beamscale_test_cli:open(Args),
    {os_pid, OsPid} = erlang:port_info(First, os_pid),
    Dir = filename:join(out(Config), "twice"),
    ok = wait_rows(filename:join(Dir, "measurements.csv"), 1, ?ROWS_TRIES),
    {2, Text} = beamscale_test_cli:run(Args),
    Holder = lists:flatten(io_lib:format("is in use by a run of OS pid ~b", [OsPid])),
    ?assertNotEqual(nomatch, string:find(Text, Holder), Text),
    {0, _} = beamscale_test_cli:wait(First, ?RUN_TIMEOUT),
    ?assertEqual(lists:seq(1, 40), lists:sort([binary_to_integer(I) || #{iteration := I}
                                                  <- beamscale_store:measurements(Dir)])),
    {0, Again} = beamscale_test_cli:run(Args),
    ?assertNotEqual(nomatch, string:find(Again, "resuming: 40 of 40 iterations done"), Again).

report_after_kill() -> [{doc, "After kill -9 mid-run, report exits 0 naming what is missing."}].
report_after_kill(Config) ->
    Args = nap_run(Config, "killed", ["--iterations", "6", "--schedulers", "1,2"]),
    Port = beamscale_test_cli:open(Args),
    {os_pid, OsPid} = erlang:port_info(Port, os_pid),
    Dir = filename:join(out(Config), "killed"),
    ok = wait_rows(filename:join(Dir, "measurements.csv"), 2, ?ROWS_TRIES),
    _ = os:cmd("kill -9 " ++ integer_to_list(OsPid)),
    _ = beamscale_test_cli:wait(Port, ?RUN_TIMEOUT),
    N = length(beamscale_store:measurements(Dir)),
    ?assert(N < 12),
    ok = no_nodes_naming(nap_dir(Config), ?ROWS_TRIES),
    {0, Text} = beamscale_test_cli:run(["report", Dir]),
    Said = lists:flatten(io_lib:format("incomplete: ~b of 12 iterations", [N])),
    ?assertNotEqual(nomatch, string:find(Text, Said), Text),
    %% The launch's two points run in an order drawn from the run's seed: the one not started
    %% is either.
    {match, [Point]} = re:run(Text, "bs_nap @ (default/default/[12]/1) \\(0 of 6\\)",
                              [{capture, all_but_first, list}]),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertNotEqual(nomatch, string:find(Html, Point)).

quiet_nodes() -> [{doc, "--quiet: a node's error report goes to nodes.log, not the terminal."}].
quiet_nodes(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "noisy"),
    ok = filelib:ensure_path(Dir),
    ok = file:write_file(filename:join(Dir, "bs_noisy.erl"),
                         "-module(bs_noisy).\n-export([bench_args/2, run/3]).\n"
                         "bench_args(_, _) -> [[1]].\n"
                         "run(_, _, _) -> spawn(fun() -> error(noisy_crash) end),\n"
                         "    timer:sleep(100).\n"),
    Args = ["run", "--bench", "bs_noisy", "--bench-path", Dir, "--schedulers", "1",
            "--iterations", "1", "--launches", "1", "--warmups", "0", "--no-sample",
            "--out", out(Config)],
    {0, Loud} = beamscale_test_cli:run(Args ++ ["--name", "loud"]),
    ?assertNotEqual(nomatch, string:find(Loud, "noisy_crash"), Loud),
    {0, Quiet} = beamscale_test_cli:run(Args ++ ["--name", "quiet", "--quiet"]),
    ?assertEqual(nomatch, string:find(Quiet, "noisy_crash"), Quiet),
    {ok, Log} = file:read_file(filename:join([out(Config), "quiet", "nodes.log"])),
    ?assertNotEqual(nomatch, string:find(Log, "noisy_crash"), Log).

%% docs/benchmarks.md's worked example: a rebar3 application built by rebar3, benchmarked from
%% outside it by a handler that calls its code, found through --code-path (a glob) or the
%% config's code_path (a lib directory, as ERL_LIBS).
own_app() -> [{doc, "A rebar3 app's code reaches the node by --code-path glob or lib dir."}].
own_app(Config) ->
    Priv = ?config(priv_dir, Config),
    [{0, _} = copy(filename:join(?config(data_dir, Config), D), Priv)
     || D <- ["fibapp", "fibapp_bench"]],
    %% Kept as .erl.src so that rebar3 does not take them for test modules of beamscale.
    [ok = file:rename(F, filename:rootname(F))
     || F <- filelib:wildcard(filename:join(Priv, "fibapp*/**/*.erl.src"))],
    App = filename:join(Priv, "fibapp"),
    {0, Built} = build(App),
    ct:log("~ts", [Built]),
    Bench = filename:join(Priv, "fibapp_bench"),
    Args = ["run", "--bench", "fibapp_bench", "--bench-path", Bench, "--schedulers", "1",
            "--iterations", "2", "--launches", "1", "--warmups", "0", "--no-sample", "--quiet",
            "--out", out(Config)],
    Glob = filename:join(App, "_build/default/lib/*/ebin"),
    {0, _} = beamscale_test_cli:run(Args ++ ["--name", "own_glob", "--code-path", Glob]),
    ?assertEqual(2, length(beamscale_store:measurements(filename:join(out(Config), "own_glob")))),
    Conf = write_config(Config, "own.config",
                        [{code_path, [filename:join(App, "_build/default/lib")]}]),
    {0, _} = beamscale_test_cli:run(Args ++ ["--name", "own_lib", "--config", Conf]),
    {ok, Out} = file:read_file(hd(filelib:wildcard(filename:join([out(Config), "own_lib",
                                                                  "output", "*.txt"])))),
    ?assertEqual(<<"fib(20) = 6765\n">>, Out),
    Bad = write_config(Config, "bad.config", [{code_path, [filename:join(App, "nope/*")]}]),
    {2, Text} = beamscale_test_cli:run(Args ++ ["--name", "own_bad", "--config", Bad]),
    ?assertNotEqual(nomatch, string:find(Text, "bad.config:1: code_path: nothing matches"), Text).

%%% Helpers

copy(From, To) -> beamscale_os:cmd("/bin/cp", ["-r", From, To], ?BUILD_TIMEOUT).

%% rebar3 compile in `Dir' (its own project: no variable of the rebar3 running this test).
build(Dir) ->
    Rebar3 = os:find_executable("rebar3"),
    Port = open_port({spawn_executable, "/usr/bin/env"},
                     [{args, ["-u", "REBAR_CONFIG", "-u", "REBAR_PROFILE", Rebar3, "compile"]},
                      {cd, Dir}, exit_status, binary, stderr_to_stdout]),
    beamscale_test_cli:wait(Port, ?BUILD_TIMEOUT).

%% `beamscale run' of a handler that naps 150 ms per iteration, no warm-up, one scheduler.
nap_dir(Config) -> filename:join(?config(priv_dir, Config), "nap").

nap_run(Config, Name, Extra) ->
    Dir = nap_dir(Config),
    ok = filelib:ensure_path(Dir),
    ok = file:write_file(filename:join(Dir, "bs_nap.erl"),
                         "-module(bs_nap).\n-export([bench_args/2, run/3]).\n"
                         "bench_args(_, _) -> [[150]].\n"
                         "run([Ms], _, _) -> timer:sleep(Ms), io:format(\"napped~~n\").\n"),
    ["run", "--bench", "bs_nap", "--bench-path", Dir, "--schedulers", "1", "--warmups", "0",
     "--launches", "1", "--no-sample", "--quiet", "--name", Name, "--out", out(Config)] ++ Extra.

%% The nodes of a command killed from outside halt once its connection is gone: no emulator
%% whose command line names `Dir' (their -pa) is left after a moment.
no_nodes_naming(Dir, 0) -> {error, {strays, beams_naming(Dir)}};
no_nodes_naming(Dir, Tries) ->
    case beams_naming(Dir) of
        [] -> ok;
        _ -> timer:sleep(100), no_nodes_naming(Dir, Tries - 1)
    end.

beams_naming(Dir) ->
    [Cmd || P <- filelib:wildcard("[0-9]*", "/proc"),
            {ok, Bin} <- [file:read_file("/proc/" ++ P ++ "/cmdline")],
            Cmd <- [binary_to_list(binary:replace(Bin, <<0>>, <<" ">>, [global]))],
            string:find(Cmd, "beam.smp") =/= nomatch, string:find(Cmd, Dir) =/= nomatch].

wait_rows(_Csv, _N, 0) -> {error, too_slow};
wait_rows(Csv, N, Tries) ->
    case length(beamscale_store:read_rows(Csv)) >= N of
        true -> ok;
        false -> timer:sleep(100), wait_rows(Csv, N, Tries - 1)
    end.

quote(A) -> "'" ++ A ++ "'".

wait_file(_File, 0) -> {error, not_written};
wait_file(File, N) ->
    case file:read_file(File) of
        {ok, <<_, _/binary>>} -> ok;
        _ -> timer:sleep(100), wait_file(File, N - 1)
    end.

out(Config) -> filename:join(?config(priv_dir, Config), "cmd_run_runs").

%% The repository (its `beamscale' script): four levels above this file, apps/beamscale/test.
root() -> filename:dirname(filename:dirname(filename:dirname(filename:dirname(?FILE)))).

write_config(Config, Name, Entries) ->
    File = filename:join(?config(priv_dir, Config), Name),
    ok = file:write_file(File, [io_lib:format("~0tp.~n", [E]) || E <- Entries]),
    File.
