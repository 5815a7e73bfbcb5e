%% The instruction clock's conditions on a run configuration (beamscale_config_clock), read as
%% `beamscale_config:load/2' reads them: defaults and presets made one scheduler, a user's
%% other counts refused in words naming where they were given.
-module(beamscale_config_clock_tests).

-include_lib("eunit/include/eunit.hrl").

load(Overrides) -> beamscale_config:load(undefined, Overrides).

default_schedulers_become_one_test() ->
    {ok, C} = load([{clock, instructions}]),
    ?assertEqual([1], maps:get(schedulers, C)),
    ?assertEqual(false, maps:get(sample, C)).

preset_schedulers_become_one_test() ->
    {ok, C} = beamscale_config:load({preset, "quick"}, [{clock, instructions}]),
    ?assertEqual([1], maps:get(schedulers, C)).

time_clocks_keep_schedulers_test() ->
    {ok, C} = load([{clock, wall}, {schedulers, [1, 2]}]),
    ?assertEqual([1, 2], maps:get(schedulers, C)).

given_schedulers_refused_test() ->
    {error, R} = load([{clock, instructions}, {schedulers, [1, 2]}]),
    ?assertMatch("command line: --schedulers: --clock instructions counts one scheduler" ++ _,
                 beamscale_config:format_error(R)).

file_schedulers_refused_with_its_line_test() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    File = filename:join(Dir, "counted.config"),
    ok = file:write_file(File, "{clock, instructions}.\n{schedulers, [2]}.\n"),
    {error, R} = beamscale_config:load(File, []),
    ok = file:del_dir_r(Dir),
    Text = lists:flatten(beamscale_config:format_error(R)),
    ?assert(lists:prefix(File ++ ":2: schedulers: ", Text), Text).

nodes_and_profile_refused_test() ->
    {error, N} = load([{clock, instructions}, {nodes, [2]}]),
    ?assertMatch("command line: --nodes: " ++ _, beamscale_config:format_error(N)),
    {error, P} = load([{clock, instructions}, {profile, #{}}]),
    ?assertMatch("command line: --profile: --profile runs perf" ++ _,
                 beamscale_config:format_error(P)).

override_refused_test() ->
    {error, R} = load([{clock, instructions}, {overrides, [{bang, [{schedulers, [2]}]}]}]),
    ?assertMatch("command line: --overrides: bang: schedulers: " ++ _,
                 beamscale_config:format_error(R)).

unknown_clock_test() ->
    {error, R} = load([{clock, "ticks"}]),
    ?assertMatch("command line: --clock: expected wall" ++ _, beamscale_config:format_error(R)).
