%% @doc Pure statistics of timed iterations: summaries with a bootstrap 95 % interval of the
%% median (hierarchical over launches in `report_stats', see `beamscale_stats_launches'),
%% speedup and efficiency against the smallest environment, the Mann–Whitney U test.
%%
%% Reproducible: the bootstrap draws from a fixed seed with `rand:seed_s/2' and
%% `rand:uniform_s/2' (no process dictionary), and resamples the *sorted* samples, so the same
%% numbers in any order give the same report.
%%
%% Noisy: a result whose coefficient of variation (stddev / mean) is above `noisy_cv'
%% (default 0.10, i.e. 10 %) is flagged; its median is still reported, but with caution.
-module(beamscale_stats).

-import(beamscale_stats_base, [draw/4, repeat/3, interval/2]).
-export([options/1, describe/1, describe/2, median/1, percentile/2, bootstrap_ratio/3,
         mann_whitney/2, report_stats/1, report_stats/2, group/1]).
-export_type([options/0, summary/0, key/0, row/0, measurement/0]).

-type options() :: #{resamples => pos_integer(), seed => {integer(), integer(), integer()},
                     noisy_cv => float(), alpha => float()}.
-type summary() :: #{n := non_neg_integer(), median := float(), mean := float(),
                     stddev := float(), min := float(), max := float(),
                     ci95_low := float(), ci95_high := float(), cv := float(),
                     noisy := boolean()}.
%% A summary row (a line of `summary.csv', see docs/report.md): benchmark, phase, args, otp,
%% erl_args (binaries), schedulers and nodes (integers), the summary, speedup and efficiency
%% with intervals (`null' without a base); `sanity' once `beamscale_report_summary' adds it.
-type row() :: #{benchmark := binary(), phase := binary(), args := binary(), otp := binary(),
                 erl_args := binary(), schedulers := integer(), nodes := integer(),
                 n := non_neg_integer(), median := float(), mean := float(), stddev := float(),
                 min := float(), max := float(), ci95_low := float(), ci95_high := float(),
                 cv := float(), noisy := boolean(), speedup := gain(), speedup_low := gain(),
                 speedup_high := gain(), efficiency := gain(), efficiency_low := gain(),
                 efficiency_high := gain(), sanity => binary()}.
-type gain() :: float() | null.
%% A row of `measurements.csv' (docs/run-directory.md), as read (binaries) or as numbers.
-type measurement() :: #{benchmark := binary(), phase := binary(), args := binary(),
                         otp := binary(), erl_args := binary(),
                         schedulers := binary() | integer(), nodes := binary() | integer(),
                         seconds := binary() | number(), atom() => term()}.
-type key() :: {binary(), binary(), binary(), binary(), binary(), integer(), integer()}.


%% @doc Options with defaults filled in.
-spec options(options()) -> #{resamples := pos_integer(), seed := tuple(), noisy_cv := float(),
                               alpha := float()}.
options(Opts) -> beamscale_stats_base:options(Opts).

%% @doc The summary of a non-empty sample list, with default options.
-spec describe([number(), ...]) -> summary().
describe(Samples) -> describe(Samples, #{}).

%% @doc The summary of a non-empty sample list.
-spec describe([number(), ...], options()) -> summary().
describe(Samples, Opts0) ->
    #{noisy_cv := NoisyCv} = Opts = options(Opts0),
    Sorted = lists:sort([float(X) || X <- Samples]),
    N = length(Sorted),
    Mean = lists:sum(Sorted) / N,
    Sd = stddev(Sorted, Mean),
    Median = median(Sorted),
    {Low, High} = median_ci(Sorted, Median, Opts),
    Cv = case Mean == 0 of true -> 0.0; false -> Sd / abs(Mean) end,
    #{n => N, median => Median, mean => Mean, stddev => Sd, min => hd(Sorted),
      max => lists:last(Sorted), ci95_low => Low, ci95_high => High, cv => Cv,
      noisy => Cv > NoisyCv}.

%% @doc The median of a non-empty list.
-spec median([number(), ...]) -> float().
median(Samples) -> beamscale_stats_base:median(Samples).

%% @doc The `P' quantile (0..1) of a sorted non-empty list, interpolating between neighbours.
-spec percentile([number(), ...], float()) -> float().
percentile(Sorted, P) -> beamscale_stats_base:percentile(Sorted, P).

%% @doc `median(As) / median(Bs)' and its bootstrap 95 % interval (both samples resampled
%% together); `undefined' when a median is zero.
-spec bootstrap_ratio([number(), ...], [number(), ...], options()) ->
    {float(), float(), float()} | undefined.
bootstrap_ratio(As, Bs, Opts0) ->
    #{resamples := R, seed := Seed, alpha := Alpha} = options(Opts0),
    TA = list_to_tuple(lists:sort(As)),
    TB = list_to_tuple(lists:sort(Bs)),
    case {median(As), median(Bs)} of
        {_, MB} when MB == 0 -> undefined;
        {MA, MB} ->
            {Ratios, _} = repeat(R, rand:seed_s(exsss, Seed),
                                 fun(S0) ->
                                         {A, S1} = resampled_median(TA, S0),
                                         {B, S2} = resampled_median(TB, S1),
                                         {safe_div(A, B), S2}
                                 end),
            Ratio = MA / MB,
            {Low, High} = interval(lists:sort(Ratios), Alpha),
            {Ratio, min(Low, Ratio), max(High, Ratio)}
    end.

%% @doc The two-sided Mann–Whitney U test of two non-empty samples: U of the first sample, and
%% the p-value of the normal approximation with tie and continuity correction.
-spec mann_whitney([number(), ...], [number(), ...]) -> #{u := float(), p := float()}.
mann_whitney(As, Bs) ->
    NA = length(As),
    NB = length(Bs),
    N = NA + NB,
    Ranked = ranks(lists:sort([{float(X), a} || X <- As] ++ [{float(X), b} || X <- Bs])),
    RankA = lists:sum([R || {R, a, _} <- Ranked]),
    U = RankA - NA * (NA + 1) / 2,
    Ties = lists:sum([T * T * T - T || T <- tie_sizes(Ranked)]),
    Var = NA * NB / 12 * ((N + 1) - Ties / (N * (N - 1))),
    P = case Var =< 0 of
            true -> 1.0;
            false ->
                Z = max(0.0, abs(U - NA * NB / 2) - 0.5) / math:sqrt(Var),
                min(1.0, math:erfc(Z / math:sqrt(2)))
        end,
    #{u => U, p => P}.

%% @doc Summary rows of measurement rows (maps with binary fields, as `measurements.csv' has
%% them), with default options.
-spec report_stats([measurement()]) -> [row()].
report_stats(Rows) -> report_stats(Rows, #{}).

%% @doc Summary rows, one per benchmark, phase, args and environment, in key order. Speedup is
%% the base's median over this median, the base being the smallest scheduler and node count
%% measured for the same benchmark, phase, args, erl and flags (1 and 1 in a usual run);
%% efficiency is speedup over the ratio of scheduler x node counts.
-spec report_stats([measurement()], options()) -> [row()].
report_stats(Rows, Opts) ->
    Groups = beamscale_stats_launches:group(Rows),
    [row(Key, Launches, Groups, Opts) || {Key, Launches} <- lists:sort(maps:to_list(Groups))].

%% @doc Seconds per key of measurement rows.
-spec group([measurement()]) -> #{key() => [float()]}.
group(Rows) -> beamscale_stats_base:group(Rows).

%%% Internals

%% The interval of the median and of the speedup are the hierarchical bootstrap's: over
%% launches, then iterations (with one launch, the ordinary bootstrap's).
row({B, P, A, O, E, S, N} = Key, Launches, Groups, Opts) ->
    {_, Low, High} = beamscale_stats_launches:median_ci(Launches, Opts),
    Summary = (describe(lists:append(Launches), Opts))#{ci95_low := Low, ci95_high := High},
    Base = base(Key, Groups),
    Speedup = case maps:find(Base, Groups) of
                  {ok, BaseLaunches} ->
                      case beamscale_stats_launches:ratio(BaseLaunches, Launches, Opts) of
                          {Sp, Lo, Hi, _P} -> {Sp, Lo, Hi};
                          undefined -> undefined
                      end;
                  error -> undefined
              end,
    {_, _, _, _, _, BS, BN} = Base,
    Scale = (S * N) / (BS * BN),
    maps:merge(Summary#{benchmark => B, phase => P, args => A, otp => O, erl_args => E,
                        schedulers => S, nodes => N},
               gains(Speedup, Scale)).

gains(undefined, _) ->
    #{speedup => null, speedup_low => null, speedup_high => null, efficiency => null,
      efficiency_low => null, efficiency_high => null};
gains({Sp, Lo, Hi}, Scale) ->
    #{speedup => Sp, speedup_low => Lo, speedup_high => Hi, efficiency => Sp / Scale,
      efficiency_low => Lo / Scale, efficiency_high => Hi / Scale}.

base({B, P, A, O, E, _, _}, Groups) ->
    Envs = [{S, N} || {B1, P1, A1, O1, E1, S, N} <- maps:keys(Groups),
                      {B1, P1, A1, O1, E1} =:= {B, P, A, O, E}],
    {B, P, A, O, E, lists:min([S || {S, _} <- Envs]), lists:min([N || {_, N} <- Envs])}.

stddev([_], _Mean) -> 0.0;
stddev(Xs, Mean) ->
    math:sqrt(lists:sum([(X - Mean) * (X - Mean) || X <- Xs]) / (length(Xs) - 1)).

%% The percentile interval of resampled medians; it is widened to hold the sample median, which
%% a finite number of resamples could in rare cases leave just outside.
median_ci([X], _Median, _Opts) -> {X, X};
median_ci(Sorted, Median, #{resamples := R, seed := Seed, alpha := Alpha}) ->
    T = list_to_tuple(Sorted),
    {Medians, _} = repeat(R, rand:seed_s(exsss, Seed), fun(S) -> resampled_median(T, S) end),
    {Low, High} = interval(lists:sort(Medians), Alpha),
    {min(Low, Median), max(High, Median)}.

resampled_median(T, S0) ->
    N = tuple_size(T),
    {Idx, S} = draw(N, N, S0, []),
    {median([element(I, T) || I <- Idx]), S}.


safe_div(_A, B) when B == 0 -> 0.0;
safe_div(A, B) -> A / B.

%% Average ranks of sorted `{Value, Tag}' pairs, as `{Rank, Tag, Value}'.
ranks(Sorted) -> ranks(Sorted, 1, []).

ranks([], _I, Acc) -> lists:reverse(Acc);
ranks([{V, _} | _] = L, I, Acc) ->
    {Same, Rest} = lists:splitwith(fun({W, _}) -> W == V end, L),
    K = length(Same),
    Rank = I + (K - 1) / 2,
    ranks(Rest, I + K, lists:reverse([{Rank, Tag, V} || {_, Tag} <- Same], Acc)).

tie_sizes(Ranked) ->
    Counts = lists:foldl(fun({_, _, V}, M) -> maps:update_with(V, fun(C) -> C + 1 end, 1, M) end,
                         #{}, Ranked),
    [C || C <- maps:values(Counts), C > 1].
