%% @doc An amoc scenario's own figures for `summary.json' (its key `amoc') and the page: per
%% throttle, the rate the scenario set and the rate its events went through, summed over the
%% nodes that each hold a share of it; per coordinator, the users added and the groups formed.
-module(beamscale_amoc_figures).

-export([summary/2]).

%% @doc The figures of `Throttles' (one map a node, `beamscale_amoc_throttle:figures/0') and of
%% `Coordinators' (`beamscale_amoc_coordinator:figures/0'), as JSON terms, sorted by name.
-spec summary([#{atom() => map()}], beamscale_amoc_coordinator:figures()) ->
    #{throttles := [map()], coordinators := [map()]}.
summary(Throttles, Coordinators) ->
    Names = lists:usort(lists:append([maps:keys(T) || T <- Throttles])),
    #{throttles => [throttle(N, [F || T <- Throttles, #{N := F} <- [T]]) || N <- Names],
      coordinators => [coordinator(N, F) || {N, F} <- lists:sort(maps:to_list(Coordinators))]}.

%% One throttle over its nodes: the events of all, from the first to the last; its rate the one
%% set last (each node has the scenario's rate, its share aside).
throttle(Name, Figures) ->
    Released = lists:sum([N || #{released := N} <- Figures]),
    Firsts = [T || #{first_us := T} <- Figures, T =/= none],
    Lasts = [T || #{last_us := T} <- Figures, T =/= none],
    Span = case Firsts of
               [] -> 0;
               _ -> (lists:max(Lasts) - lists:min(Firsts)) / 1.0e6
           end,
    #{name => atom_to_binary(Name), released => Released, span_s => Span,
      achieved_per_s => achieved(Released, Span),
      rate_per_s => rate(lists:last([R || #{rate_per_s := R} <- Figures])),
      changes => lists:max([C || #{changes := C} <- Figures])}.

%% N events over a span: N - 1 gaps.
achieved(N, Span) when N >= 2, Span > 0 -> (N - 1) / Span;
achieved(_N, _Span) -> null.

rate(unlimited) -> <<"unlimited">>;
rate(R) -> float(R).

coordinator(Name, #{added := A, groups := G, timeout := T, reset := R, stop := S}) ->
    #{name => iolist_to_binary(io_lib:format("~0tp", [Name], [{chars_limit, 100}])),
      added => A, groups => G, timeouts => T, resets => R, stops => S}.
