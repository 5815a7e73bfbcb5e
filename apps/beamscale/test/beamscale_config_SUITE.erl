%% Wrong configurations: each gives one line naming file, line and key; the command line exits 2
%% with that line and no stack trace.
-module(beamscale_config_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([wrong_configs/1, wrong_options/1, good_config/1, overrides_win/1, cli_exit_code/1]).
-export([wrong_configs/0, wrong_options/0, good_config/0, overrides_win/0, cli_exit_code/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [wrong_configs, wrong_options, good_config, overrides_win, cli_exit_code].

%% {File text, the exact message after "FILE:"}.
cases() ->
    [{"{version, huge}.\n", "1: version: expected short, intermediate or long"},
     {"{iterations, 0}.\n", "1: iterations: expected a positive integer"},
     {"{iterations, 3}.\n{iterations, 4}.\n", "2: iterations: given twice"},
     {"%% c\n{schedulers, [1, two]}.\n",
      "2: schedulers: expected a list of counts, {From, To} or all"},
     {"{schedulers, {4, 2}}.\n", "1: schedulers: expected a list of counts, {From, To} or all"},
     {"{warmups, -1}.\n", "1: warmups: expected a non-negative integer"},
     {"{sweep, diagonal}.\n",
      "1: sweep: expected cross (every combination) or bencherl (two one-dimensional sweeps)"},
     {"{benchmarks, [big, nosuch]}.\n",
      "1: benchmarks: unknown benchmark nosuch (beamscale list shows the benchmarks)"},
     {"{benchmarks, [bigg]}.\n",
      "1: benchmarks: unknown benchmark bigg (did you mean big, bang?)"},
     {"{erls, [{a, \"/usr/bin/erl\"},\n        {b, \"/nonexistent/erl\"}]}.\n",
      "1: erls.b: no executable erl at /nonexistent/erl"},
     {"{erl_args, [{fast, \"+sbwt none\"},\n             {bad, \"+S 4:4\"}]}.\n",
      "2: erl_args.bad: +S is set by the schedulers dimension; remove it"},
     {"{erl_args, [{old, \"-smp disable\"}]}.\n",
      "1: erl_args.old: -smp is gone since OTP 21; use the schedulers dimension (+S 1:1) instead"},
     {"{erl_args, [{a, \"\"}, {a, \"+K true\"}]}.\n", "1: erl_args.a: alias given twice"},
     {"{timeout, soon}.\n", "1: timeout: expected a positive number of seconds"},
     {"{colour, blue}.\n",
      "1: colour: unknown key colour (known: bench_path, benchmarks, clock, code_path, "
      "cookie_file, erl_args, erls, hosts, iterations, launches, msacc, name, node_names, "
      "nodes, out, overrides, profile, sample, "
      "schedulers, sweep, timeout, version, warmups)"},
     {"{clock, sundial}.\n",
      "1: clock: expected wall (elapsed time, as bencherl), cpu (the emulator's CPU time) or "
      "instructions (retired, counted; docs/micro.md)"},
     {"{launches, 0}.\n",
      "1: launches: expected a positive integer (fresh emulators per environment)"},
     {"{msacc, 101}.\n",
      "1: msacc: expected the share (%) of each sampling interval msacc is on, 0 to 100"},
     {"{overrides, [{big, [{iterations, 2},\n                    {sweep, cross}]}]}.\n",
      "2: overrides.big.sweep: cannot be set per benchmark (these can: version, schedulers, "
      "nodes, erl_args, iterations, warmups, launches, timeout, node_names)"},
     {"{overrides, [{big, [{version, tiny}]}]}.\n",
      "1: overrides.big.version: expected short, intermediate or long"},
     {"{bench_path, \"/nonexistent/dir\"}.\n",
      "1: bench_path: no such directory: /nonexistent/dir"},
     {"{name, \"a/b\"}.\n",
      "1: name: expected a name of letters, digits, '_', '.' and '-' (not . or ..)"},
     {"{version, short}\n{iterations, 3}.\n", "2: syntax error before: '{'"},
     {"{version, short}.\n{iterations, 3}\n", "2: entry not ended by a full stop (.)"},
     {"version.\n", "1: expected an entry {Key, Value}."},
     {"{iterations, 1 + 2}.\n", "1: iterations: value is not a plain term"}].

wrong_configs() -> [{doc, "Each wrong config gives its exact one-line error: file, line, key."}].
wrong_configs(Config) ->
    Dir = ?config(priv_dir, Config),
    Results = [begin
                   File = filename:join(Dir, "c" ++ integer_to_list(N) ++ ".config"),
                   ok = file:write_file(File, Text),
                   {error, Reason} = beamscale_config:load(File, []),
                   {File ++ ":" ++ Expected, beamscale_config:format_error(Reason)}
               end || {N, {Text, Expected}} <- lists:enumerate(cases())],
    ?assertEqual([], [{want, W, got, G} || {W, G} <- Results, W =/= G]).

wrong_options() -> [{doc, "Wrong command-line options give the exact error naming the option."}].
wrong_options(_Config) ->
    Cases = [{[{schedulers, [0]}],
              "command line: --schedulers: expected a list of counts, {From, To} or all"},
             {[{benchmarks, [zzz]}],
              "command line: --bench: unknown benchmark zzz (beamscale list shows the benchmarks)"},
             {[{benchmarks, [ets_tset]}],
              "command line: --bench: unknown benchmark ets_tset (did you mean ets_test?)"},
             {[{version, "long"}],
              "command line: --version: expected short, intermediate or long"}],
    [?assertEqual(Expected, begin
                                {error, R} = beamscale_config:load(undefined, Overrides),
                                beamscale_config:format_error(R)
                            end) || {Overrides, Expected} <- Cases].

good_config() -> [{doc, "examples/quick.config loads with its values and an absolute erl."}].
good_config(_Config) ->
    File = filename:join(code:lib_dir(beamscale), "../../../../examples/quick.config"),
    {ok, C} = beamscale_config:load(File, []),
    ?assertMatch(#{benchmarks := [big, ets_test], version := short, schedulers := [1, 2],
                   iterations := 3, warmups := 1, sweep := cross, nodes := [1]}, C),
    [{otp, Erl}] = maps:get(erls, C),
    ?assertEqual(filename:absname(Erl), Erl).

overrides_win() -> [{doc, "Options override the same keys in the configuration file."}].
overrides_win(Config) ->
    File = filename:join(?config(priv_dir, Config), "o.config"),
    ok = file:write_file(File, "{schedulers, {1, 3}}.\n{iterations, 5}.\n"),
    {ok, C} = beamscale_config:load(File, [{iterations, 2}]),
    ?assertMatch(#{schedulers := [1, 2, 3], iterations := 2}, C).

%% The command line prints one line and exits 2, without a stack trace.
cli_exit_code() -> [{doc, "Bad config, option or command: one line of output, exit 2."}].
cli_exit_code(Config) ->
    File = filename:join(?config(priv_dir, Config), "bad.config"),
    ok = file:write_file(File, "{iterations, 3}.\n\n{version, huge}.\n"),
    {2, Out} = cli(["run", "--config", File]),
    ?assertEqual("beamscale run: " ++ File ++ ":3: version: expected short, intermediate or long\n",
                 Out),
    {2, Out2} = cli(["run", "--iterations", "many"]),
    ?assertEqual("beamscale run: option --iterations: not an integer: many\n", Out2),
    %% A word from the command line is never made an atom: an unknown one stays text.
    {2, Out4} = cli(["run", "--clock", "sundial_x9q"]),
    ?assertEqual("beamscale run: command line: --clock: expected wall (elapsed time, as "
                 "bencherl), cpu (the emulator's CPU time) or instructions (retired, counted; "
                 "docs/micro.md)\n", Out4),
    ?assertError(badarg, list_to_existing_atom("sundial_x9q")),
    {2, Out3} = cli(["frobnicate"]),
    ?assertEqual("beamscale: unknown command frobnicate (try: beamscale help)\n", Out3).

cli(Args) -> beamscale_test_cli:run(Args).
