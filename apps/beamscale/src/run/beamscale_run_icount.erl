%% @doc `run --clock instructions' (docs/micro.md, "The instruction clock in run"): the counter
%% chosen once per run (the CPU's where this host has one, else callgrind, whose dumps go to a
%% private directory of the run's), the node under test started for it
%% (`beamscale_icount:node_spec/3': under Valgrind, one scheduler, no busy wait) with the NIF
%% loaded, and the clock the runner on the node is given: each iteration's `run/3' counted
%% between the NIF's two calls (`beamscale_bench_runner'), not its boot nor the harness.
-module(beamscale_run_icount).

-export([start/1, stop/1, node_spec/3, prepare/2, info/1, open/2, close/1, record/4]).
-export_type([clock/0]).

-type clock() :: wall | cpu | {instructions, beamscale_bench_icount:counter()}.

%% @doc The clock of a run's jobs; for the instruction clock its counter (and dump directory).
-spec start(wall | cpu | instructions) -> {ok, clock()} | {error, term()}.
start(instructions) ->
    case beamscale_icount:counter(auto) of
        {ok, pmu} -> {ok, {instructions, pmu}};
        {ok, valgrind} -> {ok, {instructions, {valgrind, beamscale_icount:dump_dir()}}};
        {error, _} = Error -> Error
    end;
start(Clock) -> {ok, Clock}.

%% @doc Remove what `start/1' made.
-spec stop(clock()) -> ok.
stop({instructions, {valgrind, Dir}}) ->
    ok = file:del_dir_r(Dir);
stop(_Clock) -> ok.

%% @doc What run.json says of the clock beside the configuration: the counter used.
-spec info(clock()) -> map().
info({instructions, {valgrind, _}}) -> #{counter => valgrind};
info({instructions, pmu}) -> #{counter => pmu};
info(_Clock) -> #{}.

%% @doc The spec of node `I' of a job (the first is the node under test, the one counted).
-spec node_spec(clock(), pos_integer(), beamscale_node:spec()) -> beamscale_node:spec().
node_spec({instructions, {valgrind, Dir}}, 1, Spec) ->
    beamscale_icount:node_spec(valgrind, Dir, Spec);
node_spec({instructions, pmu}, 1, Spec) -> beamscale_icount:node_spec(pmu, "", Spec);
node_spec(_Clock, _I, Spec) -> Spec.

%% @doc The NIF loaded on the node under test (`Node', node `I' of its job) of a counted run.
-spec prepare(clock(), {pos_integer(), node()}) -> ok | {error, term()}.
prepare({instructions, Counter}, {1, Node}) ->
    Arg = case Counter of
              {valgrind, Dir} -> {valgrind, Dir};
              pmu -> {pmu, none}
          end,
    case beamscale_icount:prepare(Node, Arg) of
        {ok, _} -> ok;
        {error, _} = Error -> Error
    end;
prepare(_Clock, _Node) -> ok.

%% @doc instructions.csv of run directory `Dir' opened for appending, when counted.
-spec open(clock(), file:filename()) -> #{instructions => file:io_device()}.
open({instructions, _}, Dir) -> #{instructions => beamscale_instr_store:open_append(Dir)};
open(_Clock, _Dir) -> #{}.

%% @doc Close what `open/2' opened.
-spec close(#{instructions => file:io_device()}) -> ok.
close(#{instructions := Fd}) -> file:close(Fd);
close(_) -> ok.

%% @doc Record iteration `N' (of launch `L') of `Key': its phases' times in measurements.csv,
%% and, counted, their instructions in instructions.csv first (measurements.csv marks it done).
-spec record(beamscale_store:store(), {beamscale_store:key(), pos_integer(), pos_integer()},
             [tuple()], map()) -> beamscale_store:store().
record(Store, {Key, N, L}, Timings, Ctx) ->
    case {[{P, I} || {P, _, I} <- Timings], Ctx} of
        {[_ | _] = Counts, #{instructions := Fd}} ->
            ok = beamscale_instr_store:append(Fd, Key, {L, N}, Counts);
        _ -> ok
    end,
    beamscale_store:record(Store, Key, N, L, [{element(1, T), element(2, T)} || T <- Timings]).
