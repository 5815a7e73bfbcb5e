%% beamscale as a library, used as a user would: a fresh rebar3 project with beamscale's apps
%% as dependencies (`_checkouts', as a path dependency), which calls `beamscale:bench/2' on its
%% own module and runs the plugin `rebar3 beamscale bench'; a fresh mix project that runs
%% `mix beamscale.bench' on its own Elixir module; `run/1' and `load/2' called in this node (a
%% small suite run on a peer, a load against a real HTTP server), their maps' figures checked,
%% and `compare/2' of two such runs; a rebar3 project with the apps as `git_subdir' dependencies
%% of a git repository made here, which calls `bench/2'.
%% Neither passes a code path: the library finds the caller's. Both use copies of the apps'
%% sources (mix's rebar3 writes a build cache into a dependency's directory).
-module(beamscale_library_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, rebar3_dependency/1, mix_task/1, compare_runs/1, run_and_compare/1,
         load_run/1, git_dependency/1]).
-export([rebar3_dependency/0, mix_task/0, compare_runs/0, run_and_compare/0, load_run/0,
         git_dependency/0]).

-define(APPS, [beamscale, beamscale_format, beamscale_stats, beamscale_report, beamscale_bench,
               beamscale_targets, beamscale_load, beamscale_amoc]).
%% A build of the eight apps in a fresh project: seconds alone, a minute on a loaded host.
-define(BUILD_TIMEOUT, 240000).

suite() -> [{timetrap, {minutes, 8}}].

all() -> [compare_runs, run_and_compare, load_run, rebar3_dependency, git_dependency, mix_task].

%% beamscale:compare/2 of two run directories: the rows as maps, the text, the page; a bad
%% directory or option is the command's error as a term.
compare_runs() -> [{doc, "beamscale:compare/2 returns the rows as maps; errors as terms."}].
compare_runs(Config) ->
    Benches = [{<<"big">>, <<"[128]">>, 0.2}, {<<"ets_test">>, <<"[8,2,20000]">>, 0.1}],
    [A, B] = [beamscale_rundir_fixture:write(filename:join(?config(priv_dir, Config), N),
                                             #{benches => Benches, seed => Seed, slow => Slow})
              || {N, Seed, Slow} <- [{"a", 5, #{}}, {"b", 6, #{<<"ets_test">> => 1.3}}]],
    #{rows := Rows, output := Out} = beamscale:compare(A, B),
    ?assertEqual(4, length(Rows)),
    Slower = [R || #{key := K, significant := true, ratio := R} <- Rows,
                   element(1, K) =:= <<"ets_test">>],
    ?assertMatch([_, _], Slower),
    [?assert(R > 1.2 andalso R < 1.4) || R <- Slower],
    ?assertMatch({match, _}, re:run(Out, "ets_test .*slower")),
    ?assert(filelib:is_regular(filename:join(B, "compare.html"))),
    Missing = filename:join(?config(priv_dir, Config), "missing"),
    {error, {beamscale, {command, beamscale_cmd_compare, _} = Why}} =
        beamscale:compare(A, Missing),
    Text = unicode:characters_to_list(beamscale:format_error(Why)),
    ?assertNotEqual(nomatch, string:find(Text, "missing: not a run directory"), Text),
    ?assertEqual({error, {beamscale, {option, nope}}}, beamscale:run(#{nope => 1})).

run_and_compare() ->
    [{doc, "beamscale:run/1 twice, small, on a real peer: the summaries; compare/2 of the two."}].
run_and_compare(Config) ->
    Out = filename:join(?config(priv_dir, Config), "runs"),
    Opts = #{benchmarks => ["big"], version => "short", schedulers => [1], iterations => 2,
             warmups => 0, launches => 1, no_sample => true, out => Out},
    [A, B] = [beamscale:run(Opts#{name => N}) || N <- ["a", "b"]],
    [begin
         ?assertEqual(filename:join(Out, N), Dir),
         ?assert(filelib:is_regular(filename:join(Dir, "summary.json"))),
         ct:log("~ts: ~0p", [N, Summary]),
         #{<<"results">> := Points, <<"run">> := #{<<"config">> := Run}} = Summary,
         ?assertMatch(#{<<"name">> := _, <<"iterations">> := 2, <<"launches">> := 1}, Run),
         ?assertEqual(list_to_binary(N), maps:get(<<"name">>, Run)),
         ?assertMatch([_ | _], Points),
         [?assertMatch(#{<<"benchmark">> := <<"big">>, <<"schedulers">> := 1, <<"n">> := 2,
                         <<"sanity">> := <<"passed">>}, P) || P <- Points],
         [?assert(Median > 0 andalso Low =< Median andalso Median =< High)
          || #{<<"median">> := Median, <<"ci95_low">> := Low, <<"ci95_high">> := High}
                 <- Points],
         ?assertEqual(length(Points), length([M || #{<<"median">> := M} <- Points]))
     end || {N, #{dir := Dir, summary := Summary, output := _}} <- [{"a", A}, {"b", B}]],
    #{dir := DirA, summary := #{<<"results">> := SumA}} = A,
    #{dir := DirB} = B,
    #{rows := Rows, output := Text} = beamscale:compare(DirA, DirB),
    ct:log("~ts", [Text]),
    %% One row per point measured in both, each a ratio with its interval around it.
    ?assertEqual(length(SumA), length(Rows)),
    [?assert(Low =< R andalso R =< High andalso R > 0)
     || #{ratio := R, ratio_low := Low, ratio_high := High} <- Rows],
    ?assertEqual(length(Rows), length([W || #{ratio := _, p := _, significant := _} = W <- Rows])),
    ?assertMatch({match, _}, re:run(Text, "big")).

load_run() ->
    [{doc, "beamscale:load/2 of a terms scenario against a real HTTP server: its figures."}].
load_run(Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    Priv = ?config(priv_dir, Config),
    File = filename:join(Priv, "library.scenario"),
    ok = file:write_file(File, io_lib:format(
        "{targets, [{web, #{address => \"127.0.0.1:~b\"}}]}.\n"
        "{phases, [{p, #{duration_s => 1, rate => 20}}]}.\n"
        "{sessions, [{s, #{steps => [{http, #{path => \"/a\"}}, {http, #{path => \"/b\"}}]}}]}.\n",
        [beamscale_target_http:port(Srv)])),
    Out = filename:join(Priv, "loads"),
    try
        #{dir := Dir, summary := Summary, output := _} =
            beamscale:load(File, #{out => Out, name => "l", seed => 7}),
        ct:log("~0p", [Summary]),
        ?assertEqual(filename:join(Out, "l"), Dir),
        #{<<"requests">> := Requests, <<"errors">> := Errors, <<"sessions_done">> := Done,
          <<"sessions_started">> := Started, <<"statuses">> := Statuses,
          <<"latency_corrected">> := #{<<"count">> := Timed, <<"p50_ms">> := P50}} = Summary,
        %% Two requests a session, every session done, each answered 200 and timed.
        ?assert(Done > 0),
        ?assertEqual(Started, Done),
        ?assertEqual(2 * Done, Requests),
        ?assertEqual(0, Errors),
        ?assertEqual(#{<<"200">> => Requests}, Statuses),
        ?assertEqual(Requests, Timed),
        ?assert(P50 > 0),
        ?assert(filelib:is_regular(filename:join(Dir, "load.csv"))),
        %% Its bad option is the command's error, as a term.
        ?assertMatch({error, {beamscale, {command, beamscale_cmd_load, _}}},
                     beamscale:load(File, #{out => Out, name => "bad", resolution => "300ms"}))
    after
        beamscale_target_http:stop(Srv)
    end.

rebar3_dependency() ->
    [{doc, "A rebar3 project with beamscale as a dep: bench/2 on its code; the plugin."}].
rebar3_dependency(Config) ->
    Dir = project(Config, "my_app"),
    ok = file:write_file(filename:join(Dir, "rebar.config"),
                         io_lib:format("{deps, ~p}.~n{plugins, [beamscale]}.~n", [?APPS])),
    ok = own_code(Dir, "my_app"),
    {0, Built} = cmd(Dir, rebar3(), ["compile"], []),
    ct:log("~ts", [Built]),
    bench_map(Dir),
    %% Its errors are the command line's, as terms.
    {0, Bad} = cmd(Dir, os:find_executable("erl"),
                   ["-noshell", "-pa" | filelib:wildcard(filename:join(Dir,
                                                                       "_build/default/*/*/ebin"))]
                   ++ ["-eval", "io:format(\"~0p~n\", [beamscale:bench([\"1.\"], #{nope => 1})]),"
                                " halt()."], []),
    ?assertEqual("{error,{beamscale,{option,nope}}}", string:trim(Bad)),
    %% The plugin: `rebar3 beamscale bench' prints bench's table, the project's code on the
    %% nodes without --code-path.
    {0, Table} = cmd(Dir, rebar3(), ["beamscale", "bench", "my_mod:f().", "--time", "0.2",
                                     "--samples", "4", "--warmup", "0.1"], []),
    ct:log("~ts", [Table]),
    [Line] = [L || L <- string:lexemes(Table, "\n"), lists:prefix("my_mod:f().", L)],
    ns_per_call(Line).

%% beamscale:bench/2 from `erl' with the built project's code on its path, as `rebar3 shell'
%% puts it (nothing more): a map with my_mod:f()'s row.
bench_map(Dir) ->
    Eval = "R = beamscale:bench([\"my_mod:f().\"], #{time => 0.2, samples => 4, warmup => 0.1}),"
           " io:format(\"~0p~n\", [R]), halt().",
    {0, Out} = cmd(Dir, os:find_executable("erl"), ["-noshell", "-pa" | ebins(Dir)]
                   ++ ["-eval", Eval], []),
    ct:log("~ts", [Out]),
    {ok, Tokens, _} = erl_scan:string(lists:last(string:lexemes(Out, "\n")) ++ "."),
    {ok, #{mode := time, rows := [Row]}} = erl_parse:parse_term(Tokens),
    ?assertMatch(#{label := <<"my_mod:f().">>, n := 4, ns := _, per_call := [_, _, _, _]}, Row),
    ?assert(maps:get(ns, Row) > 0).

git_dependency() ->
    [{doc, "A rebar3 project with beamscale's apps as git_subdir dependencies: bench/2."}].
git_dependency(Config) ->
    %% A git repository of the apps as the source tree holds them (apps/NAME/src), on a branch.
    Repo = project(Config, "repo"),
    ok = file:rename(filename:join(Repo, "_checkouts"), filename:join(Repo, "apps")),
    Git = os:find_executable("git"),
    Git =/= false orelse ct:fail("git not found: apt-get install git"),
    [{0, _} = cmd(Repo, Git, ["-c", "user.name=t", "-c", "user.email=t@example.org" | Args], [])
     || Args <- [["init", "-q", "-b", "main"], ["add", "apps"], ["commit", "-q", "-m", "apps"]]],
    Dir = filename:join(?config(priv_dir, Config), "my_git_app"),
    ok = own_code(Dir, "my_git_app"),
    Url = "file://" ++ Repo,
    ok = file:write_file(filename:join(Dir, "rebar.config"),
                         io_lib:format("{deps, ~p}.~n",
                                       [[{A, {git_subdir, Url, {branch, "main"},
                                              "apps/" ++ atom_to_list(A)}} || A <- ?APPS]])),
    {Built, Log} = cmd(Dir, rebar3(), ["compile"], []),
    ct:log("~ts", [Log]),
    ?assertEqual(0, Built),
    %% rebar3 builds a git_subdir dependency in its clone: lib/NAME/apps/NAME/ebin.
    ?assertEqual([filename:join(Dir, "_build/default/lib/beamscale/apps/beamscale/ebin")],
                 [E || E <- ebins(Dir), filelib:is_regular(filename:join(E, "beamscale.beam"))]),
    bench_map(Dir).

mix_task() -> [{doc, "A mix project with beamscale as a dep: mix beamscale.bench."}].
mix_task(Config) ->
    Mix = os:find_executable("mix"),
    Mix =/= false orelse ct:fail("mix not found: apt-get install elixir"),
    Dir = project(Config, "my_ex"),
    Deps = lists:join(", ", [io_lib:format("{:~s, path: ~p, manager: :rebar3}",
                                           [A, filename:join([Dir, "_checkouts", A])])
                             || A <- ?APPS]),
    ok = file:write_file(filename:join(Dir, "mix.exs"),
                         ["defmodule MyEx.MixProject do\n  use Mix.Project\n"
                          "  def project, do: [app: :my_ex, version: \"0.1.0\", deps: [",
                          Deps, "]]\nend\n"]),
    ok = filelib:ensure_path(filename:join(Dir, "lib")),
    ok = file:write_file(filename:join(Dir, "lib/my_mod.ex"),
                         "defmodule MyMod do\n  def f, do: Enum.sum(1..50)\nend\n"),
    {Status, Out} = cmd(Dir, Mix, ["beamscale.bench", "--elixir", "MyMod.f()", "--time", "0.2",
                                   "--samples", "4", "--warmup", "0.1", "--quiet"],
                        [{"MIX_REBAR3", rebar3()}, {"MIX_ENV", "dev"}]),
    ct:log("~ts", [Out]),
    ?assertEqual(0, Status),
    [Row] = [L || L <- string:lexemes(Out, "\n"), lists:prefix("MyMod.f()", L)],
    ns_per_call(Row).

%%% Helpers

%% A project's own app `App' with the module `my_mod' (f/0, a sum) that the cases measure.
own_code(Dir, App) ->
    ok = filelib:ensure_path(filename:join(Dir, "src")),
    ok = file:write_file(filename:join(Dir, "src/" ++ App ++ ".app.src"),
                         ["{application, ", App, ", [{description, \"t\"}, {vsn, \"0.1.0\"},\n"
                          " {applications, [kernel, stdlib]}]}.\n"]),
    file:write_file(filename:join(Dir, "src/my_mod.erl"),
                    "-module(my_mod).\n-export([f/0]).\nf() -> lists:sum(lists:seq(1, 50)).\n").

%% A built project's ebin directories: its own, its deps' (a git_subdir dep's in its clone).
ebins(Dir) ->
    lists:append([filelib:wildcard(filename:join(Dir, W))
                  || W <- ["_build/default/*/*/ebin", "_build/default/lib/*/apps/*/ebin"]]).

%% A row of bench's table: label, input, then ns per call, a positive number.
ns_per_call(Row) ->
    [_, "-", Ns | _] = string:lexemes(Row, " "),
    ?assertMatch({match, _}, re:run(Ns, "^[0-9]+(\\.[0-9]+)?$"), Row),
    ?assertNotEqual("0", Ns).

%% A project directory with a copy of beamscale's apps' sources in `_checkouts' (rebar3's
%% local dependencies).
project(Config, Name) ->
    Dir = filename:join(?config(priv_dir, Config), Name),
    [begin
         To = filename:join([Dir, "_checkouts", A]),
         ok = filelib:ensure_path(To),
         {0, _} = cmd(Dir, "/bin/cp", ["-r", filename:join(app_dir(A), "src"), To], [])
     end || A <- ?APPS],
    Dir.

%% The source directory of app `A': the repository's apps/A (this suite's build links there).
app_dir(A) ->
    filename:join([beamscale_docs_tests:root(), "apps", atom_to_list(A)]).

rebar3() ->
    case os:find_executable("rebar3") of
        false -> filename:join(os:getenv("HOME"), ".cache/beamscale/rebar3/usr/bin/rebar3");
        R -> R
    end.

%% `Exe Args' in `Dir' without the variables of the rebar3 that runs this suite.
cmd(Dir, Exe, Args, Env) ->
    Port = open_port({spawn_executable, "/usr/bin/env"},
                     [{args, ["-u", "REBAR_CONFIG", "-u", "REBAR_PROFILE", "-u", "REBAR_BASE_DIR"]
                       ++ [K ++ "=" ++ V || {K, V} <- Env] ++ [Exe | Args]},
                      {cd, Dir}, exit_status, binary, stderr_to_stdout]),
    beamscale_test_cli:wait(Port, ?BUILD_TIMEOUT).
