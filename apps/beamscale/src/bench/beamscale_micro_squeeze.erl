%% @doc A squeeze over launches (pure): each level's calls per second, launch by launch, read as
%% a median with its 95 % interval (over the launches' medians; with one launch, over its
%% samples), and the peak from those intervals (`beamscale_stats_micro:peak/2'): a peak only
%% when the figures show one, else `null' and `clear' false.
-module(beamscale_micro_squeeze).

-export([row/3]).

%% @doc The row of a squeeze from its first launch's row (`steps' with `rates') and the other
%% launches' `[{Callers, Rates}]' of the same levels.
-spec row(map(), [[{pos_integer(), [float()]}]], float()) -> map().
row(#{steps := Steps} = First, Others, Tolerance) ->
    Levels = [{C, [Rs | [R || Other <- Others, {C1, R} <- Other, C1 =:= C]]}
              || #{callers := C, rates := Rs} <- Steps],
    Described = [{C, interval(Ls)} || {C, Ls} <- Levels],
    Peak = beamscale_stats_micro:peak(Described, Tolerance),
    NewSteps = [#{callers => C, rate => M, rate_low => Lo, rate_high => Hi,
                  rates => lists:append(Ls), launch_rates => [median(L) || L <- Ls]}
                || {{C, {M, Lo, Hi}}, {C, Ls}} <- lists:zip(Described, Levels)],
    maps:merge(First#{steps => NewSteps, launches => 1 + length(Others)}, peak(Peak)).

peak({peak, C, {M, Lo, Hi}}) ->
    #{peak => C, clear => true, rate => M, rate_low => Lo, rate_high => Hi};
peak({no_clear_peak, C}) -> #{peak => null, clear => false, near => C, rate => null}.

interval([Only]) ->
    #{median := M, ci95_low := Lo, ci95_high := Hi} = beamscale_stats:describe(Only),
    {M, Lo, Hi};
interval(Launches) ->
    #{median := M, low := Lo, high := Hi} =
        beamscale_stats_floor:over_launches([median(L) || L <- Launches]),
    {M, Lo, Hi}.

median(L) -> beamscale_stats:median(L).
