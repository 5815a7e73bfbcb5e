%% `beamscale compare' on two real load runs, made by the command as a user runs it: a server of
%% a known service time (beamscale_target_workers), then the same server twice as slow. The
%% p99 gate fails on the slower one only, naming itself; the page is written; runs of two
%% kinds, or a gate of the other kind, are refused.
-module(beamscale_cmd_compare_load_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([gates/1, refused/1, thresholds/1]).
-export([gates/0, refused/0, thresholds/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [gates, refused, thresholds].

%% Two loads of 5 s: 100 ms per request, then 400 ms (64 workers: little queueing at this
%% rate). Four times slower stands out of a busy host's noise in the tail; the bench script
%% bench/compare_load_gate.sh measures the gate on 20 %.
init_per_suite(Config) ->
    Priv = ?config(priv_dir, Config),
    [load(Priv, Name, Ms) || {Name, Ms} <- [{"fast", 100}, {"slow", 400}]],
    Config.

end_per_suite(_Config) ->
    ok = beamscale_test_cli:no_strays().

load(Priv, Name, Ms) ->
    Scenario = filename:join(Priv, Name ++ ".scenario"),
    ok = file:write_file(Scenario, io_lib:format(
        "{targets, [{sut, #{start => #{erl => \"erl\", flags => \"+sbwt none\",~n"
        "    init => {beamscale_target_workers, start, [64, ~b]}}}}]}.~n"
        "{phases, [{main, #{duration_s => 5, rate => 50}}]}.~n"
        "{sessions, [{one, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []},~n"
        "                                      timeout_ms => 5000}}]}}]}.~n"
        "{drain_s, 1}.~n", [Ms])),
    {0, _} = beamscale_test_cli:run(["load", Scenario, "--name", Name, "--out", Priv,
                                     "--quiet"]).

dir(Config, Name) -> filename:join(?config(priv_dir, Config), Name).

gates() -> [{doc, "A server four times as slow fails the p99 gate, named; the other way "
            "passes."}].
gates(Config) ->
    [Fast, Slow] = [dir(Config, N) || N <- ["fast", "slow"]],
    Out = filename:join(?config(priv_dir, Config), "fast-slow.html"),
    {1, Text} = beamscale_test_cli:run(["compare", Fast, Slow, "--fail-if-p99-above", "20",
                                        "--out", Out]),
    ?assertMatch({match, _}, re:run(Text, "latency \\(corrected\\) p99 \\(ms\\) .*x \\[")),
    ?assertMatch({match, _}, re:run(Text, "latency \\(uncorrected\\) p50 \\(ms\\)")),
    ?assertMatch({match, _}, re:run(Text, "throughput \\(requests/s\\)")),
    ?assertMatch({match, _}, re:run(Text, "--fail-if-p99-above 20: B's p99")),
    {ok, Html} = file:read_file(Out),
    ?assertMatch({match, _}, re:run(Html, "<tr class=\"worse\"><td class=\"t\">latency "
                                          "\\(corrected\\) p99")),
    ?assertEqual(2, length(binary:matches(Html, <<"data-series=\"2\"">>))),
    %% Faster B: neither gate fails (an open load's throughput is its arrival rate).
    {0, _} = beamscale_test_cli:run(["compare", Slow, Fast, "--fail-if-p99-above", "20",
                                     "--fail-if-throughput-below", "20"]),
    ?assert(filelib:is_regular(filename:join(Fast, "compare.html"))),
    %% Four times as slow is within a 1000 % gate.
    {0, _} = beamscale_test_cli:run(["compare", Fast, Slow, "--fail-if-p99-above", "1000"]).

refused() -> [{doc, "A load run against a directory of no load, or --fail-if-slower: exit 2."}].
refused(Config) ->
    [Fast, Slow] = [dir(Config, N) || N <- ["fast", "slow"]],
    Suite = filename:join(?config(priv_dir, Config), "suite"),
    ok = filelib:ensure_dir(filename:join(Suite, "x")),
    ok = file:write_file(filename:join(Suite, "measurements.csv"), <<>>),
    {2, Mixed} = beamscale_test_cli:run(["compare", Fast, Suite]),
    ?assertMatch({match, _}, re:run(Mixed, "is a load run and .* is not")),
    {2, Slower} = beamscale_test_cli:run(["compare", Fast, Slow, "--fail-if-slower", "5"]),
    ?assertMatch({match, _}, re:run(Slower, "--fail-if-slower does not apply to load runs")),
    {2, P99} = beamscale_test_cli:run(["compare", Suite, Suite, "--fail-if-p99-above", "5"]),
    ?assertMatch({match, _}, re:run(P99, "--fail-if-p99-above does not apply to suite runs")).

thresholds() -> [{doc, "--threshold judges B's summary.json as load judges a run: the 400 ms "
                  "server fails p99<200ms (exit 1, the table), passes p95<1s and errors<1%; "
                  "a percentile summary.json lacks: exit 2."}].
thresholds(Config) ->
    [Fast, Slow] = [dir(Config, N) || N <- ["fast", "slow"]],
    Out = filename:join(?config(priv_dir, Config), "t.html"),
    {1, Failed} = beamscale_test_cli:run(["compare", Fast, Slow, "--threshold", "p99<200ms",
                                          "--threshold", "errors<1%", "--out", Out]),
    ?assertMatch({match, _}, re:run(Failed, "FAIL  p99<200ms  [4-9][0-9][0-9]\\.[0-9]+ ms")),
    ?assertMatch({match, _}, re:run(Failed, "pass  errors<1%  0\\.00 %")),
    ?assertMatch({match, _}, re:run(Failed, "--threshold p99<200ms: B's [4-9][0-9][0-9]")),
    {0, _} = beamscale_test_cli:run(["compare", Fast, Slow, "--threshold", "p95<1s",
                                     "--threshold", "mean{name=rpc call}<1s", "--out", Out]),
    {2, Bad} = beamscale_test_cli:run(["compare", Fast, Slow, "--threshold", "p97<1s"]),
    ?assertMatch({match, _}, re:run(Bad, "option --threshold \"p97<1s\": summary.json holds")).
