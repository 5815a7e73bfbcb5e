%% @doc Change points in a series (pure, deterministic): E-Divisive means (Matteson and James
%% 2014, as MongoDB used it: Daly et al., ICPE 2020) with the stopping rule of Hunter (now
%% Apache Otava): instead of a permutation test, a candidate split is kept when Student's t-test
%% between the segments on either side has p below `alpha'. The same series always gives the
%% same change points.
%%
%% A round: in every segment between the change points found so far, the split that maximises
%% the energy statistic Q is the candidate; each is tested between its segment's ends; the one
%% with the smallest p (if below `alpha') is added; repeated until no candidate is significant.
%% Then each change point is tested again between its neighbours (a point added early may lose
%% its significance once later ones split its segments) and the weakest insignificant one is
%% dropped, until all hold. A point is a number, `{Value, Low, High}' (an interval, not used to
%% detect) or `#{value := V}' / `#{replicates := [V]}' (their mean is the point's value).
-module(beamscale_stats_changepoint).

-export([detect/1, detect/2, defaults/0, compare/2, ttest/2, q_split/2]).
-export_type([point/0, options/0, change/0]).

-type point() :: number() | {number(), number(), number()}
               | #{value => number(), replicates => [number()]}.
%% alpha: the t-test's significance level; min_size: fewest points a segment may hold.
-type options() :: #{alpha => float(), min_size => pos_integer()}.
%% A change at `index' (0-based): the points from there on differ from those before.
%% before/after: the means of the segments either side; ratio after/before with a 95 % interval.
-type change() :: #{index := non_neg_integer(), p := float(), before := float(),
                    'after' := float(), ratio := float() | null, ratio_low := float() | null,
                    ratio_high := float() | null}.

%% @doc The defaults: Hunter's p of 0.001 and segments of at least 2 points.
-spec defaults() -> #{alpha := float(), min_size := pos_integer()}.
defaults() -> #{alpha => 0.001, min_size => 2}.

%% @doc The change points of `Points' with the default options.
-spec detect([point()]) -> [change()].
detect(Points) -> detect(Points, #{}).

%% @doc The change points of `Points', by index.
-spec detect([point()], options()) -> [change()].
detect(Points, Opts0) ->
    #{alpha := Alpha, min_size := Min} = maps:merge(defaults(), Opts0),
    Xs = list_to_tuple([value(P) || P <- Points]),
    Cps = prune(Xs, grow(Xs, [], Alpha, Min), Alpha),
    Bounds = [0 | Cps] ++ [tuple_size(Xs)],
    [change(Xs, S, C, E) || {S, C, E} <- triples(Bounds)].

%% @doc Two segments compared as a change between them: the t-test's p, their means and the
%% ratio after / before with its 95 % interval.
-spec compare([number()], [number()]) -> #{p := float(), before := float(), 'after' := float(),
                                          ratio := float() | null, ratio_low := float() | null,
                                          ratio_high := float() | null}.
compare(Before, After) ->
    {R, Lo, Hi} = ratio(Before, After),
    #{p => ttest(Before, After), before => mean(Before), 'after' => mean(After), ratio => R,
      ratio_low => Lo, ratio_high => Hi}.

%% @doc Student's t-test (pooled variance) of two samples: the two-sided p. Both constant: 0
%% when their means differ, else 1.
-spec ttest([number()], [number()]) -> float().
ttest(A, B) when length(A) + length(B) < 3 -> 1.0;
ttest(A, B) ->
    {Na, Nb} = {length(A), length(B)},
    {Ma, Mb} = {mean(A), mean(B)},
    Ss = sq(A, Ma) + sq(B, Mb),
    Df = Na + Nb - 2,
    Se = math:sqrt(Ss / Df * (1 / Na + 1 / Nb)),
    if
        Se == 0, Ma == Mb -> 1.0;
        Se == 0 -> 0.0;
        true -> beamscale_stats_t:p_two_sided((Mb - Ma) / Se, Df)
    end.

%% @doc The best split of `Xs' (each side at least `Min' long): `{Index, Q}', or `none'.
-spec q_split([number()], pos_integer()) -> {pos_integer(), float()} | none.
q_split(Xs, Min) ->
    T = list_to_tuple(Xs),
    best_split(T, 0, tuple_size(T), Min).

%%% Internals

value(X) when is_number(X) -> float(X);
value({X, _, _}) when is_number(X) -> float(X);
value(#{replicates := [_ | _] = Rs}) -> mean(Rs);
value(#{value := X}) when is_number(X) -> float(X).

%% Add the most significant candidate of all segments, until none is significant.
grow(Xs, Cps, Alpha, Min) ->
    Bounds = [0 | Cps] ++ [tuple_size(Xs)],
    Cands = [{p(Xs, S, Tau, E), Tau}
             || {S, E} <- lists:zip(lists:droplast(Bounds), tl(Bounds)),
                {Tau, _Q} <- [best_split(Xs, S, E, Min)]],
    case lists:sort([C || {P, _} = C <- Cands, P < Alpha]) of
        [] -> Cps;
        [{_, Tau} | _] -> grow(Xs, lists:sort([Tau | Cps]), Alpha, Min)
    end.

%% Drop the weakest change point that no longer holds between its neighbours, until all hold.
prune(_Xs, [], _Alpha) -> [];
prune(Xs, Cps, Alpha) ->
    Bounds = [0 | Cps] ++ [tuple_size(Xs)],
    Weak = lists:sort([{-P, C} || {S, C, E} <- triples(Bounds), P <- [p(Xs, S, C, E)],
                                  P >= Alpha]),
    case Weak of
        [] -> Cps;
        [{_, C} | _] -> prune(Xs, lists:delete(C, Cps), Alpha)
    end.

triples([A, B, C | Rest]) -> [{A, B, C} | triples([B, C | Rest])];
triples(_) -> [].

p(Xs, S, Tau, E) -> ttest(slice(Xs, S, Tau), slice(Xs, Tau, E)).

%% The points S..E-1 of the tuple.
slice(Xs, S, E) -> [element(I + 1, Xs) || I <- lists:seq(S, E - 1)].

%% The Tau in [S + Min, E - Min] maximising Q over the segment S..E-1, in O(n^2): the sums of
%% distances within the left part grow by one point at a time, the right part's likewise from
%% the end, and the cross sum is what remains of the total. Ties: the earliest Tau.
best_split(_Xs, S, E, Min) when E - S < 2 * Min -> none;
best_split(Xs, S, E, Min) ->
    Seg = list_to_tuple(slice(Xs, S, E)),
    M = tuple_size(Seg),
    Left = prefix_within(Seg, M),
    Right = suffix_within(Seg, M),
    Total = element(M + 1, Left),
    Qs = [{q(A, M - A, Total, element(A + 1, Left), element(A + 1, Right)), A}
          || A <- lists:seq(Min, M - Min)],
    {Q, A} = lists:foldl(fun({Q, A}, {BQ, _}) when Q > BQ -> {Q, A};
                            (_, Best) -> Best
                         end, hd(Qs), tl(Qs)),
    {S + A, Q}.

%% Element A+1: the sum of |xi - xj| over i < j < A (the first A points).
prefix_within(Seg, M) ->
    {Acc, _} = lists:foldl(fun(T, {[W | _] = Ws, _}) ->
                                   X = element(T, Seg),
                                   {[W + lists:sum([abs(X - element(I, Seg))
                                                    || I <- lists:seq(1, T - 1)]) | Ws], ok}
                           end, {[0.0], ok}, lists:seq(1, M)),
    list_to_tuple(lists:reverse(Acc)).

%% Element A+1: the sum of |xi - xj| over A =< i < j (the points from A on).
suffix_within(Seg, M) ->
    {Acc, _} = lists:foldl(fun(T, {[W | _] = Ws, _}) ->
                                   X = element(T, Seg),
                                   {[W + lists:sum([abs(X - element(J, Seg))
                                                    || J <- lists:seq(T + 1, M)]) | Ws], ok}
                           end, {[0.0], ok}, lists:seq(M, 1, -1)),
    list_to_tuple(Acc).

%% Q = a*b/(a+b) * (2 * mean cross distance - mean within left - mean within right).
q(A, B, Total, WL, WR) ->
    Cross = Total - WL - WR,
    E = 2 * Cross / (A * B) - within(WL, A) - within(WR, B),
    A * B / (A + B) * E.

within(_W, 1) -> 0.0;
within(W, N) -> W / (N * (N - 1) / 2).

change(Xs, S, C, E) ->
    (compare(slice(Xs, S, C), slice(Xs, C, E)))#{index => C}.

%% After / before with a 95 % interval by the delta method on the segments' standard errors
%% (pooled variance, as the test), t-quantile of the test's degrees of freedom.
ratio(Before, After) ->
    {Mb, Ma} = {mean(Before), mean(After)},
    {Nb, Na} = {length(Before), length(After)},
    Df = Nb + Na - 2,
    if
        Mb == 0 -> {null, null, null};
        Df < 1 -> {Ma / Mb, null, null};
        true ->
            Var = (sq(Before, Mb) + sq(After, Ma)) / Df,
            R = Ma / Mb,
            Rel = math:sqrt(Var / Na / (Ma * Ma + 1.0e-300) + Var / Nb / (Mb * Mb)),
            Half = beamscale_stats_t:quantile(0.975, Df) * R * Rel,
            {R, R - Half, R + Half}
    end.

mean(L) -> lists:sum(L) / length(L).

sq(L, M) -> lists:sum([(X - M) * (X - M) || X <- L]).
