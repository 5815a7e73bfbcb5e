%% @doc `beamscale bench EXPR...': microbenchmarks of expressions, `Module:Function/Arity' or
%% Elixir code, each point in a fresh node (`beamscale_micro'), printed as a table (or JSON),
%% optionally kept as a run directory that `beamscale report' reads (docs/micro.md).
-module(beamscale_cmd_bench).
-behaviour(beamscale_cmd).

-export([info/0, do/1, measure/1, format_error/1]).

%% Launches by default when a verdict is made (docs/micro.md, "Launches").
-define(LAUNCHES, 3).
%% A point's default limit: a minute beside ten times its budget (warm-up and time; squeeze's
%% steps each), ample for a loaded host, a bound for an expression that never returns.
-define(POINT_MS, 60000).
-define(POINT_TIMES, 10).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "bench", summary => "microbenchmark expressions: ns/call, memory, scaling",
      usage => "beamscale bench EXPR|M:F/A|FILE.erl|FILE.ex... [OPTIONS]",
      details => "Each expression runs as a compiled tight loop in a fresh node; the empty\n"
                 "loop's cost is subtracted. --callers 1,2,4 or squeeze measures calls/s of\n"
                 "concurrent callers instead. See docs/micro.md.",
      options => [
          {elixir, "--elixir", flag, "the expressions are Elixir"},
          {input, "--input", {list, text}, "NAME=EXPR: an input (`Input', Elixir `input'), "
                                           "each benchmark runs once per input (repeatable)"},
          {init, "--init", string, "EXPR run once per node before measuring (`Init')"},
          {init_runner, "--init-runner", string, "EXPR run once per caller (`State'); for "
                                                 "M:F/A the argument list"},
          {args, "--args", string, "M:F/A: EXPR giving the argument list (as --init-runner)"},
          {time, "--time", number, "seconds measured per benchmark or point",
           {text, budget_text(1, number, ", ", "squeeze per step ")}},
          {samples, "--samples", integer, "samples in that time",
           {text, budget_text(2, integer, "; ", "squeeze ")}},
          {warmup, "--warmup", number, "seconds of warm-up", {value, 0.2}},
          {calls, "--calls", integer, "calls per sample instead of calibrating"},
          {launches, "--launches", integer, "fresh emulators per point, interleaved",
           {text, integer_to_list(?LAUNCHES) ++ "; 1 for one expression and input without "
                                                "--name"}}]
          ++ beamscale_cli_options:seed("the launches' order", "drawn, printed") ++ [
          {process, "--process", string, "runner (one warmed process per caller across "
                                         "samples) or fresh (one per sample)", {value, "runner"}},
          {callers, "--callers", string, "concurrent callers: 1,2,4,8 or squeeze"},
          {schedulers, "--schedulers", string, "scheduler counts of the nodes: 1,2",
           {text, "the host's"}},
          {max_callers, "--max-callers", integer, "squeeze: most callers tried", {value, 64}},
          {tolerance, "--tolerance", number, "squeeze: % a step must beat the best by",
           {value, 5}},
          {code_path, "--code-path", {list, string}, "your compiled code: ebin dir, glob or "
                                                     "lib dir (repeatable)"},
          {mix, "--mix", string, "a mix project: its _build/*/lib/*/ebin"},
          {elixir_lib, "--elixir-lib", string, "Elixir's lib dir", {text, "found from elixir"}},
          {erl, "--erl", string, "the erl of the nodes", {value, "erl"}},
          {flags, "--flags", string, "emulator flags of the nodes"},
          {clock, "--clock", string, "time or instructions: instructions retired per call "
                                     "too, counted in a node of its own", {value, "time"}},
          {counter, "--counter", string, "instructions: auto (the CPU's counter when the host "
                                         "has one, else valgrind), pmu or valgrind",
           {value, "auto"}},
          {count_samples, "--count-samples", integer,
           "instructions: counted samples, their least is the figure", {value, 9}},
          {json, "--json", flag, "print JSON instead of the table"},
          {name, "--name", string, "keep a run directory OUT/NAME (report, compare)"},
          hd(beamscale_cli_options:out()),
          {quiet, "--quiet", flag, "print no progress"},
          {time_limit, "--time-limit", number, "seconds the whole command may take",
           {text, "no limit but each point's"}},
          {expr_time_limit, "--expr-time-limit", number, "seconds one point may take",
           {text, integer_to_list(?POINT_MS div 1000) ++ " + " ++ integer_to_list(?POINT_TIMES)
                  ++ " x its budget"}}]}.

%% An option's value, else its declared default.
opt(Key, Opts) -> beamscale_args:get(Key, Opts, maps:get(options, info())).

%% Seconds measured and samples taken per mode, when --time and --samples are not given.
budgets() -> [{time, 0.5, 20}, {callers, 1, 10}, {squeeze, 0.5, 5}].

%% "0.5, callers 1, squeeze per step 0.5": the modes' defaults of one budget element.
budget_text(N, Type, Sep, Squeeze) ->
    [T, C, S] = [beamscale_args:format(Type, element(N + 1, B)) || B <- budgets()],
    T ++ Sep ++ "callers " ++ C ++ ", " ++ Squeeze ++ S.

%% @doc Measure, print, keep the run directory when asked.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{args := []}) -> {error, no_expression};
do(#{opts := Opts} = Parsed) ->
    %% A crash on a node is reported by this emulator's logger (the node of the crashed
    %% process's group leader): to stderr, beside the rest of the nodes' output.
    ok = reports_to_stderr(),
    try
        case ok(measured(Parsed)) of
            {ok, Plan, Result} -> shown(Opts, Plan, Result);
            %% A time limit: what was measured is printed and kept, the reason said, exit 1.
            {stopped, Why, Plan, #{rows := Rows} = Result} ->
                _ = Rows =:= [] orelse shown(Opts, Plan, Result),
                {failed, beamscale_micro:format_error(element(2, Why))}
        end
    catch
        %% The user's code failed, not the command's input: exit 1.
        throw:{error, {beamscale_micro, {crashed, _} = Crash}} ->
            {failed, beamscale_micro:format_error(Crash)};
        throw:{error, _} = Error -> Error
    end.

%% @doc The measurements alone, as maps (`beamscale:bench/2'): nothing printed or kept.
-spec measure(beamscale_args:parsed()) -> {ok, #{mode := atom(), rows := [map()]}}
                                          | {error, term()}.
measure(#{args := []}) -> {error, no_expression};
measure(Parsed) ->
    case measured(Parsed) of
        {ok, _Plan, Result} -> {ok, Result};
        {stopped, Why, _Plan, _Result} -> {error, Why};
        {error, _} = Error -> Error
    end.

measured(#{opts := Opts, args := Args}) ->
    Start = erlang:monotonic_time(millisecond),
    try
        Plan = resume(Opts, plan(Opts, Args)),
        {ok, _} = ok(beamscale_node:distribute()),
        Host = beamscale_micro_launches:host(),
        case ok(beamscale_micro:run(Plan#{limits => limits(Opts, Plan, Start)})) of
            {ok, Result} -> {ok, Plan, Result#{header => header(Host, Plan, Result)}};
            {stopped, Why, Result} ->
                {stopped, Why, Plan, Result#{header => header(Host, Plan, Result)}}
        end
    catch throw:{error, _} = Error -> Error
    end.

shown(Opts, Plan, Result) ->
    io:put_chars(case Opts of
                     #{json := true} -> [beamscale_report_micro:json(Result), $\n];
                     _ -> beamscale_report_micro:text(Result)
                 end),
    keep(Opts, Plan, Result).

limits(Opts, #{budget := #{time := T, warmup := W}, mode := Mode} = Plan, Start) ->
    Steps = case Mode of
                squeeze -> maps:get(max_callers, Plan);
                _ -> 1
            end,
    Expr = case maps:find(expr_time_limit, Opts) of
               {ok, S} -> ms(S);
               error -> ?POINT_MS + ?POINT_TIMES * Steps * (T + W)
           end,
    Deadline = case maps:find(time_limit, Opts) of
                   {ok, S1} -> Start + ms(S1);
                   error -> infinity
               end,
    #{expr_ms => Expr, deadline => Deadline}.

ok({error, _} = Error) -> throw(Error);
ok(Ok) -> Ok.

%% A handler's type cannot change: the default handler is added again, writing to stderr.
reports_to_stderr() ->
    case logger:get_handler_config(default) of
        {ok, #{module := logger_std_h, config := #{type := standard_error}}} -> ok;
        {ok, #{module := logger_std_h} = Config} ->
            ok = logger:remove_handler(default),
            Kept = maps:with([level, filters, filter_default, formatter], Config),
            ok = logger:add_handler(default, logger_std_h,
                                    Kept#{config => #{type => standard_error}});
        _ -> ok
    end.

plan(Opts, Args) ->
    {Files, Texts} = lists:partition(fun is_file/1, Args),
    Elixir = maps:get(elixir, Opts, false) orelse is_map_key(mix, Opts)
        orelse lists:any(fun(F) -> filename:extension(F) =/= ".erl" end, Files),
    Lang = case maps:get(elixir, Opts, false) of true -> elixir; false -> erlang end,
    Benches = [{unicode:characters_to_binary(T),
                element(2, ok(beamscale_micro_source:parse(T, Lang)))} || T <- Texts],
    Benches =:= [] andalso throw({error, no_expression}),
    _ = [warn_literal(L) || {L, {exprs, [E]}} <- Benches, is_literal(E)],
    Mode = mode(maps:get(callers, Opts, none)),
    Inputs = inputs(maps:get(input, Opts, [])),
    #{benches => Benches, launches => launches(Opts, Mode, length(Benches) * length(Inputs)),
      seed => maps:get(seed, Opts, beamscale_micro_launches:seed()), inputs => Inputs,
      spec => maps:from_list([{K, V} || {K, V} <- [{init, maps:get(init, Opts, none)},
                                                   {init_runner, init_runner(Opts)}],
                                        V =/= none]),
      budget => budget(Opts, Mode), mode => Mode,
      schedulers => schedulers(maps:get(schedulers, Opts, none)),
      code_path => code_path(Opts, Elixir), erl => erl(opt(erl, Opts)),
      flags => maps:get(flags, Opts, ""), elixir => Elixir, files => Files,
      max_callers => opt(max_callers, Opts), tolerance => opt(tolerance, Opts) / 100,
      progress => progress(Opts), clock => clock(Opts, Mode)}.

%% The instruction clock counts `bench''s time points (not callers or squeeze).
clock(Opts, Mode) ->
    case {opt(clock, Opts), Mode} of
        {"time", _} -> time;
        {"instructions", time} ->
            Counter = case opt(counter, Opts) of
                          C when C =:= "auto"; C =:= "pmu"; C =:= "valgrind" -> list_to_atom(C);
                          C -> throw({error, {?MODULE, {counter, C}}})
                      end,
            {ok, Used} = ok(beamscale_icount:counter(Counter)),
            {instructions, Used, #{samples => opt(count_samples, Opts), calls => auto}};
        {"instructions", _} -> throw({error, {?MODULE, clock_mode}});
        {Other, _} -> throw({error, {?MODULE, {clock, Other}}})
    end.

%% A literal (`{lists, seq, [1, 100]}' meant as a call, erlperf's {M, F, A}) calls nothing: its
%% loop measures a constant at about 0 ns.
is_literal(Expr) ->
    try erl_parse:normalise(Expr) of _ -> true
    catch _:_ -> false
    end.

warn_literal(Label) ->
    io:format(standard_error, "warning: ~ts is a literal term: nothing is called, it measures a "
                              "constant (about 0 ns); for {M, F, A} write M:F(Args...) or "
                              "M:F/A with --args~n", [Label]).

is_file(A) -> lists:member(filename:extension(A), [".erl", ".ex", ".exs"])
                  andalso filelib:is_regular(A).

%% Comparing needs launches (a verdict over one emulator's samples is the emulator's); one
%% expression not kept for a later compare may take one.
%% A squeeze's peak is a verdict too; a scaling table is read as curves, one launch a point.
launches(#{launches := N}, {callers, _}, _Points) when N > 1 ->
    throw({error, {?MODULE, launches_callers}});
launches(#{launches := N}, _Mode, _Points) when N >= 1 -> N;
launches(#{launches := _}, _Mode, _Points) -> throw({error, {?MODULE, launches}});
launches(_Opts, {callers, _}, _Points) -> 1;
launches(_Opts, squeeze, _Points) -> ?LAUNCHES;
launches(#{name := _}, _Mode, _Points) -> ?LAUNCHES;
launches(_Opts, _Mode, 1) -> 1;
launches(_Opts, _Mode, _Points) -> ?LAUNCHES.

process("runner") -> runner;
process("fresh") -> fresh;
process(Other) -> throw({error, {?MODULE, {process, Other}}}).

header(Host, Plan, #{rows := Rows}) ->
    Host#{otp => iolist_to_binary(lists:join(",", lists:usort([O || #{otp := O} <- Rows]))),
          flags => text(maps:get(flags, Plan)),
          process => maps:get(process, maps:get(budget, Plan)),
          launches => maps:get(launches, Plan),
          seed => maps:get(seed, Plan)}.

text(Chars) ->
    case unicode:characters_to_binary(Chars) of
        B when is_binary(B) -> B;
        _ -> <<"?">>
    end.

init_runner(#{args := A}) -> A;
init_runner(Opts) -> maps:get(init_runner, Opts, none).

inputs([]) -> [{<<"-">>, none}];
inputs(Texts) ->
    [case string:split(T, "=") of
         [Name, Expr] when Name =/= "" -> {unicode:characters_to_binary(Name), Expr};
         _ -> throw({error, {?MODULE, {input, T}}})
     end || T <- Texts].

mode(none) -> time;
mode("squeeze") -> squeeze;
mode(Text) -> {callers, counts(callers, Text)}.

schedulers(none) -> [default];
schedulers(Text) -> counts(schedulers, Text).

counts(What, Text) ->
    try [list_to_integer(string:trim(N)) || N <- string:lexemes(Text, ",")] of
        Ns -> [throw({error, {?MODULE, {counts, What, Text}}}) || N <- Ns, N < 1] ++ Ns
    catch error:badarg -> throw({error, {?MODULE, {counts, What, Text}}})
    end.

budget(Opts, Mode) ->
    {_, Time, Samples} = lists:keyfind(case Mode of {callers, _} -> callers; M -> M end, 1,
                                       budgets()),
    B = #{time => ms(maps:get(time, Opts, Time)), samples => maps:get(samples, Opts, Samples),
          warmup => ms(opt(warmup, Opts)), process => process(opt(process, Opts))},
    maps:merge(B, maps:with([calls], Opts)).

ms(Seconds) -> max(1, round(Seconds * 1000)).

%% The user's code, a mix project's applications and Elixir's own libraries.
code_path(Opts, Elixir) ->
    User = maps:get(code_path, Opts, []),
    Mix = [mix_ebins(P) || {ok, P} <- [maps:find(mix, Opts)]],
    Lib = case Elixir of
              true -> element(2, ok(beamscale_elixir:lib(maps:get(elixir_lib, Opts, none))));
              false -> []
          end,
    element(2, ok(beamscale_code:expand_path(User ++ lists:append(Mix) ++ Lib))).

%% The first build profile of the project (dev before test, as mix builds dev by default).
mix_ebins(Path) ->
    Profiles = lists:sort(fun(A, _) -> filename:basename(A) =:= "dev" end,
                          filelib:wildcard(filename:join([Path, "_build", "*"]))),
    case [P || P <- Profiles, filelib:wildcard(filename:join([P, "lib", "*", "ebin"])) =/= []] of
        [P | _] -> [filename:join([P, "lib", "*", "ebin"])];
        [] -> throw({error, {?MODULE, {mix, Path}}})
    end.

progress(#{quiet := true}) -> fun(_) -> ok end;
progress(#{json := true}) -> fun(_) -> ok end;
progress(_) -> fun(Text) -> io:format(standard_error, "measuring ~ts~n", [Text]) end.

%% With --name, the points are kept as they are measured: a rerun of the same command takes
%% up those of an interrupted one (and says so), another command is refused the directory.
resume(#{name := Name} = Opts, Plan) ->
    Dir = filename:join(opt(out, Opts), Name),
    {ok, Points, Kept} = ok(beamscale_micro_points:open(Dir, Plan)),
    _ = Kept =:= 0 orelse maps:get(quiet, Opts, false)
        orelse io:format(standard_error, "resuming ~ts: ~b point(s) measured before are kept, "
                                         "not measured again~n", [Dir, Kept]),
    Plan#{points => Points};
resume(_Opts, Plan) -> Plan.

%% The run directory: one row per sample in measurements.csv (seconds per call; for callers,
%% the aggregate seconds per call), so that `report' and `compare' read it as a run's.
keep(#{name := Name} = Opts, Plan, Result) ->
    Dir = filename:join(opt(out, Opts), Name),
    {ok, Store} = ok(beamscale_store:open(Dir)),
    Store1 = lists:foldl(fun(R, S) -> record(S, R) end, Store, rows(Result)),
    ok = beamscale_store:close(Store1),
    Run = maps:merge(#{kind => micro, benchmarks => [L || {L, _} <- maps:get(benches, Plan)],
                       mode => maps:get(mode, Result)}, clock_info(Dir, Result)),
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, run_json),
                                    beamscale_format_json:encode(Run)),
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, micro_json),
                                    beamscale_report_micro:json(Result)),
    {ok, Index} = ok(beamscale_writer:write(Dir)),
    %% With --json stdout holds the JSON alone.
    io:format(case Opts of #{json := true} -> standard_error; _ -> standard_io end,
              "~ts~n", [Index]);
keep(_Opts, _Plan, _Result) -> ok.

%% Counted, the clock in run.json (`compare' refuses runs of two clocks, `history' keeps them
%% apart) and the counts of each launch's samples in instructions.csv. A time run says none:
%% its history stays one series with those from before the instruction clock.
clock_info(Dir, #{mode := time, rows := [#{counter := Counter} | _] = Rows}) ->
    ok = beamscale_instr_store:write(Dir, [{key(R, <<"default">>), <<"call">>, counts(R)}
                                           || R <- Rows]),
    #{clock => instructions, counter => Counter};
clock_info(_Dir, _Result) -> #{}.

counts(#{launch_instructions_per_call := Ls}) -> Ls;
counts(#{instructions_per_call := P}) -> [P].

%% Seconds per call, one list per key.
rows(#{mode := time, rows := Rows}) ->
    [{key(R, <<"default">>), [[Ns / 1.0e9 || Ns <- P] || P <- Ls]}
     || #{per_launch := Ls} = R <- Rows];
rows(#{mode := scaling, rows := Rows}) ->
    [{key(R, callers(C)), [per_call(Rs)]} || #{callers := C, rates := Rs} = R <- Rows];
rows(#{mode := squeeze, rows := Rows}) ->
    [{key(R, callers(C)), [per_call(Rs)]} || #{steps := Steps} = R <- Rows,
                                             #{callers := C, rates := Rs} <- Steps].

callers(C) -> <<"callers", (integer_to_binary(C))/binary>>.

per_call(Rates) -> [1 / X || X <- Rates, X > 0].

key(#{label := L, input := I, otp := Otp, schedulers := S}, ErlArgs) ->
    {L, I, beamscale_format_env:key(#{otp => Otp, erl_args => ErlArgs, schedulers => S,
                                      nodes => 1})}.

%% A sample recorded by an earlier run of the same command (all its points kept) is not
%% appended twice. Samples are numbered across launches, each row saying its launch.
record(Store, {Key, Launches}) ->
    Numbered = lists:append([[{L, Sec} || Sec <- Samples]
                             || {L, Samples} <- lists:enumerate(Launches)]),
    lists:foldl(fun({N, {L, Sec}}, S) ->
                        case beamscale_store:done(S, Key, N) of
                            true -> S;
                            false -> beamscale_store:record(S, Key, N, L, [{"call", Sec}])
                        end
                end, Store, lists:enumerate(Numbered)).

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error(no_expression) -> "bench needs at least one expression (or M:F/A)";
format_error({input, T}) -> ["--input ", T, ": expected NAME=EXPR"];
format_error({counts, What, T}) ->
    io_lib:format("--~s ~ts: expected positive integers separated by commas", [What, T]);
format_error(launches) -> "--launches: expected a positive integer";
format_error(launches_callers) ->
    "--launches with --callers N,M: not supported (one launch a point); squeeze takes launches";
format_error({process, P}) -> ["--process ", P, ": expected runner or fresh"];
format_error({clock, C}) -> ["--clock ", C, ": expected time or instructions"];
format_error({counter, C}) -> ["--counter ", C, ": expected auto, pmu or valgrind"];
format_error(clock_mode) -> "--clock instructions counts calls of one caller: not with --callers";
format_error({mix, P}) -> [P, ": no _build/*/lib/*/ebin (run mix compile there first)"];
format_error({no_erl, E}) -> ["--erl ", E, ": no such executable"].

%% The nodes' erl, as the shell would find it.
erl(Name) ->
    case os:find_executable(Name) of
        false -> throw({error, {?MODULE, {no_erl, Name}}});
        Path -> Path
    end.
