%% @doc The statistics of `beamscale bench' (pure): nanoseconds per call with the empty loop's
%% cost subtracted, their median and 95 % interval, reductions per call, ratios to a base, the
%% speedup and efficiency of concurrent callers, and when a squeeze stops.
-module(beamscale_stats_micro).

-export([per_call/2, summary/3, ratio/2, scaling/1, squeeze/3, peak/2]).
-export_type([sample/0, summary/0, point/0]).

%% Calls, nanoseconds, reductions of one timed run of the loop.
-type sample() :: {pos_integer(), non_neg_integer(), non_neg_integer()}.
-type summary() :: #{ns := float(), ns_low := float(), ns_high := float(),
                     calls_s := float(), reductions := float(), n := pos_integer(),
                     cv := float(), per_call := [float()]}.
%% One point of a scaling: schedulers, callers, calls per second (samples).
-type point() :: #{schedulers := pos_integer(), callers := pos_integer(), rates := [float()],
                   atom() => term()}.

%% @doc Nanoseconds per call of each sample, less the median cost per call of the empty loop
%% (never below zero).
-spec per_call([sample(), ...], [sample(), ...]) -> [float()].
per_call(Samples, Empty) ->
    Floor = beamscale_stats:median([Ns / N || {N, Ns, _} <- Empty]),
    [max(0.0, Ns / N - Floor) || {N, Ns, _} <- Samples].

%% @doc The summary of one benchmark's samples against the empty loop's.
-spec summary([sample(), ...], [sample(), ...], beamscale_stats:options()) -> summary().
summary(Samples, Empty, Opts) ->
    PerCall = per_call(Samples, Empty),
    #{median := Ns, ci95_low := Low, ci95_high := High, cv := Cv, n := K} =
        beamscale_stats:describe(PerCall, Opts),
    Reds = beamscale_stats:median([R / N || {N, _, R} <- Samples])
        - beamscale_stats:median([R / N || {N, _, R} <- Empty]),
    #{ns => Ns, ns_low => Low, ns_high => High, calls_s => calls_s(Ns), reductions => Reds,
      n => K, cv => Cv, per_call => PerCall}.

calls_s(Ns) when Ns > 0 -> 1.0e9 / Ns;
calls_s(_) -> 0.0.

%% @doc The ratio of medians of per-call times `As / Bs' with its bootstrap 95 % interval.
-spec ratio([float(), ...], [float(), ...]) -> {float(), float(), float()} | undefined.
ratio(As, Bs) -> beamscale_stats:bootstrap_ratio(As, Bs, #{}).

%% @doc Each point with its median calls per second, interval, and speedup and efficiency
%% against one caller at the same schedulers (efficiency: speedup per caller); `null' without
%% that point.
-spec scaling([point()]) -> [point()].
scaling(Points) ->
    Described = [P#{rate => median(R), rate_low => L, rate_high => H}
                 || #{rates := R} = P <- Points,
                    #{ci95_low := L, ci95_high := H} <- [beamscale_stats:describe(R)]],
    Base = maps:from_list([{S, R} || #{callers := 1, schedulers := S, rate := R} <- Described]),
    [P#{speedup => speedup(maps:find(S, Base), R),
        efficiency => efficiency(speedup(maps:find(S, Base), R), C)}
     || #{schedulers := S, callers := C, rate := R} = P <- Described].

median(Xs) -> beamscale_stats:median(Xs).

speedup({ok, B}, R) when B > 0 -> R / B;
speedup(_, _) -> null.

efficiency(null, _) -> null;
efficiency(S, C) -> S / C.

%% @doc Whether a squeeze goes on: given the median calls per second at 1, 2, .. callers so
%% far (in order), `continue', or the peak once `Patience' steps in a row did not beat the best
%% by more than `Tolerance' (a fraction: 0.05), as erlperf's squeeze stops. A step within the
%% tolerance of the best is no growth: the peak is the fewest callers reaching it. `continue'
%% comes with the best so far (the peak when no more callers are tried).
-spec squeeze([{pos_integer(), float()}, ...], float(), pos_integer()) ->
    {continue, pos_integer(), float()} | {peak, pos_integer(), float()}.
squeeze([First | Rest], Tolerance, Patience) ->
    squeeze(Rest, First, 0, Tolerance, Patience).

squeeze(_Rest, {C, R}, Stale, _Tol, Patience) when Stale >= Patience -> {peak, C, R};
squeeze([], {C, R}, _Stale, _Tol, _Patience) -> {continue, C, R};
squeeze([{_, R} = Step | Rest], {_, Best} = B, Stale, Tol, Patience) ->
    case R > Best * (1 + Tol) of
        true -> squeeze(Rest, Step, 0, Tol, Patience);
        false -> squeeze(Rest, B, Stale + 1, Tol, Patience)
    end.

%% @doc The peak of a squeeze from each level's calls per second with its 95 % interval
%% (`{Callers, {Median, Low, High}}', in order of callers): the fewest callers not clearly
%% below the best level (their interval, raised by `Tolerance', reaches the best's), with its
%% interval. It is clear when its median is within the tolerance of the best's and it has no
%% level below it or the level below is clearly below it; else `no_clear_peak' (never a peak
%% the figures do not show).
-spec peak([{pos_integer(), {float(), float(), float()}}, ...], float()) ->
    {peak, pos_integer(), {float(), float(), float()}} | {no_clear_peak, pos_integer()}.
peak(Levels, Tolerance) ->
    {_, {BestMedian, BestLow, _}} = lists:last(lists:keysort(2, Levels)),
    Below = fun({_, _, High}, Low) -> High * (1 + Tolerance) < Low end,
    {Before, [{C, {Median, Low, _} = I} | _]} =
        lists:splitwith(fun({_, Int}) -> Below(Int, BestLow) end, Levels),
    %% A peak whose own median falls short of the best's beyond the tolerance is only a level
    %% whose interval is wide (a noisy launch): no clear peak, not a peak at too few callers.
    Short = Median * (1 + Tolerance) < BestMedian,
    case lists:reverse(Before) of
        _ when Short -> {no_clear_peak, C};
        [] -> {peak, C, I};
        [{_, Prev} | _] ->
            case Below(Prev, Low) of
                true -> {peak, C, I};
                false -> {no_clear_peak, C}
            end
    end.
