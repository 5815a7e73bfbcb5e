%% `beamscale study ets' at a tiny size: a normal run directory, one row per phase, and the
%% report's ETS figures with the series the study's design gives; `ets_bench' in a plain run.
-module(beamscale_study_ets_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([tiny_study/1, bad_version/1, plain_run_phases/1, flag_sets/1]).
-export([tiny_study/0, bad_version/0, plain_run_phases/0, flag_sets/0]).

%% Sizes divided by 64 beyond short: 256 keys, 4096 operations.
-define(TINY, #{divisor => 64, iterations => 1, warmups => 0, reader_groups => [1, 8, 64]}).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [flag_sets, tiny_study, bad_version, plain_run_phases].

tiny_study() -> [{doc, "A tiny ETS study: all phases per cell, the expected charts."}].
tiny_study(Config) ->
    Out = ?config(priv_dir, Config),
    Opts = beamscale_study:defaults(#{study => "ets", out => Out, name => "tiny", quiet => true,
                                      schedulers => [1, 2]}),
    {ok, Dir} = beamscale_study_ets:run(Opts, ?TINY),
    [?assert(filelib:is_regular(filename:join(Dir, F)))
     || F <- ["run.json", "measurements.csv", "summary.csv", "sanity.csv", "index.html"]],
    Rows = beamscale_store:measurements(Dir),
    ?assertEqual([], beamscale_store:failures(Dir)),
    %% Every argument set in every environment has its three phases.
    Keys = lists:usort([{A, E, S} || #{args := A, erl_args := E, schedulers := S} <- Rows]),
    [?assertEqual([<<"access">>, <<"delete">>, <<"insert">>],
                  lists:usort([P || #{args := A1, erl_args := E1, schedulers := S1, phase := P}
                                        <- Rows, {A1, E1, S1} =:= K]))
     || K <- Keys],
    Flags = lists:usort([E || #{erl_args := E} <- Rows]),
    ?assertEqual([<<"matrix">>, <<"rg1">>, <<"rg64">>, <<"rg8">>], Flags),
    %% 8 options x 2 types x 3 mixes and the lock counts this erl gives as asked x 3 mixes;
    %% 6 reader-group sets each.
    Locks = [N || N <- beamscale_bench_ets_workload:lock_counts(),
                  beamscale_bench_ets_bench:honoured(set, {locks, N})],
    ?assertEqual(48 + 3 * length(Locks), count_args(Rows, <<"matrix">>)),
    ?assertEqual(lists:sort([{locks, N} || N <- Locks]),
                 lists:usort([O || #{args := A} <- Rows, [_, {locks, _} = O | _] <- [term(A)]])),
    ?assertEqual(6, count_args(Rows, <<"rg8">>)),
    ?assertEqual([{<<"ets_bench">>, <<"passed">>}],
                 [{B, V} || #{benchmark := B, verdict := V}
                                <- beamscale_store:read_rows(filename:join(Dir, "sanity.csv"))]),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    [_, AfterHeading] = binary:split(Html, <<"<h2>The ETS study (ets_bench)</h2>">>),
    [Section | _] = binary:split(AfterHeading, <<"<h2>">>),
    %% Options: 6 figures of 8 series; insert and delete: 4 of 8; reader groups: 6 of 3 counts
    %% and the plain set; locks: 3 of rw and 64, 256, 1024.
    Expected = lists:duplicate(6, 8) ++ lists:duplicate(4, 8) ++ lists:duplicate(6, 4)
        ++ lists:duplicate(3, 1 + length(Locks)),
    ?assertEqual(Expected, series_counts(Section)).

term(Text) ->
    {ok, Tokens, _} = erl_scan:string(binary_to_list(Text) ++ "."),
    {ok, T} = erl_parse:parse_term(Tokens),
    T.

count_args(Rows, Flags) ->
    length(lists:usort([A || #{args := A, erl_args := E} <- Rows, E =:= Flags])).

series_counts(Html) ->
    {match, Counts} = re:run(Html, <<"<svg[^>]*data-series=\"([0-9]+)\"">>,
                             [global, {capture, all_but_first, binary}]),
    [binary_to_integer(C) || [C] <- Counts].

bad_version() -> [{doc, "study ets with an unknown --version exits 2."}].
bad_version(_Config) ->
    ?assertEqual(2, beamscale_cli:dispatch(["study", "ets", "--version", "huge"])).

%% In a plain run (no -ets_bench flag) the few default sets run, each phase its own row.
plain_run_phases() -> [{doc, "ets_bench in a plain run: a row per phase per set."}].
plain_run_phases(Config) ->
    Out = ?config(priv_dir, Config),
    ?assertEqual(0, beamscale_cli:dispatch(["run", "--bench", "ets_bench", "--schedulers", "1",
                                            "--iterations", "2", "--launches", "1",
                                            "--warmups", "0", "--out", Out,
                                            "--name", "plain", "--quiet", "--no-sample"])),
    Rows = beamscale_store:measurements(filename:join(Out, "plain")),
    Args = lists:usort([A || #{args := A} <- Rows]),
    ?assert(length(Args) >= 2 andalso length(Args) =< 4),
    [?assertEqual(2, length([R || #{args := A1, phase := P1} = R <- Rows, A1 =:= A, P1 =:= P]))
     || A <- Args, P <- [<<"insert">>, <<"access">>, <<"delete">>]],
    ?assertEqual(length(Args) * 3 * 2, length(Rows)).

%% The flag sets carry the selection, the lock counts, and the seed and divisor when given.
flag_sets() -> [{doc, "Flag sets carry selection, lock counts, seed and divisor."}].
flag_sets(_Config) ->
    Default = beamscale_study_ets:flag_sets(undefined, #{}),
    ?assertEqual([matrix, rg1, rg2, rg4, rg8, rg16, rg32, rg64], [A || {A, _} <- Default]),
    {rg4, Rg4} = lists:keyfind(rg4, 1, Default),
    ?assertEqual("+rg 4 -ets_bench reader_groups", Rg4),
    {matrix, "-ets_bench matrix -ets_bench_locks " ++ Locks} = hd(Default),
    [?assert(beamscale_bench_ets_bench:honoured(set, {locks, list_to_integer(N)}))
     || erlang:system_info(schedulers) > 1, N <- string:lexemes(Locks, ",")],
    [{matrix, M}, {rg2, R}] = beamscale_study_ets:flag_sets(7, #{divisor => 8,
                                                                 reader_groups => [2]}),
    [?assertNotEqual(nomatch, string:find(F, " -ets_bench_seed 7 -ets_bench_divisor 8"))
     || F <- [M, R]].
