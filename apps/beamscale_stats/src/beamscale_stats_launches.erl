%% @doc The hierarchical bootstrap, pure: samples come in launches (one fresh emulator each), and
%% a resample draws launches with replacement, then iterations with replacement within each
%% drawn launch. The variation between launches, often the largest on a shared host, then
%% widens the interval, and the iterations of one launch are never taken for independent
%% measurements of the code.
%%
%% With one launch no launch is drawn, so the random stream, and every figure, is exactly that of
%% the ordinary bootstrap of `beamscale_stats' (same seed, same sorted samples). Launches are
%% sorted (each, then among them), so the same numbers in any order give the same figures.
-module(beamscale_stats_launches).

-import(beamscale_stats_base, [draw/4, repeat/3, interval/2]).
-export([median_ci/2, ratio/3, group/1]).
-export_type([launches/0]).

%% The samples of one key, launch by launch; no launch is empty.
-type launches() :: [[number(), ...], ...].

%% @doc The median of all samples and its hierarchical bootstrap 95 % interval (widened to hold
%% the median, as `beamscale_stats:describe/2' does).
-spec median_ci(launches(), beamscale_stats:options()) -> {float(), float(), float()}.
median_ci(Launches0, Opts0) ->
    #{resamples := R, seed := Seed, alpha := Alpha} = beamscale_stats_base:options(Opts0),
    Launches = prepare(Launches0),
    Median = beamscale_stats_base:median(pool(Launches)),
    case pool(Launches) of
        [X] -> {Median, float(X), float(X)};
        _ ->
            {Medians, _} = repeat(R, rand:seed_s(exsss, Seed),
                                  fun(S) -> resampled_median(Launches, S) end),
            {Low, High} = interval(lists:sort(Medians), Alpha),
            {Median, min(Low, Median), max(High, Median)}
    end.

%% @doc `median(As) / median(Bs)' (pooled over launches), its hierarchical bootstrap 95 %
%% interval (both sides resampled, A first) and the two-sided bootstrap p-value of "the ratio
%% is 1": twice the smaller share of resampled ratios on either side of 1. `undefined' when
%% the median of `Bs' is zero.
-spec ratio(launches(), launches(), beamscale_stats:options()) ->
    {float(), float(), float(), float()} | undefined.
ratio(As0, Bs0, Opts0) ->
    #{resamples := R, seed := Seed, alpha := Alpha} = beamscale_stats_base:options(Opts0),
    As = prepare(As0),
    Bs = prepare(Bs0),
    case {beamscale_stats_base:median(pool(As)), beamscale_stats_base:median(pool(Bs))} of
        {_, MB} when MB == 0 -> undefined;
        {MA, MB} ->
            {Ratios, _} = repeat(R, rand:seed_s(exsss, Seed),
                                 fun(S0) ->
                                         {A, S1} = resampled_median(As, S0),
                                         {B, S2} = resampled_median(Bs, S1),
                                         {safe_div(A, B), S2}
                                 end),
            Ratio = MA / MB,
            Sorted = lists:sort(Ratios),
            {Low, High} = interval(Sorted, Alpha),
            {Ratio, min(Low, Ratio), max(High, Ratio), p_value(Sorted)}
    end.

%% @doc The seconds of measurement rows per key, launch by launch. A row without a `launch'
%% field (a run directory from before launches) belongs to launch 1.
-spec group([beamscale_stats:measurement()]) -> #{beamscale_stats:key() => launches()}.
group(Rows) ->
    ByLaunch = lists:foldl(
                 fun(Row, Acc) ->
                         [{Key, Seconds}] = maps:to_list(beamscale_stats_base:group([Row])),
                         K = {Key, launch(Row)},
                         maps:update_with(K, fun(L) -> Seconds ++ L end, Seconds, Acc)
                 end, #{}, Rows),
    maps:fold(fun({Key, _L}, Seconds, Acc) ->
                      maps:update_with(Key, fun(Ls) -> [Seconds | Ls] end, [Seconds], Acc)
              end, #{}, ByLaunch).

%%% Internals

launch(#{launch := L}) when is_integer(L) -> L;
launch(#{launch := <<_/binary>> = L}) -> binary_to_integer(L);
launch(#{}) -> 1.

prepare(Launches) ->
    list_to_tuple(lists:sort([list_to_tuple(lists:sort([float(X) || X <- L]))
                              || L <- Launches])).

pool(T) -> lists:append([tuple_to_list(L) || L <- tuple_to_list(T)]).

%% One launch: no launch is drawn (the ordinary bootstrap). Else K launches with replacement,
%% then as many iterations as each drawn launch has, with replacement within it.
resampled_median({Only}, S0) ->
    {Idx, S} = draw(tuple_size(Only), tuple_size(Only), S0, []),
    {beamscale_stats_base:median([element(I, Only) || I <- Idx]), S};
resampled_median(Launches, S0) ->
    K = tuple_size(Launches),
    {Picked, S1} = draw(K, K, S0, []),
    {Samples, S} = lists:foldl(
                     fun(J, {Acc, St}) ->
                             L = element(J, Launches),
                             {Idx, St1} = draw(tuple_size(L), tuple_size(L), St, []),
                             {[element(I, L) || I <- Idx] ++ Acc, St1}
                     end, {[], S1}, Picked),
    {beamscale_stats_base:median(Samples), S}.


%% Never 0: no resampled ratio across 1 says only that p is below what N resamples can show,
%% so it is given as 1 / N (read: p < 1 / N).
p_value(Sorted) ->
    N = length(Sorted),
    Below = length([x || X <- Sorted, X =< 1.0]),
    Above = length([x || X <- Sorted, X >= 1.0]),
    min(1.0, max(1 / N, 2 * min(Below, Above) / N)).

safe_div(_A, B) when B == 0 -> 0.0;
safe_div(A, B) -> A / B.
