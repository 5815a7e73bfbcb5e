%% @doc CPU profiles of the node under test (docs/profiles.md): at each point, after its timed
%% iterations, calls of the benchmark are timed for a window under `perf record -F RATE -p PID'
%% (the node runs with `+JPperf true', so JIT code has names), and for half a window before and
%% after it without perf; the ratio of the medians is the overhead. `perf script' is folded
%% (`beamscale_format_perf') into `profiles/BENCH/ENV.folded', the figures go to `ENV.json'.
%% The profiled calls are not measurements: the run's results never carry perf's overhead.
%% Every step runs through `beamscale_os' with a time limit.
-module(beamscale_profile).

-export([defaults/0, node_flags/0, point/2, read/1, summary/1, notes/1]).
-export([start_window/2, end_window/2, read_levels/1, drop_map/1, is_profiled/3, failed/4]).
-export_type([opts/0, call/0, window/0]).

-type opts() :: #{rate := pos_integer(), window_ms := pos_integer(), stacks := dwarf | fp}.
%% One call of the benchmark: its time in seconds, or `error' (the profile stops there).
-type call() :: fun(() -> {ok, float()} | error).
%% A profile of a node under load, started by `start_window/2'.
-opaque window() :: {pid(), map(), non_neg_integer()}.

%% 999 Hz rather than 1000: not in step with the emulator's millisecond timers.
-define(RATE, 999).
-define(WINDOW_MS, 2000).
%% How perf walks stacks: `dwarf' (a copy of 8 KiB of each sampled stack, unwound by
%% `perf script') sees through beam.smp's C functions, built without frame pointers; `fp'
%% costs less but loses their callers (a lock's wait is then not told from a scheduler's).
-define(DWARF_STACK, "dwarf,8192").
%% perf's start and its writing of the data file, beyond the window.
-define(PERF_SLACK_MS, 30000).
-define(SCRIPT_TIMEOUT_MS, 120000).
%% Time for perf to attach before the first profiled call.
-define(ATTACH_MS, 100).
%% The emulator's own sampling: a look at every process's stack this often.
-define(SAMPLE_MS, 5).

%% @doc The sampling rate (Hz) and window (ms per point) when the configuration gives none.
-spec defaults() -> opts().
defaults() -> #{rate => ?RATE, window_ms => ?WINDOW_MS, stacks => dwarf}.

%% @doc Emulator flags a profiled node gets: the JIT writes /tmp/perf-PID.map for perf.
-spec node_flags() -> string().
node_flags() -> "+JPperf true".

%% @doc Profile one point unless its profile exists (a rerun keeps it). `Point' names the run
%% directory, benchmark, environment and the node's OS pid.
-spec point(#{dir := file:filename(), bench := binary(), env := beamscale_format_env:env(),
              os_pid := string(), node := node(), opts := opts()}, call()) -> ok.
point(#{dir := Dir, bench := Bench, env := Env} = Point, Call) ->
    Base = base(Dir, Bench, beamscale_format_env:key(Env)),
    case filelib:is_regular(Base ++ ".json") of
        true -> ok;
        false ->
            Meta0 = #{bench => Bench, env => beamscale_format_env:key(Env)},
            Meta = maps:merge(Meta0, profile(Point, Base, Call)),
            %% The JIT's map is written whether perf or the emulator sampled.
            ok = drop_map(maps:get(os_pid, Point)),
            Folded = maps:get(folded, Meta, #{}),
            ok = write(Base ++ ".folded", beamscale_format_perf:text(Folded)),
            ok = write(Base ++ ".json", beamscale_format_json:encode(maps:remove(folded, Meta)))
    end.

%% @doc Whether the point has its profile (a rerun keeps it).
-spec is_profiled(file:filename(), binary(), beamscale_format_env:env()) -> boolean().
is_profiled(Dir, Bench, Env) ->
    filelib:is_regular(base(Dir, Bench, beamscale_format_env:key(Env)) ++ ".json").

%% @doc A point whose profile could not be taken (its nodes did not start): why, on the page.
-spec failed(file:filename(), binary(), beamscale_format_env:env(), iodata()) -> ok.
failed(Dir, Bench, Env, Why) ->
    Key = beamscale_format_env:key(Env),
    write(base(Dir, Bench, Key) ++ ".json",
          beamscale_format_json:encode(#{bench => Bench, env => Key,
                                         error => unicode:characters_to_binary(Why)})).

base(Dir, Bench, EnvKey) ->
    File = binary:replace(EnvKey, <<"/">>, <<"-">>, [global]),
    beamscale_format_rundir:path(Dir, profiles, [binary_to_list(Bench), binary_to_list(File)]).

%% Each point's `.json' under `profiles/'.
metas(Dir) -> filelib:wildcard(beamscale_format_rundir:path(Dir, profiles, ["*", "*.json"])).

write(File, Data) ->
    ok = filelib:ensure_dir(File),
    file:write_file(File, Data).

profile(#{os_pid := OsPid, opts := #{rate := Rate, window_ms := Window} = Opts} = Point, Base,
        Call) ->
    Figures = #{rate_hz => Rate, window_ms => Window, stacks => maps:get(stacks, Opts)},
    case perf() of
        false -> fallback(Point, Call, Figures, <<"perf not found: install linux-perf">>);
        Perf ->
            case calls(Call, deadline(Window div 2), []) of
                error -> Figures#{error => <<"a call without perf failed">>};
                Before ->
                    Data = Base ++ ".perf.data",
                    ok = filelib:ensure_dir(Data),
                    try record(Perf, Data, OsPid, Opts, Call, Before) of
                        #{perf_failed := Why} -> fallback(Point, Call, Figures, Why);
                        Result -> maps:merge(Figures, Result)
                    after _ = file:delete(Data)
                    end
            end
    end.

%% `BEAMSCALE_PERF=none' takes the emulator's own sampling even where perf runs.
perf() ->
    case os:getenv("BEAMSCALE_PERF") of
        "none" -> false;
        _ -> os:find_executable("perf")
    end.

%% Where perf cannot run: the emulator's own sampling of its processes' stacks
%% (beamscale_bench_sample on the node), with its overhead measured as perf's is.
fallback(#{node := Node, opts := #{window_ms := Window}}, Call, Figures, Why) ->
    Note = <<"perf cannot run (", Why/binary, "): sampled by the emulator (process_info)">>,
    Sampled = Figures#{sampler => <<"process_info">>, note => Note},
    case calls(Call, deadline(Window div 2), []) of
        error -> Sampled#{error => <<"a call without the sampler failed">>};
        Before ->
            Self = self(),
            Pid = spawn(fun() -> Self ! {perf, self(),
                                         catch erpc:call(Node, beamscale_bench_sample, sample,
                                                         [Window, ?SAMPLE_MS],
                                                         Window + ?PERF_SLACK_MS)}
                        end),
            With = profiled_calls(Call, Pid, []),
            receive
                {perf, Pid, Folded} when is_map(Folded) ->
                    maps:merge(Sampled, figures(Folded, With, Before, {Call, Window}));
                {perf, Pid, _} -> Sampled#{error => <<"the emulator's sampling failed">>}
            after Window + ?PERF_SLACK_MS -> Sampled#{error => <<"the sampling did not end">>}
            end
    end.

deadline(Ms) -> erlang:monotonic_time(millisecond) + Ms.

%% Calls until the deadline, at least one.
calls(Call, Deadline, Acc) ->
    case Call() of
        error -> error;
        {ok, S} ->
            case erlang:monotonic_time(millisecond) >= Deadline of
                true -> [S | Acc];
                false -> calls(Call, Deadline, [S | Acc])
            end
    end.

record(Perf, Data, OsPid, #{window_ms := Window} = Opts, Call, Before) ->
    Self = self(),
    Pid = spawn(fun() -> Self ! {perf, self(), perf_record(Perf, Data, OsPid, Opts)} end),
    timer:sleep(?ATTACH_MS),
    With = profiled_calls(Call, Pid, []),
    %% Unprofiled calls on both sides of perf's window: a drift of the host's load over the
    %% point is not taken for perf's overhead.
    After = case With of
                error -> [];
                _ -> calls(Call, deadline(Window div 2), [])
            end,
    Without = case After of
                  error -> error;
                  _ -> Before ++ After
              end,
    receive
        {perf, Pid, {0, _}} -> script(Perf, Data, With, Without);
        {perf, Pid, {Status, Out}} -> #{perf_failed => perf_failed(Status, Out)}
    after Window + ?PERF_SLACK_MS -> #{error => <<"perf record did not end">>}
    end.

%% `perf record' of the OS process for the window: `{Status, Output}'.
perf_record(Perf, Data, OsPid, #{rate := Rate, window_ms := Window} = Opts) ->
    Stacks = case Opts of
                 #{stacks := fp} -> ["-g"];
                 #{stacks := dwarf} -> ["--call-graph", ?DWARF_STACK]
             end,
    Args = ["record", "-F", integer_to_list(Rate)] ++ Stacks
        ++ ["-p", OsPid, "-o", Data, "--", "sleep", io_lib:format("~.3f", [Window / 1000])],
    beamscale_os:cmd(Perf, [lists:flatten(A) || A <- Args], Window + ?PERF_SLACK_MS).

%% Calls while perf records: those started before it ended.
profiled_calls(Call, Pid, Acc) ->
    case Call() of
        error -> error;
        {ok, S} ->
            receive
                {perf, Pid, _} = Done -> self() ! Done, [S | Acc]
            after 0 -> profiled_calls(Call, Pid, [S | Acc])
            end
    end.

%% perf's refusals begin with a line `Error:', the reason on the next: the first other line.
perf_failed(Status, Out) ->
    Why = case [L || L <- [string:trim(Line) || Line <- string:split(Out, "\n", all)],
                     L =/= <<>>, L =/= <<"Error:">>] of
              [First | _] -> First;
              [] -> <<"no output">>
          end,
    iolist_to_binary(io_lib:format("perf record failed (~p): ~ts", [Status, Why])).

script(_Perf, _Data, error, _Without) -> #{error => <<"a profiled call failed">>};
script(_Perf, _Data, _With, error) -> #{error => <<"a call without perf failed">>};
script(Perf, Data, With, Without) ->
    case fold(Perf, Data) of
        {ok, Folded} -> counted(Folded, With, Without);
        {error, Why} -> #{error => Why}
    end.

fold(Perf, Data) ->
    Sh = "exec \"$0\" script -i \"$1\" 2>/dev/null",
    case beamscale_os:cmd("/bin/sh", ["-c", Sh, Perf, Data], ?SCRIPT_TIMEOUT_MS) of
        {0, Text} -> {ok, beamscale_format_perf:fold(Text)};
        {Status, _} ->
            {error, iolist_to_binary(io_lib:format("perf script failed (~p)", [Status]))}
    end.

%% The sampler's stacks and figures, once the calls after its window are made too.
figures(_Folded, error, _Before, _Calls) -> #{error => <<"a sampled call failed">>};
figures(Folded, With, Before, {Call, Window}) ->
    case calls(Call, deadline(Window div 2), []) of
        error -> #{error => <<"a call without the sampler failed">>};
        After -> counted(Folded, With, Before ++ After)
    end.

counted(Folded, With, Without) ->
    {MWith, MWithout} = {median(With), median(Without)},
    #{folded => Folded, samples => beamscale_stats_profile:samples(Folded),
      calls_with => length(With), calls_without => length(Without),
      median_with_s => MWith, median_without_s => MWithout,
      overhead_pct => 100 * (MWith / max(MWithout, 1.0e-9) - 1)}.

median(L) -> beamscale_stats:median(L).

%%% A node profiled while a load runs against it (a load level): nothing is called here, so
%%% no overhead is measured; perf's own cost falls on the level's figures.

%% @doc Sample the node for the window after `delay_ms' (perf, or the emulator's sampling
%% where perf cannot run); `end_window/2' folds and writes `BASE.folded' and `BASE.json'.
-spec start_window(#{base := file:filename(), os_pid := string(), node := node(),
                     opts := opts()}, non_neg_integer()) -> window().
start_window(W, Delay) ->
    Self = self(),
    Pid = spawn(fun() -> timer:sleep(Delay), Self ! {window, self(), catch sampled(W)} end),
    {Pid, W, Delay}.

sampled(#{base := Base, os_pid := OsPid, opts := Opts} = W) ->
    case perf() of
        false -> emulator_sampled(W, <<"perf not found: install linux-perf">>);
        Perf ->
            Data = Base ++ ".perf.data",
            ok = filelib:ensure_dir(Data),
            case perf_record(Perf, Data, OsPid, Opts) of
                {0, _} -> {perf, Perf, Data};
                {Status, Out} ->
                    _ = file:delete(Data),
                    emulator_sampled(W, perf_failed(Status, Out))
            end
    end.

emulator_sampled(#{node := Node, opts := #{window_ms := Window}}, Why) ->
    Note = <<"perf cannot run (", Why/binary, "): sampled by the emulator (process_info)">>,
    case catch erpc:call(Node, beamscale_bench_sample, sample, [Window, ?SAMPLE_MS],
                         Window + ?PERF_SLACK_MS) of
        Folded when is_map(Folded) -> {folded, Folded, #{sampler => <<"process_info">>,
                                                         note => Note}};
        _ -> {error, <<"the emulator's sampling failed">>}
    end.

%% @doc Wait for the window's samples, fold them, write the profile with `Meta' beside its
%% figures (rate, window, samples, or why there are none).
-spec end_window(window(), #{atom() => term()}) -> ok.
end_window({Pid, #{base := Base, opts := #{rate := Rate, window_ms := Window} = Opts}, Delay},
           Meta) ->
    Figures = Meta#{rate_hz => Rate, window_ms => Window, stacks => maps:get(stacks, Opts)},
    Result = receive
                 {window, Pid, R} -> window_folded(R)
             after Delay + Window + ?PERF_SLACK_MS ->
                 exit(Pid, kill),
                 #{error => <<"perf record did not end">>}
             end,
    Folded = maps:get(folded, Result, #{}),
    Samples = beamscale_stats_profile:samples(Folded),
    ok = write(Base ++ ".folded", beamscale_format_perf:text(Folded)),
    ok = write(Base ++ ".json", beamscale_format_json:encode(
                                  maps:merge(Figures#{samples => Samples},
                                             maps:remove(folded, Result)))).

window_folded({perf, Perf, Data}) ->
    try fold(Perf, Data) of
        {ok, Folded} -> #{folded => Folded};
        {error, Why} -> #{error => Why}
    after _ = file:delete(Data)
    end;
window_folded({folded, Folded, Note}) -> Note#{folded => Folded};
window_folded({error, Why}) -> #{error => Why};
window_folded(Crash) ->
    #{error => iolist_to_binary(io_lib:format("the profile failed: ~0tp", [Crash]))}.

%% @doc The profiles of a run's load levels (written by `end_window/2' with `cell', `level'
%% and `rate' in their figures, and `unit' if not sessions/s), as points ordered by rate,
%% for a page.
-spec read_levels(file:filename()) -> [beamscale_report_profile:point()].
read_levels(Dir) ->
    Metas = metas(Dir),
    [#{bench => C, env => iolist_to_binary(["level ", integer_to_binary(L), ": ",
                                            rate_text(R), " ", Unit]),
       schedulers => max(1, round(R)), group => <<"load levels">>, axis => Unit,
       folded => folded_file(M), meta => Meta}
     || M <- lists:sort(Metas), {ok, Bin} <- [file:read_file(M)],
        {ok, #{<<"cell">> := C, <<"level">> := L, <<"rate">> := R} = Meta}
            <- [beamscale_format_json:decode(Bin)],
        %% saturate's closed mode counts users
        Unit <- [maps:get(<<"unit">>, Meta, <<"sessions/s">>)]].

rate_text(R) when is_integer(R) -> integer_to_binary(R);
rate_text(R) -> float_to_binary(float(R), [{decimals, 1}, compact]).

folded_file(MetaFile) ->
    case file:read_file(filename:rootname(MetaFile) ++ ".folded") of
        {ok, Bin} -> beamscale_format_perf:parse_folded(Bin);
        {error, _} -> #{}
    end.

%% @doc Remove the JIT's perf map of a node that has stopped.
-spec drop_map(string()) -> ok.
drop_map(OsPid) ->
    _ = file:delete("/tmp/perf-" ++ OsPid ++ ".map"),
    ok.

%% @doc The profiles of a run directory, for its page.
-spec read(file:filename()) -> [beamscale_report_profile:point()].
read(Dir) ->
    Metas = metas(Dir),
    [point_of(M, Meta) || M <- lists:sort(Metas),
                          {ok, Bin} <- [file:read_file(M)],
                          {ok, #{<<"bench">> := _, <<"env">> := _} = Meta}
                              <- [beamscale_format_json:decode(Bin)]].

point_of(MetaFile, #{<<"bench">> := Bench, <<"env">> := Env} = Meta) ->
    [Otp, Args, S, N] = beamscale_format_env:fields(Env),
    Folded = folded_file(MetaFile),
    #{bench => Bench, env => Env, schedulers => S, folded => Folded, meta => Meta,
      group => iolist_to_binary([Otp, $/, Args, "/nodes ", integer_to_binary(N)])}.

%% @doc One line for each reason the profiles of a run directory (a run's points, or load levels
%% of a study, `saturate' or `load') were sampled by the emulator instead of perf: printed after
%% the run, so a fallback is never silent.
-spec notes(file:filename()) -> iodata().
notes(Dir) ->
    Metas = [Meta || M <- metas(Dir),
                     {ok, Bin} <- [file:read_file(M)],
                     {ok, Meta} <- [beamscale_format_json:decode(Bin)]],
    [[N, $\n] || N <- lists:usort([N || #{<<"note">> := N} <- Metas])].

%% @doc Lines to print after a run: each point's samples and overhead, and the median overhead.
-spec summary(file:filename()) -> iodata().
summary(Dir) ->
    case read(Dir) of
        [] -> [];
        Points ->
            Lines = [line(P) || P <- Points],
            Overs = [O || #{meta := #{<<"overhead_pct">> := O}} <- Points, is_number(O)],
            Notes = lists:usort([N || #{meta := #{<<"note">> := N}} <- Points]),
            ["Profiles (", beamscale_format_rundir:path(Dir, profiles), "):\n",
             [["  ", N, $\n] || N <- Notes],
             Lines,
             [io_lib:format("  overhead of perf: median ~.1f % over ~b points~n",
                            [float(median(Overs)), length(Overs)]) || Overs =/= []]]
    end.

line(#{bench := B, env := E, meta := #{<<"error">> := Why}}) ->
    io_lib:format("  ~-16ts ~-28ts no profile: ~ts~n", [B, E, Why]);
line(#{bench := B, env := E, meta := Meta}) ->
    io_lib:format("  ~-16ts ~-28ts ~b samples, overhead ~.1f %~n",
                  [B, E, maps:get(<<"samples">>, Meta, 0),
                   float(maps:get(<<"overhead_pct">>, Meta, 0.0))]).
