%% @doc The statistics of the instruction clock (pure): instructions retired per call of a
%% benchmark's samples less the empty loop's (counted with the same calls per sample, so that
%% what the harness adds cancels), their least (the figure: what else the scheduler's thread
%% runs during a sample, a timer or a tick, only adds), median, range and spread over the
%% samples, and the ratio and verdict of two such counts against their own spread.
-module(beamscale_stats_instr).

-export([per_call/2, summary/2, spread/1, compare/2]).
-export_type([sample/0, summary/0]).

%% Calls made, instructions retired.
-type sample() :: {pos_integer(), non_neg_integer()}.
-type summary() :: #{instructions := float(), instructions_median := float(),
                     instructions_max := float(), instructions_spread := float(),
                     instructions_per_call := [float()], counted_calls := pos_integer(),
                     empty_instructions := float()}.

%% @doc Instructions per call of each sample, less the empty loop's least per call.
-spec per_call([sample(), ...], [sample(), ...]) -> [float()].
per_call(Samples, Empty) ->
    Floor = empty(Empty),
    [I / N - Floor || {N, I} <- Samples].

empty(Empty) -> lists:min([I / N || {N, I} <- Empty]).

%% @doc The summary of a benchmark's counted samples against the empty loop's.
-spec summary([sample(), ...], [sample(), ...]) -> summary().
summary([{Calls, _} | _] = Samples, Empty) ->
    PerCall = per_call(Samples, Empty),
    #{instructions => lists:min(PerCall), instructions_median => beamscale_stats:median(PerCall),
      instructions_max => lists:max(PerCall), instructions_spread => spread(PerCall),
      instructions_per_call => PerCall, counted_calls => Calls,
      empty_instructions => empty(Empty)}.

%% @doc (max - min) / median, a fraction: 0.0 when the median is not positive.
-spec spread([number(), ...]) -> float().
spread(Xs) ->
    case beamscale_stats:median(Xs) of
        M when M > 0 -> (lists:max(Xs) - lists:min(Xs)) / M;
        _ -> 0.0
    end.

%% @doc Counts per call of side B against side A: B/A of the medians, and a difference called
%% only when the ranges of the two sides' counts (each its own A/A floor) do not overlap.
-spec compare([number(), ...], [number(), ...]) ->
    #{ratio := float() | undefined, floor := float(), verdict := same | more | fewer}.
compare(As, Bs) ->
    MA = beamscale_stats:median(As),
    MB = beamscale_stats:median(Bs),
    Verdict = if
                  MB > MA, MB > 0, MA > 0 -> apart(lists:min(Bs) > lists:max(As), more);
                  MB < MA, MB > 0, MA > 0 -> apart(lists:max(Bs) < lists:min(As), fewer);
                  true -> same
              end,
    #{ratio => ratio(MB, MA), floor => max(spread(As), spread(Bs)), verdict => Verdict}.

apart(true, V) -> V;
apart(false, _) -> same.

ratio(B, A) when A > 0 -> B / A;
ratio(_, _) -> undefined.
