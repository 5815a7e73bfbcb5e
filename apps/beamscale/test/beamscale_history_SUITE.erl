%% `beamscale history' through the command line: records of fixture run directories, a second
%% writer refused, a crash mid-write survived, `check' on a step and on identical code, the
%% exports, and the page rendered by headless Chromium.
-module(beamscale_history_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([record_and_show/0, record_from_git/0, second_writer_refused/0, crash_mid_write/0,
         never_overwrites/0, check_step_and_identical/0,
         check_instructions/0, exports/0, bad_input/0,
         page_in_chromium/0]).
-export([record_and_show/1, record_from_git/1, second_writer_refused/1, crash_mid_write/1,
         never_overwrites/1,
         check_step_and_identical/1, check_instructions/1,
         exports/1, bad_input/1, page_in_chromium/1]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [record_and_show, record_from_git, second_writer_refused, crash_mid_write,
          never_overwrites,
          check_step_and_identical, check_instructions, exports, bad_input, page_in_chromium].

%% Run directory I of a history: two benchmarks, 2 % noise, `fib' slower by Slow.
run_dir(Config, Name, Seed, Slow) ->
    Dir = filename:join(?config(priv_dir, Config), Name),
    beamscale_rundir_fixture:write(Dir, #{benches => [{<<"fib">>, <<"[]">>, 1.0},
                                                      {<<"ring">>, <<"[]">>, 2.0}],
                                          schedulers => [1], iterations => 8, noise => 0.02,
                                          seed => Seed, slow => #{<<"fib">> => Slow}}),
    {ok, _} = beamscale_writer:write(Dir),
    Dir.

store(Config, Name) -> filename:join(?config(priv_dir, Config), Name).

%% N commits c1..cN of identical code, recorded in this node (setup, not under test), then
%% `Extra' more through the command line.
history(Config, Store, N, Slows) ->
    [0 = quiet(["history", "record", run_dir(Config, Store ++ "-r" ++ integer_to_list(I), I,
                                             Slow),
                "--store", store(Config, Store), "--commit", "c" ++ integer_to_list(I)])
     || {I, Slow} <- lists:enumerate([1.0 || _ <- lists:seq(1, N)] ++ Slows)],
    store(Config, Store).

quiet(Args) ->
    ct:capture_start(),
    Code = beamscale_cli:dispatch(Args),
    ct:capture_stop(),
    Code.

cli(Args) ->
    {Code, Out} = beamscale_test_cli:run(Args),
    ct:log("beamscale ~ts~n=> ~b~n~ts", [lists:join(" ", Args), Code, Out]),
    {Code, Out}.

records(Store) -> filelib:wildcard("[0-9]*.json", filename:join(Store, "records")).

record_and_show() -> [{doc, "Runs recorded per commit; show prints each series."}].
record_and_show(Config) ->
    Dir = run_dir(Config, "one", 1, 1.0),
    Store = store(Config, "h1"),
    {0, Out} = cli(["history", "record", Dir, "--store", Store, "--commit", "abc123",
                    "--branch", "main", "--label", "first", "--date", "2026-01-02"]),
    ?assertMatch({match, _}, re:run(Out, "recorded one \\(commit abc123\\)")),
    [File] = records(Store),
    {ok, Bin} = file:read_file(filename:join([Store, "records", File])),
    {ok, #{<<"commit">> := <<"abc123">>, <<"branch">> := <<"main">>, <<"label">> := <<"first">>,
           <<"seq">> := 1, <<"kind">> := <<"run">>, <<"entries">> := Es}} =
        beamscale_format_json:decode(Bin),
    %% Every numeric field of summary.json's rows; the median with its interval is primary.
    [Median] = [E || #{<<"benchmark">> := <<"fib">>, <<"metric">> := <<"median">>} = E <- Es],
    ?assertMatch(#{<<"primary">> := true, <<"low">> := L, <<"high">> := H} when L < H, Median),
    ?assert(length([E || #{<<"metric">> := <<"max">>} = E <- Es]) =:= 2),
    {0, Show} = cli(["history", "show", "--store", Store]),
    ?assertMatch({match, _}, re:run(Show, "fib .*median: 1 commits")).

%% The commit, its date and branch read from a real git repository (`--repo').
record_from_git() -> [{doc, "The commit, its date and branch read from a real git repository."}].
record_from_git(Config) ->
    Repo = filename:join(?config(priv_dir, Config), "repo"),
    ok = filelib:ensure_path(Repo),
    Git = fun(Args) ->
                  {0, Out} = beamscale_os:cmd(os:find_executable("git"), ["-C", Repo | Args],
                                              30000),
                  string:trim(Out)
          end,
    _ = Git(["init", "-q", "-b", "trunk"]),
    ok = file:write_file(filename:join(Repo, "f"), <<"x">>),
    _ = Git(["add", "f"]),
    _ = Git(["-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "c"]),
    Head = Git(["rev-parse", "HEAD"]),
    Store = store(Config, "hg"),
    {0, _} = cli(["history", "record", run_dir(Config, "git-run", 1, 1.0), "--store", Store,
                  "--repo", Repo]),
    [File] = records(Store),
    {ok, Bin} = file:read_file(filename:join([Store, "records", File])),
    {ok, #{<<"commit">> := Head, <<"branch">> := <<"trunk">>, <<"date">> := Date}} =
        beamscale_format_json:decode(Bin),
    ?assertMatch({match, _}, re:run(Date, "^20[0-9][0-9]-")).

second_writer_refused() -> [{doc, "A second writer refused while the lock is held."}].
second_writer_refused(Config) ->
    Dir = run_dir(Config, "two", 2, 1.0),
    Store = history(Config, "h2", 1, []),
    Lock = filename:join(Store, "lock"),
    %% This test's emulator holds the lock, as a writer would.
    ok = beamscale_target_lock:take(Lock, "the test's writer"),
    try
        {2, Out} = cli(["history", "record", Dir, "--store", Store, "--commit", "c2"]),
        ?assertMatch({match, _}, re:run(Out, "lock: the store is being written by the test's "
                                             "writer")),
        ?assertEqual(1, length(records(Store)))
    after beamscale_target_lock:release(Lock)
    end,
    {0, _} = cli(["history", "record", Dir, "--store", Store, "--commit", "c2"]),
    ?assertEqual(2, length(records(Store))).

crash_mid_write() -> [{doc, "A crash's half-written temp file: reads and records still work."}].
crash_mid_write(Config) ->
    Store = history(Config, "h3", 3, []),
    %% A writer killed between write and rename leaves its temp file, half written.
    Tmp = filename:join([Store, "records", ".tmp-00000004-c4-r4.json"]),
    ok = file:write_file(Tmp, <<"{\"seq\":4,\"entr">>),
    {0, Show} = cli(["history", "show", "--store", Store]),
    ?assertMatch({match, _}, re:run(Show, "tmp-00000004-c4-r4.json: a write interrupted")),
    ?assertMatch({match, _}, re:run(Show, "fib .*median: 3 commits")),
    Dir = run_dir(Config, "h3-again", 4, 1.0),
    {0, _} = cli(["history", "record", Dir, "--store", Store, "--commit", "c4"]),
    ?assertMatch(["00000001-" ++ _, "00000002-" ++ _, "00000003-" ++ _, "00000004-c4-" ++ _],
                 records(Store)).

never_overwrites() -> [{doc, "An existing record is never overwritten."}].
never_overwrites(Config) ->
    Store = history(Config, "h4", 2, []),
    Dir = filename:join(?config(priv_dir, Config), "h4-r2"),
    {ok, Before} = file:read_file(filename:join([Store, "records", lists:last(records(Store))])),
    {2, Out} = cli(["history", "record", Dir, "--store", Store, "--commit", "c2"]),
    ?assertMatch({match, _}, re:run(Out, "00000002-c2-h4-r2.json: this run of this commit is "
                                         "recorded already")),
    {ok, After} = file:read_file(filename:join([Store, "records", lists:last(records(Store))])),
    ?assertEqual(Before, After),
    ?assertEqual(2, length(records(Store))).

check_step_and_identical() -> [{doc, "check exits 1 on an injected step and 0 on identical code."}].
check_step_and_identical(Config) ->
    Same = history(Config, "h5", 12, [1.0]),
    {0, Ok} = cli(["history", "check", "--store", Same, "--threshold", "5%"]),
    ?assertMatch({match, _}, re:run(Ok, "no regression beyond 5 % at the newest commit c13")),
    Step = history(Config, "h6", 12, [1.3]),
    {1, Bad} = cli(["history", "check", "--store", Step, "--threshold", "5%"]),
    ?assertMatch({match, _}, re:run(Bad, "regression at c13: fib .* median")),
    ?assertEqual(nomatch, re:run(Bad, "regression at c13: ring")),
    %% A threshold above the step passes it.
    {0, _} = cli(["history", "check", "--store", Step, "--threshold", "40"]),
    %% Once more commits follow, show finds the change at c13.
    _ = [0 = quiet(["history", "record", run_dir(Config, "h6-more" ++ integer_to_list(I),
                                                 100 + I, 1.3),
                    "--store", Step, "--commit", "d" ++ integer_to_list(I)])
         || I <- lists:seq(1, 4)],
    {0, Show} = cli(["history", "show", "--store", Step]),
    ?assertMatch({match, _}, re:run(Show, "change at c13 \\(commit #13\\).*REGRESSION")).

%% A run directory of the instruction clock: the fixture's times, and `instructions.csv' of two
%% launches, `fib' counting Base x Factor instructions a call, give or take 0.01 % (Valgrind's
%% spread here).
count_dir(Config, Name, Seed, Factor) ->
    Dir = run_dir(Config, Name, Seed, 1.0),
    Rows = [["fib", "call", "-", "25", "default", "1", "1", integer_to_list(L),
             integer_to_list(S), float_to_list(181757.5 * Factor * (1 + (Seed rem 3 - 1) * 1.0e-4)
                                               + S, [{decimals, 3}])]
            || L <- [1, 2], S <- [1, 2, 3]],
    ok = file:write_file(filename:join(Dir, "instructions.csv"),
                         [lists:join(",", R) ++ "\n"
                          || R <- [["benchmark", "phase", "args", "otp", "erl_args", "schedulers",
                                    "nodes", "launch", "sample", "instructions"] | Rows]]),
    Dir.

check_instructions() ->
    [{doc, "The instruction clock: check exits 1 on a 2 % step and 0 on identical code."}].
check_instructions(Config) ->
    Hist = fun(Name, Last) ->
                   Store = store(Config, Name),
                   [0 = quiet(["history", "record",
                               count_dir(Config, Name ++ "-r" ++ integer_to_list(I), I, F),
                               "--store", Store, "--commit", "c" ++ integer_to_list(I)])
                    || {I, F} <- lists:enumerate([1.0 || _ <- lists:seq(1, 12)] ++ [Last])],
                   Store
           end,
    Same = Hist("i1", 1.0),
    {0, Ok} = cli(["history", "check", "--store", Same, "--threshold", "1%"]),
    ?assertMatch({match, _}, re:run(Ok, "no regression beyond 1 % at the newest commit c13")),
    Step = Hist("i2", 1.02),
    {1, Bad} = cli(["history", "check", "--store", Step, "--threshold", "1%"]),
    ?assertMatch({match, _}, re:run(Bad, "regression at c13: fib .*instructions")),
    ?assertEqual(nomatch, re:run(Bad, "median")).

exports() -> [{doc, "Bencher Metric Format JSON and the CSV of the whole history."}].
exports(Config) ->
    Store = history(Config, "h7", 3, []),
    {0, Bmf} = cli(["history", "export", "--bmf", "--store", Store]),
    {ok, Obj} = beamscale_format_json:decode(Bmf),
    [Fib] = [V || {K, V} <- maps:to_list(Obj), binary:match(K, <<"fib (">>) =/= nomatch],
    ?assertMatch(#{<<"median">> := #{<<"value">> := _, <<"lower_value">> := _,
                                     <<"upper_value">> := _}}, Fib),
    Csv = filename:join(?config(priv_dir, Config), "h7.csv"),
    {0, _} = cli(["history", "export", "--csv", "--store", Store, "--out", Csv]),
    Rows = beamscale_store:read_rows(Csv),
    ?assertEqual([<<"c1">>, <<"c2">>, <<"c3">>], lists:usort([C || #{commit := C} <- Rows])),
    ?assert(length([R || #{metric := <<"median">>} = R <- Rows]) =:= 6).

bad_input() -> [{doc, "Bad input: one line, exit 2, no stack trace."}].
bad_input(Config) ->
    Empty = filename:join(?config(priv_dir, Config), "empty"),
    ok = filelib:ensure_path(Empty),
    {2, Out} = cli(["history", "record", Empty, "--store", store(Config, "h8"),
                    "--commit", "x"]),
    ?assertMatch({match, _}, re:run(Out, "summary.json: missing")),
    {2, Out2} = cli(["history", "record", run_dir(Config, "h8-r", 1, 1.0), "--store",
                     store(Config, "h8"), "--commit", "bad commit!"]),
    ?assertMatch({match, _}, re:run(Out2, "--commit bad commit!: 1 to 64")),
    {2, Out3} = cli(["history", "show", "--store", Empty]),
    ?assertMatch({match, _}, re:run(Out3, "not a history store")),
    [?assertEqual(nomatch, re:run(O, "\\{|badmatch")) || O <- [Out, Out2, Out3]].

page_in_chromium() -> [{doc, "The page in Chromium: series, change marker, table."}].
page_in_chromium(Config) ->
    Chromium = case os:find_executable("chromium") of
                   false -> ct:fail("chromium not installed (scripts/install-deps.sh installs it)");
                   C -> C
               end,
    Store = history(Config, "h9", 10, [1.15 || _ <- lists:seq(1, 6)]),
    Page = filename:join(?config(priv_dir, Config), "history.html"),
    {0, _} = cli(["history", "page", "--store", Store, "--out", Page]),
    Dom = beamscale_test_chromium:run(Chromium, Config,
                                      ["--dump-dom", beamscale_test_chromium:url(Page)]),
    Charts = beamscale_test_chromium:charts(Dom),
    %% fib and ring, one scheduler count: two charts of one series, fib's with its change.
    ?assertEqual([1, 1], [beamscale_test_chromium:series(C) || C <- Charts]),
    ?assertEqual(1, length(binary:matches(Dom, <<"class=\"marker\"">>))),
    ?assertMatch({match, _}, re:run(Dom, "<td class=\"t\">c11</td><td class=\"t\">fib</td>")),
    Shot = beamscale_test_chromium:screenshot(Chromium, Config, Page),
    ?assert(filelib:file_size(Shot) > 20000).
