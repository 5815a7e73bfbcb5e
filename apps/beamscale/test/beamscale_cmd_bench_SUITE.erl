%% `beamscale bench' as a user runs it (a fresh emulator, real nodes under test): expressions,
%% memory per call, scaling and squeeze, M:F/A with inputs, Elixir, the run directory, errors.
%% Budgets are short; assertions are relative or on deterministic counts (words allocated), so
%% they hold beside a CPU hog per core.
-module(beamscale_cmd_bench_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([two_expressions/0, memory_words/0, mfa_inputs/0, scaling_table/0, squeeze_serial/0,
         squeeze_parallel/0, run_directory/0, bad_input/0, elixir_expression/0,
         elixir_mix_module/0, resume/0, elixir_mfa_inputs/0, json_stdout/0,
         compare_launches/0, init_once/0]).
-export([two_expressions/1, memory_words/1, mfa_inputs/1, scaling_table/1, squeeze_serial/1,
         squeeze_parallel/1, run_directory/1, bad_input/1, elixir_expression/1,
         elixir_mix_module/1, resume/1, elixir_mfa_inputs/1, json_stdout/1,
         compare_launches/1, init_once/1]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [two_expressions, memory_words, mfa_inputs, scaling_table, squeeze_serial,
          squeeze_parallel, run_directory, bad_input, elixir_expression, elixir_mix_module,
          resume, elixir_mfa_inputs, json_stdout, compare_launches, init_once].

init_per_suite(Config) ->
    Dir = ?config(priv_dir, Config),
    Src = filename:join(Dir, "bs_serial.erl"),
    ok = file:write_file(Src, serial_server()),
    {ok, bs_serial} = compile:file(Src, [{outdir, Dir}]),
    Config.

end_per_suite(_Config) -> beamscale_test_cli:no_strays().

%% A server doing a fixed amount of work per call (a sum of 300000 integers, about 1 ms), much
%% more than a caller's own part of a call: its callers serialise on it. With 1 caller the server
%% also waits for its scheduler to wake at each call, which a second caller hides: with 100 us of
%% work that was 23 % more calls at 2 callers on a loaded host. Beside a CPU hog per core, steps of
%% 0.5 s read 1049, 1297, 1099, 899 and 634, 689, 921, 773 calls/s: the case takes 1 s steps and
%% counts growth above 50 % (a function that scales doubles on 2 cores).
serial_server() ->
    "-module(bs_serial).\n"
    "-behaviour(gen_server).\n"
    "-export([start/0, call/0, init/1, handle_call/3, handle_cast/2]).\n"
    "start() -> gen_server:start({local, ?MODULE}, ?MODULE, [], []).\n"
    "call() -> gen_server:call(?MODULE, work).\n"
    "init([]) -> {ok, lists:seq(1, 300000)}.\n"
    "handle_call(work, _From, L) -> {reply, lists:sum(L), L}.\n"
    "handle_cast(_, S) -> {noreply, S}.\n".

bench(Args) ->
    {Status, Out} = beamscale_test_cli:run(["bench", "--json" | Args]),
    ?assertEqual({0, ""}, {Status, [C || Status =/= 0, C <- Out]}),
    [Json | _] = [L || L <- string:split(Out, "\n", all), lists:prefix("{", L)],
    {ok, #{<<"results">> := Results}} = beamscale_format_json:decode(Json),
    Results.

two_expressions() -> [{doc, "Two expressions: ns/call, intervals, reductions, the ratio."}].
two_expressions(_Config) ->
    [A, B] = bench(["rand:uniform().", "rand:uniform(1000).", "--time", "0.2"]),
    [?assertMatch(#{<<"ns">> := Ns, <<"calls_s">> := Cs, <<"ns_low">> := Lo,
                    <<"ns_high">> := Hi} when Ns > 0 andalso Cs > 0 andalso Lo =< Ns
                                              andalso Ns =< Hi, R) || R <- [A, B]],
    ?assertEqual(<<"rand:uniform(1000).">>, maps:get(<<"label">>, B)),
    ?assertMatch(#{<<"ratio">> := #{<<"ratio">> := R, <<"low">> := L, <<"high">> := H}}
                   when L =< R andalso R =< H, B),
    %% rand:uniform/0 goes through the process dictionary: a few reductions per call.
    ?assert(maps:get(<<"reductions">>, A) >= 1).

memory_words() -> [{doc, "lists:duplicate(100, x) reads back 200 words per call within 5 %."}].
memory_words(_Config) ->
    %% lists:duplicate/2 builds its list of 100 cells: 200 words, nothing else.
    [#{<<"words">> := W}] = bench(["lists:duplicate(100, x).", "--time", "0.1"]),
    ?assert(abs(W - 200) =< 10, {words, W}).

mfa_inputs() -> [{doc, "M:F/A with two inputs: words per call of each, the big one slower."}].
mfa_inputs(_Config) ->
    Rows = bench(["lists:reverse/1", "--input", "small=lists:seq(1, 10)",
                  "--input", "big=lists:seq(1, 1000)", "--time", "0.1"]),
    #{<<"small">> := S, <<"big">> := B} =
        maps:from_list([{I, R} || #{<<"input">> := I} = R <- Rows]),
    %% reverse/1 makes a new list: 2 words per element.
    ?assert(abs(maps:get(<<"words">>, S) - 20) =< 1),
    ?assert(abs(maps:get(<<"words">>, B) - 2000) =< 100),
    ?assert(maps:get(<<"ns">>, B) > maps:get(<<"ns">>, S)).

scaling_table() -> [{doc, "--callers 1,2 --schedulers 1,2 gives the 4-point table with speedups."}].
scaling_table(_Config) ->
    Rows = bench(["erlang:phash2(make_ref()).", "--callers", "1,2", "--schedulers", "1,2",
                  "--time", "0.2", "--warmup", "0.05"]),
    Points = lists:sort([{S, C} || #{<<"schedulers">> := S, <<"callers">> := C} <- Rows]),
    ?assertEqual([{1, 1}, {1, 2}, {2, 1}, {2, 2}], Points),
    [?assert(Sp == 1.0) || #{<<"callers">> := 1, <<"speedup">> := Sp} <- Rows],
    [?assert(is_float(E)) || #{<<"efficiency">> := E} <- Rows].

%% Growth counts from 20 %: a step's noise is not growth, while a second core gives 1.5x or
%% more beside a CPU hog per core (4 threads on 2 cores against 3). Both squeezes need the
%% session to get its cores (two_cores/0): on a host loaded by other sessions even the serial
%% server's throughput rose with callers (189, 335, 265, 415 calls/s at load average 28).
squeeze_serial() -> [{doc, "A gen_server:call to one busy server peaks at 1 caller."}].
squeeze_serial(Config) ->
    when_two_cores(
      fun() ->
              [#{<<"peak">> := Peak, <<"steps">> := Steps}] =
                  bench(["bs_serial:call().", "--init", "bs_serial:start().",
                         "--callers", "squeeze", "--max-callers", "4", "--tolerance", "50",
                         "--time", "1", "--code-path", ?config(priv_dir, Config)]),
              %% One caller, or no clear peak: never a wrong one.
              ?assert(lists:member(Peak, [1, null]), {Peak, Steps})
      end).

%% Only where this session gets two cores' worth of CPU: with Linux's autogroup, other sessions'
%% load caps the whole session at its share, however many threads it runs (a hog per core
%% started from the same session does not), and then no function scales.
squeeze_parallel() -> [{doc, "A parallel function peaks at 2 callers or more on 2 cores."}].
squeeze_parallel(_Config) ->
    when_two_cores(
      fun() ->
              %% A tolerance of 5 %: beside a CPU hog per core two callers got only 1.11x one
              %% caller's calls (284 297 and 315 627 per s), under the 20 % the serial case uses.
              [#{<<"peak">> := Peak, <<"steps">> := Steps}] =
                  bench(["lists:sum(lists:seq(1, 300)).", "--callers", "squeeze",
                         "--schedulers", "2", "--max-callers", "4", "--tolerance", "5",
                         "--time", "1"]),
              %% The squeeze is judged on its own steps: two callers that made no more calls
              %% than one (395 175 and 389 083 per s beside a CPU hog per core, after the
              %% two-process check passed) say the host gave no second core at that moment.
              case [R || #{<<"rate">> := R} <- lists:sublist(Steps, 2)] of
                  [R1, R2] when R2 < R1 * 1.05 ->
                      {skip, io_lib:format("two callers made ~b calls/s against one caller's "
                                           "~b: no second core to scale to",
                                           [round(R2), round(R1)])};
                  _ -> assert_parallel_peak(Peak, Steps)
              end
      end).

%% Never one caller. No clear peak only where the figures show none: two neighbouring levels up
%% to the best whose intervals, raised by the tolerance, overlap (three noisy launches on a CI
%% runner gave one caller 442k..657k calls/s and two callers 327k..1257k).
assert_parallel_peak(Peak, Steps) when is_integer(Peak) ->
    ?assert(Peak >= 2, {peak, Peak, Steps});
assert_parallel_peak(null, Steps) ->
    Rates = [R || #{<<"rate">> := R} <- Steps],
    {UpToBest, _} = lists:split(index_of(lists:max(Rates), Rates), Steps),
    Overlap = [x || {#{<<"rate_high">> := High}, #{<<"rate_low">> := Low}}
                        <- lists:zip(lists:droplast(UpToBest), tl(UpToBest)),
                    High * 1.05 >= Low],
    ?assertNotEqual([], Overlap, {no_clear_peak_though_levels_apart, Steps}).

index_of(X, [X | _]) -> 1;
index_of(X, [_ | T]) -> 1 + index_of(X, T).

when_two_cores(Test) ->
    case two_cores() of
        {true, _} -> Test();
        {false, Speedup} ->
            {skip, io_lib:format("two busy processes run only ~.2fx as fast as one here: "
                                 "this session gets one core's worth of CPU", [Speedup])}
    end.

%% The same work in one process, then split over two, in this emulator.
two_cores() ->
    Work = fun W(0) -> ok; W(N) -> _ = erlang:phash2(N), W(N - 1) end,
    Time = fun(P) ->
                   {Us, ok} = timer:tc(fun() ->
                       Refs = [element(2, spawn_monitor(fun() -> Work(4000000 div P) end))
                               || _ <- lists:seq(1, P)],
                       lists:foreach(fun(R) -> receive {'DOWN', R, _, _, _} -> ok end end, Refs)
                   end),
                   Us
           end,
    Speedup = Time(1) / Time(2),
    {Speedup > 1.4, Speedup}.

run_directory() -> [{doc, "--name keeps a run directory that report reads."}].
run_directory(Config) ->
    Out = ?config(priv_dir, Config),
    _ = bench(["lists:seq(1, 10).", "--time", "0.1", "--name", "micro", "--out", Out]),
    Dir = filename:join(Out, "micro"),
    ?assertMatch([_ | _], beamscale_store:measurements(Dir)),
    ?assertMatch({0, _}, beamscale_test_cli:run(["report", Dir])),
    ?assert(filelib:is_regular(filename:join(Dir, "index.html"))).

resume() ->
    [{doc, "A rerun of an interrupted --name run measures only the points not kept, says so "
           "and appends no row twice; another command is refused the directory (issue 36)."}].
resume(Config) ->
    Out = ?config(priv_dir, Config),
    Dir = filename:join(Out, "resumed"),
    Args = ["lists:seq(1, 10).", "lists:seq(1, 20).", "--time", "0.1", "--name", "resumed",
            "--out", Out],
    [First, _] = bench(Args),
    Rows = length(beamscale_store:measurements(Dir)),
    %% What an interruption during the second point (of three launches each) leaves: the plan
    %% and the other five jobs kept, nothing else (the run directory's files are written at
    %% the end).
    {ok, Files} = file:list_dir(Dir),
    [ok = file:del_dir_r(filename:join(Dir, F)) || F <- Files, F =/= "points"],
    ok = file:delete(filename:join(Dir, "points/2.term")),
    Rerun = fun(Kept) ->
                    {0, Text} = beamscale_test_cli:run(["bench", "--json" | Args]),
                    ct:pal("~ts", [Text]),
                    ?assertNotEqual(nomatch, string:find(Text, integer_to_list(Kept) ++
                                                             " point(s) measured before")),
                    [Json | _] = [L || L <- string:split(Text, "\n", all),
                                       lists:prefix("{", L)],
                    {ok, #{<<"results">> := Results}} = beamscale_format_json:decode(Json),
                    ?assertEqual(Rows, length(beamscale_store:measurements(Dir))),
                    Results
            end,
    [Again, Second] = Rerun(5),
    %% The first point is the one kept (a new measurement would not give the same figures).
    ?assertEqual(First, Again),
    ?assertEqual(<<"lists:seq(1, 20).">>, maps:get(<<"label">>, Second)),
    ?assert(filelib:is_regular(filename:join(Dir, "points/2.term"))),
    %% Once more, all kept: the same results, no row appended twice.
    ?assertEqual([Again, Second], Rerun(6)),
    %% Other expressions under the same name: refused, the directory left as it was.
    {ok, Before} = file:list_dir(Dir),
    {2, Refused} = beamscale_test_cli:run(["bench", "lists:seq(1, 30).", "--time", "0.1",
                                           "--name", "resumed", "--out", Out]),
    ?assertNotEqual(nomatch, string:find(Refused, "holds a bench run of other expressions")),
    ?assertEqual({ok, Before}, file:list_dir(Dir)),
    ?assertEqual(Rows, length(beamscale_store:measurements(Dir))).

bad_input() -> [{doc, "A syntax error and a missing module are one line each, exit 2."}].
bad_input(_Config) ->
    {2, Syntax} = beamscale_test_cli:run(["bench", "lists:seq(1,"]),
    ?assertMatch({match, _}, re:run(Syntax, "lists:seq\\(1,: syntax error")),
    {2, Missing} = beamscale_test_cli:run(["bench", "bs_no_such_module:f()."]),
    ?assertMatch({match, _}, re:run(Missing, "not on the node's code path: bs_no_such_module")),
    ?assertEqual(1, length(string:lexemes(Missing, "\n"))).

elixir_expression() ->
    [{doc, "An Elixir expression with --elixir, Elixir found without flags; a .ex file's "
           "module called by one."}].
elixir_expression(Config) ->
    [#{<<"ns">> := Ns, <<"words">> := W}] =
        bench(["--elixir", "Enum.sum(1..1000)", "--time", "0.1"]),
    ?assert(Ns > 0),
    ?assert(W >= 0),
    Ex = filename:join(?config(priv_dir, Config), "bs_helper.ex"),
    ok = file:write_file(Ex, "defmodule BsHelper do\n  def pairs(n), do: Enum.map(1..n, &{&1, &1})"
                             "\nend\n"),
    [#{<<"words">> := W2}] = bench(["--elixir", Ex, "BsHelper.pairs(10)", "--time", "0.1"]),
    ?assert(W2 >= 50, {words, W2}).

elixir_mfa_inputs() ->
    [{doc, "Elixir's Module.function/Arity with two Elixir inputs: the input is its argument "
           "(Enum.reverse/1 makes a list of 2 words an element), the big one slower."}].
elixir_mfa_inputs(_Config) ->
    Rows = bench(["--elixir", "Enum.reverse/1", "--input", "small=Enum.to_list(1..10)",
                  "--input", "big=Enum.to_list(1..1000)", "--time", "0.1"]),
    #{<<"small">> := S, <<"big">> := B} =
        maps:from_list([{I, R} || #{<<"input">> := I} = R <- Rows]),
    ?assertEqual(<<"Enum.reverse/1">>, maps:get(<<"label">>, S)),
    ?assert(abs(maps:get(<<"words">>, S) - 20) =< 1),
    ?assert(abs(maps:get(<<"words">>, B) - 2000) =< 100),
    ?assert(maps:get(<<"ns">>, B) > maps:get(<<"ns">>, S)).

%% A mix-style project compiled with elixirc into _build/dev/lib/APP/ebin (no hex, no mix).
elixir_mix_module() -> [{doc, "A module of a mix-style project through --mix."}].
elixir_mix_module(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "bs_demo"),
    Ebin = filename:join([Dir, "_build", "dev", "lib", "bs_demo", "ebin"]),
    Src = filename:join([Dir, "lib", "bs_demo.ex"]),
    ok = filelib:ensure_path(Ebin),
    ok = filelib:ensure_dir(Src),
    ok = file:write_file(Src, "defmodule BsDemo do\n  def pairs(n), do: Enum.map(1..n, &{&1, &1})"
                              "\nend\n"),
    {0, _} = beamscale_os:cmd(os:find_executable("elixirc"), ["-o", Ebin, Src], [], 120000),
    [#{<<"words">> := W}] = bench(["--elixir", "--mix", Dir, "BsDemo.pairs(10)",
                                   "--time", "0.1"]),
    %% Ten 2-tuples (3 words) in ten list cells (2 words), at least.
    ?assert(W >= 50, {words, W}).

json_stdout() ->
    [{doc, "--json with --name and a printing expression: stdout is the JSON alone; a crash "
           "exits 1 naming its reason in one line."}].
json_stdout(Config) ->
    Out = ?config(priv_dir, Config),
    {0, Stdout} = stdout_only(["bench", "--json", "io:format(\"hi~n\").", "--time", "0.05",
                               "--samples", "3", "--name", "printing", "--out", Out]),
    ?assertMatch({ok, #{<<"results">> := [_], <<"header">> := #{<<"launches">> := 3}}},
                 beamscale_format_json:decode(string:trim(Stdout)), Stdout),
    {1, Text} = beamscale_test_cli:run(["bench", "lists:nth(5, [1]).", "--time", "0.05"]),
    ?assertNotEqual(nomatch, string:find(Text, "crashed: function_clause in lists:nth/2"), Text).

%% The command with its stderr thrown away: {ExitCode, Stdout}.
stdout_only(Args) ->
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "exec \"$0\" \"$@\" 2>/dev/null"
                              | beamscale_test_cli:command(Args)]}, exit_status, binary]),
    beamscale_test_cli:wait(Port, 60000).

compare_launches() ->
    [{doc, "compare of two bench runs of 2 launches each: tested over launches, its A/A floor "
           "stated; the bench table says its verdict within the same input only."}].
compare_launches(Config) ->
    Out = ?config(priv_dir, Config),
    Bench = fun(Name) ->
                    {0, T} = beamscale_test_cli:run(["bench", "lists:seq(1, 50).",
                                                     "lists:seq(1, 100).", "--launches", "2",
                                                     "--time", "0.05", "--samples", "4",
                                                     "--name", Name, "--out", Out]),
                    T
            end,
    Table = Bench("cl-a"),
    ?assertNotEqual(nomatch, string:find(Table, "launches: 2"), Table),
    ?assertMatch({match, _}, re:run(Table, "lists:seq\\(1, 100\\).*(slower|faster|within "
                                           "noise)"), Table),
    _ = Bench("cl-b"),
    {_, Text} = beamscale_test_cli:run(["compare", filename:join(Out, "cl-a"),
                                        filename:join(Out, "cl-b")]),
    ?assertNotEqual(nomatch, string:find(Text, "over 2 and 2 launches"), Text),
    ?assertMatch({match, _}, re:run(Text, "floor \\+/-[0-9.]+ %"), Text).

init_once() -> [{doc, "--init runs once per node: a second run would make the count 2."}].
init_once(_Config) ->
    [#{<<"ns">> := _}] = bench(["1 = persistent_term:get(bs_count).", "--init",
                                "persistent_term:put(bs_count, "
                                "persistent_term:get(bs_count, 0) + 1).",
                                "--time", "0.05", "--samples", "3"]).
