%% @doc The level runner shared by the IO studies: for each cell (a target, an operation and a
%% configuration) a fresh node under test with the configuration's flags, the cell's setup run
%% on it, then a rising arrival rate of sessions, each level held for a set time, with the
%% sampler watching the node. One row per level is appended to `levels.csv' as soon as the level
%% ends (`beamscale_stats_levels'); a rerun skips the levels already there. Once a level is not
%% held, the cell's higher levels are written as skipped rather than run.
%%
%% A cell with `search' has no fixed levels: the capacity search of `beamscale saturate'
%% (`beamscale_stats_search') chooses each level's rate from the verdicts so far, within the
%% cell's time budget, and the outcome (the highest rate held, the lowest not held above it) is
%% appended to `capacity.csv'. A rerun replays the cell's levels into the search and goes on; a
%% cell with a row in `capacity.csv' is done.
-module(beamscale_study_levels).

-export([run/2, format_error/1]).
-export_type([cell/0, ctx/0]).

%% `steps' are scenario steps (docs/scenario.md) against the target `sut'; `http' starts
%% `beamscale_target_http' on the node after the setup and points `sut' at it; `mysql' points
%% `sut' at the database of `db_file' (a `connection.config'), the node serving the setup only.
%% `before_levels' and `after_levels' are called with the target before and after the levels,
%% while the node is up.
-type cell() :: #{target := string(), op := string(), config := string(), erl := string(),
                  flags := string(), schedulers := pos_integer(),
                  setup := [{module(), atom(), list()}], kind := rpc | http | mysql,
                  steps := [term()], levels := [beamscale_stats_levels:level()],
                  search => search(),
                  db_file => file:filename(),
                  before_levels => fun((map()) -> term()),
                  after_levels => fun((map()) -> term())}.
%% The search's options (`beamscale_stats_search:opts()'), each level's hold time and operations
%% per session, and the seconds the cell's levels may take.
-type search() :: #{start := number(), factor := number(), tolerance := number(),
                    max_rate := number(), hold_s := pos_integer(), ops := pos_integer(),
                    budget_s := pos_integer()}.
%% web: the live page's server (--web), shown each level as a load run. profile: a CPU
%% profile of the node under test at each level (docs/profiles.md), in `profiles/CELL/'.
-type ctx() :: #{dir := file:filename(), quiet := boolean(), seed := integer(),
                 web => beamscale_web:web(), profile => beamscale_profile:opts()}.

-define(SETUP_TIMEOUT, 120000).
-define(SAMPLE_MS, 500).
-define(MIN_DRAIN_S, 2).
%% A level's cost beyond its hold and drain (the load run's start and end), for the budget.
-define(LEVEL_OVERHEAD_S, 1).

%% @doc Run every cell's missing levels; returns the cells that failed to start, with why.
-spec run([cell()], ctx()) -> {ok, [{string(), term()}]} | {error, {?MODULE, term()}}.
run(Cells, #{dir := Dir} = Ctx) ->
    case beamscale_node:distribute() of
        {ok, _} ->
            {Rows, Fd} = beamscale_store:open_csv(beamscale_format_rundir:path(Dir, levels),
                                                  beamscale_stats_levels:columns()),
            {Caps, CapFd} = beamscale_store:open_csv(beamscale_format_rundir:path(Dir, capacity),
                                                     beamscale_stats_levels:capacity_columns()),
            Token = integer_to_binary(erlang:system_time(millisecond)),
            Run = Ctx#{fd => Fd, token => Token, rows => Rows, total => length(Cells),
                       cap_fd => CapFd, caps => [key_of(C#{level => <<>>}) || C <- Caps]},
            try {ok, lists:append([cell(I, C, Run) || {I, C} <- enumerate(Cells)])}
            after ok = file:close(Fd), ok = file:close(CapFd)
            end;
        {error, Reason} -> {error, {?MODULE, Reason}}
    end.

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({setup, {M, F, A}, Reason}) ->
    io_lib:format("setup ~s:~s/~b failed: ~ts", [M, F, length(A), beamscale_error:format(Reason)]);
format_error({distribution, Why}) ->
    ["cannot make this node distributed: ", beamscale_error:format(Why)];
format_error(Reason) -> beamscale_error:format(Reason).

%%% A cell

cell(I, #{search := Search} = Cell, #{rows := Rows, caps := Caps} = Run) ->
    Mine = lists:sort([{binary_to_integer(L), R} || #{level := L} = R <- Rows,
                                                    cell_of(R) =:= cell_of(Cell)]),
    Done = [{num(O), H =:= <<"true">>, W} || {_, #{offered_per_s := O, held := H, why := W}}
                                                 <- Mine],
    St0 = beamscale_stats_search:new(maps:with([start, factor, tolerance, max_rate], Search)),
    case {lists:member(key_of(cell_of(Cell)), Caps),
          beamscale_stats_search:replay(St0, [{R, H} || {R, H, _} <- Done])} of
        {true, _} -> say(Run, "~s: done before~n", [label(I, Cell, Run)]), [];
        {false, {ok, St}} -> with_node(I, Cell, {search, St, Done}, Run);
        {false, {error, Mismatch}} -> fail(I, Cell, {search, St0, Done}, {resume, Mismatch}, Run)
    end;
cell(I, #{levels := Levels} = Cell, #{rows := Rows} = Run) ->
    Before = maps:from_list([{key_of(R), R} || R <- Rows]),
    Done = [R || L <- lists:seq(1, length(Levels)), {ok, R} <- [maps:find(key(Cell, L), Before)]],
    Pending = [{L, Level} || {L, Level} <- enumerate(Levels),
                             not maps:is_key(key(Cell, L), Before)],
    Failed = lists:any(fun(R) -> not beamscale_stats_levels:is_held(R) end, Done),
    case {Pending, Failed} of
        {[], _} -> say(Run, "~s: done before~n", [label(I, Cell, Run)]), [];
        {_, true} -> [skip(Cell, L, Level, below_not_held, Run) || {L, Level} <- Pending], [];
        {_, false} -> with_node(I, Cell, Pending, Run)
    end.

%% Work is the fixed levels still to run, or `{search, State, Done}'.
with_node(I, Cell, Pending, Run) ->
    #{erl := Erl, flags := Flags0, schedulers := S} = Cell,
    Flags = case Run of
                #{profile := _} -> Flags0 ++ " " ++ beamscale_profile:node_flags();
                _ -> Flags0
            end,
    %% beamscale_loadtest_targets starts one scheduler per core; a later +S wins.
    Spec = #{start => #{erl => Erl, code_path => [],
                        flags => lists:flatten(io_lib:format("+S ~b:~b ~s", [S, S, Flags]))}},
    case beamscale_loadtest_targets:resolve(#{sut => Spec}, undefined) of
        {ok, #{sut := #{node := Node}}, Handles} ->
            try setup(Node, Cell) of
                {ok, Target} ->
                    _ = (maps:get(before_levels, Cell, fun(_) -> ok end))(Target),
                    OsPid = erpc:call(Node, os, getpid, []),
                    work(I, Cell, Pending, Handles, #{sut => Target},
                         Run#{sut_node => {Node, OsPid}}),
                    _ = (maps:get(after_levels, Cell, fun(_) -> ok end))(Target),
                    beamscale_profile:drop_map(OsPid),
                    [];
                {error, Reason} -> fail(I, Cell, Pending, Reason, Run)
            after beamscale_loadtest_targets:stop(Handles)
            end;
        {error, Reason} -> fail(I, Cell, Pending, Reason, Run)
    end.

fail(I, Cell, Pending, Reason, Run) ->
    say(Run, "~s: failed: ~ts~n", [label(I, Cell, Run), format_error(Reason)]),
    _ = case Pending of
            {search, St, Done} ->
                capacity(Cell, (beamscale_stats_search:bracket(St))#{why => failed}, Done, Run);
            _ -> [skip(Cell, L, Level, failed, Run) || {L, Level} <- Pending]
        end,
    [{lists:flatten(label(I, Cell, Run)), Reason}].

setup(Node, #{setup := Calls} = Cell) ->
    case lists:dropwhile(fun(MFA) -> ok =:= setup_call(Node, MFA) end, Calls) of
        [] -> target(Node, Cell);
        [MFA | _] -> {error, {setup, MFA, setup_call(Node, MFA)}}
    end.

setup_call(Node, {M, F, A}) ->
    try erpc:call(Node, beamscale_target_check, call, [M, F, A], ?SETUP_TIMEOUT) of
        _ -> ok
    catch Class:Reason -> {Class, Reason}
    end.

target(Node, #{kind := rpc}) -> {ok, #{node => Node}};
target(_Node, #{kind := mysql, db_file := File}) ->
    case file:consult(File) of
        {ok, [#{host := H, port := P}]} -> {ok, #{host => H, port => P}};
        Other -> {error, {db_file, File, Other}}
    end;
target(Node, #{kind := http}) ->
    try erpc:call(Node, beamscale_target_http, start_link_node, [], ?SETUP_TIMEOUT) of
        Port -> {ok, #{host => "127.0.0.1", port => Port}}
    catch Class:Reason -> {error, {http_server, Class, Reason}}
    end.

work(I, Cell, {search, St, Done}, Handles, Targets, Run) ->
    #{budget_s := Budget} = maps:get(search, Cell),
    Deadline = erlang:monotonic_time(second) + Budget,
    search(I, Cell, St, lists:reverse(Done), Deadline, {Handles, Targets}, Run);
work(I, Cell, Pending, Handles, Targets, Run) -> levels(I, Cell, Pending, Handles, Targets, Run).

%% The search's levels, numbered on from those of an earlier run, until it ends or the next
%% level would overrun the cell's budget; then the outcome to capacity.csv.
search(I, Cell, St, Done, Deadline, {Handles, Targets} = Nodes, Run) ->
    #{search := #{hold_s := Hold, ops := Ops}} = Cell,
    Cost = Hold + max(?MIN_DRAIN_S, Hold) + ?LEVEL_OVERHEAD_S,
    Fits = erlang:monotonic_time(second) + Cost =< Deadline,
    case {beamscale_stats_search:next(St), Fits} of
        {{done, Outcome}, _} -> capacity(Cell, Outcome, lists:reverse(Done), Run);
        {{run, _}, false} ->
            capacity(Cell, (beamscale_stats_search:bracket(St))#{why => budget},
                     lists:reverse(Done), Run);
        {{run, Rate}, true} ->
            L = length(Done) + 1,
            {Row, Profiling} = level(Cell, L, #{rate => Rate, hold_s => Hold, ops => Ops},
                                     Handles, Targets, Run),
            Map = written(I, Cell, L, Row, Run),
            Held = maps:get(held, Map) =:= true,
            %% Folding a profile is not the search's time: the budget is the levels'.
            search(I, Cell, beamscale_stats_search:record(St, Rate, Held),
                   [{Rate, Held, maps:get(why, Map)} | Done], Deadline + Profiling, Nodes, Run)
    end.

capacity(Cell, Outcome, Done, #{cap_fd := Fd} = Run) ->
    Row = beamscale_stats_levels:capacity_row(Cell, Outcome, Done),
    say(Run, "~s ~s ~s: capacity ~ts/s, not held at ~ts/s (~s)~n",
        [maps:get(K, Cell) || K <- [target, op, config]]
        ++ [txt(lists:nth(N, Row)) || N <- [5, 6]] ++ [maps:get(why, Outcome)]),
    ok = file:write(Fd, beamscale_format_csv:line(Row)).

%% Levels run in order; once one is not held the higher ones are only written as skipped.
levels(_I, _Cell, [], _Handles, _Targets, _Run) -> ok;
levels(I, Cell, [{L, Level} | Rest], Handles, Targets, Run) ->
    {Row, _} = level(Cell, L, Level, Handles, Targets, Run),
    Map = written(I, Cell, L, Row, Run),
    case maps:get(held, Map) of
        true -> levels(I, Cell, Rest, Handles, Targets, Run);
        false -> [skip(Cell, L2, Lv, below_not_held, Run) || {L2, Lv} <- Rest], ok
    end.

%% A level's row appended to levels.csv and said; back as a map.
written(I, Cell, L, Row, Run) ->
    ok = file:write(maps:get(fd, Run), beamscale_format_csv:line(Row)),
    Map = maps:from_list(lists:zip(beamscale_stats_levels:columns(), Row)),
    Of = case Cell of
             #{search := _} -> "";
             #{levels := Ls} -> ["/", integer_to_list(length(Ls))]
         end,
    say(Run, "~s level ~b~s: ~s~n", [label(I, Cell, Run), L, Of, level_text(Map)]),
    Map.

level(Cell, L, #{rate := Rate, hold_s := Hold} = Level, Handles, Targets, Run) ->
    CellKey = cell_key(Cell, L),
    case scenario(Cell, Rate, Hold) of
        {ok, Scenario} ->
            Args = iolist_to_binary(["level=", integer_to_binary(L), ";run=",
                                     maps:get(token, Run)]),
            Meta = #{bench => iolist_to_binary([maps:get(target, Cell), "/", maps:get(op, Cell)]),
                     env => list_to_binary(maps:get(config, Cell)), args => Args},
            Profile = profile_start(Cell, L, Hold, Run),
            Exec = exec(Scenario, Targets, Handles, Meta, Run),
            Profiling = profile_end(Profile, Cell, L, Rate),
            case Exec of
                {ok, Result, Samples} ->
                    {beamscale_stats_levels:row(CellKey, Level, Result, Samples), Profiling};
                {error, _} ->
                    {beamscale_stats_levels:skipped(CellKey, {Level, load_failed}), Profiling}
            end;
        {error, _} -> {beamscale_stats_levels:skipped(CellKey, {Level, bad_scenario}), 0}
    end.

%% With --profile, the node under test sampled in the middle of the level's hold, for the
%% window or the hold if shorter; perf's stacks are folded once the level has ended.
%% A `mysql' cell's node only ran the setup: the sessions go to the database, not profiled.
profile_start(#{kind := mysql}, _L, _Hold, _Run) -> none;
profile_start(Cell, L, Hold, #{profile := #{window_ms := W} = Opts, dir := Dir,
                               sut_node := {Node, OsPid}}) ->
    Window = min(W, Hold * 1000),
    Name = lists:flatten(string:replace([[maps:get(K, Cell), "-"] || K <- [target, op]]
                                        ++ maps:get(config, Cell), "/", "-", all)),
    Base = beamscale_format_rundir:path(Dir, profiles, [Name, "level-" ++ integer_to_list(L)]),
    beamscale_profile:start_window(#{base => Base, os_pid => OsPid, node => Node,
                                     opts => Opts#{window_ms := Window}},
                                   (Hold * 1000 - Window) div 2);
profile_start(_Cell, _L, _Hold, _Run) -> none.

%% The seconds spent folding after the level.
profile_end(none, _Cell, _L, _Rate) -> 0;
profile_end(Window, #{target := T, op := O, config := C}, L, Rate) ->
    T0 = erlang:monotonic_time(second),
    ok = beamscale_profile:end_window(Window, #{cell => iolist_to_binary([T, "/", O, " ", C]),
                                                level => L, rate => Rate}),
    erlang:monotonic_time(second) - T0.

%% The load generator against the targets, the sampler on the nodes, the sample summary of
%% the level back (`beamscale_loadtest_sampled').
exec(Scenario, Targets, Handles, Meta, #{dir := Dir} = Run) ->
    Live = live(Scenario, Meta, Run),
    beamscale_loadtest_sampled:run(Scenario, Targets, Handles,
                               (maps:with([bench, env, args], Meta))#{dir => Dir,
                                                                       interval => ?SAMPLE_MS},
                               Live#{seed => maps:get(seed, Run)}).

%% The level as a scenario, written as terms and checked like a scenario file.
scenario(#{steps := Steps} = Cell, Rate, Hold) ->
    Drain = max(?MIN_DRAIN_S, Hold),
    Terms = [{targets, [{sut, target_term(Cell)}]},
             {phases, [{level, #{duration_s => Hold, rate => Rate}}]},
             {sessions, [{session, #{steps => Steps}}]},
             {drain_s, Drain}],
    Text = lists:flatten([io_lib:format("~tp.~n", [T]) || T <- Terms]),
    {ok, Entries} = beamscale_format_terms:parse(Text),
    beamscale_load_scenario:check("study level", Entries).

%% Only the kind of target matters for the check; the real one is passed to the run.
target_term(#{kind := rpc}) -> #{node => node()};
target_term(#{kind := K}) when K =:= http; K =:= mysql -> #{address => "127.0.0.1:1"}.

skip(Cell, L, Level, Why, #{fd := Fd}) ->
    ok = file:write(Fd, beamscale_format_csv:line(beamscale_stats_levels:skipped(cell_key(Cell, L),
                                                                        {Level, Why}))).

cell_key(#{target := T, op := O, config := C}, L) ->
    #{target => T, op => O, config => C, level => L}.

key(#{target := T, op := O, config := C}, L) ->
    {list_to_binary(T), list_to_binary(O), list_to_binary(C), integer_to_binary(L)}.

key_of(#{target := T, op := O, config := C, level := L}) -> {T, O, C, L}.

cell_of(#{target := T, op := O, config := C}) ->
    #{target => bin(T), op => bin(O), config => bin(C), level => <<>>}.

bin(B) when is_binary(B) -> B;
bin(S) -> list_to_binary(S).

num(B) ->
    case beamscale_format_csv:number(B) of
        undefined -> 0.0;
        V -> V
    end.

label(I, #{target := T, op := O, config := C}, #{total := N}) ->
    io_lib:format("[~b/~b] ~s ~s ~s", [I, N, T, O, C]).

level_text(#{held := Held, why := Why} = M) ->
    io_lib:format("offered ~s/s achieved ~s/s session ~s ms (p99 ~s) err ~s cpu ~s% util ~s% "
                  "busy-wait ~s% ~s",
                  [txt(maps:get(K, M)) || K <- [offered_per_s, achieved_per_s, mean_session_ms,
                                                p99_session_ms, errors, cpu_pct, util_pct,
                                                busy_wait_pct]]
                  ++ [case Held of true -> "held"; false -> ["NOT held (", txt(Why), ")"] end]).

txt(<<>>) -> "-";
txt(F) when is_float(F) -> float_to_list(F, [{decimals, 1}]);
txt(V) -> io_lib:format("~tp", [V]).

say(#{quiet := true}, _Fmt, _Args) -> ok;
say(_Run, Fmt, Args) -> io:format(Fmt, Args).

enumerate(L) -> lists:zip(lists:seq(1, length(L)), L).

%% With --web, the level is shown on the live page as a load run of its own, samples and all.
live(Scenario, #{bench := B, env := E, args := A}, #{web := Web, dir := Dir}) ->
    Label = iolist_to_binary([B, " ", E, " ", A]),
    %% The level's sampler runs with the sampler's default msacc share (exec/5).
    Msacc = maps:get(msacc, beamscale_sampler:defaults()),
    ok = beamscale_web_load:start_run(Web, Scenario, #{dir => Dir, label => Label,
                                                       msacc => Msacc}),
    #{on_second => beamscale_seconds:on_second([{beamscale_web_load, Web}])};
live(_Scenario, _Meta, _Run) -> #{}.
