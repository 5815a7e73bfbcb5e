%% @doc Comparing two runs, pure: per benchmark, phase, args and environment measured in both,
%% the ratio of medians B / A (above 1: B is slower) with its 95 % interval and a p-value.
%%
%% With launches (fresh emulators per point, `beamscale_stats_launches'), the interval is the
%% hierarchical bootstrap's (launches, then iterations within them) and p its two-sided
%% bootstrap p-value, so the variation between launches counts and the iterations of one launch
%% are not taken for independent. When both runs have one launch per key (runs from before
%% launches, or `--launches 1'), the interval is the ordinary bootstrap's (the same figures)
%% and p that of the two-sided Mann–Whitney U test over iterations, which does take them for
%% independent: `test' says which. A difference is *significant* when p < 0.05 *and* the
%% interval leaves out 1, so a verdict never contradicts the interval printed beside it. With 3
%% iterations per side and one launch no difference can be significant (the exact U test's
%% smallest p is 0.1): measure at least 5 to compare runs.
-module(beamscale_stats_compare).

-export([compare/2, compare/3, slower/2]).
-export_type([result/0]).

-type result() :: #{key := beamscale_stats:key(), n_a := pos_integer(), n_b := pos_integer(),
                    median_a := float(), median_b := float(), ratio := float() | null,
                    ratio_low := float() | null, ratio_high := float() | null, p := float(),
                    significant := boolean(), launches_a => pos_integer(),
                    launches_b => pos_integer(), test => launches | mann_whitney}.

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

%%% Internals

one(Key, LA, LB, Opts) ->
    SA = lists:append(LA),
    SB = lists:append(LB),
    {Ratio, Low, High, PBoot} = case beamscale_stats_launches:ratio(LB, LA, Opts) of
                                    undefined -> {null, null, null, 1.0};
                                    Found -> Found
                                end,
    {Test, P} = case length(LA) + length(LB) of
                    2 -> {mann_whitney, maps:get(p, beamscale_stats:mann_whitney(SA, SB))};
                    _ -> {launches, PBoot}
                end,
    Excludes1 = Ratio =/= null andalso (Low > 1 orelse High < 1),
    #{key => Key, n_a => length(SA), n_b => length(SB), median_a => beamscale_stats:median(SA),
      median_b => beamscale_stats:median(SB), ratio => Ratio, ratio_low => Low,
      ratio_high => High, p => P, significant => Excludes1 andalso P < ?ALPHA,
      launches_a => length(LA), launches_b => length(LB), test => Test}.
