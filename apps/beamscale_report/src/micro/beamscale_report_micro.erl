%% @doc The console table and JSON of `beamscale bench' (pure): per benchmark and input, ns per
%% call with its 95 % interval, calls/s, reductions and heap words per call and the ratio to the
%% first; per scaling point calls/s, speedup and efficiency; per squeeze its steps and peak.
-module(beamscale_report_micro).

-export([text/1, json/1]).

%% @doc The table printed on the console.
-spec text(#{mode := atom(), rows := [map()]}) -> iodata().
text(#{mode := time, rows := Rows}) ->
    Header = ["benchmark", "input", "ns/call", "95 % interval", "calls/s", "reds/call",
              "words/call", "ratio (95 %)"],
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
                           "loop's; spread: (max - min) / median over the counted samples~n",
                           [counter(Counter)])]
    end;
text(#{mode := scaling, rows := Rows}) ->
    Header = ["benchmark", "input", "schedulers", "callers", "calls/s", "95 % interval",
              "speedup", "efficiency"],
    table(Header, [scaling_row(R) || R <- Rows]);
text(#{mode := squeeze, rows := Rows}) ->
    [[table(["benchmark", "input", "schedulers", "callers", "calls/s"],
            [[L, I, int(S), int(C), si(R)] || #{callers := C, rate := R} <- Steps]),
      io_lib:format("peak: ~ts calls/s at ~b concurrent callers (~ts, ~b schedulers)~n",
                    [si(Rate), Peak, L, S])]
     || #{label := L, input := I, schedulers := S, steps := Steps, peak := Peak,
          rate := Rate} <- Rows].

time_row(#{label := L, input := I, ns := Ns, ns_low := Lo, ns_high := Hi, calls_s := Cs,
           reductions := Reds, words := W} = Row) ->
    [L, I, num(Ns), [num(Lo), "..", num(Hi)], si(Cs), num(Reds), num(W),
     ratio(maps:get(ratio, Row, base))].

instr_cells(#{instructions := I, instructions_spread := S}) ->
    [num(I), io_lib:format("~.2f %", [S * 100])];
instr_cells(_Row) -> ["-", "-"].

counter(valgrind) -> "Valgrind (callgrind, in the node around the measured calls)";
counter(pmu) -> "the CPU's counter (perf_event_open on the scheduler's thread)".

ratio(base) -> "1";
ratio(undefined) -> "-";
ratio({R, Lo, Hi}) -> [num(R), " (", num(Lo), "..", num(Hi), ")"].

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
-spec json(#{mode := atom(), rows := [map()]}) -> iodata().
json(#{mode := Mode, rows := Rows}) ->
    beamscale_format_json:encode(#{mode => Mode, results => [json_row(R) || R <- Rows]}).

json_row(Row) ->
    maps:map(fun(ratio, {R, Lo, Hi}) -> #{ratio => R, low => Lo, high => Hi};
                (ratio, undefined) -> null;
                (steps, Steps) -> [maps:without([rates], S) || S <- Steps];
                (_, V) -> V
             end, Row).
