%% @doc The closed-mode search of `beamscale saturate --closed', as a pure state machine like
%% `beamscale_stats_search': N users each running the session in a loop with no think time, N
%% rising geometrically (`start', then `N * factor' rounded, at least N + 1), each level's
%% throughput recorded, until `patience' levels in a row gave no more than `gain' above the best
%% so far (the throughput peaked), a level broke the objective's error term, or `max_users'
%% ran. The outcome is the best level: the most throughput and the concurrency that gave it.
-module(beamscale_stats_closed).

-export([new/1, defaults/0, next/1, record/4, phase/1, replay/2, stop/1]).
-export_type([opts/0, state/0, outcome/0]).

-type opts() :: #{start => pos_integer(), factor => number(), gain => number(),
                  patience => pos_integer(), max_users => pos_integer()}.
-opaque state() :: #{opts := map(), users := pos_integer(), best := {pos_integer(), float()} | none,
                     since := non_neg_integer(), done := false | atom()}.
%% peaked: the throughput stopped rising; max_users: still rising at the most users allowed;
%% errors: a level broke the error term (the best is among the levels below it);
%% below_start: not even the first level was held.
-type outcome() :: #{peak_users := pos_integer() | none, peak_per_s := float() | none,
                     why := peaked | max_users | errors | below_start | budget}.

%% @doc The options' defaults.
-spec defaults() -> #{start := pos_integer(), factor := float(), gain := float(),
                      patience := pos_integer(), max_users := pos_integer()}.
defaults() -> #{start => 1, factor => 2.0, gain => 0.05, patience => 2, max_users => 4096}.

%% @doc A search with `Opts' over `defaults/0'.
-spec new(opts()) -> state().
new(Opts0) ->
    Opts = maps:merge(defaults(), Opts0),
    #{opts => Opts, users => maps:get(start, Opts), best => none, since => 0, done => false}.

%% @doc The next number of users to run, or the outcome.
-spec next(state()) -> {run, pos_integer()} | {done, outcome()}.
next(#{done := false, users := N}) -> {run, N};
next(#{done := Why} = St) -> {done, outcome(St, Why)}.

%% @doc Where the search is (for the level's length: every level counts alike here).
-spec phase(state()) -> rising | done.
phase(#{done := false}) -> rising;
phase(_) -> done.

%% @doc Level `Users' (the one `next/1' gave) gave `PerS' a second and was held or not.
-spec record(state(), pos_integer(), number(), boolean()) -> state().
record(#{best := none} = St, _Users, _PerS, false) -> St#{done := below_start};
record(St, _Users, _PerS, false) -> St#{done := errors};
record(#{best := Best, since := Since, opts := #{gain := G}} = St, N, PerS, true) ->
    St1 = case Best of
              {_, B} when PerS =< B * (1 + G) -> St#{since := Since + 1};
              _ -> St#{best := {N, float(PerS)}, since := 0}
          end,
    more(St1, N).

more(#{since := S, opts := #{patience := P}} = St, _N) when S >= P -> St#{done := peaked};
more(#{opts := #{max_users := Max}} = St, N) when N >= Max -> St#{done := max_users};
more(#{opts := #{factor := F, max_users := Max}} = St, N) ->
    St#{users := min(Max, max(N + 1, round(N * F)))}.

%% @doc The search stopped (by the time budget): the best level so far is its outcome.
-spec stop(state()) -> state().
stop(#{done := false} = St) -> St#{done := budget};
stop(St) -> St.

%% @doc The search after the levels of an earlier run (`{Users, PerS, Held}' in order);
%% `{mismatch, Expected, Users}' when a level is not the one this search would have run.
-spec replay(state(), [{number(), number(), boolean()}]) ->
    {ok, state()} | {error, {mismatch, pos_integer() | done, number()}}.
replay(St, []) -> {ok, St};
replay(St, [{Users, PerS, Held} | Rest]) ->
    case next(St) of
        {run, N} when N == Users -> replay(record(St, N, PerS, Held), Rest);
        {run, N} -> {error, {mismatch, N, Users}};
        {done, _} -> {error, {mismatch, done, Users}}
    end.

outcome(#{best := none}, Why) -> #{peak_users => none, peak_per_s => none, why => Why};
outcome(#{best := {N, PerS}}, Why) -> #{peak_users => N, peak_per_s => PerS, why => Why}.
