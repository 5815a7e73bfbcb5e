%% bencherl's own tree as it is: handlers of this suite's own, in bencherl's layout
%% (bench/NAME/src, data, conf), run through the real command line; one case per class of
%% bencherl benchmark (synthetic, multi-phase, data file, peers, pre/post hooks).
-module(beamscale_bencherl_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([users_big_wins/1, multi_phase/1, data_file/1, peers_per_env/1, hooks/1, run_conf/1,
         missing_module/1, elixir_handler/1]).
-export([users_big_wins/0, multi_phase/0, data_file/0, peers_per_env/0, hooks/0, run_conf/0,
         missing_module/0, elixir_handler/0]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [users_big_wins, multi_phase, data_file, peers_per_env, hooks, run_conf,
          missing_module, elixir_handler].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Root = filename:join(?config(priv_dir, Config), "bencherl"),
    ok = filelib:ensure_path(Root),
    {0, _} = beamscale_os:cmd("/bin/cp", ["-r", filename:join(?config(data_dir, Config), "bench"),
                                          Root], 30000),
    %% Kept as .erl.src so that rebar3 does not take them for test modules of beamscale.
    [ok = file:rename(F, filename:rootname(F))
     || F <- filelib:wildcard(filename:join(Root, "bench/*/src/*.erl.src"))],
    [{bench, filename:join(Root, "bench")} | Config].

end_per_suite(_Config) -> ok.

users_big_wins() -> [{doc, "A handler named big on the bench path runs, not the built-in."}].
users_big_wins(Config) ->
    Bench = ?config(bench, Config),
    {0, Text} = run(Config, "big", ["--bench", "big", "--bench-path", Bench]),
    ?assertNotEqual(nomatch, string:find(Text, "note: big is the handler in "), Text),
    ?assertEqual([<<"the user's big 3\n">>], outputs(Config, "big")),
    %% The built-in is still there under its qualified name, with its own arguments.
    {0, _} = run(Config, "builtin", ["--bench", "builtin:big", "--bench-path", Bench]),
    ?assertMatch([#{args := <<"[128]">>} | _], measurements(Config, "builtin")),
    {0, List} = beamscale_test_cli:run(["list", "--bench-path", Bench]),
    ?assertNotEqual(nomatch, string:find(List, "big\n    [handler in " ++ Bench ++ "/big] "),
                    List),
    ?assertNotEqual(nomatch, string:find(List, "builtin:big\n    [built-in] "), List).

multi_phase() -> [{doc, "Phases of a handler in bench/NAME are timed apart."}].
multi_phase(Config) ->
    {0, _} = run(Config, "phases", ["--bench", "bl_phases",
                                    "--bench-path", filename:join(?config(bench, Config),
                                                                  "bl_phases")]),
    Phases = lists:usort([P || #{phase := P} <- measurements(Config, "phases")]),
    ?assertEqual([<<"setup">>, <<"work">>], Phases).

data_file() -> [{doc, "datadir is bench/NAME/data; src/*.hrl found; bench.conf flags added."}].
data_file(Config) ->
    Conf = filename:join(?config(priv_dir, Config), "data.config"),
    ok = file:write_file(Conf, "{erl_args, [{calm, \"+sbwt none\"}]}.\n"),
    {0, _} = run(Config, "data", ["--bench", "bl_data", "--bench-path", ?config(bench, Config),
                                  "--config", Conf]),
    ?assertMatch([#{erl_args := <<"calm">>}], measurements(Config, "data")),
    [Out] = outputs(Config, "data"),
    {match, [Limit]} = re:run(Out, "^5 words, process limit ([0-9]+)", [{capture, all_but_first,
                                                                         list}]),
    %% +P 400000 from bench.conf, rounded up by the emulator; the default is 262144.
    ?assert(list_to_integer(Limit) >= 400000).

peers_per_env() ->
    [{doc, "Peers named by role, a fixed cookie from a file; argument sets per node count "
           "make no 'did not finish'."}].
peers_per_env(Config) ->
    Priv = ?config(priv_dir, Config),
    Cookie = filename:join(Priv, "cookie"),
    ok = file:write_file(Cookie, "bl_fixed_cookie\n"),
    Conf = filename:join(Priv, "peers.config"),
    ok = file:write_file(Conf, io_lib:format("{node_names, [\"client\", \"server\"]}.~n"
                                             "{cookie_file, ~p}.~n", [Cookie])),
    {0, _} = run(Config, "peers", ["--bench", "bl_peers", "--bench-path", ?config(bench, Config),
                                   "--nodes", "1,3", "--config", Conf]),
    Dir = dir(Config, "peers"),
    ?assertEqual([<<"peers , cookie bl_fixed_cookie\n">>,
                  <<"peers client,server, cookie bl_fixed_cookie\n">>],
                 lists:sort(outputs(Config, "peers"))),
    ?assertMatch({2, 2, []}, beamscale_writer:missing(Dir)),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertEqual(nomatch, string:find(Html, "did not finish")),
    {ok, Json} = file:read_file(filename:join(Dir, "run.json")),
    ?assertEqual(nomatch, string:find(Json, "bl_fixed_cookie")).

hooks() -> [{doc, "pre_bench and post_bench run around each job with bencherl's arguments."}].
hooks(Config) ->
    Log = filename:join(?config(priv_dir, Config), "hooks.log"),
    true = os:putenv("BL_HOOKS_LOG", Log),
    try run(Config, "hooks", ["--bench", "bl_hooks", "--bench-path", ?config(bench, Config),
                              "--launches", "2"]) of
        {0, _} -> ok
    after os:unsetenv("BL_HOOKS_LOG")
    end,
    {ok, Text} = file:read_file(Log),
    ?assertEqual(<<"pre 1 0 bencherl bencherl\npost 1 0\npre 1 0 bencherl bencherl\npost 1 0\n">>,
                 Text),
    ?assertEqual(2, length(measurements(Config, "hooks"))).

run_conf() -> [{doc, "bencherl's run.conf: keys mapped, bench/ found, refusals by line."}].
run_conf(Config) ->
    Conf = filename:join([filename:dirname(?config(bench, Config)), "conf", "run.conf"]),
    ok = filelib:ensure_dir(Conf),
    Text = "# as bencherl's\nITERATIONS=2\nNUMBER_OF_SCHEDULERS=1\nNUMBER_OF_SLAVE_NODES=0\n"
           "INCLUDE_BENCH=bl_phases,big\nEXCLUDE_BENCH=big\nCHECK_SANITY=1\n"
           "ERL_ARGS=\"CALM=+sbwt none\"\n",
    ok = file:write_file(Conf, Text),
    {0, _} = beamscale_test_cli:run(["run", "--bencherl-conf", Conf, "--launches", "1",
                                     "--warmups", "0", "--no-sample", "--name", "runconf",
                                     "--out", ?config(priv_dir, Config)]),
    Rows = measurements(Config, "runconf"),
    ?assertEqual([{<<"bl_phases">>, <<"CALM">>}],
                 lists:usort([{B, E} || #{benchmark := B, erl_args := E} <- Rows])),
    ?assertEqual(4, length(Rows)),  % two phases, two iterations
    ok = file:write_file(Conf, Text ++ "USE_LONG_NAMES=0\n"),
    {2, Refused} = beamscale_test_cli:run(["run", "--bencherl-conf", Conf, "--name", "refused",
                                           "--out", ?config(priv_dir, Config)]),
    ?assertNotEqual(nomatch, string:find(Refused, Conf ++ ":9: USE_LONG_NAMES: "), Refused),
    %% Words from the file become atoms only when beamscale knows them: a typo is refused
    %% with near names, and thousands of made-up aliases make no atoms.
    refused(Config, Conf, "INCLUDE_BENCH=bl_phase\n",
            ":1: INCLUDE_BENCH: unknown benchmark bl_phase (did you mean bl_phases"),
    refused(Config, Conf, "VERSION=huge\n", ":1: VERSION: expected short, intermediate or long"),
    Many = lists:join(",", ["a" ++ integer_to_list(I) ++ "=x" || I <- lists:seq(1, 5000)]),
    Atoms = erlang:system_info(atom_count),
    refused(Config, Conf, "ERL_ARGS=" ++ Many ++ "\n", ":1: ERL_ARGS: more than 32 aliases"),
    ?assert(erlang:system_info(atom_count) - Atoms < 100),
    refused(Config, Conf, "OTPS=\"a b=/usr\"\n", ":1: OTPS: alias \"a b\": expected").

refused(Config, Conf, Text, Expected) ->
    ok = file:write_file(Conf, Text),
    {2, Out} = beamscale_test_cli:run(["run", "--bencherl-conf", Conf, "--name", "refused",
                                       "--out", ?config(priv_dir, Config)]),
    ?assertNotEqual(nomatch, string:find(Out, Conf ++ Expected), Out).

missing_module() -> [{doc, "A module that cannot be loaded is named; a wrong name, near ones."}].
missing_module(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "ghosts"),
    ok = filelib:ensure_path(Dir),
    %% A .beam that is not object code (an Elixir module built for another release, say).
    ok = file:write_file(filename:join(Dir, "ghost.beam"), "not object code"),
    {1, _} = run(Config, "ghost", ["--bench", "ghost", "--bench-path", Dir]),
    [#{reason := Reason}] = beamscale_store:failures(dir(Config, "ghost")),
    ?assertNotEqual(nomatch, string:find(Reason, "module ghost is not on the node under test"),
                    Reason),
    {2, Text} = run(Config, "typo", ["--bench", "bl_phase", "--bench-path",
                                     ?config(bench, Config)]),
    ?assertNotEqual(nomatch, string:find(Text, "unknown benchmark bl_phase (did you mean "
                                               "bl_phases"), Text).

elixir_handler() ->
    [{doc, "A bencherl handler written in Elixir (bench/NAME/src/NAME.ex) runs, with a helper "
           "module of a second file and its datadir; list describes it; an error names its "
           "file and line."}].
elixir_handler(Config) ->
    Bench = ?config(bench, Config),
    {0, _} = run(Config, "elixir", ["--bench", "bl_elixir", "--bench-path", Bench]),
    ?assertEqual([<<"elixir 210\n">>, <<"elixir 55\n">>], lists:sort(outputs(Config, "elixir"))),
    ?assertEqual([<<"[10]">>, <<"[20]">>],
                 lists:usort([A || #{args := A} <- measurements(Config, "elixir")])),
    {0, List} = beamscale_test_cli:run(["list", "--bench-path", Bench]),
    ?assertNotEqual(nomatch, string:find(List, "bl_elixir\n    [handler in " ++ Bench
                                               ++ "/bl_elixir] "), List),
    %% A broken Elixir handler fails its job in Elixir's words, naming file and line.
    Broken = filename:join([?config(priv_dir, Config), "broken", "bl_broken"]),
    ok = filelib:ensure_path(filename:join(Broken, "src")),
    Src = filename:join([Broken, "src", "bl_broken.ex"]),
    ok = file:write_file(Src, "defmodule BlBroken do\n  def run(, do: :ok\nend\n"),
    {1, _} = run(Config, "broken", ["--bench", "bl_broken", "--bench-path", Broken]),
    [#{reason := Reason}] = beamscale_store:failures(dir(Config, "broken")),
    ?assertNotEqual(nomatch, string:find(Reason, Src ++ ":3: ** (SyntaxError) "), Reason),
    ?assertEqual(nomatch, string:find(Reason, "parallel_compiler"), Reason).

%%% Helpers

run(Config, Name, Args) ->
    beamscale_test_cli:run(["run", "--schedulers", "1", "--iterations", "1", "--launches", "1",
                            "--warmups", "0", "--no-sample", "--name", Name,
                            "--out", ?config(priv_dir, Config) | Args]).

dir(Config, Name) -> filename:join(?config(priv_dir, Config), Name).

measurements(Config, Name) -> beamscale_store:measurements(dir(Config, Name)).

outputs(Config, Name) ->
    [B || F <- filelib:wildcard(filename:join([dir(Config, Name), "output", "*.txt"])),
          {ok, B} <- [file:read_file(F)]].
