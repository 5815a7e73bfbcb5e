%% @doc Student's t distribution, pure: the two-sided p of a t statistic and the quantile an
%% interval needs. `beamscale_stats_compare' uses it over launches: with a few launches a side
%% (fresh emulators), the launch is the unit that repeats, and a bootstrap drawing 3 launches
%% with replacement sees too little of their spread (its intervals are too narrow, its p can
%% come out 0). Numerical Recipes' incomplete beta (continued fraction, Lentz) and Lanczos'
%% log-gamma; exact to about 1e-10, far below what a p-value is read for.
-module(beamscale_stats_t).

-export([p_two_sided/2, quantile/2]).

-define(EPS, 1.0e-12).
-define(MAX_TERMS, 300).

%% @doc The two-sided p of statistic `T' with `Df' degrees of freedom: P(|X| >= |T|).
-spec p_two_sided(number(), number()) -> float().
p_two_sided(T, Df) when Df > 0 ->
    X = Df / (Df + T * T),
    min(1.0, max(0.0, incomplete_beta(X, Df / 2, 0.5))).

%% @doc The quantile of probability `P' (0.5 < P < 1) with `Df' degrees of freedom: the t that
%% `P' of the distribution lies below (0.975 for a 95 % interval), found by bisection.
-spec quantile(float(), number()) -> float().
quantile(P, Df) when P > 0.5, P < 1, Df > 0 ->
    Tail = 2 * (1 - P),
    bisect(fun(T) -> p_two_sided(T, Df) - Tail end, 0.0, 1.0e3, 100).

%%% Internals

%% p_two_sided decreases in T: the root lies where it crosses the wanted tail.
bisect(_F, Lo, Hi, 0) -> (Lo + Hi) / 2;
bisect(F, Lo, Hi, N) ->
    Mid = (Lo + Hi) / 2,
    case F(Mid) > 0 of
        true -> bisect(F, Mid, Hi, N - 1);
        false -> bisect(F, Lo, Mid, N - 1)
    end.

%% The regularised incomplete beta I_x(a, b).
incomplete_beta(X, _A, _B) when X =< 0 -> 0.0;
incomplete_beta(X, _A, _B) when X >= 1 -> 1.0;
incomplete_beta(X, A, B) ->
    Front = math:exp(lgamma(A + B) - lgamma(A) - lgamma(B) + A * math:log(X)
                     + B * math:log(1 - X)),
    case X < (A + 1) / (A + B + 2) of
        true -> Front * fraction(X, A, B) / A;
        false -> 1 - Front * fraction(1 - X, B, A) / B
    end.

fraction(X, A, B) ->
    D0 = nonzero(1 - (A + B) * X / (A + 1)),
    lentz(X, A, B, 1, 1.0, 1 / D0, 1 / D0).

lentz(_X, _A, _B, M, _C, _D, H) when M > ?MAX_TERMS -> H;
lentz(X, A, B, M, C0, D0, H0) ->
    M2 = 2 * M,
    Even = M * (B - M) * X / ((A + M2 - 1) * (A + M2)),
    {C1, D1, H1} = step(Even, C0, D0, H0),
    Odd = -(A + M) * (A + B + M) * X / ((A + M2) * (A + M2 + 1)),
    {C2, D2, H2} = step(Odd, C1, D1, H1),
    case abs(C2 * D2 - 1) < ?EPS of
        true -> H2;
        false -> lentz(X, A, B, M + 1, C2, D2, H2)
    end.

step(Coef, C0, D0, H0) ->
    D = 1 / nonzero(1 + Coef * D0),
    C = nonzero(1 + Coef / C0),
    {C, D, H0 * C * D}.

nonzero(V) when abs(V) < 1.0e-300 -> 1.0e-300;
nonzero(V) -> V.

%% Lanczos' approximation (g = 7, nine coefficients).
lgamma(Z) when Z < 0.5 ->
    math:log(math:pi() / abs(math:sin(math:pi() * Z))) - lgamma(1 - Z);
lgamma(Z0) ->
    Z = Z0 - 1,
    [C0 | Cs] = [0.99999999999980993, 676.5203681218851, -1259.1392167224028,
                 771.32342877765313, -176.61502916214059, 12.507343278686905,
                 -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7],
    {Sum, _} = lists:foldl(fun(C, {S, I}) -> {S + C / (Z + I), I + 1} end, {C0, 1}, Cs),
    T = Z + 7.5,
    0.5 * math:log(2 * math:pi()) + (Z + 0.5) * math:log(T) - T + math:log(Sum).
