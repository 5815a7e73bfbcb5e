%% @doc The console table and JSON of `beamscale bench' (pure): per benchmark and input, ns per
%% call with its 95 % interval, calls/s, reductions and heap words per call and the ratio to the
%% first; per scaling point calls/s, speedup and efficiency; per squeeze its steps and peak.
-module(beamscale_report_micro).

-export([text/1, json/1]).

%% @doc The table printed on the console.
-spec text(#{mode := atom(), rows := [map()], header => map()}) -> iodata().
text(#{header := H} = Result) ->
    [header(H), text(maps:remove(header, Result)),
     [["warning: ", W, $\n] || W <- warnings(Result)]];
text(#{mode := time, rows := Rows}) ->
    Header = ["benchmark", "input", "ns/call", "95 % interval", "cv", "min..max", "calls/s",
              "reds/call", "words/call", "ratio (95 %)", "verdict"],
    %% Several scheduler counts: the benchmark's name says which.
    Named = case lists:usort([S || #{schedulers := S} <- Rows]) of
                [_] -> Rows;
                _ -> [R#{label := [L, io_lib:format(" @ ~b schedulers", [S])]}
                      || #{label := L, schedulers := S} = R <- Rows]
            end,
    case [C || #{counter := C} <- Rows] of
        [] -> table(Header, [time_row(R) || R <- Named]);
        [Counter | _] ->
            [table(Header ++ ["instr/call", "instr spread"],
                   [time_row(R) ++ instr_cells(R) || R <- Named]),
             io_lib:format("instructions retired per call counted by ~ts, less the empty "
                           "loop's~ts; spread: (max - min) / median over the counted samples~n",
                           [counter(Counter), counted_shape(hd(Rows))])]
    end;
text(#{mode := scaling, rows := Rows}) ->
    Header = ["benchmark", "input", "schedulers", "callers", "calls/s", "95 % interval",
              "speedup", "efficiency"],
    table(Header, [scaling_row(R) || R <- Rows]);
text(#{mode := squeeze, rows := Rows}) ->
    [[table(["benchmark", "input", "schedulers", "callers", "calls/s", "95 % interval"],
            [[L, I, int(S), int(C), si(R), [si(Lo), "..", si(Hi)]]
             || #{callers := C, rate := R, rate_low := Lo, rate_high := Hi} <- Steps]),
      peak(Row)]
     || #{label := L, input := I, schedulers := S, steps := Steps} = Row <- Rows].

peak(#{clear := true, peak := Peak, rate := R, rate_low := Lo, rate_high := Hi, label := L,
       schedulers := S, launches := K}) ->
    io_lib:format("peak: ~ts calls/s (~ts..~ts) at ~b concurrent callers (~ts, ~b schedulers, "
                  "~b launch(es))~n", [si(R), si(Lo), si(Hi), Peak, L, S, K]);
peak(#{near := C, label := L, schedulers := S, launches := K}) ->
    io_lib:format("no clear peak: the intervals of the levels near ~b callers overlap (~ts, ~b "
                  "schedulers, ~b launch(es)); more launches or --time may separate them~n",
                  [C, L, S, K]).

time_row(#{label := L, input := I, ns := Ns, ns_low := Lo, ns_high := Hi, calls_s := Cs,
           reductions := Reds, words := W, cv := Cv} = Row) ->
    [L, I, num(Ns), [num(Lo), "..", num(Hi)], [num(Cv * 100), " %"],
     [num(maps:get(min, Row, Lo)), "..", num(maps:get(max, Row, Hi))], si(Cs), num(Reds),
     num(W) | ratio(maps:get(ratio, Row, base))].

%% The counted samples' process shape, whatever `--process' says of the time clock's (runs
%% kept before it was said say nothing).
counted_shape(#{counted_heap_words := W}) ->
    io_lib:format(", each sample a fresh process with a heap of ~b words at start", [W]);
counted_shape(_Row) -> "".

instr_cells(#{instructions := I, instructions_spread := S}) ->
    [num(I), io_lib:format("~.2f %", [S * 100])];
instr_cells(_Row) -> ["-", "-"].

counter(valgrind) -> "Valgrind (callgrind, in the node around the measured calls)";
counter(pmu) -> "the CPU's counter (perf_event_open on the scheduler's thread)".

ratio(base) -> ["1", "base"];
ratio(#{ratio := null}) -> ["-", "-"];
ratio(#{ratio := R, ratio_low := Lo, ratio_high := Hi} = V) ->
    [[num(R), " (", num(Lo), "..", num(Hi), ")"], verdict(V)].

%% A difference is called only beyond the A/A floor and when the test says so.
verdict(#{significant := true, ratio := R} = V) when R > 1 -> ["slower", floor_text(V)];
verdict(#{significant := true} = V) -> ["faster", floor_text(V)];
verdict(#{floor := F}) when is_float(F) -> ["within noise (floor +/-", num(F * 100), " %)"];
verdict(#{}) -> "no significant difference (one launch: no A/A floor)".

floor_text(#{floor := F}) when is_float(F) -> [" (beyond floor +/-", num(F * 100), " %)"];
floor_text(#{}) -> " (one launch: no A/A floor)".

%% The conditions of the measurement, printed above its figures.
header(#{loadavg := Load, cores := Cores} = H) ->
    io_lib:format("host: load average ~.2f, ~b cores; OTP ~ts; flags: ~ts; process: ~s; "
                  "launches: ~b (seed ~b)~n",
                  [float(Load), Cores, maps:get(otp, H, <<"?">>), flags(maps:get(flags, H, "")),
                   maps:get(process, H, runner), maps:get(launches, H, 1),
                   maps:get(seed, H, 0)]).

flags("") -> "(none)";
flags(<<>>) -> "(none)";
flags(F) -> F.

%% A figure whose cv is above the bound (over launches, or over samples of one launch), or a
%% host loaded beyond its cores.
warnings(#{mode := time, rows := Rows, header := H}) ->
    Host = maps:with([loadavg, cores], H),
    Cv = lists:max([0.0 | [C || #{cv := C} <- Rows]]),
    beamscale_stats_floor:warnings(Cv, Host);
warnings(#{header := H}) -> beamscale_stats_floor:warnings(0.0, maps:with([loadavg, cores], H));
warnings(#{}) -> [].

scaling_row(#{label := L, input := I, schedulers := S, callers := C, rate := R,
              rate_low := Lo, rate_high := Hi, speedup := Sp, efficiency := E}) ->
    [L, I, int(S), int(C), si(R), [si(Lo), "..", si(Hi)], num(Sp), num(E)].

%% Columns padded to their widest cell.
table(Header, Rows) ->
    Cells = [[flat(C) || C <- R] || R <- [Header | Rows]],
    Widths = lists:foldl(fun(R, W) -> [max(string:length(C), X) || {C, X} <- lists:zip(R, W)] end,
                         [0 || _ <- Header], Cells),
    [[string:trim(lists:join("  ", [string:pad(C, W) || {C, W} <- lists:zip(R, Widths)]),
                  trailing), $\n]
     || R <- Cells].

flat(C) -> unicode:characters_to_list(C).

int(N) -> integer_to_list(N).

num(null) -> "-";
num(X) when abs(X) >= 100 -> integer_to_list(round(X));
num(X) when abs(X) >= 10 -> io_lib:format("~.1f", [float(X)]);
num(X) -> io_lib:format("~.2f", [float(X)]).

%% Calls per second with an SI prefix: 54.9 M.
si(X) when X >= 1.0e9 -> [num(X / 1.0e9), " G"];
si(X) when X >= 1.0e6 -> [num(X / 1.0e6), " M"];
si(X) when X >= 1.0e3 -> [num(X / 1.0e3), " k"];
si(X) -> num(X).

%% @doc The results as JSON (`--json'): the same figures, samples included.
-spec json(#{mode := atom(), rows := [map()], header => map()}) -> iodata().
json(#{mode := Mode, rows := Rows} = Result) ->
    beamscale_format_json:encode(#{mode => Mode, results => [json_row(R) || R <- Rows],
                                   header => maps:get(header, Result, #{}),
                                   warnings => [iolist_to_binary(W) || W <- warnings(Result)]}).

json_row(Row) ->
    maps:map(fun(ratio, #{ratio := R, ratio_low := Lo, ratio_high := Hi} = V) ->
                     maps:merge(maps:with([p, significant, floor, test], V),
                                #{ratio => R, low => Lo, high => Hi});
                (steps, Steps) -> [maps:without([rates], S) || S <- Steps];
                (_, V) -> V
             end, Row).
