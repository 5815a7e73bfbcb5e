%% @doc The search of `beamscale saturate' for the highest arrival rate a target holds, as a
%% pure state machine: `next/1' says which rate to run (or that the search is over), `record/3'
%% takes whether that rate was held. Rates rise geometrically (`start', `start * factor', ...)
%% until one is not held, then the bracket between the last held and the first not held is
%% halved until its width is within `tolerance' of its low end. The edge is then confirmed by
%% running both its ends once more: if the low end is not held the second time, the search goes
%% on below it; if the high end is held the second time, above it (near the capacity a short
%% level's verdict is noisy, either way).
%%
%% For a hold function that is monotone (held below some capacity C, not above) the search ends
%% with `low =< C < high' and `(high - low) / low =< tolerance' (checked by PropEr).
-module(beamscale_stats_search).

-export([new/1, defaults/0, next/1, record/3, bracket/1, replay/2, phase/1, limited_at/2]).
-export_type([opts/0, state/0, outcome/0]).

%% start: the first rate (/s); factor: the climb's ratio between rates (> 1); tolerance: the
%% bracket's width relative to its low end at which bisection stops; max_rate: the climb stops
%% there (held: the capacity is above it).
-type opts() :: #{start => number(), factor => number(), tolerance => number(),
                  max_rate => number()}.
-opaque state() :: #{opts := map(), phase := climb | bisect | confirm | confirm_high | done,
                     rate := float(), low := float() | none, high := float() | none,
                     held := [float()], missed := [float()], why := atom()}.
%% converged: the bracket is narrow; max_rate: held up to the highest rate allowed;
%% below_start: not even the first rate was held.
-type outcome() :: #{low := float() | none, high := float() | none,
                     why := converged | max_rate | below_start | budget}.

%% Rates read back from levels.csv may be rounded (to 3 decimals): within this (absolute and
%% relative) they are the same.
-define(SAME, 1.0e-3).

%% @doc The options' defaults.
-spec defaults() -> #{start := float(), factor := float(), tolerance := float(),
                      max_rate := float()}.
defaults() -> #{start => 10.0, factor => 2.0, tolerance => 0.05, max_rate => 100000.0}.

%% @doc A search with `Opts' over `defaults/0'.
-spec new(opts()) -> state().
new(Opts0) ->
    Opts = maps:merge(defaults(), Opts0),
    #{opts => Opts, phase => climb, rate => float(maps:get(start, Opts)), low => none,
      high => none, held => [], missed => [], why => converged}.

%% @doc The next rate to run, or the outcome.
-spec next(state()) -> {run, float()} | {done, outcome()}.
next(#{phase := done, low := L, high := H, why := Why}) ->
    {done, #{low => L, high => H, why => Why}};
next(#{rate := R}) -> {run, R}.

%% @doc Where the search is: rates still climbing, halving the bracket, confirming its low end.
-spec phase(state()) -> climb | bisect | confirm | confirm_high | done.
phase(#{phase := P}) -> P.

%% @doc The bracket so far (for a search stopped early).
-spec bracket(state()) -> #{low := float() | none, high := float() | none}.
bracket(#{low := L, high := H}) -> #{low => L, high => H}.

%% @doc Whether rate `Rate' (the one `next/1' gave) was held.
-spec record(state(), float(), boolean()) -> state().
record(#{phase := climb} = St, R, true) -> climb(held(St, R), R);
record(St, R, false) -> not_held(missed(St, R), R);
record(#{phase := bisect} = St, R, true) -> bisect(held(St, R));
record(#{phase := confirm, high := H} = St, _R, true) -> St#{phase := confirm_high, rate := H};
record(#{phase := confirm_high, missed := Missed} = St, R, true) ->
    %% The high end held the second time: the edge is above it.
    case [M || M <- Missed, M > R] of
        %% Nothing above was missed: the edge is near, so a small step first, then the climb.
        [] -> near(held(St, R), R);
        Above -> bisect((held(St, R))#{high := lists:min(Above)})
    end.

near(#{opts := #{tolerance := Tol, max_rate := Max}} = St, R) when R < Max ->
    St#{phase := climb, high := none, rate := min(R * (1 + 2 * Tol), float(Max))};
near(St, R) -> climb(St, R).

climb(#{opts := #{factor := F, max_rate := Max}} = St, R) ->
    case R >= Max of
        true -> St#{phase := done, why := max_rate};
        false -> St#{phase := climb, rate := min(R * F, float(Max))}
    end.

not_held(#{phase := climb, low := none} = St, R) ->
    St#{phase := done, high := R, why := below_start};
not_held(#{phase := P} = St, R) when P =:= climb; P =:= bisect -> bisect(St#{high := R});
not_held(#{phase := confirm_high} = St, _R) -> St#{phase := done, why := converged};
not_held(#{phase := confirm, held := Held} = St, R) ->
    %% The low end failed on its second run: the highest rate held below it is the new low end.
    case [H || H <- Held, H < R] of
        [] -> St#{phase := done, low := none, high := R, why := below_start};
        Below -> bisect(St#{low := lists:max(Below), high := R, held := Below})
    end.

%% @doc The search after the levels of an earlier run (`{Rate, Held}' in the order they ran), for
%% a rerun that continues it; `{mismatch, Expected, Rate}' when a level is not the one this
%% search would have run there (the earlier run had other options).
-spec replay(state(), [{number(), boolean()}]) ->
    {ok, state()} | {error, {mismatch, float() | done, number()}}.
replay(St, []) -> {ok, St};
replay(St, [{Rate, Held} | Rest]) ->
    case next(St) of
        {run, R} ->
            case same(R, Rate) of
                true -> replay(record(St, R, Held), Rest);
                false -> {error, {mismatch, R, Rate}}
            end;
        {done, _} -> {error, {mismatch, done, Rate}}
    end.

%% Whether a rate read back from levels.csv is `Rate'.
same(Rate, Read) -> abs(Rate - Read) =< ?SAME + ?SAME * Rate.

%% @doc What limited the capacity: `Why' of the level not held that bounds it from above (the
%% outcome's `high'; its last run when it ran twice), from `{Rate, Held, Why}' in the order the
%% levels ran. Not the first level not held: the climb may overshoot the edge by its factor,
%% and there every term tends to break (beside CPU hogs a stalling target broke `achieved' and
%% `p99' at 1.5 times its capacity, only `p99' at its edge). `none' when no level was not held.
-spec limited_at(number() | none, [{number() | null, boolean(), T}]) -> T | none.
limited_at(High, Levels) ->
    NotHeld = [{Rate, Why} || {Rate, false, Why} <- Levels],
    case [Why || {Rate, Why} <- NotHeld, is_number(Rate), is_number(High), same(High, Rate)] of
        [_ | _] = AtHigh -> lists:last(AtHigh);
        [] when NotHeld =:= [] -> none;
        %% Levels from another search (a rerun with other options): the first one not held.
        [] -> element(2, hd(NotHeld))
    end.

held(#{held := Held} = St, R) -> St#{low := R, held := [R | Held]}.

missed(#{missed := Missed} = St, R) -> St#{missed := [R | Missed]}.

bisect(#{low := L, high := H, opts := #{tolerance := Tol}} = St) ->
    case (H - L) / L =< Tol of
        true -> St#{phase := confirm, rate := L};
        false -> St#{phase := bisect, rate := (L + H) / 2}
    end.
