%% @doc `beamscale bench' at work: each point (a benchmark and input, or a number of callers and
%% schedulers) in a fresh node under test (`beamscale_node'), its module compiled and loaded
%% there (`beamscale_micro_compile'), timed by `beamscale_bench_micro' on the node, the
%% statistics from `beamscale_stats_micro'. Results are maps the report module prints.
-module(beamscale_micro).

-export([run/1, format_error/1]).
-export_type([plan/0]).

-type plan() :: #{benches := [{binary(), beamscale_micro_source:bench()}],
                  inputs := [{binary(), string() | none}],
                  spec := beamscale_micro_source:spec(),
                  budget := beamscale_bench_micro:budget(),
                  mode := time | {callers, [pos_integer()]} | squeeze,
                  schedulers := [pos_integer() | default],
                  code_path := [file:filename()], erl := string(), flags := string(),
                  elixir := boolean(), files := [file:filename()],
                  max_callers := pos_integer(), tolerance := float(),
                  progress := fun((iodata()) -> ok), launches => pos_integer(),
                  seed => integer(),
                  points => beamscale_micro_points:points(),
                  limits => limits(),
                  clock => time | {instructions, beamscale_icount:counter(),
                                   beamscale_icount:budget()}}.
%% expr_ms: how long one point (a benchmark on its node) may take; deadline: when the whole
%% command must end (monotonic ms); either `infinity'. Past one, the point's node is killed and
%% the points measured so far are the result, with the reason (`stopped').
-type limits() :: #{expr_ms := pos_integer() | infinity, deadline := integer() | infinity}.

%% The empty loop is timed briefly (ms): it only needs a stable floor.
-define(EMPTY_MS, 200).
%% At most this many calls are traced for memory (the figure is per call).
-define(MEMORY_CALLS, 20000).
-define(MOD, bs_micro_bench).
-define(EMPTY, bs_micro_empty).
-define(PATIENCE, 2).

%% @doc Measure every point of `Plan': `{ok, Results}' with one map per point; `{stopped,
%% Reason, Results}' with those measured before a time limit was reached.
-spec run(plan()) -> {ok, #{mode := atom(), rows := [map()]}} | {error, term()}
                         | {stopped, {?MODULE, term()}, #{mode := atom(), rows := [map()]}}.
run(#{mode := time} = Plan) ->
    Points = index([{B, I, S} || B <- benches(Plan), I <- inputs(Plan),
                                 S <- maps:get(schedulers, Plan)]),
    Jobs = beamscale_micro_launches:jobs(Points, maps:get(launches, Plan, 1),
                                         maps:get(seed, Plan, 1)),
    Rounds = [[J || {_, L1, _, _} = J <- Jobs, L1 =:= L]
              || L <- lists:usort([L || {_, L, _, _} <- Jobs])],
    case rounds(Plan, Rounds, []) of
        {ok, Rows} -> {ok, over_launches(Rows)};
        {stopped, Why, Rows} -> {stopped, Why, over_launches(Rows)};
        Error -> Error
    end;
run(#{mode := {callers, Cs}, schedulers := Ss} = Plan) ->
    case collect(Plan, scaling, index([fun() -> callers_point(Plan, B, I, S, C) end
                                       || B <- benches(Plan), I <- inputs(Plan), S <- Ss,
                                          C <- Cs])) of
        {ok, #{rows := Rows}} -> {ok, #{mode => scaling, rows => scaled(Rows)}};
        {stopped, Why, #{rows := Rows}} ->
            {stopped, Why, #{mode => scaling, rows => scaled(Rows)}};
        Error -> Error
    end;
run(#{mode := squeeze, schedulers := Ss} = Plan) ->
    collect(Plan, squeeze, index([fun() -> squeeze_launches(Plan, B, I, S) end
                                  || B <- benches(Plan), I <- inputs(Plan), S <- Ss])).

%% A point's launches merged into its row, each row's ratio to its input's first.
over_launches(Rows) ->
    #{mode => time,
      rows => beamscale_micro_launches:ratios(beamscale_micro_launches:merge(Rows))}.

%% One round (a launch of every point) after another; a time limit ends them with the rows
%% measured so far.
rounds(_Plan, [], Acc) -> {ok, lists:append(lists:reverse(Acc))};
rounds(Plan, [Jobs | Rest], Acc) ->
    case round(Plan, Jobs) of
        {ok, #{rows := Rows}} -> rounds(Plan, Rest, [Rows | Acc]);
        {stopped, Why, #{rows := Rows}} ->
            {stopped, Why, lists:append(lists:reverse([Rows | Acc]))};
        Error -> Error
    end.

%% The nodes of a round boot at once (a boot is most of a point's time), then are measured in
%% turn: the others are idle meanwhile. A point kept from an earlier run needs none.
round(Plan, Jobs) ->
    Todo = [J || {N, _, _, _} = J <- Jobs, kept(Plan, N) =:= none],
    {Holders, Started} = lists:unzip(hold([fun() -> start(Plan, S) end
                                           || {_, _, _, {_, _, S}} <- Todo])),
    Nodes = maps:from_list(lists:zip([N || {N, _, _, _} <- Todo], Started)),
    Result = collect(Plan, time,
                     [{N, fun() -> launch(time_point(Plan, B, I, maps:get(N, Nodes)), L, P) end}
                      || {N, L, P, {B, I, _}} <- Jobs]),
    %% After an error or a time limit, the nodes of the points not measured.
    _ = [beamscale_node:stop(H) || element(1, Result) =/= ok, {ok, H} <- Started],
    _ = [H ! release || H <- Holders],
    Result.

launch({ok, Row}, L, P) -> {ok, Row#{launch => L, point => P}};
launch(Error, _L, _P) -> Error.

benches(#{benches := Bs}) -> Bs.
inputs(#{inputs := Is}) -> Is.

index(L) -> lists:zip(lists:seq(1, length(L)), L).

%% The points in order, each measured unless kept from an earlier run of the same command
%% (`beamscale_micro_points', with --name), and kept as soon as it is measured.
collect(Plan, Mode, Points) -> collect(Plan, Mode, Points, []).

collect(_Plan, Mode, [], Acc) -> {ok, #{mode => Mode, rows => lists:reverse(Acc)}};
collect(Plan, Mode, [{N, Point} | Rest], Acc) ->
    case kept(Plan, N) of
        {ok, Row} -> collect(Plan, Mode, Rest, [Row | Acc]);
        none ->
            case Point() of
                {ok, Row} ->
                    ok = beamscale_micro_points:keep(maps:get(points, Plan, none), N, Row),
                    collect(Plan, Mode, Rest, [Row | Acc]);
                {error, {?MODULE, {time_limit, _, _}} = Why} ->
                    {stopped, Why, #{mode => Mode, rows => lists:reverse(Acc)}};
                {error, _} = Error -> Error
            end
    end.

kept(Plan, N) -> beamscale_micro_points:kept(maps:get(points, Plan, none), N).

%% Each fun run at once in a process of its own that stays until released: a node's `peer'
%% process is linked to the process that started it.
hold(Funs) ->
    Self = self(),
    Pids = [spawn(fun() ->
                          Ref = monitor(process, Self),
                          Self ! {self(), F()},
                          receive release -> ok; {'DOWN', Ref, _, _, _} -> ok end
                  end) || F <- Funs],
    [receive {P, Result} -> {P, Result} end || P <- Pids].

%% Speedup and efficiency within each benchmark and input.
scaled(Rows) ->
    Groups = lists:usort([{L, I} || #{label := L, input := I} <- Rows]),
    lists:append([beamscale_stats_micro:scaling([R || #{label := L1, input := I1} = R <- Rows,
                                                      {L1, I1} =:= G])
                  || G <- Groups]).

%% With the instruction clock, the point is counted too, in a node of its own (`counted/4').
time_point(Plan, Bench, Input, Started) ->
    case timed_point(Plan, Bench, Input, Started) of
        {ok, Row} -> counted(Plan, Bench, Input, Row);
        Error -> Error
    end.

counted(#{clock := {instructions, Counter, Budget}} = Plan, {Label, Bench}, Input, Row) ->
    Dir = beamscale_icount:dump_dir(),
    Spec = beamscale_icount:node_spec(Counter, Dir, node_spec(Plan, 1)),
    try on_node(Plan#{compile_here => true}, beamscale_node:start("micro_icount", Spec), Bench,
                Input, Label,
                fun(Node) ->
                        maybe_progress(Plan, [Label, " ", element(1, Input), " in instructions"]),
                        beamscale_icount:measure(Node, {Counter, Dir}, {?MOD, ?EMPTY}, Budget)
                end) of
        {ok, {ok, Counted}} -> {ok, maps:merge(Row, Counted)};
        {ok, Error} -> Error;
        Error -> Error
    after file:del_dir_r(Dir)
    end;
counted(_Plan, _Bench, _Input, Row) -> {ok, Row}.

timed_point(#{budget := Budget} = Plan, {Label, Bench}, {InputName, _} = Input, Started) ->
    on_node(Plan, Started, Bench, Input, Label, fun(Node) ->
        maybe_progress(Plan, [Label, " ", InputName]),
        {ok, Empty} = call(Node, time, [?EMPTY, empty_budget(Budget)]),
        {ok, Samples} = call(Node, time, [?MOD, Budget]),
        Calls = min(?MEMORY_CALLS, element(1, hd(Samples))),
        {ok, W} = call(Node, memory, [?MOD, Calls]),
        {ok, W0} = call(Node, memory, [?EMPTY, Calls]),
        Summary = beamscale_stats_micro:summary(Samples, Empty, #{}),
        Summary#{label => Label, input => InputName, words => max(0, W - W0) / Calls,
                 otp => otp(Node), schedulers => schedulers(Node)}
    end).

%% The empty loop in samples as long as the benchmark's: on a loaded host preemption, which
%% only adds, then weighs on the floor as it does on the benchmark.
empty_budget(#{time := Time, samples := K} = Budget) ->
    maps:merge(#{time => ?EMPTY_MS, samples => max(10, round(?EMPTY_MS * K / Time)),
                 warmup => 20}, maps:with([process], Budget)).

callers_point(#{budget := Budget} = Plan, {Label, Bench}, {InputName, _} = Input, S, C) ->
    on_node(Plan, start(Plan, S), Bench, Input, Label, fun(Node) ->
        maybe_progress(Plan, io_lib:format("~ts ~ts schedulers ~p callers ~b",
                                           [Label, InputName, S, C])),
        {ok, Rates} = call(Node, throughput, [?MOD, C, Budget]),
        #{label => Label, input => InputName, schedulers => schedulers(Node), callers => C,
          rates => Rates, otp => otp(Node)}
    end).

%% The first launch squeezes (adding callers till the rate stops growing); the others measure
%% the same levels, each in a fresh node: the peak is read over launches
%% (`beamscale_stats_micro:peak/2'), or said to be unclear.
squeeze_launches(Plan, B, I, S) ->
    case squeeze_point(Plan, B, I, S) of
        {ok, #{steps := Steps} = Row} ->
            Levels = [C || #{callers := C} <- Steps],
            More = [levels_point(Plan, B, I, S, Levels)
                    || _ <- lists:seq(2, maps:get(launches, Plan, 1))],
            case [E || {error, _} = E <- More] of
                [] -> {ok, beamscale_micro_squeeze:row(Row, [R || {ok, R} <- More],
                                                       maps:get(tolerance, Plan))};
                [E | _] -> E
            end;
        Error -> Error
    end.

squeeze_point(Plan, {Label, Bench}, {InputName, _} = Input, S) ->
    on_node(Plan, start(Plan, S), Bench, Input, Label, fun(Node) ->
        Steps = squeeze(Plan, Node, Label, 1, []),
        #{label => Label, input => InputName, schedulers => schedulers(Node),
          steps => [#{callers => C, rate => R, rates => Rs} || {C, R, Rs} <- Steps],
          otp => otp(Node)}
    end).

levels_point(#{budget := Budget} = Plan, {Label, Bench}, Input, S, Levels) ->
    on_node(Plan, start(Plan, S), Bench, Input, Label, fun(Node) ->
        maybe_progress(Plan, io_lib:format("~ts callers ~w (another launch)", [Label, Levels])),
        [{C, element(2, call(Node, throughput, [?MOD, C, Budget]))} || C <- Levels]
    end).

squeeze(#{budget := Budget, max_callers := Max, tolerance := Tol} = Plan, Node, Label, C, Acc) ->
    {ok, Rates} = call(Node, throughput, [?MOD, C, Budget]),
    Rate = beamscale_stats:median(Rates),
    Steps = Acc ++ [{C, Rate, Rates}],
    maybe_progress(Plan, io_lib:format("~ts callers ~b: ~.1f calls/s", [Label, C, Rate])),
    case beamscale_stats_micro:squeeze([{X, R} || {X, R, _} <- Steps], Tol, ?PATIENCE) of
        {continue, _, _} when C < Max -> squeeze(Plan, Node, Label, C + 1, Steps);
        _ -> Steps
    end.

maybe_progress(#{progress := P}, Text) -> P(Text).

%% A fresh node with the user's code, the runner and the two modules (benchmark and empty
%% loop: `beamscale_micro_compile'); stopped whatever happens.
on_node(Plan, Started, Bench, {_, InputText}, Label, Measure) ->
    Spec0 = maps:get(spec, Plan),
    Spec = case InputText of
               none -> Spec0;
               _ -> Spec0#{input => InputText}
           end,
    case Started of
        {ok, Handle} ->
            Node = maps:get(node, Handle),
            try beamscale_micro_compile:load(Node, Plan, {?MOD, ?EMPTY}, Bench, Spec, Label) of
                ok -> limited(Plan, Handle, Label, fun() -> Measure(Node) end);
                Error -> Error
            after beamscale_node:stop(Handle)
            end;
        {error, _} = Error -> Error
    end.

%% The measure within the point's limit (`beamscale_micro_limit'), the limit reached named.
limited(Plan, Handle, Label, Measure) ->
    Limits = maps:get(limits, Plan, #{expr_ms => infinity, deadline => infinity}),
    case beamscale_micro_limit:run(Limits, beamscale_node:os_pid(Handle), Measure) of
        {time_limit, Which} -> {error, {?MODULE, {time_limit, Which, Label}}};
        Result -> Result
    end.

start(Plan, S) -> beamscale_node:start("micro", node_spec(Plan, S)).

node_spec(Plan, S) ->
    maps:merge(#{erl => maps:get(erl, Plan), flags => maps:get(flags, Plan),
                 code_path => maps:get(code_path, Plan)},
               maps:from_list([{schedulers, S} || is_integer(S)])).

%% What the measured code prints goes to stderr (its calls' group leader): stdout holds the
%% table or the JSON alone. Not the node's `user' (`peer''s output): Elixir sets options on it
%% at start, which standard_error refuses (enotsup).
call(Node, F, Args) ->
    Old = group_leader(),
    true = group_leader(whereis(standard_error), self()),
    try erpc:call(Node, beamscale_bench_micro, F, Args, infinity) of
        {ok, _} = Ok -> Ok;
        {error, Why} -> throw({error, {?MODULE, {crashed, Why}}})
    after true = group_leader(Old, self())
    end.

otp(Node) -> list_to_binary(erpc:call(Node, erlang, system_info, [otp_release])).
schedulers(Node) -> erpc:call(Node, erlang, system_info, [schedulers_online]).

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({crashed, {Reason, [{M, F, A, _} | _]}}) when is_atom(M), is_atom(F) ->
    io_lib:format("the benchmark crashed: ~0tp in ~s:~s/~b (the node's crash report, stack "
                  "included, is printed above on stderr)",
                  [Reason, M, F, if is_list(A) -> length(A); true -> A end]);
format_error({time_limit, expr, Label}) ->
    io_lib:format("time limit: ~ts ran past its limit (--expr-time-limit) and was stopped; "
                  "the points measured before it are shown", [Label]);
format_error({time_limit, command, Label}) ->
    io_lib:format("time limit: the command's --time-limit was reached while measuring ~ts; "
                  "the points measured before it are shown", [Label]);
format_error({crashed, Why}) ->
    io_lib:format("the benchmark crashed: ~0tP (the node's crash report is printed above on "
                  "stderr)", [Why, 12]).
