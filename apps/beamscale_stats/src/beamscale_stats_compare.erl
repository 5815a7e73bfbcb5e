%% @doc Comparing two runs, pure: per benchmark, phase, args and environment measured in both,
%% the ratio of medians B / A (above 1: B is slower) with its bootstrap 95 % interval, and the
%% two-sided Mann–Whitney U test. A difference is *significant* when p < 0.05 *and* the interval
%% leaves out 1, so a verdict never contradicts the interval printed beside it. With 3 iterations
%% per side no difference can be significant (the exact U test's smallest p is 0.1): measure
%% at least 5 to compare runs.
-module(beamscale_stats_compare).

-export([compare/2, compare/3, slower/2]).
-export_type([result/0]).

-type result() :: #{key := beamscale_stats:key(), n_a := pos_integer(), n_b := pos_integer(),
                    median_a := float(), median_b := float(), ratio := float() | null,
                    ratio_low := float() | null, ratio_high := float() | null, p := float(),
                    significant := boolean()}.

-define(ALPHA, 0.05).

%% @doc Compare the measurement rows of run A and run B, with default options.
-spec compare([beamscale_stats:measurement()], [beamscale_stats:measurement()]) -> [result()].
compare(RowsA, RowsB) -> compare(RowsA, RowsB, #{}).

%% @doc Compare the measurement rows of run A and run B (keys present in both, in key order).
-spec compare([beamscale_stats:measurement()], [beamscale_stats:measurement()],
              beamscale_stats:options()) -> [result()].
compare(RowsA, RowsB, Opts) ->
    GA = beamscale_stats:group(RowsA),
    GB = beamscale_stats:group(RowsB),
    [one(K, maps:get(K, GA), SB, Opts) || {K, SB} <- lists:sort(maps:to_list(GB)),
                                          is_map_key(K, GA)].

%% @doc The significant slowdowns larger than `Pct' percent.
-spec slower([result()], number()) -> [result()].
slower(Results, Pct) ->
    [R || #{significant := true, ratio := Ratio} = R <- Results, Ratio > 1 + Pct / 100].

%%% Internals

one(Key, SA, SB, Opts) ->
    {Ratio, Low, High} = case beamscale_stats:bootstrap_ratio(SB, SA, Opts) of
                             undefined -> {null, null, null};
                             Found -> Found
                         end,
    #{p := P} = beamscale_stats:mann_whitney(SA, SB),
    Excludes1 = Ratio =/= null andalso (Low > 1 orelse High < 1),
    #{key => Key, n_a => length(SA), n_b => length(SB), median_a => beamscale_stats:median(SA),
      median_b => beamscale_stats:median(SB), ratio => Ratio, ratio_low => Low,
      ratio_high => High, p => P, significant => Excludes1 andalso P < ?ALPHA}.
