%% @doc `beamscale saturate' end to end: the scenario's targets up, then one load level after
%% another at the rate the search chooses (`beamscale_stats_search'), each judged against the
%% objective (`beamscale_stats_slo') on its measured seconds (`beamscale_stats_saturate'), until
%% the search ends or the time budget would be overrun. Each level is appended to `levels.csv'
%% as it ends; `summary.json', `run.json' and `index.html' are written at the end. Targets the
%% command started are stopped whatever happens.
-module(beamscale_saturate).

-export([run/2, defaults/0, format_error/1]).
-export_type([opts/0]).

-type opts() :: #{
    %% the run directory itself
    dir := file:filename(),
    %% the objective (default: the scenario's `slo' key, else beamscale_stats_slo:default/0)
    slo => beamscale_stats_slo:slo(),
    %% seconds the whole search may take; no level starts that would end after it
    budget_s => pos_integer(),
    %% seconds a level offers load, the warm-up included
    level_s => pos_integer(),
    %% the first seconds of a level left out of its figures
    warmup_s => non_neg_integer(),
    %% seconds after a level for its sessions to finish (not measured)
    drain_s => non_neg_integer(),
    %% seconds of rest after a level not held, so its backlog is gone before the next
    cooldown_s => non_neg_integer(),
    %% open: arrivals at a rate the search chooses; closed: N users in a loop, N rising
    mode => beamscale_saturate_mode:mode(),
    %% the search: first rate, climb factor, bisection tolerance, highest rate (open);
    %% first users, factor, gain, patience, most users (closed)
    search => beamscale_stats_search:opts() | beamscale_stats_closed:opts(),
    %% cookie of existing target nodes
    cookie => atom(),
    %% arrivals' and think times' seed
    seed => integer(),
    %% no line per level
    quiet => boolean(),
    %% the live page's server (--web), shown each level as a load run
    web => beamscale_web:web(),
    %% a CPU profile of each sampled target node per level (docs/profiles.md)
    profile => beamscale_profile:opts()}.

-define(MS, 1000).
%% The target's samples are taken twice a second, so a short level still has a few.
-define(SAMPLE_MS, 500).
%% The fewest measured seconds of a climbing level.
-define(MIN_MEASURED_S, 3).
%% The longest rest after a level not held: a backlog that takes longer to clear than this
%% comes from a target that nearly stopped, and the next level will say so anyway.
-define(MAX_REST_MS, 30000).
%% The longest wait before a level for the target nodes to be idle (beamscale_saturate_idle):
%% a call the generator gave up on runs at most as long as the target's own timeouts let it
%% (the MariaDB target's write(10): ten statements of at most 5 s each in its pool); a node
%% still busy after this will not be idle soon, and the level starts with the timeout in its row.
-define(MAX_IDLE_WAIT_MS, 60000).

%% @doc The options' defaults (docs/saturate.md).
-spec defaults() -> map().
defaults() ->
    #{mode => open, budget_s => 180, level_s => 10, warmup_s => 2, drain_s => 2,
      cooldown_s => 2, search => #{}, seed => beamscale_load_run:new_seed(), quiet => false}.

%% @doc Search `Scenario''s capacity; returns the run directory and `summary.json''s content.
-spec run(beamscale_load_scenario:scenario(), opts()) ->
    {ok, file:filename(), map()} | {error, {module(), term()}}.
run(Scenario, Opts0) ->
    Opts = maps:merge(defaults(), Opts0),
    case check(Scenario, Opts) of
        ok ->
            {ok, _} = beamscale_node:distribute(),
            Sc = beamscale_loadtest_profile:scenario(Scenario, Opts),
            case beamscale_loadtest_targets:resolve(maps:get(targets, Sc),
                                           maps:get(cookie, Opts, undefined)) of
                {ok, Targets, Started} ->
                    try search(Sc, Targets, Opts)
                    after beamscale_loadtest_targets:stop(Started)
                    end;
                {error, _} = Error -> Error
            end;
        {error, _} = Error -> Error
    end.

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({scenarios, File}) ->
    io_lib:format("~ts:1: key scenarios: saturate runs levels of one phase; several scenarios "
                  "are for load (give saturate a file of phases)", [File]);
format_error({warmup_too_long, W, L}) ->
    io_lib:format("the warm-up (~b s) leaves nothing of a ~b s level to measure", [W, L]);
format_error({resume, Dir, Expected, Got}) ->
    io_lib:format("~ts/levels.csv: a level at ~ts/s where this search runs ~ts: it was written "
                  "with other search options (give them again, or another --name)",
                  [Dir, beamscale_report_svg:fmt(Got), case Expected of
                                                          done -> "none";
                                                          _ -> beamscale_report_svg:fmt(Expected)
                                                      end]);
format_error({level, open, Rate, Reason}) ->
    io_lib:format("the level at ~.1f/s failed: ~ts", [Rate, beamscale_error:format(Reason)]);
format_error({level, closed, N, Reason}) ->
    io_lib:format("the level of ~b users failed: ~ts", [N, beamscale_error:format(Reason)]).

%% Levels replace a file's phases by one of their choosing: several scenarios have none to take.
check(#{scenarios := [_ | _], file := File}, _Opts) -> {error, {?MODULE, {scenarios, File}}};
check(_Sc, #{warmup_s := W, level_s := L}) when W >= L ->
    {error, {?MODULE, {warmup_too_long, W, L}}};
check(_Sc, _Opts) -> ok.

search(Scenario, Targets, #{dir := Dir} = Opts) ->
    ok = filelib:ensure_path(Dir),
    Slo = slo(Scenario, Opts),
    Started = beamscale_runinfo:now_iso(),
    {Rows, Fd} = beamscale_store:open_csv(beamscale_format_rundir:path(Dir, levels),
                                          beamscale_stats_saturate:columns()),
    Before = [beamscale_stats_saturate:from_row(R) || R <- Rows],
    Deadline = erlang:monotonic_time(millisecond) + maps:get(budget_s, Opts) * ?MS,
    {Watched, _NotSampled} = beamscale_loadtest:watched(Scenario, Targets),
    Ctx = Opts#{slo => Slo, fd => Fd, targets => Targets, scenario => Scenario,
                deadline => Deadline, watched => Watched,
                idle_base => beamscale_saturate_idle:baseline(Targets),
                token => integer_to_binary(erlang:system_time(millisecond))},
    Result = try resume(Before, Ctx)
             after ok = file:close(Fd),
                   ok = beamscale_loadtest_profile:drop_maps(Scenario, Watched)
             end,
    case Result of
        {ok, Outcome, Levels} -> finish(Outcome, Levels, Ctx#{started => Started});
        {error, _} = Error -> Error
    end.

%% A rerun with the same directory goes on from the levels already in levels.csv.
resume(Before, #{mode := Mode} = Ctx) ->
    St0 = beamscale_saturate_mode:new(Mode, maps:get(search, Ctx)),
    case beamscale_saturate_mode:replay(Mode, St0, Before) of
        {ok, St} ->
            _ = Before =:= [] orelse
                say(Ctx, io_lib:format("~b levels from an earlier run of ~ts~n",
                                       [length(Before), maps:get(dir, Ctx)])),
            levels(St, lists:reverse(Before), Ctx);
        {error, {mismatch, Expected, Got}} ->
            {error, {?MODULE, {resume, maps:get(dir, Ctx), Expected, Got}}}
    end.

slo(_Scenario, #{slo := Slo}) -> Slo;
slo(#{slo := Slo}, _Opts) -> Slo;
slo(_, _) ->
    {ok, Slo} = beamscale_stats_slo:parse(beamscale_stats_slo:default()),
    Slo.

levels(St, Done, #{mode := Mode} = Ctx) ->
    case beamscale_saturate_mode:next(Mode, St) of
        {done, Outcome} -> {ok, Outcome, lists:reverse(Done)};
        {run, X} ->
            Level = Ctx#{level_s := length_s(beamscale_saturate_mode:phase(Mode, St), Ctx)},
            Idle = idle(Ctx),
            case fits(Level) of
                false -> {ok, beamscale_saturate_mode:stopped(Mode, St), lists:reverse(Done)};
                true ->
                    case level(X, Level#{idle => Idle, number => length(Done) + 1}) of
                        %% Folding a profile is not the search's time: the budget is the levels'.
                        {ok, F, ProfileMs} ->
                            levels(beamscale_saturate_mode:record(Mode, St, X, F), [F | Done],
                                   Ctx#{deadline := maps:get(deadline, Ctx) + ProfileMs});
                        {error, _} = Error -> Error
                    end
            end
    end.

%% While climbing, levels are half as long: the rates are far below the edge or far above it
%% until the first not held, and the time is better spent on the levels near the edge.
length_s(climb, #{level_s := L, warmup_s := W}) -> min(L, max(W + ?MIN_MEASURED_S, L div 2));
length_s(_Phase, #{level_s := L}) -> L.

%% Wait until the target nodes are idle (at most ?MAX_IDLE_WAIT_MS, never past the budget);
%% a wait is said, and goes into the level's row.
idle(#{idle_base := Base, deadline := D} = Ctx) ->
    Limit = min(D, erlang:monotonic_time(millisecond) + ?MAX_IDLE_WAIT_MS),
    W = beamscale_saturate_idle:wait(Base, Limit),
    case W of
        #{idle := timeout, waited_ms := Ms} ->
            say(Ctx, io_lib:format("the target is still busy after ~.1f s: the level starts "
                                   "anyway~n", [Ms / ?MS]));
        #{waited_ms := Ms} when Ms >= ?MS ->
            say(Ctx, io_lib:format("waited ~.1f s for the target to be idle~n", [Ms / ?MS]));
        _ -> ok
    end,
    W.

%% Whether one more level ends within the budget.
fits(#{deadline := D, level_s := L, drain_s := Dr}) ->
    erlang:monotonic_time(millisecond) + (L + Dr) * ?MS =< D.

%% One level: a rate (open) or a number of users (closed).
level(X, #{scenario := Sc, targets := Targets, slo := Slo, fd := Fd, mode := Mode} = Ctx) ->
    #{level_s := L, drain_s := Dr, warmup_s := W, seed := Seed} = Ctx,
    Level = beamscale_saturate_mode:level(Mode, Sc, X, L, Dr),
    T0 = erlang:monotonic_time(millisecond),
    RunOpts = (live(Level, X, Ctx))#{seed => Seed},
    Windows = beamscale_loadtest_profile:start(maps:get(number, Ctx), {L, W}, Ctx),
    Run = beamscale_loadtest_sampled:run(Level, Targets, maps:get(watched, Ctx), meta(X, Ctx),
                                         RunOpts),
    ProfileMs = beamscale_loadtest_profile:finish(Windows, maps:get(number, Ctx),
                                                  {X, unit(Mode)}),
    case Run of
        {ok, #{rows := Rows}, Samples} ->
            Point = case Mode of
                        open -> #{rate => X};
                        closed -> #{users => X}
                    end,
            F0 = beamscale_stats_saturate:figures(Rows, Point#{hold_s => L, warmup_s => W,
                                                               samples => Samples}),
            #{idle := Idle, waited_ms := Waited} = maps:get(idle, Ctx),
            F = (beamscale_saturate_mode:judge(Mode, Slo, F0))#{
                  wall_s => (erlang:monotonic_time(millisecond) - T0) / ?MS,
                  idle_wait_s => Waited / ?MS,
                  idle_timeout => case Idle of
                                      none -> <<>>;
                                      _ -> atom_to_binary(Idle =:= timeout)
                                  end},
            ok = file:write(Fd, beamscale_format_csv:line(beamscale_stats_saturate:row(F))),
            say(Ctx, line(F)),
            maps:get(held, F) orelse Mode =:= closed orelse rest(F, Ctx),
            {ok, F, ProfileMs};
        {error, Reason} -> {error, {?MODULE, {level, Mode, X, Reason}}}
    end.

unit(open) -> <<"sessions/s">>;
unit(closed) -> <<"users">>.

%% The level's key in samples.csv: its rate and this run's token (a resumed run adds rows).
meta(X, #{dir := Dir, token := Token, mode := Mode}) ->
    Key = case Mode of
              open -> "rate=";
              closed -> "users="
          end,
    #{dir => Dir, bench => <<"saturate">>, env => <<"sut">>, interval => ?SAMPLE_MS,
      args => iolist_to_binary([Key, beamscale_report_svg:fmt(X), ";run=", Token])}.

%% After a level not held, the target still works through the sessions it was sent and did not
%% finish (the generator let go of them at the level's end). Target nodes are polled until they
%% are idle before the next level (idle/1): rest only the cooldown. Others: rest long enough for
%% the generator's backlog at the rate the target achieved (calls it timed out on, not counted,
%% may still run there).
rest(#{backlog := Backlog, achieved_per_s := A}, #{cooldown_s := C, deadline := D} = Ctx) ->
    Clear = case map_size(maps:get(idle_base, Ctx)) of
                0 -> min(?MAX_REST_MS, round(?MS * max(Backlog, 0) / max(A, 1.0)));
                _ -> 0
            end,
    Left = D - erlang:monotonic_time(millisecond),
    timer:sleep(max(0, min(Left, C * ?MS + Clear))).

%% With --web, the level is shown on the live page as a load run of its own.
live(Level, X, #{web := Web, dir := Dir, mode := Mode}) ->
    Label = iolist_to_binary(io_lib:format("saturate: level ~ts ~ts",
                                           [beamscale_report_svg:fmt(X),
                                            case Mode of
                                                open -> "users/s";
                                                closed -> "users in a loop"
                                            end])),
    ok = beamscale_web_load:start_run(Web, Level, #{dir => Dir, label => Label, msacc => 0}),
    #{on_second => beamscale_seconds:on_second([{beamscale_web_load, Web}])};
live(_Level, _X, _Ctx) -> #{}.

line(#{offered_per_s := R, users := N, achieved_per_s := A, requests_per_s := Q, p99_ms := P99,
       p99_sent_ms := U99, error_ratio := E, broken := Broken}) ->
    Verdict = case Broken of
                  [] -> "held";
                  _ -> ["NOT held: ", lists:join(",", Broken)]
              end,
    case N of
        null -> io_lib:format("offered ~8.1f/s  achieved ~8.1f/s  p99 ~9.1f ms (from send ~9.1f)"
                              "  errors ~5.2f%  ~ts~n",
                              [R, A, float(P99), float(U99), 100 * E, Verdict]);
        _ -> io_lib:format("users ~6b  requests ~9.1f/s  p99 ~9.1f ms  errors ~5.2f%  ~ts~n",
                           [N, float(Q), float(P99), 100 * E, Verdict])
    end.

finish(Outcome, Levels, #{dir := Dir, slo := Slo, scenario := Sc, mode := Mode} = Ctx) ->
    Summary = beamscale_saturate_mode:summary(Mode, beamscale_stats_slo:text(Slo), Outcome,
                                              Levels, #{level_s => maps:get(level_s, Ctx),
                                                        warmup_s => maps:get(warmup_s, Ctx)}),
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, summary_json),
                                    beamscale_format_json:encode(Summary)),
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, run_json),
                                    beamscale_format_json:encode(run_info(Sc, Ctx))),
    {ok, Index} = beamscale_writer:write(Dir),
    say(Ctx, [beamscale_profile:notes(Dir), closing(Dir, Summary, Index)]),
    {ok, Dir, Summary}.

closing(Dir, #{mode := closed, peak_per_s := P, peak_users := N, stopped := Why}, Index) ->
    io_lib:format("~nSaturate run directory: ~ts~nmost throughput ~ts requests/s with ~ts users; "
                  "search stopped: ~ts~n~ts~n", [Dir, txt(P), txt(N), txt(Why), Index]);
closing(Dir, #{capacity_per_s := C, capacity_high_per_s := H, limited_by := By,
               stopped := Why}, Index) ->
    io_lib:format("~nSaturate run directory: ~ts~ncapacity ~ts/s (not held at ~ts/s), limited "
                  "by ~ts; search stopped: ~ts~n~ts~n",
                  [Dir, txt(C), txt(H), txt(By), txt(Why), Index]).

txt(null) -> "-";
txt(V) when is_float(V) -> float_to_list(V, [{decimals, 1}]);
txt(V) when is_atom(V) -> atom_to_list(V);
txt(V) when is_integer(V) -> integer_to_list(V);
txt(V) -> V.

run_info(#{file := File}, #{started := Started} = Ctx) ->
    {ok, Host} = inet:gethostname(),
    #{tool => <<"beamscale">>, kind => saturate, mode => maps:get(mode, Ctx),
      scenario => {string, File},
      host => list_to_binary(Host), logical_cores => erlang:system_info(logical_processors),
      otp_release => list_to_binary(erlang:system_info(otp_release)), started => Started,
      ended => beamscale_runinfo:now_iso(), budget_s => maps:get(budget_s, Ctx),
      level_s => maps:get(level_s, Ctx), warmup_s => maps:get(warmup_s, Ctx),
      drain_s => maps:get(drain_s, Ctx), cooldown_s => maps:get(cooldown_s, Ctx),
      search => maps:merge(case maps:get(mode, Ctx) of
                               open -> beamscale_stats_search:defaults();
                               closed -> beamscale_stats_closed:defaults()
                           end, maps:get(search, Ctx))}.

say(#{quiet := true}, _Text) -> ok;
say(_Ctx, Text) -> io:put_chars(Text).
