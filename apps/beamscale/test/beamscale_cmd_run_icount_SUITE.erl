%% `beamscale run --clock instructions' as a user runs it: the node under test under Valgrind
%% (this VM has no CPU counter), each iteration's run/3 counted between the NIF's two calls.
%% A Valgrind boot is slow (7 s quiet, minutes on a loaded host): one benchmark, short, two
%% iterations, one launch, twice.
-module(beamscale_cmd_run_icount_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([refused/0, refused/1, counted/0, counted/1]).

suite() -> [{timetrap, {minutes, 10}}].

all() -> [refused, counted].

init_per_suite(Config) -> Config.

end_per_suite(_Config) -> beamscale_test_cli:no_strays().

refused() -> [{doc, "Scheduler counts, node counts and --profile the counter cannot count: "
                    "refused in words naming the option, exit 2."}].
refused(Config) ->
    Out = ?config(priv_dir, Config),
    [begin
         {Status, Text} = beamscale_test_cli:run(["run", "--bench", "bang", "--clock",
                                                  "instructions", "--out", Out | Extra]),
         ?assertEqual(2, Status, Text),
         ?assertNotEqual(nomatch, string:find(Text, Word), Text)
     end || {Extra, Word} <- [{["--schedulers", "1,2"], "--schedulers: --clock instructions"},
                              {["--nodes", "2"], "--nodes: --clock instructions"},
                              {["--profile"], "--profile runs perf"}]].

counted() -> [{doc, "bang counted in two launches of run: instructions per iteration in "
                    "instructions.csv, positive, the two runs' medians within 1 %; compare "
                    "of the two run directories reads them in instructions."}].
counted(Config) ->
    Out = ?config(priv_dir, Config),
    [A, B] = [run(Out, N) || N <- ["a", "b"]],
    MA = median(A),
    MB = median(B),
    ct:pal("bang instructions per iteration: ~p, ~p", [MA, MB]),
    ?assert(MA > 100000),
    ?assert(abs(MA - MB) / MA < 0.01),
    {_, Text} = beamscale_test_cli:run(["compare", filename:join(Out, "a"),
                                        filename:join(Out, "b")]),
    ?assertNotEqual(nomatch, string:find(Text, "per iteration"), Text).

run(Out, Name) ->
    {Status, Text} = beamscale_test_cli:wait(
                       beamscale_test_cli:open(["run", "--bench", "bang", "--clock",
                                                "instructions", "--iterations", "2",
                                                "--warmups", "0", "--launches", "1",
                                                "--quiet", "--out", Out, "--name", Name]),
                       240000),
    ?assertEqual(0, Status, Text),
    Dir = filename:join(Out, Name),
    {ok, Run} = file:read_file(filename:join(Dir, "run.json")),
    ?assertMatch({_, _}, binary:match(Run, <<"\"counter\":\"valgrind\"">>)),
    {ok, Counts} = beamscale_instr_store:read(Dir),
    [Launches] = maps:values(Counts),
    lists:append(Launches).

median(Xs) -> lists:nth((length(Xs) + 1) div 2, lists:sort(Xs)).
