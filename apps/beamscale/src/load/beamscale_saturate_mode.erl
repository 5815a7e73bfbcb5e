%% @doc What differs between `beamscale saturate''s two modes, so one level loop serves both.
%% `open': arrivals at a rate (`beamscale_stats_search'), a level judged by the whole objective,
%% the capacity the highest rate held. `closed' (`--closed'): N users each running the session in
%% a loop with no think time (`beamscale_stats_closed'), a level judged by the objective's error
%% term only (latency rises with N by design), the result the most throughput (requests/s) and
%% the N that gave it. Pure.
-module(beamscale_saturate_mode).

-export([new/2, replay/3, next/2, phase/2, record/4, stopped/2, level/5, judge/3, summary/5]).
-export_type([mode/0]).

-type mode() :: open | closed.

%% A closed level's users all arrive within about this many seconds of its start.
-define(RAMP_S, 0.1).
%% A loop that only the level's time limit ends.
-define(FOREVER, 1000000000).
%% The error bound of a closed level when the objective has no error term.
-define(DEFAULT_ERRORS, 0.01).
%% Standard errors each side of the throughput's mean for a closed level's interval (~95 %).
-define(Z, 2).

%% @doc A new search of this mode.
-spec new(mode(), map()) -> term().
new(open, Opts) -> beamscale_stats_search:new(Opts);
new(closed, Opts) -> beamscale_stats_closed:new(Opts).

%% @doc The search after the levels of an earlier run (figures read back from levels.csv).
-spec replay(mode(), term(), [map()]) -> {ok, term()} | {error, {mismatch, term(), term()}}.
replay(open, St, Levels) ->
    beamscale_stats_search:replay(St, [{R, H} || #{offered_per_s := R, held := H} <- Levels]);
replay(closed, St, Levels) ->
    beamscale_stats_closed:replay(St, [{N, num(P), H} || #{users := N, requests_per_s := P,
                                                           held := H} <- Levels]).

%% @doc The next level (a rate, or a number of users) or the outcome.
-spec next(mode(), term()) -> {run, number()} | {done, map()}.
next(open, St) -> beamscale_stats_search:next(St);
next(closed, St) -> beamscale_stats_closed:next(St).

%% @doc Where the search is (`climb' levels are shorter).
-spec phase(mode(), term()) -> atom().
phase(open, St) -> beamscale_stats_search:phase(St);
phase(closed, St) -> beamscale_stats_closed:phase(St).

%% @doc The search after level `X' gave the figures `F'.
-spec record(mode(), term(), number(), map()) -> term().
record(open, St, R, #{held := H}) -> beamscale_stats_search:record(St, R, H);
record(closed, St, N, #{requests_per_s := P, held := H}) ->
    beamscale_stats_closed:record(St, N, P, H).

%% @doc The outcome of a search stopped by the budget: what it found so far.
-spec stopped(mode(), term()) -> map().
stopped(open, St) -> (beamscale_stats_search:bracket(St))#{why => budget};
stopped(closed, St) ->
    {done, Outcome} = beamscale_stats_closed:next(beamscale_stats_closed:stop(St)),
    Outcome#{why => budget}.

%% @doc The scenario of one level of `L' seconds followed by `Drain' seconds.
-spec level(mode(), map(), number(), pos_integer(), non_neg_integer()) -> map().
level(open, #{phases := [First | _]} = Sc, Rate, L, Drain) ->
    Sc#{phases := [First#{name := level, duration_s := L, rate := Rate}], drain_s := Drain,
        time_limit_s := L + Drain};
level(closed, #{phases := [First | _], sessions := Sessions} = Sc, N, L, _Drain) ->
    Phase = maps:remove(sessions, First#{name := level, duration_s := L,
                                         rate := float(N / ?RAMP_S), max_users := N}),
    %% The users loop until the level's time limit cuts them: no drain.
    Sc#{phases := [Phase], drain_s := 0, time_limit_s := L,
        sessions := [S#{steps := [{loop, ?FOREVER, no_think(Steps)}]}
                     || #{steps := Steps} = S <- Sessions]}.

%% @doc A level's verdict: held, the terms broken, the limiting term.
-spec judge(mode(), beamscale_stats_slo:slo(), map()) -> map().
judge(open, Slo, F) ->
    Broken = beamscale_stats_slo:broken(Slo, F),
    F#{held => Broken =:= [], broken => Broken,
       limited_by => beamscale_stats_slo:limited_by(Slo, F, Broken)};
judge(closed, Slo, #{error_ratio := E} = F) ->
    Bound = case lists:keyfind(errors, 1, Slo) of
                {errors, B} -> B;
                false -> ?DEFAULT_ERRORS
            end,
    Broken = [<<"errors">> || E > Bound],
    F#{held => Broken =:= [], broken => Broken,
       limited_by => case Broken of [] -> none; [T] -> T end}.

%% @doc `summary.json' of a search.
-spec summary(mode(), binary(), map(), [map()], map()) -> map().
summary(open, Slo, Outcome, Levels, Extra) ->
    beamscale_stats_saturate:summary(Slo, Outcome, Levels, Extra#{mode => open});
summary(closed, Slo, #{peak_users := N, peak_per_s := P, why := Why}, Levels, Extra) ->
    {Low, High} = case [L || #{users := U} = L <- Levels, U == N] of
                      [#{requests_per_s_sd := Sd, seconds := Secs} | _] when is_number(Sd) ->
                          Half = ?Z * Sd / math:sqrt(max(Secs, 1)),
                          {r(P - Half), r(P + Half)};
                      _ -> {null, null}
                  end,
    Extra#{mode => closed, slo => Slo, peak_per_s => opt(P), peak_users => opt(N),
           capacity_per_s => opt(P), capacity_low_per_s => Low, capacity_high_per_s => High,
           limited_by => null, broken_first => [], stopped => Why, levels => length(Levels)}.

%% The session's think times left out, at every depth: users run back to back.
no_think(Steps) -> beamscale_load_steps:map(fun({think, _}) -> []; (S) -> [S] end, Steps).

num(V) when is_number(V) -> V;
num(_) -> 0.

opt(none) -> null;
opt(V) when is_float(V) -> r(V);
opt(V) -> V.

r(V) -> round(V * 1000) / 1000.
