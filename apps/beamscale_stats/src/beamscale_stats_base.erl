%% @doc The primitives the other statistics modules share, pure: options and their defaults,
%% the median and quantiles, and measurement rows grouped by key. Kept apart so that
%% `beamscale_stats' and `beamscale_stats_launches' both build on them without calling each
%% other.
-module(beamscale_stats_base).

-export([options/1, median/1, percentile/2, group/1, draw/4, repeat/3, interval/2]).

%% Resamples of every bootstrap: the 2.5 % and 97.5 % quantiles move by well under 1 % of the
%% interval between reruns with other seeds.
-define(RESAMPLES, 2000).
%% A fixed seed: the same numbers give the same report.
-define(SEED, {16#BEA, 16#5CA, 16#1E}).
-define(NOISY_CV, 0.10).
-define(ALPHA, 0.05).

%% @doc Options with defaults filled in.
-spec options(beamscale_stats:options()) ->
    #{resamples := pos_integer(), seed := tuple(), noisy_cv := float(), alpha := float()}.
options(Opts) ->
    maps:merge(#{resamples => ?RESAMPLES, seed => ?SEED, noisy_cv => ?NOISY_CV,
                 alpha => ?ALPHA}, Opts).

%% @doc The median of a non-empty list.
-spec median([number(), ...]) -> float().
median(Samples) -> percentile(lists:sort(Samples), 0.5).

%% @doc The `P' quantile (0..1) of a sorted non-empty list, interpolating between neighbours.
-spec percentile([number(), ...], float()) -> float().
percentile(Sorted, P) ->
    T = list_to_tuple(Sorted),
    Pos = P * (tuple_size(T) - 1),
    I = trunc(Pos),
    Lo = element(I + 1, T),
    Hi = element(min(I + 2, tuple_size(T)), T),
    float(Lo + (Hi - Lo) * (Pos - I)).

%% @doc Seconds per key of measurement rows.
-spec group([beamscale_stats:measurement()]) -> #{beamscale_stats:key() => [float()]}.
group(Rows) ->
    lists:foldl(fun(R, Acc) ->
                        maps:update_with(key(R), fun(L) -> [seconds(R) | L] end,
                                         [seconds(R)], Acc)
                end, #{}, Rows).

%%% Internals

key(#{benchmark := B, phase := P, args := A, otp := O, erl_args := E, schedulers := S,
      nodes := N}) ->
    {B, P, A, O, E, to_int(S), to_int(N)}.

seconds(#{seconds := S}) when is_number(S) -> float(S);
seconds(#{seconds := S}) -> to_float(S).

to_int(I) when is_integer(I) -> I;
to_int(B) -> binary_to_integer(B).

to_float(B) ->
    try binary_to_float(B)
    catch error:badarg -> float(binary_to_integer(B))
    end.

%% @doc `K' indices drawn with replacement from 1..`N' with the random state `S0' (a bootstrap
%% resample), and the state after.
-spec draw(non_neg_integer(), pos_integer(), rand:state(), [pos_integer()]) ->
    {[pos_integer()], rand:state()}.
draw(0, _N, S, Acc) -> {Acc, S};
draw(K, N, S0, Acc) ->
    {I, S} = rand:uniform_s(N, S0),
    draw(K - 1, N, S, [I | Acc]).

%% @doc `F' run `R' times, threading the random state: the values (last first) and the state.
-spec repeat(non_neg_integer(), rand:state(), fun((rand:state()) -> {T, rand:state()})) ->
    {[T], rand:state()}.
repeat(R, S0, F) ->
    lists:foldl(fun(_, {Acc, S}) -> {V, S1} = F(S), {[V | Acc], S1} end, {[], S0},
                lists:seq(1, R)).

%% @doc The two-sided `1 - Alpha' percentile interval of sorted values.
-spec interval([number()], float()) -> {number(), number()}.
interval(Sorted, Alpha) ->
    {percentile(Sorted, Alpha / 2), percentile(Sorted, 1 - Alpha / 2)}.
