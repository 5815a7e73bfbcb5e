%% `beamscale bench --clock instructions' as a user runs it: nodes under Valgrind (this VM has
%% no CPU counter), instructions per call counted around the measured calls only. Counts are
%% deterministic but for what the scheduler's thread does beside (a timer, aux work), so they
%% hold beside a CPU hog per core where time does not; a Valgrind boot is slow (7 s quiet, 40 s
%% and more on a loaded host): two runs of two points, two of one allocating call.
-module(beamscale_cmd_bench_icount_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([counts/0, counts/1, allocating/0, allocating/1, no_pmu/0, no_pmu/1, compared/0,
         compared/1, died_booting/0, died_booting/1]).

suite() -> [{timetrap, {minutes, 10}}].

all() -> [no_pmu, died_booting, counts, allocating, compared].

init_per_suite(Config) -> Config.

end_per_suite(_Config) -> beamscale_test_cli:no_strays().

died_booting() -> [{doc, "A Valgrind node killed while it boots is named as ended within seconds "
                          "(its boot timeout is 600 s), with its exit status."}].
died_booting(_Config) ->
    Dir = beamscale_icount:dump_dir(),
    Spec = beamscale_icount:node_spec(valgrind, Dir, #{erl => os:find_executable("erl"),
                                                       flags => ""}),
    {ok, _} = beamscale_node:distribute(),
    Self = self(),
    Starter = spawn(fun() -> Self ! {started, beamscale_node:start("died", Spec)} end),
    Pids = killed_when_logged(Dir, 120),
    T0 = erlang:monotonic_time(second),
    receive
        {started, Result} ->
            Took = erlang:monotonic_time(second) - T0,
            Text = unicode:characters_to_list(beamscale_error:format(element(2, Result))),
            ct:pal("killed ~p; ~p s later: ~ts", [Pids, Took, Text]),
            ?assertMatch({error, {beamscale_node,
                                  {node_start, {exit, {boot_failed, {exit_status, _}}}}}},
                         Result),
            ?assert(Took < 30),
            ?assertMatch({match, _}, re:run(Text, "ended while it booted"))
    after 120000 -> exit(Starter, kill), ct:fail("no answer 120 s after the kill")
    end,
    ok = file:del_dir_r(Dir).

%% Valgrind's processes of the booting node, by the pids of their logs, killed once one shows.
killed_when_logged(_Dir, 0) -> ct:fail("no Valgrind log in 120 s");
killed_when_logged(Dir, N) ->
    case [lists:nth(2, string:split(filename:basename(L), ".", all))
          || L <- filelib:wildcard(filename:join(Dir, "valgrind.*.log"))] of
        [] ->
            receive {started, Early} -> ct:fail("answered before its Valgrind ran: ~p", [Early])
            after 1000 -> killed_when_logged(Dir, N - 1)
            end;
        Pids -> timer:sleep(3000), [beamscale_os:signal(P, "KILL") || P <- Pids], Pids
    end.

%% lists:sum/1 of small integers allocates nothing: twice the list is twice the work, with no
%% collections to blur it.
bench() ->
    [A, B] = results(["lists:sum(Input).", "--input", "l100=lists:seq(1, 100)", "--input",
                      "l200=lists:seq(1, 200)"]),
    [?assertMatch(#{<<"counter">> := <<"valgrind">>, <<"ns">> := _}, R) || R <- [A, B]],
    {maps:get(<<"instructions">>, A), maps:get(<<"instructions">>, B)}.

%% The results of `bench --json --clock instructions' of `Args', one launch: each Valgrind boot
%% is slow, the runs are the tests' replicates.
results(Args) ->
    {Status, Out} = run(["bench", "--json", "--clock", "instructions"] ++ Args
                        ++ ["--time", "0.05", "--samples", "5", "--warmup", "0.01",
                            "--launches", "1"]),
    ?assertEqual({0, ""}, {Status, [C || Status =/= 0, C <- Out]}),
    [Json | _] = [L || L <- string:split(Out, "\n", all), lists:prefix("{", L)],
    {ok, #{<<"results">> := Results}} = beamscale_format_json:decode(Json),
    Results.

counts() -> [{doc, "Instructions per call: positive, the same in two runs within 0.5 %, "
                   "twice the list twice the count."}].
counts(_Config) ->
    {A1, B1} = bench(),
    {A2, B2} = bench(),
    ct:pal("instructions per call: sum of 100 ~p, ~p; of 200 ~p, ~p", [A1, A2, B1, B2]),
    ?assert(A1 > 100),
    [?assert(abs(X - Y) / Y < 0.005) || {X, Y} <- [{A1, A2}, {B1, B2}]],
    ?assert(abs(B1 / A1 - 2) < 0.1).

allocating() -> [{doc, "An allocating call (lists:seq(1, 100), 200 words) counted in two runs: "
                       "within 0.5 %, each sample's process starting at the heap said."}].
allocating(_Config) ->
    [A, B] = [seq100() || _ <- [1, 2]],
    ct:pal("instructions per call of lists:seq(1, 100): ~p, ~p", [A, B]),
    ?assert(A > 100),
    ?assert(abs(A - B) / B < 0.005).

%% One run of `lists:seq(1, 100).': its instructions per call (its samples' heap checked).
seq100() ->
    [R] = results(["lists:seq(1, 100).", "--count-samples", "5"]),
    ?assertEqual(beamscale_bench_icount:heap_words(), maps:get(<<"counted_heap_words">>, R)),
    maps:get(<<"instructions">>, R).

%% A Valgrind boot on a loaded host may take minutes.
run(Args) -> beamscale_test_cli:wait(beamscale_test_cli:open(Args), 240000).

no_pmu() -> [{doc, "--counter pmu where the host has no CPU counter: refused in words (on a "
                   "host with one, counted by it)."}].
no_pmu(_Config) ->
    {ok, So} = beamscale_icount:build(code:root_dir(), erlang:system_info(otp_release)),
    ok = beamscale_bench_icount:load(So),
    case beamscale_bench_icount:pmu() of
        {error, _} ->
            {2, Out} = beamscale_test_cli:run(["bench", "--clock", "instructions", "--counter",
                                               "pmu", "lists:seq(1, 10)."]),
            ?assertMatch({match, _}, re:run(Out, "no CPU instruction counter")),
            ?assertEqual(nomatch, re:run(Out, "stack|\\{error"));
        ok ->
            {0, Out} = beamscale_test_cli:run(["bench", "--json", "--clock", "instructions",
                                               "--counter", "pmu", "lists:seq(1, 10)."]),
            ?assertMatch({match, _}, re:run(Out, "\"counter\":\"pmu\""))
    end.

%% A run kept by `bench --name': one point (input `l' a list of `Len'), one launch.
kept(Config, Name, Len) ->
    Out = ?config(priv_dir, Config),
    {Status, Text} = run(["bench", "--quiet", "--clock", "instructions", "--counter", "valgrind",
                          "lists:sum(Input).",
                          "--input", "l=lists:seq(1, " ++ integer_to_list(Len) ++ ")",
                          "--time", "0.05", "--samples", "5", "--warmup", "0.01",
                          "--count-samples", "5", "--launches", "1", "--name", Name,
                          "--out", Out]),
    ?assertEqual({0, ""}, {Status, [C || Status =/= 0, C <- Text]}),
    Dir = filename:join(Out, Name),
    ?assert(filelib:is_regular(beamscale_instr_store:file(Dir))),
    Dir.

compared() -> [{doc, "Two runs kept by bench --clock instructions, compare'd: in instructions, "
                     "the clock named, twice the list about twice the count."}].
compared(Config) ->
    A = kept(Config, "sum100", 100),
    B = kept(Config, "sum200", 200),
    {Status, Text} = beamscale_test_cli:run(["compare", A, B, "--fail-if-slower", "50"]),
    ct:pal("~ts", [Text]),
    ?assertEqual(1, Status),
    [?assertNotEqual(nomatch, string:find(Text, S), Text)
     || S <- ["clock: instructions retired per call", "counted by valgrind in both runs",
              "more instructions by", "counted samples, one launch a side"]],
    {match, [Ratio]} = re:run(Text, "  ([0-9.]+)x \\(A ", [{capture, all_but_first, list}]),
    ?assert(abs(list_to_float(Ratio) - 2) < 0.1).
