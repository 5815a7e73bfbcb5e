%% @doc The statistics of the instruction clock (pure): instructions retired per call of a
%% benchmark's samples less the empty loop's (counted with the same calls per sample, so that
%% what the harness adds cancels), their least (the figure: what else the scheduler's thread
%% runs during a sample, a timer or a tick, only adds), median, range and spread over the
%% samples, and the ratio and verdict of two such counts against their own spread; two runs'
%% counts compared per key (`compare_runs/2', `beamscale compare' of two instruction runs).
-module(beamscale_stats_instr).

-export([per_call/2, summary/2, spread/1, compare/2, compare_runs/2, more/2, point/1]).
-export_type([sample/0, summary/0, counts/1, run_result/1]).

%% Calls made, instructions retired.
-type sample() :: {pos_integer(), non_neg_integer()}.
-type summary() :: #{instructions := float(), instructions_median := float(),
                     instructions_max := float(), instructions_spread := float(),
                     instructions_per_call := [float()], counted_calls := pos_integer(),
                     empty_instructions := float()}.
%% A run's counts per call, per key, launch by launch (each launch its counted samples).
-type counts(Key) :: #{Key => [[number(), ...], ...]}.
%% A key compared: `over' launches (each launch's least, its figure) or, with one launch on a
%% side, the counted samples (no launch-to-launch floor); medians over those values.
-type run_result(Key) :: #{key := Key, over := launches | samples, launches_a := pos_integer(),
                           launches_b := pos_integer(), n_a := pos_integer(),
                           n_b := pos_integer(), median_a := float(), median_b := float(),
                           ratio := float() | undefined, floor := float(),
                           verdict := same | more | fewer}.

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

%% @doc The figures of one key of a run's counts: over its launches' least counts, or over its
%% iterations when it has one launch (no launch-to-launch spread to show then).
-spec point([[number(), ...], ...]) ->
    #{values := [number(), ...], median := number(), min := number(), max := number(),
      spread := float()}.
point(Launches) ->
    Xs = case Launches of
             [One] -> One;
             _ -> [lists:min(L) || L <- Launches]
         end,
    #{values => Xs, median => beamscale_stats:median(Xs), min => lists:min(Xs),
      max => lists:max(Xs), spread => spread(Xs)}.

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

%% @doc The keys counted in both runs (in key order), B against A: over launches when both
%% sides have two or more (a launch's figure is its least count, as `bench' prints it), else
%% over the counted samples of the launches there are.
-spec compare_runs(counts(K), counts(K)) -> [run_result(K)].
compare_runs(A, B) ->
    [run_result(K, maps:get(K, A), maps:get(K, B))
     || K <- lists:sort(maps:keys(B)), is_map_key(K, A)].

run_result(Key, LA, LB) ->
    Over = case min(length(LA), length(LB)) of
               1 -> samples;
               _ -> launches
           end,
    {XA, XB} = {values(Over, LA), values(Over, LB)},
    (compare(XA, XB))#{key => Key, over => Over, launches_a => length(LA),
                       launches_b => length(LB), n_a => length(XA), n_b => length(XB),
                       median_a => beamscale_stats:median(XA),
                       median_b => beamscale_stats:median(XB)}.

values(launches, Launches) -> [lists:min(L) || L <- Launches];
values(samples, Launches) -> lists:append(Launches).

%% @doc The results whose B counts more than `Pct' percent above A's, ranges apart (the gate
%% of `compare --fail-if-slower' in instructions).
-spec more([run_result(K)], number()) -> [run_result(K)].
more(Results, Pct) ->
    [R || #{verdict := more, ratio := Ratio} = R <- Results, Ratio > 1 + Pct / 100].
