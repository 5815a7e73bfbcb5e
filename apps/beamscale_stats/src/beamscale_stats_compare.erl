%% @doc Comparing two runs, pure: per benchmark, phase, args and environment measured in both,
%% the ratio of medians B / A (above 1: B is slower) with its 95 % interval and a p-value.
%%
%% With launches (fresh emulators per point), the launch is the unit that repeats: the ratio's
%% 95 % interval and p come from Welch's t over the logarithms of the launch medians (a side of
%% one launch borrows the other side's spread), so the variation between launches counts and
%% the iterations of one launch are not taken for independent. A bootstrap that draws 3 launches
%% with replacement sees too little of their spread (too narrow, and its p can read 0). When
%% both runs have one launch per key the interval is the ordinary bootstrap's and p that of the
%% two-sided Mann-Whitney U test over iterations, which does take them for independent:
%% `test' says which. A difference is *significant* when p < 0.05 *and* the interval leaves out
%% 1, so a verdict never contradicts the interval printed beside it, *and* the ratio is beyond
%% the comparison's A/A noise floor (`beamscale_stats_floor': how far the launch medians of one
%% side lie apart; `floor' null when neither side has two launches, the test alone deciding).
%% With 3 iterations per side and one launch no difference can be significant (the exact U
%% test's smallest p is 0.1).
-module(beamscale_stats_compare).

-export([compare/2, compare/3, slower/2, launches/3]).
-export_type([result/0]).

-type result() :: #{key := beamscale_stats:key(), n_a := pos_integer(), n_b := pos_integer(),
                    median_a := float(), median_b := float(), ratio := float() | null,
                    ratio_low := float() | null, ratio_high := float() | null, p := float(),
                    significant := boolean(), launches_a => pos_integer(),
                    launches_b => pos_integer(), test => launches | mann_whitney,
                    floor => float() | null}.
%% A comparison of two sides' launches, without the key and the medians.
-type verdict() :: #{ratio := float() | null, ratio_low := float() | null,
                     ratio_high := float() | null, p := float(), significant := boolean(),
                     launches_a := pos_integer(), launches_b := pos_integer(),
                     test := launches | mann_whitney, floor := float() | null}.

-define(ALPHA, 0.05).

%% @doc Compare the measurement rows of run A and run B, with default options.
-spec compare([beamscale_stats:measurement()], [beamscale_stats:measurement()]) -> [result()].
compare(RowsA, RowsB) -> compare(RowsA, RowsB, #{}).

%% @doc Compare the measurement rows of run A and run B (keys present in both, in key order).
-spec compare([beamscale_stats:measurement()], [beamscale_stats:measurement()],
              beamscale_stats:options()) -> [result()].
compare(RowsA, RowsB, Opts) ->
    GA = beamscale_stats_launches:group(RowsA),
    GB = beamscale_stats_launches:group(RowsB),
    [one(K, maps:get(K, GA), LB, Opts) || {K, LB} <- lists:sort(maps:to_list(GB)),
                                          is_map_key(K, GA)].

%% @doc The significant slowdowns larger than `Pct' percent.
-spec slower([result()], number()) -> [result()].
slower(Results, Pct) ->
    [R || #{significant := true, ratio := Ratio} = R <- Results, Ratio > 1 + Pct / 100].

%% @doc B / A of two sides given launch by launch (samples of any quantity), its interval, p,
%% A/A floor and verdict, as `compare/3' makes them.
-spec launches(beamscale_stats_launches:launches(), beamscale_stats_launches:launches(),
               beamscale_stats:options()) -> verdict().
launches(LA, LB, Opts) ->
    {Ratio, Low, High, Test, P} =
        case {beamscale_stats_launches:ratio(LB, LA, Opts), length(LA) + length(LB)} of
            {undefined, _} -> {null, null, null, launches, 1.0};
            {{R, L, H, _}, 2} ->
                {R, L, H, mann_whitney,
                 maps:get(p, beamscale_stats:mann_whitney(lists:append(LA), lists:append(LB)))};
            {{R, L, H, _}, _} -> over_launches(R, L, H, LA, LB)
        end,
    Excludes1 = Ratio =/= null andalso (Low > 1 orelse High < 1),
    Floor = beamscale_stats_floor:floor(medians(LA), medians(LB)),
    Beyond = beamscale_stats_floor:beyond(Ratio, Floor),
    #{ratio => Ratio, ratio_low => Low, ratio_high => High, p => P,
      significant => Excludes1 andalso P < ?ALPHA andalso Beyond,
      launches_a => length(LA), launches_b => length(LB), test => Test,
      floor => null_if_undefined(Floor)}.

%%% Internals

one(Key, LA, LB, Opts) ->
    SA = lists:append(LA),
    SB = lists:append(LB),
    (launches(LA, LB, Opts))#{key => Key, n_a => length(SA), n_b => length(SB),
                              median_a => beamscale_stats:median(SA),
                              median_b => beamscale_stats:median(SB)}.

medians(Launches) -> [beamscale_stats:median(L) || L <- Launches].

null_if_undefined(undefined) -> null;
null_if_undefined(F) -> F.

%% Welch's t on the logs of the launch medians; the interval widened to hold the ratio of the
%% pooled medians printed beside it. No spread at all (equal launch medians): the bootstrap's.
over_launches(Ratio, BootLow, BootHigh, LA, LB) ->
    A = [math:log(M) || L <- LA, M <- [beamscale_stats:median(L)], M > 0],
    B = [math:log(M) || L <- LB, M <- [beamscale_stats:median(L)], M > 0],
    case welch(A, B) of
        undefined -> {Ratio, BootLow, BootHigh, launches, 1.0};
        {Diff, Se, Df} ->
            Half = beamscale_stats_t:quantile(1 - ?ALPHA / 2, Df) * Se,
            P = beamscale_stats_t:p_two_sided(Diff / Se, Df),
            {Ratio, min(Ratio, math:exp(Diff - Half)), max(Ratio, math:exp(Diff + Half)),
             launches, P}
    end.

welch(A, B) when length(A) + length(B) < 3; A =:= []; B =:= [] -> undefined;
welch(A, B) ->
    {KA, KB} = {length(A), length(B)},
    {VA, VB} = case {variance(A), variance(B)} of
                   {none, V} -> {V, V};
                   {V, none} -> {V, V};
                   Both -> Both
               end,
    Se2 = VA / KA + VB / KB,
    case Se2 > 0 of
        false -> undefined;
        true ->
            Df = case {KA, KB} of
                     {1, _} -> KB - 1;
                     {_, 1} -> KA - 1;
                     _ -> Se2 * Se2 / ((VA / KA) * (VA / KA) / (KA - 1)
                                       + (VB / KB) * (VB / KB) / (KB - 1))
                 end,
            {mean(B) - mean(A), math:sqrt(Se2), Df}
    end.

mean(L) -> lists:sum(L) / length(L).

variance([_]) -> none;
variance(L) ->
    M = mean(L),
    lists:sum([(X - M) * (X - M) || X <- L]) / (length(L) - 1).
