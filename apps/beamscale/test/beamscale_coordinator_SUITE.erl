%% Runs of the real coordinator on real peer nodes: the run directory, a bencherl handler
%% unmodified, multi-phase timing, crashes, hangs, a node killed from outside, resume after a
%% kill -9 of the command line, and no stray emulator afterwards.
-module(beamscale_coordinator_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([quick_run/1, bencherl_handler/1, crash_and_hang/1, node_killed/1,
         resume_after_kill/1, two_launches/1, before_launches/1]).
-export([quick_run/0, bencherl_handler/0, crash_and_hang/0, node_killed/0, resume_after_kill/0,
         two_launches/0, before_launches/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [quick_run, bencherl_handler, crash_and_hang, node_killed, resume_after_kill,
          two_launches, before_launches].

%% The handlers are kept as HANDLER.erl.src so that rebar3 does not build them as test modules;
%% the run builds them on the nodes under test, as it does any bench path.
init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Dir = filename:join(?config(priv_dir, Config), "handlers"),
    ok = filelib:ensure_path(Dir),
    [{ok, _} = file:copy(Src, filename:join(Dir, filename:basename(Src, ".src")))
     || Src <- filelib:wildcard(filename:join([?config(data_dir, Config), "handlers", "*.src"]))],
    Config.

end_per_suite(_Config) -> ok.

%% big and ets_test on schedulers 1 and 2, 3 iterations: 2 x 2 x 3 rows, sanity passed.
quick_run() -> [{doc, "A 2x2x3 run writes its rows, run.json and sanity; no node left."}].
quick_run(Config) ->
    {Dir, Result} = run(Config, "quick", [{benchmarks, [big, ets_test]}, {schedulers, [1, 2]}]),
    #{failures := 0, sanity := Sanity} = Result,
    ?assertEqual([{<<"big">>, passed}, {<<"ets_test">>, passed}], Sanity),
    Rows = beamscale_store:measurements(Dir),
    ?assertEqual(12, length(Rows)),
    ?assertEqual([<<"1">>, <<"2">>], lists:usort([S || #{schedulers := S} <- Rows])),
    [?assert(binary_to_float(S) > 0) || #{seconds := S} <- Rows],
    [?assert(filelib:is_regular(filename:join(Dir, F))) || F <- ["run.json", "sanity.csv"]],
    {ok, Json} = file:read_file(filename:join(Dir, "run.json")),
    [?assertMatch({_, _}, binary:match(Json, K))
     || K <- [<<"\"otp_release\":\"25\"">>, <<"\"logical_cores\"">>, <<"\"end_time\":\"">>,
              <<"\"cpu_model\"">>]],
    ?assertEqual(4, length(filelib:wildcard(filename:join([Dir, "output", "*.txt"])))),
    no_strays().

%% A bencherl handler from the bench path runs unmodified on 2 nodes; its phases are timed apart.
bencherl_handler() -> [{doc, "A bencherl handler runs unmodified on 2 nodes, phases apart."}].
bencherl_handler(Config) ->
    {Dir, #{failures := 0, sanity := Sanity}} =
        run(Config, "bencherl", [{benchmarks, [bencherl_style]}, {nodes, [2]},
                                 {schedulers, [1, 2]}, {iterations, 2}]),
    ?assertEqual([{<<"bencherl_style">>, passed}], Sanity),
    Rows = beamscale_store:measurements(Dir),
    ?assertEqual([<<"report">>, <<"sum">>], lists:usort([P || #{phase := P} <- Rows])),
    ?assertEqual(8, length(Rows)),
    [Out | _] = filelib:wildcard(filename:join([Dir, "output", "bencherl_style*"])),
    N = 1000 * beamscale_os:logical_cores(),
    Expected = io_lib:format("sum ~b of ~b, 1 pongs~n", [N * (N + 1) div 2, N]),
    ?assertEqual({ok, iolist_to_binary(Expected)}, file:read_file(Out)).

%% A crashing and a hanging benchmark fail with their reasons; the benchmark after them runs.
crash_and_hang() -> [{doc, "Crash and hang fail with their reasons; the next one runs."}].
crash_and_hang(Config) ->
    {Dir, #{failures := Failed}} =
        run(Config, "crash", [{benchmarks, [bs_crash, bs_hang, bs_sleep]}, {schedulers, [1]},
                              {timeout, 2}, {warmups, 0}]),
    ?assertEqual(6, Failed),
    Failures = beamscale_store:failures(Dir),
    Crash = [R || #{benchmark := <<"bs_crash">>, reason := R} <- Failures],
    Hang = [R || #{benchmark := <<"bs_hang">>, reason := R} <- Failures],
    ?assertEqual(3, length(Crash)),
    [?assertMatch({_, _}, binary:match(R, <<"deliberate_crash">>)) || R <- Crash],
    ?assertEqual([<<"{timeout,2}">>, <<"{timeout,2}">>, <<"{timeout,2}">>], Hang),
    ?assertEqual(3, length([R || #{benchmark := <<"bs_sleep">>} = R
                                 <- beamscale_store:measurements(Dir)])),
    no_strays().

%% The node under test is killed from outside mid-iteration: that iteration fails as node_down,
%% a fresh node runs the rest.
node_killed() -> [{doc, "A node killed mid-iteration fails it as node_down; the rest run."}].
node_killed(Config) ->
    Self = self(),
    Scratch = filename:join([?config(priv_dir, Config), "runs", "killed", "scratch", "bs_victim"]),
    Killer = spawn_link(fun() -> Self ! {killed, kill_when_ready(Scratch, 200)} end),
    {Dir, #{failures := 1}} =
        run(Config, "killed", [{benchmarks, [bs_victim]}, {schedulers, [1]}, {warmups, 0}]),
    receive {killed, Pid} -> ?assert(is_list(Pid)) after 1000 -> ct:fail(no_kill) end,
    unlink(Killer),
    ?assertMatch([#{reason := <<"node_down">>, iteration := <<"1">>}],
                 beamscale_store:failures(Dir)),
    ?assertEqual([<<"2">>, <<"3">>], [I || #{iteration := I} <- beamscale_store:measurements(Dir)]),
    no_strays().

%% kill -9 of the command line in the middle of a run of two launches per point, then the same
%% command again: every iteration is measured exactly once, each in the launch its number
%% says, and no node outlives the killed run.
resume_after_kill() -> [{doc, "Rerun after kill -9 measures each iteration once."}].
resume_after_kill(Config) ->
    Out = filename:join(?config(priv_dir, Config), "resume"),
    Args = ["run", "--bench", "bs_sleep", "--schedulers", "1,2", "--iterations", "4",
            "--launches", "2", "--warmups", "0", "--bench-path", handlers(Config),
            "--name", "r", "--out", Out, "--quiet"],
    Port = cli(Args),
    {os_pid, OsPid} = erlang:port_info(Port, os_pid),
    Csv = filename:join([Out, "r", "measurements.csv"]),
    ok = wait_rows(Csv, 4, 300),
    os:cmd("kill -9 " ++ integer_to_list(OsPid)),
    catch port_close(Port),
    Before = beamscale_store:measurements(filename:join(Out, "r")),
    ?assert(length(Before) >= 4 andalso length(Before) < 16),
    timer:sleep(1500),
    no_strays_from(handlers(Config)),
    {0, _} = wait_exit(cli(Args), []),
    Rows = beamscale_store:measurements(filename:join(Out, "r")),
    Keys = [{S, I} || #{schedulers := S, iteration := I} <- Rows],
    ?assertEqual(16, length(Keys)),
    ?assertEqual(lists:usort(Keys), lists:sort(Keys)),
    ?assertEqual(Before, lists:sublist(Rows, length(Before))),
    [?assertEqual(beamscale_plan:launch_of(binary_to_integer(I), 4), binary_to_integer(L))
     || #{iteration := I, launch := L} <- Rows].

%% Two launches per point: two emulators (OS pids) per point, one per launch, four in all,
%% and launch 1 of both points runs before launch 2 of either (in an order drawn from the seed
%% run.json records).
two_launches() -> [{doc, "--launches 2 runs each point in 2 emulators, interleaved."}].
two_launches(Config) ->
    {Dir, #{failures := 0}} = run(Config, "launches", [{benchmarks, [bs_pid]},
                                                       {schedulers, [1, 2]}, {launches, 2}]),
    Rows = beamscale_store:measurements(Dir),
    ?assertEqual(12, length(Rows)),
    Pid = fun(#{phase := P}) -> P end,
    Point = fun(#{schedulers := S, launch := L}) -> {S, L} end,
    [?assertEqual(1, length(lists:usort([Pid(R) || R <- Rows, Point(R) =:= P])))
     || P <- lists:usort(lists:map(Point, Rows))],
    ?assertEqual(4, length(lists:usort(lists:map(Pid, Rows)))),
    ?assertEqual([<<"1">>, <<"2">>], dedup([L || #{launch := L} <- Rows])),
    ?assertEqual(4, length(dedup(lists:map(Point, Rows)))),
    {ok, Json} = file:read_file(filename:join(Dir, "run.json")),
    ?assertMatch({ok, #{<<"seed">> := S}} when is_integer(S), beamscale_format_json:decode(Json)),
    no_strays().

%% A run directory from before launches (no launch column, no launches in run.json) is one
%% launch: continued with one launch it measures nothing again and its rows get launch 1;
%% with more launches it is refused as another configuration.
before_launches() -> [{doc, "A run from before launches continues as one launch only."}].
before_launches(Config) ->
    Settings = [{benchmarks, [bs_pid]}, {schedulers, [1]}, {iterations, 2}],
    {Dir, #{failures := 0}} = run(Config, "old", Settings),
    Csv = filename:join(Dir, "measurements.csv"),
    {ok, Text} = file:read_file(Csv),
    ok = file:write_file(Csv, re:replace(Text, ",[^,\n]*\n", "\n", [global])),
    Json = filename:join(Dir, "run.json"),
    {ok, Bin} = file:read_file(Json),
    {ok, #{<<"config">> := C} = Run} = beamscale_format_json:decode(Bin),
    ok = file:write_file(Json, beamscale_format_json:encode(
                                 Run#{<<"config">> := maps:remove(<<"launches">>, C)})),
    [Old1, Old2] = beamscale_store:measurements(Dir),
    ?assertNot(is_map_key(launch, Old1)),
    {ok, More} = beamscale_config:load(undefined, merge(overrides(Config, "old") ++ Settings
                                                        ++ [{launches, 2}])),
    ?assertMatch({error, {beamscale_coordinator, {other_config, _, [{<<"launches">>, _, _}]}}},
                 beamscale_coordinator:run(More, quiet)),
    {Dir, #{failures := 0}} = run(Config, "old", Settings),
    ?assertEqual([Old1#{launch => <<"1">>}, Old2#{launch => <<"1">>}],
                 beamscale_store:measurements(Dir)).

%%% Helpers

run(Config, Name, Settings) ->
    {ok, Conf} = beamscale_config:load(undefined, merge(overrides(Config, Name) ++ Settings)),
    {ok, Result} = beamscale_coordinator:run(Conf, quiet),
    {filename:join(proplists:get_value(out, overrides(Config, Name)), Name), Result}.

%% One launch unless a case says otherwise: the counts of rows are per launch.
overrides(Config, Name) ->
    [{iterations, 3}, {launches, 1}, {bench_path, [handlers(Config)]}, {name, Name},
     {out, filename:join(?config(priv_dir, Config), "runs")}].

%% Later settings win over the defaults given first.
merge(Overrides) ->
    lists:foldl(fun({K, V}, Acc) -> lists:keystore(K, 1, Acc, {K, V}) end, [], Overrides).

%% Runs of equal neighbours as one.
dedup([A, A | T]) -> dedup([A | T]);
dedup([A | T]) -> [A | dedup(T)];
dedup([]) -> [].

handlers(Config) -> filename:join(?config(priv_dir, Config), "handlers").

kill_when_ready(_Dir, 0) -> none;
kill_when_ready(Dir, N) ->
    case file:read_file(filename:join(Dir, "victim.pid")) of
        {ok, Pid} -> os:cmd("kill -9 " ++ binary_to_list(Pid)), binary_to_list(Pid);
        {error, _} -> timer:sleep(50), kill_when_ready(Dir, N - 1)
    end.

cli(Args) -> beamscale_test_cli:open(Args).

wait_exit(Port, _) -> beamscale_test_cli:wait(Port, 60000).

wait_rows(_Csv, _N, 0) -> {error, too_slow};
wait_rows(Csv, N, Tries) ->
    case length(beamscale_store:read_rows(Csv)) >= N of
        true -> ok;
        false -> timer:sleep(50), wait_rows(Csv, N, Tries - 1)
    end.

%% No emulator started with this node's cookie is left.
no_strays() -> beamscale_test_cli:no_strays().

%% No emulator is left whose command line names the handler directory: the killed command
%% line and the nodes it started all do (`-pa DIR').
no_strays_from(Dir) ->
    ?assertEqual([], [P || {P, Cmd} <- beams(), string:find(Cmd, Dir) =/= nomatch]).

beams() ->
    [{P, Cmd} || P <- filelib:wildcard("[0-9]*", "/proc"),
                 {ok, Bin} <- [file:read_file("/proc/" ++ P ++ "/cmdline")],
                 Cmd <- [binary_to_list(binary:replace(Bin, <<0>>, <<" ">>, [global]))],
                 string:find(Cmd, "beam.smp") =/= nomatch].
