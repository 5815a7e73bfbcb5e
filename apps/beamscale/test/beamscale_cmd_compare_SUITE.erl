%% `beamscale compare' on run directories written by the test: same data, other noise, and one
%% benchmark made 30 % slower.
-module(beamscale_cmd_compare_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0]).
-export([same_data/1, other_noise/1, slowed/1, bad_input/1, nothing_in_common/1,
         decimal_gate/1, other_clock/1, instr_same/1, instr_more/1, instr_vs_time/1]).
-export([same_data/0, other_noise/0, slowed/0, bad_input/0, nothing_in_common/0,
         decimal_gate/0, other_clock/0, instr_same/0, instr_more/0, instr_vs_time/0]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [same_data, other_noise, slowed, bad_input, nothing_in_common, decimal_gate,
          other_clock, instr_same, instr_more, instr_vs_time].

benches() -> [{<<"big">>, <<"[128]">>, 0.2}, {<<"ets_test">>, <<"[8,2,20000]">>, 0.1}].

run(Config, Name, Extra) ->
    Dir = filename:join(?config(priv_dir, Config), Name),
    beamscale_rundir_fixture:write(Dir, maps:merge(#{benches => benches()}, Extra)).

same_data() -> [{doc, "Identical runs compare equal; compare exits 0 and writes its page."}].
same_data(Config) ->
    A = run(Config, "same-a", #{}),
    B = run(Config, "same-b", #{}),
    Results = beamscale_stats_compare:compare(beamscale_store:measurements(A),
                                              beamscale_store:measurements(B)),
    ?assertEqual(4, length(Results)),
    [?assertMatch(#{significant := false, ratio := 1.0, p := 1.0}, R) || R <- Results],
    ?assertEqual(0, beamscale_cli:dispatch(["compare", A, B, "--fail-if-slower", "10"])),
    ?assert(filelib:is_regular(filename:join(B, "compare.html"))).

%% Two runs of the same benchmarks with independent noise: no significant difference.
other_noise() -> [{doc, "Two runs differing only in noise show no significant difference."}].
other_noise(Config) ->
    A = run(Config, "noise-a", #{seed => 11}),
    B = run(Config, "noise-b", #{seed => 97}),
    Results = beamscale_stats_compare:compare(beamscale_store:measurements(A),
                                              beamscale_store:measurements(B)),
    ?assertEqual([], [R || #{significant := true} = R <- Results]).

slowed() -> [{doc, "A benchmark 30 % slower is named and fails a 10 % gate, not a 50 % one."}].
slowed(Config) ->
    A = run(Config, "slow-a", #{seed => 5}),
    B = run(Config, "slow-b", #{seed => 6, slow => #{<<"ets_test">> => 1.3}}),
    Results = beamscale_stats_compare:compare(beamscale_store:measurements(A),
                                              beamscale_store:measurements(B)),
    Slower = beamscale_stats_compare:slower(Results, 10),
    ?assertEqual([<<"ets_test">>, <<"ets_test">>], [element(1, K) || #{key := K} <- Slower]),
    [?assert(R > 1.2 andalso R < 1.4 andalso L > 1 andalso H > R)
     || #{ratio := R, ratio_low := L, ratio_high := H} <- Slower],
    Out = filename:join(?config(priv_dir, Config), "elsewhere/compare.html"),
    ct:capture_start(),
    ?assertEqual(1, beamscale_cli:dispatch(["compare", A, B, "--fail-if-slower", "10",
                                            "--out", Out])),
    ct:capture_stop(),
    Text = lists:append(ct:capture_get()),
    ?assertMatch({match, _}, re:run(Text, "ets_test \\[8,2,20000\\] @ otp/default/s1/n1 .*slower")),
    ?assertEqual(nomatch, re:run(Text, "big .*slower")),
    ?assert(filelib:is_regular(Out)),
    %% 30 % is under a 50 % gate; without a gate compare succeeds.
    ?assertEqual(0, beamscale_cli:dispatch(["compare", A, B, "--fail-if-slower", "50"])),
    ?assertEqual(0, beamscale_cli:dispatch(["compare", A, B])),
    {ok, Html} = file:read_file(filename:join(B, "compare.html")),
    ?assertEqual(2, length(binary:matches(Html, <<"class=\"slower\"">>))).

bad_input() -> [{doc, "compare with one run, or with a directory that is no run, exits 2."}].
bad_input(Config) ->
    A = run(Config, "bad-a", #{}),
    ?assertEqual(2, beamscale_cli:dispatch(["compare", A])),
    ?assertEqual(2, beamscale_cli:dispatch(["compare", A, ?config(priv_dir, Config)])).

%% Renaming a flag set (or an erl) leaves no result measured in both runs: the gate would pass
%% everything, so the comparison is refused.
nothing_in_common() -> [{doc, "No result measured in both runs: exit 2 saying so."}].
nothing_in_common(Config) ->
    A = run(Config, "common-a", #{}),
    B = run(Config, "common-b", #{flags => [<<"renamed">>]}),
    {Status, Text} = beamscale_test_cli:run(["compare", A, B, "--fail-if-slower", "10"]),
    ?assertEqual(2, Status, Text),
    ?assertNotEqual(nomatch, string:find(Text, "no result was measured in both runs"), Text).

decimal_gate() -> [{doc, "--fail-if-slower takes a decimal: 25.5 fails on 30 %, 40.5 not."}].
decimal_gate(Config) ->
    A = run(Config, "dec-a", #{seed => 5}),
    B = run(Config, "dec-b", #{seed => 6, slow => #{<<"ets_test">> => 1.3}}),
    ?assertEqual(1, beamscale_cli:dispatch(["compare", A, B, "--fail-if-slower", "25.5"])),
    ?assertEqual(0, beamscale_cli:dispatch(["compare", A, B, "--fail-if-slower", "40.5"])),
    ?assertEqual(2, beamscale_cli:dispatch(["compare", A, B, "--fail-if-slower", "ten"])).

other_clock() -> [{doc, "CPU clock against wall clock: refused (exit 2); another host: noted."}].
other_clock(Config) ->
    A = run(Config, "clock-a", #{clock => cpu}),
    B = run(Config, "clock-b", #{clock => wall}),
    {2, Text} = beamscale_test_cli:run(["compare", A, B]),
    ?assertNotEqual(nomatch, string:find(Text, "by the cpu clock"), Text),
    C = run(Config, "clock-c", #{clock => cpu, host => <<"elsewhere">>}),
    {0, Noted} = beamscale_test_cli:run(["compare", A, C]),
    ?assertNotEqual(nomatch, string:find(Noted, "note: host differs (A: test-host, B: elsewhere)"),
                    Noted).

%% A run directory as `bench --name --clock instructions' keeps it: its times, its clock in
%% run.json and its counts per launch (`Factor' times 2970 instructions a call, give or take a
%% few), or a time run when `Factor' is `time'.
bench_run(Config, Name, Factor) ->
    Dir = run(Config, Name, #{benches => [{<<"lists:seq(1, 100).">>, <<"-">>, 7.0e-7}]}),
    Env = beamscale_format_env:key(#{otp => <<"otp">>, erl_args => <<"default">>,
                                     schedulers => 1, nodes => 1}),
    Key = {<<"lists:seq(1, 100).">>, <<"-">>, Env},
    Run = case Factor of
              time -> #{kind => micro};
              _ ->
                  Counts = [[2970 * Factor + D + S / 4 || S <- lists:seq(0, 8)]
                            || D <- [0, 2, 1]],
                  ok = beamscale_instr_store:write(Dir, [{Key, <<"call">>,
                                                          Counts}]),
                  #{kind => micro, clock => instructions, counter => valgrind}
          end,
    ok = file:write_file(filename:join(Dir, "run.json"), beamscale_format_json:encode(Run)),
    Dir.

instr_same() -> [{doc, "Two instruction runs alike: compared in instructions, same, gate "
                       "passes; the library says so too."}].
instr_same(Config) ->
    A = bench_run(Config, "instr-a", 1),
    B = bench_run(Config, "instr-b", 1),
    {0, Text} = beamscale_test_cli:run(["compare", A, B, "--fail-if-slower", "1"]),
    [?assertNotEqual(nomatch, string:find(Text, S), Text)
     || S <- ["clock: instructions retired per call", "counted by valgrind in both runs",
              "same in instructions", "over 3 and 3 launches", "1 compared in instructions"]],
    ?assert(filelib:is_regular(filename:join(B, "compare.html"))),
    %% The library gives the same comparison as maps.
    ?assertMatch(#{instructions := [#{verdict := same, over := launches}]},
                 beamscale:compare(A, B)).

instr_more() -> [{doc, "B counting 3 % more instructions: named, fails a 2 % gate, not a 5 %."}].
instr_more(Config) ->
    A = bench_run(Config, "more-a", 1),
    B = bench_run(Config, "more-b", 1.03),
    {1, Text} = beamscale_test_cli:run(["compare", A, B, "--fail-if-slower", "2"]),
    ?assertNotEqual(nomatch, string:find(Text, "more instructions by 3.0"), Text),
    ?assertNotEqual(nomatch, string:find(Text, "count more than 2 % more instructions"), Text),
    {0, _} = beamscale_test_cli:run(["compare", A, B, "--fail-if-slower", "5"]),
    {0, Fewer} = beamscale_test_cli:run(["compare", B, A]),
    ?assertNotEqual(nomatch, string:find(Fewer, "fewer instructions by"), Fewer).

instr_vs_time() -> [{doc, "An instructions run against a time run: refused in one line, exit 2."}].
instr_vs_time(Config) ->
    A = bench_run(Config, "vs-a", 1),
    B = bench_run(Config, "vs-b", time),
    {2, Text} = beamscale_test_cli:run(["compare", A, B]),
    ?assertMatch([_], string:lexemes(Text, "\n")),
    ?assertNotEqual(nomatch, string:find(Text, "by the instructions clock"), Text),
    ?assertNotEqual(nomatch, string:find(Text, "by the time clock"), Text).
