%% `beamscale run' through the real command line: failures said at once in their own words and
%% counted in the exit code.
-module(beamscale_cmd_run_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([bad_flag/1, bad_flag_load_target/1]).
-export([bad_flag/0, bad_flag_load_target/0]).

%% A node that cannot start is said by the emulator's preflight in well under a second on an
%% idle host; 10 s leaves room for a loaded 2-core host and is still far below the 30 s boot
%% timeout that used to be the only sign.
-define(BAD_FLAG_TIMEOUT, 10000).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [bad_flag, bad_flag_load_target].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

bad_flag() -> [{doc, "A typo flag: exit 1 within 10 s, the emulator's words in failures.csv."}].
bad_flag(Config) ->
    Conf = write_config(Config, "typo.config",
                        [{benchmarks, [big]}, {schedulers, [1]}, {iterations, 2},
                         {warmups, 0}, {sample, false}, {erl_args, [{typo, "+sbwt nonee"}]}]),
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

%%% Helpers

out(Config) -> filename:join(?config(priv_dir, Config), "runs").

write_config(Config, Name, Entries) ->
    File = filename:join(?config(priv_dir, Config), Name),
    ok = file:write_file(File, [io_lib:format("~0tp.~n", [E]) || E <- Entries]),
    File.
