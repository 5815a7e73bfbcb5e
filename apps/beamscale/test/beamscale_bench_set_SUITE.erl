%% The synthetic benchmarks through the real coordinator and executor on fresh nodes: the sanity
%% check passes for each across scheduler counts, orbit_int prints the same on two nodes as on
%% one and really works on the second node, and the quick preset is read as a configuration.
-module(beamscale_bench_set_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([synthetic_sanity/1, orbit_two_nodes/1, orbit_uses_peer/1, quick_preset/1,
         unknown_preset/1]).
-export([quick_preset/0, unknown_preset/0, synthetic_sanity/0, orbit_two_nodes/0,
         orbit_uses_peer/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [quick_preset, unknown_preset, synthetic_sanity, orbit_two_nodes, orbit_uses_peer].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

%% Every benchmark of the quick preset at short size on 1 and 2 schedulers, one iteration each:
%% nothing fails and every one passes the sanity check (prints the same in both environments).
synthetic_sanity() -> [{doc, "Each quick-preset benchmark runs on 1 and 2 schedulers, sane."}].
synthetic_sanity(Config) ->
    {ok, Preset} = beamscale_presets:terms("quick"),
    Benchmarks = proplists:get_value(benchmarks, Preset),
    {Dir, #{failures := Failures, sanity := Sanity}} =
        run(Config, "synthetic", [{benchmarks, Benchmarks}, {schedulers, [1, 2]}]),
    ?assertEqual(0, Failures),
    ?assertEqual([{atom_to_binary(B), passed} || B <- lists:sort(Benchmarks)], Sanity),
    Rows = beamscale_store:measurements(Dir),
    ?assertEqual(lists:usort([atom_to_binary(B) || B <- Benchmarks]),
                 lists:usort([B || #{benchmark := B} <- Rows])),
    beamscale_test_cli:no_strays().

%% orbit_int on one node and on two: the same orbit sizes, so the sanity check passes across
%% the node counts.
orbit_two_nodes() -> [{doc, "orbit_int on one node and on two passes the sanity check."}].
orbit_two_nodes(Config) ->
    {Dir, #{failures := 0, sanity := Sanity}} =
        run(Config, "orbit", [{benchmarks, [orbit_int]}, {schedulers, [1]}, {nodes, [1, 2]}]),
    ?assertEqual([{<<"orbit_int">>, passed}], Sanity),
    Rows = beamscale_store:measurements(Dir),
    ?assertEqual([<<"1">>, <<"2">>], lists:usort([N || #{nodes := N} <- Rows])),
    ?assertEqual(4, length(Rows)),
    beamscale_test_cli:no_strays().

%% Given a peer, orbit_int puts workers there: the peer does a large part of the work.
orbit_uses_peer() -> [{doc, "orbit_int given a peer does much work there, same result."}].
orbit_uses_peer(_Config) ->
    Paths = [code:lib_dir(beamscale_bench, ebin)],
    Spec = #{erl => os:find_executable("erl"), flags => "", schedulers => 1, code_path => Paths},
    {ok, #{node := Peer} = Handle} = beamscale_node:start("orbit", Spec),
    try
        Before = reductions(Peer),
        Args = [false, g13, 4000, 4],
        {ok, _, Remote} = beamscale_bench_runner:iteration(orbit_int, beamscale_bench_orbit_int,
                                                           Args, [Peer], []),
        Used = reductions(Peer) - Before,
        {ok, _, Local} = beamscale_bench_runner:iteration(orbit_int, beamscale_bench_orbit_int,
                                                          Args, [], []),
        ?assertEqual(Local, Remote),
        ct:pal("reductions on the peer: ~b", [Used]),
        ?assert(Used > 1000000)
    after
        beamscale_node:stop(Handle)
    end.

%% The preset is read as a file; options override it; `all' in the scheduler list is the cores.
quick_preset() -> [{doc, "The quick preset loads as a configuration; options override it."}].
quick_preset(_Config) ->
    {ok, Conf} = beamscale_config:load({preset, "quick"}, [{iterations, 1}]),
    #{benchmarks := Benchmarks, version := short, iterations := 1, warmups := 1,
      schedulers := Schedulers} = Conf,
    ?assertEqual(lists:usort([1, beamscale_os:logical_cores()]), Schedulers),
    ?assert(lists:member(orbit_int, Benchmarks)),
    ?assertNot(lists:member(dialyzer_bench, Benchmarks)),
    %% The option `--schedulers 1,all' says the same on the command line.
    Overrides = beamscale_cmd_run:overrides(#{schedulers => "1,all", iterations => 2}),
    {ok, #{schedulers := Schedulers, iterations := 2}} =
        beamscale_config:load({preset, "quick"}, Overrides).

%% An unknown preset: one line naming the option, exit code 2.
unknown_preset() -> [{doc, "An unknown preset, or --preset with --config, exits 2 with one line."}].
unknown_preset(_Config) ->
    {Code, Out} = beamscale_test_cli:run(["run", "--preset", "nosuch", "--quiet"]),
    ?assertEqual(2, Code),
    ?assertEqual("beamscale run: command line: --preset: unknown preset nosuch (known: quick)\n",
                 Out),
    {2, Both} = beamscale_test_cli:run(["run", "--preset", "quick", "--config", "x.config"]),
    ?assertMatch({match, _}, re:run(Both, "exclude each other")).

%%% Helpers

run(Config, Name, Settings) ->
    Out = filename:join(?config(priv_dir, Config), "runs"),
    Overrides = [{iterations, 1}, {launches, 1}, {warmups, 0}, {sample, false}, {name, Name},
                 {out, Out} | Settings],
    {ok, Conf} = beamscale_config:load(undefined, Overrides),
    {ok, Result} = beamscale_coordinator:run(Conf, quiet),
    {filename:join(Out, Name), Result}.

reductions(Node) ->
    {Total, _} = erpc:call(Node, erlang, statistics, [reductions]),
    Total.
