%% `run' with profiles (docs/profiles.md) on real nodes under perf: a contended ETS table at 1
%% and 2 schedulers has a profile per point, a flame graph and "What grew" on its page, and
%% its lock's share grows; mbrot, embarrassingly parallel, grows no category by much; the
%% pollset study's keep-alive server and the smp-io study's Mnesia node profiled at two load
%% levels; where perf refuses, the emulator's sampling, said in one line; --profile lcnt without
%% a lock-counting emulator names the command that installs one; the commands other than run
%% refuse it by name.
-module(beamscale_profile_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([ets_contention/1, mbrot_parallel/1, options/1, no_perf/1, load_levels/1,
         saturate_levels/1, load_run/1, smp_io_levels/1, perf_refused/1, lcnt_missing/1]).
-export([ets_contention/0, mbrot_parallel/0, options/0, no_perf/0, load_levels/0,
         saturate_levels/0, load_run/0, smp_io_levels/0, perf_refused/0, lcnt_missing/0]).

%% perf's own start (symbols, a few seconds on a loaded host) and `perf script' per point.
suite() -> [{timetrap, {minutes, 3}}].

all() -> [options, lcnt_missing, ets_contention, mbrot_parallel, no_perf, load_levels,
          smp_io_levels, saturate_levels, load_run, perf_refused].

init_per_suite(Config) ->
    case perf_usable() of
        ok ->
            {ok, _} = beamscale_node:distribute(),
            Dir = filename:join(?config(priv_dir, Config), "bench"),
            ok = filelib:ensure_path(Dir),
            Src = filename:join([?config(data_dir, Config), "bench", "ets_hammer.erl.src"]),
            {ok, _} = file:copy(Src, filename:join(Dir, "ets_hammer.erl")),
            Config;
        %% A test whose tool cannot run fails: the project installs perf, and it samples here.
        {error, Why} -> ct:fail(Why)
    end.

end_per_suite(_Config) -> ok.

%% perf installed (scripts/install-deps.sh) and allowed to sample this user's processes.
perf_usable() ->
    case os:find_executable("perf") of
        false -> {error, "no perf: scripts/install-deps.sh installs linux-perf"};
        Perf ->
            case beamscale_os:cmd(Perf, ["record", "-q", "-o", "/dev/null", "--", "true"],
                                  30000) of
                {0, _} -> ok;
                {_, Out} -> {error, "perf cannot record here: " ++ binary_to_list(Out)}
            end
    end.

options() -> [{doc, "--profile and its options as the configuration's profile key."}].
options(Config) ->
    ?assertEqual([{profile, #{}}], beamscale_cmd_run:overrides(#{profile => true})),
    ?assertEqual([{profile, #{rate => 99, stacks => fp}}],
                 beamscale_cmd_run:overrides(#{profile_rate => 99, profile_stacks => "fp"})),
    {ok, #{profile := P}} = beamscale_config:load(undefined, [{profile, #{rate => 99}}]),
    ?assertEqual(#{rate => 99, window_ms => 2000, stacks => dwarf}, P),
    {error, {beamscale_config, {command_line, [profile], _}}} =
        beamscale_config:load(undefined, [{profile, #{rate => 0}}]),
    {ok, #{profile := false}} = beamscale_config:load(undefined, []),
    %% saturate and load check them as run does: a bad value exits 2 before any node starts.
    Out = filename:join(?config(priv_dir, Config), "profile_options"),
    [?assertEqual(2, beamscale_cli:dispatch([Cmd, "none.scenario", Opt, "0", "--out", Out]))
     || {Cmd, Opt} <- [{"saturate", "--profile-rate"}, {"load", "--profile-window"}]],
    %% The ets study runs benchmarks, not load levels: refused before it starts.
    ?assertEqual(2, beamscale_cli:dispatch(["study", "ets", "--profile", "--out", Out])),
    %% Lock counting (`--profile lcnt') is run's: the others say so, not "unexpected argument".
    Said = "--profile lcnt: lock counts are taken by `beamscale run' alone",
    [begin
         {Status, Text} = beamscale_test_cli:run(Args ++ ["--out", Out]),
         ?assertEqual(2, Status, Text),
         ?assertMatch([_], string:lexemes(Text, "\n"), Text),
         ?assertNotEqual(nomatch, string:find(Text, Said), Text)
     end || Args <- [["load", "none.scenario", "--profile", "lcnt"],
                     ["saturate", "--profile", "lcnt", "none.scenario"],
                     ["study", "pollset", "--profile", "lcnt"]]].

ets_contention() ->
    [{doc, "ets_hammer at 1 and 2 schedulers: profiles, flame graphs, locks grow."}].
ets_contention(Config) ->
    Dir = run(Config, "ets", ets_hammer, [{bench_path, [bench(Config)]}]),
    [One, Two] = points(Dir, "ets_hammer"),
    Share = fun(Cat, F) -> proplists:get_value(Cat, beamscale_stats_profile:category_shares(F))
            end,
    ?assert(Share(ets, Two) + Share(locks, Two) > 10.0),
    %% One writer never waits for the table's lock; two do.
    ?assert(Share(locks, Two) > Share(locks, One), {Share(locks, One), Share(locks, Two)}),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    [?assertNotEqual(nomatch, binary:match(Html, S), S)
     || S <- [<<"What grew with schedulers">>, <<"<svg id=\"flame1\"">>,
              <<"<svg id=\"flame2\"">>, <<"find a function">>, <<"ethr_rwmutex_rwlock">>,
              <<"No lock counting">>]],
    %% "What grew" leads: before the graphs.
    ?assert(pos(Html, <<"What grew">>) < pos(Html, <<"<h2>Graphs">>)).

mbrot_parallel() ->
    [{doc, "mbrot at 1 and 2 schedulers: no category's share grows by much."}].
mbrot_parallel(Config) ->
    Dir = run(Config, "mbrot", mbrot, []),
    [One, Two] = points(Dir, "mbrot"),
    #{categories := [{Top, _, _, Growth} | _]} = beamscale_stats_profile:grew(One, Two, 5),
    ct:log("most grown category: ~p, ~.1f points", [Top, Growth]),
    %% Each worker computes its own rows: the same work in the same code at both points. On
    %% the loaded 2-core VM the most grown category grew 5.8 (erlang) and 11.3 (gc) points in
    %% two runs; the contended ETS table's locks grow by 80 and more.
    ?assert(Growth < 20.0, {Top, Growth}).

no_perf() ->
    [{doc, "Without perf (BEAMSCALE_PERF=none): the emulator's sampling, said in one line."}].
no_perf(Config) ->
    true = os:putenv("BEAMSCALE_PERF", "none"),
    Dir = try run(Config, "no_perf", mbrot, []) after os:unsetenv("BEAMSCALE_PERF") end,
    [One, Two] = points(Dir, "mbrot"),
    Summary = lists:flatten(io_lib:format("~ts", [beamscale_profile:summary(Dir)])),
    ?assertNotEqual(nomatch, string:find(Summary, "perf cannot run (perf not found"), Summary),
    %% mbrot's workers run its own module's code: what the sampler saw is mostly theirs.
    [?assertMatch([{erlang, _} | _], lists:reverse(lists:keysort(2,
                                                   beamscale_stats_profile:category_shares(F))))
     || F <- [One, Two]],
    ?assert(lists:any(fun(Stack) -> lists:any(fun(Fr) -> binary:match(Fr, <<"mbrot">>) =/= nomatch
                                              end, Stack) end, maps:keys(Two))).

load_levels() ->
    [{doc, "The pollset study's HTTP server under load at two levels, profiled: categories at "
           "each, what grew on the page."}].
load_levels(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "profile_load_levels"),
    ok = filelib:ensure_path(Dir),
    P = #{requests => 20, rates => [50, 400], hold_s => 2, schedulers => [2],
          polling => ["io_t1"]},
    Cells = beamscale_study_pollset:cells(P, beamscale_study_pollset:polling(), none),
    Profile = #{rate => 999, window_ms => 1500, stacks => dwarf},
    {ok, []} = beamscale_study_levels:run(Cells, #{dir => Dir, quiet => true, seed => 1,
                                                   profile => Profile}),
    [Low, High] = beamscale_profile:read_levels(Dir),
    ?assertMatch({50, 400}, {maps:get(schedulers, Low), maps:get(schedulers, High)}),
    Shares = [begin
                  ?assert(map_size(F) > 0, Meta),
                  beamscale_stats_profile:category_shares(F)
              end || #{folded := F, meta := Meta} <- [Low, High]],
    ct:log("categories at 50 and 400 sessions/s: ~p", [Shares]),
    %% Eight times the requests: more of the server's CPU time, so more samples.
    [NLow, NHigh] = [beamscale_stats_profile:samples(F) || #{folded := F} <- [Low, High]],
    ?assert(NHigh > NLow andalso NHigh >= 50, {NLow, NHigh}),
    %% A keep-alive server's work is its sockets and its Erlang code, at both levels.
    [?assert(proplists:get_value(io, S) + proplists:get_value(erlang, S) > 0.0, S)
     || S <- Shares],
    Html = iolist_to_binary(beamscale_report_pollset:html(#{}, [], [], [], [Low, High])),
    [?assertNotEqual(nomatch, binary:match(Html, S), S)
     || S <- [<<"What grew with sessions/s">>, <<"50 to 400 sessions/s">>,
              <<"<svg id=\"flame1\"">>, <<"<svg id=\"flame2\"">>]],
    ?assertEqual([], filelib:wildcard(filename:join([Dir, "profiles", "*", "*.perf.data"]))),
    beamscale_test_cli:no_strays().

smp_io_levels() ->
    [{doc, "study smp-io --profile: a Mnesia write cell's node at two levels, what grew on the "
           "study's page."}].
smp_io_levels(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "profile_smp_io_levels"),
    ok = filelib:ensure_path(Dir),
    %% Fixed levels (no search): 10 sessions/s of 20 writes is held by far, so 80 runs too.
    P = #{ops => 20, hold_s => 2, prefill => 0, configs => ["smp_auto"],
          rates => #{"mnesia" => [10, 80], "mariadb" => [5]}},
    Cells = [C || #{target := "mnesia", op := "write"} = C
                      <- beamscale_study_smp_io:cells(P, beamscale_study_smp_io:configs("erl"),
                                                      Dir, filename:join(Dir, "no.config"))],
    Profile = #{rate => 999, window_ms => 1500, stacks => dwarf},
    {ok, []} = beamscale_study_levels:run(Cells, #{dir => Dir, quiet => true, seed => 1,
                                                   profile => Profile}),
    [Low, High] = beamscale_profile:read_levels(Dir),
    ?assertMatch({10, 80}, {maps:get(schedulers, Low), maps:get(schedulers, High)}),
    %% Eight times the transactions: more of the node's CPU time, so more samples.
    [NLow, NHigh] = [beamscale_stats_profile:samples(F) || #{folded := F} <- [Low, High]],
    ?assert(NLow > 0 andalso NHigh > NLow, {NLow, NHigh}),
    Rows = beamscale_store:read_rows(filename:join(Dir, "levels.csv")),
    Html = iolist_to_binary(beamscale_report_smp_io:html(#{}, Rows, [], [Low, High])),
    [?assertNotEqual(nomatch, binary:match(Html, S), S)
     || S <- [<<"What grew with sessions/s">>, <<"mnesia/write smp_auto">>,
              <<"10 to 80 sessions/s">>, <<"<svg id=\"flame1\"">>, <<"<svg id=\"flame2\"">>]],
    %% "What grew" is read first: before the levels' figures.
    ?assert(pos(Html, <<"What grew">>) < pos(Html, <<"Mean session duration">>)),
    beamscale_test_cli:no_strays().

perf_refused() ->
    [{doc, "perf refusing to sample (perf_event_paranoid, not root): load --profile says so in "
           "one line, on the page too, and the node is sampled by the emulator instead."}].
perf_refused(Config) ->
    %% Root is never refused here: a perf first on PATH answers as perf refuses (its message).
    Bin = filename:join(?config(priv_dir, Config), "profile_refusing_perf"),
    Perf = filename:join(Bin, "perf"),
    ok = filelib:ensure_dir(Perf),
    ok = file:write_file(Perf, ["#!/bin/sh\necho Error: >&2\necho '", refusal(), "' >&2\n"
                                "exit 255\n"]),
    ok = file:change_mode(Perf, 8#755),
    Path = work_scenario(Config, "profile_refused.scenario", 4, 8),
    Out = filename:join(?config(priv_dir, Config), "profile_refused_runs"),
    Old = os:getenv("PATH"),
    true = os:putenv("PATH", Bin ++ ":" ++ Old),
    {Status, Text} = try beamscale_test_cli:run(["load", Path, "--profile", "--profile-window",
                                                 "1500", "--out", Out, "--name", "l"])
                     after os:putenv("PATH", Old)
                     end,
    ?assertEqual(0, Status, Text),
    Note = "perf cannot run (perf record failed (255): " ++ refusal()
        ++ "): sampled by the emulator (process_info)",
    ?assertEqual([Note], [L || L <- string:split(Text, "\n", all),
                               string:find(L, "perf cannot run") =/= nomatch], Text),
    Dir = filename:join(Out, "l"),
    [#{folded := F, meta := Meta}] = beamscale_profile:read_levels(Dir),
    ?assert(beamscale_stats_profile:samples(F) > 0, Meta),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertNotEqual(nomatch, binary:match(Html, <<"sampled by the emulator">>)),
    beamscale_test_cli:no_strays().

refusal() -> "Access to performance monitoring and observability operations is limited.".

lcnt_missing() ->
    [{doc, "--profile lcnt (and --lcnt) without a lock-counting emulator: one line naming the "
           "command that installs one, exit 2, before any node starts."}].
lcnt_missing(Config) ->
    Empty = filename:join(?config(priv_dir, Config), "profile_no_otp"),
    ok = filelib:ensure_path(Empty),
    Install = "run `beamscale otp install " ++ erlang:system_info(otp_release) ++ "-lcnt'",
    %% No install where releases go (CI sets its own directory: put back after).
    Old = os:getenv("BEAMSCALE_OTP_DIR"),
    true = os:putenv("BEAMSCALE_OTP_DIR", Empty),
    try
        [begin
             {Status, Text} = beamscale_test_cli:run(["run" | Args] ++ ["--bench", "mbrot",
                                                                       "--out", Empty]),
             ?assertEqual(2, Status, Text),
             ?assertMatch([_], string:lexemes(Text, "\n"), Text),
             ?assertNotEqual(nomatch, string:find(Text, Install), Text)
         end || Args <- [["--profile", "lcnt"], ["--lcnt", "--profile"]]]
    after
        case Old of
            false -> os:unsetenv("BEAMSCALE_OTP_DIR");
            _ -> os:putenv("BEAMSCALE_OTP_DIR", Old)
        end
    end,
    ?assertEqual({ok, []}, file:list_dir(Empty)).

saturate_levels() ->
    [{doc, "saturate --profile on an Erlang node doing CPU work at 4/s then 8/s: each level "
           "profiled, categories at each, what grew on the page."}].
saturate_levels(Config) ->
    Path = work_scenario(Config, "profile_saturate.scenario", 1, 1),
    Out = filename:join(?config(priv_dir, Config), "profile_saturate_runs"),
    %% Two levels: 4/s, then 8/s (twice: the factor), the highest rate allowed; both held
    %% by far (a few ms of CPU per call) even beside a CPU hog per core.
    Args = ["--slo", "p99<30s,errors<50%,achieved>10%", "--level", "4s", "--warmup", "1s",
            "--budget", "60s", "--start", "4", "--max-rate", "8", "--profile-window", "1500",
            "--out", Out, "--name", "sat", "--quiet"],
    ?assertEqual(0, beamscale_cli:dispatch(["saturate", Path | Args])),
    Dir = filename:join(Out, "sat"),
    [Low, High] = beamscale_profile:read_levels(Dir),
    ?assertMatch({4, 8}, {maps:get(schedulers, Low), maps:get(schedulers, High)}),
    [?assert(beamscale_stats_profile:samples(F) > 0
             andalso lists:sum([V || {_, V} <- beamscale_stats_profile:category_shares(F)])
                 > 0.0, Meta)
     || #{folded := F, meta := Meta} <- [Low, High]],
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    [?assertNotEqual(nomatch, binary:match(Html, S), S)
     || S <- [<<"What grew with sessions/s">>, <<"4 to 8 sessions/s">>,
              <<"<svg id=\"flame1\"">>, <<"<svg id=\"flame2\"">>]],
    ?assertEqual([], filelib:wildcard(filename:join([Dir, "profiles", "*", "*.perf.data"]))),
    beamscale_test_cli:no_strays().

load_run() ->
    [{doc, "load --profile: the target node profiled once in the middle of the run, its flame "
           "graph on the page."}].
load_run(Config) ->
    Path = work_scenario(Config, "profile_load.scenario", 4, 8),
    Out = filename:join(?config(priv_dir, Config), "profile_load_runs"),
    ?assertEqual(0, beamscale_cli:dispatch(["load", Path, "--profile", "--profile-window",
                                            "1500", "--out", Out, "--name", "l", "--quiet"])),
    Dir = filename:join(Out, "l"),
    [#{folded := F, meta := Meta, schedulers := 8}] = beamscale_profile:read_levels(Dir),
    ?assert(beamscale_stats_profile:samples(F) > 0, Meta),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    [?assertNotEqual(nomatch, binary:match(Html, S), S)
     || S <- [<<"Profiles of each point">>, <<"<svg id=\"flame1\"">>]],
    ?assertEqual(nomatch, binary:match(Html, <<"What grew">>)),
    beamscale_test_cli:no_strays().

%%% Helpers

%% A scenario of one phase calling CPU work (a few ms) on a node it starts.
work_scenario(Config, Name, Seconds, Rate) ->
    Path = filename:join(?config(priv_dir, Config), Name),
    ok = file:write_file(Path, io_lib:format(
        "{targets, [{sut, #{start => #{}}}]}.\n"
        "{phases, [{p, #{duration_s => ~b, rate => ~b}}]}.\n"
        "{sessions, [{s, #{steps => [{rpc, #{target => sut, call => "
        "{beamscale_target_echo, work, [50000]}}}]}}]}.\n", [Seconds, Rate])),
    Path.

run(Config, Name, Bench, Settings) ->
    Out = filename:join(?config(priv_dir, Config), "runs"),
    Base = [{benchmarks, [Bench]}, {schedulers, [1, 2]}, {iterations, 2}, {warmups, 0},
            {launches, 1}, {sample, false}, {name, Name}, {out, Out},
            {profile, #{window_ms => 1000}}],
    {ok, Conf} = beamscale_config:load(undefined, Base ++ Settings),
    {ok, #{failures := 0}} = beamscale_coordinator:run(Conf, quiet),
    Dir = filename:join(Out, Name),
    {ok, _} = beamscale_writer:write(Dir),
    ct:log("~ts", [beamscale_profile:summary(Dir)]),
    beamscale_test_cli:no_strays(),
    Dir.

%% The folded profiles of a benchmark's points, by schedulers; each has samples.
points(Dir, Bench) ->
    Files = filelib:wildcard(filename:join([Dir, "profiles", Bench, "*.folded"])),
    ?assertEqual(2, length(Files), Files),
    Points = [P || #{bench := B} = P <- beamscale_profile:read(Dir), B =:= list_to_binary(Bench)],
    [begin ?assert(map_size(F) > 0, Meta), F end
     || #{folded := F, meta := Meta} <- lists:sort(fun(#{schedulers := A}, #{schedulers := B}) ->
                                                            A =< B
                                                    end, Points)].

bench(Config) -> filename:join(?config(priv_dir, Config), "bench").

pos(Bin, Part) -> element(1, binary:match(Bin, Part)).
