%% @doc Launches of `beamscale bench' (time mode): every point (benchmark, input, schedulers)
%% measured in `Launches' fresh emulators, the points of a round in an order shuffled from the
%% run's seed (A B, then B A or A B: as hyperfine and benchstat interleave), so that a drift of
%% the host weighs on every side alike. A launch's median is one replicate: a point's figures
%% are those of its launch medians (`beamscale_stats_floor'), its ratio to the first point of
%% the same input is tested over launches with its A/A floor (`beamscale_stats_compare').
-module(beamscale_micro_launches).

-export([jobs/3, merge/1, ratios/1, host/0, seed/0]).

%% @doc The jobs of `Launches' rounds over `Points' (`{N, Point}'): `{Job, Launch, N, Point}',
%% `Job' numbering (launch, point) alike whatever the order, each round's order shuffled.
-spec jobs([{pos_integer(), term()}], pos_integer(), integer()) ->
    [{pos_integer(), pos_integer(), pos_integer(), term()}].
jobs(Points, Launches, Seed) ->
    P = length(Points),
    {Rounds, _} = lists:mapfoldl(fun(L, S0) ->
                                         {Order, S} = shuffle(Points, S0),
                                         {[{(L - 1) * P + N, L, N, Pt} || {N, Pt} <- Order], S}
                                 end, rand:seed_s(exsss, Seed), lists:seq(1, Launches)),
    lists:append(Rounds).

shuffle(List, S0) ->
    {Keyed, S} = lists:mapfoldl(fun(X, St) ->
                                        {U, St1} = rand:uniform_s(St),
                                        {{U, X}, St1}
                                end, S0, List),
    {[X || {_, X} <- lists:sort(Keyed)], S}.

%% @doc One row per point (in point order) from the rows of its launches (each with `point' and
%% `launch'): ns per call the median of the launch medians, its interval and spread over
%% launches; with one launch, the figures of its samples as they are.
-spec merge([map()]) -> [map()].
merge(Rows) ->
    Points = lists:usort([N || #{point := N} <- Rows]),
    [point(lists:sort(fun(#{launch := A}, #{launch := B}) -> A =< B end,
                      [R || #{point := N1} = R <- Rows, N1 =:= N]))
     || N <- Points].

point([#{per_call := P} = Only]) ->
    Only#{launches => 1, per_launch => [P], launch_ns => [maps:get(ns, Only)],
          min => lists:min(P), max => lists:max(P), spread_of => samples};
point([First | _] = Launches) ->
    Ns = [Ns || #{ns := Ns} <- Launches],
    #{median := M, low := Lo, high := Hi, cv := Cv, min := Min, max := Max, launches := K} =
        beamscale_stats_floor:over_launches(Ns),
    PerLaunch = [P || #{per_call := P} <- Launches],
    Row = instructions(Launches, First),
    maps:without([launch],
                 Row#{ns => M, ns_low => Lo, ns_high => Hi, cv => Cv, min => Min, max => Max,
                      launches => K, launch_ns => Ns, per_launch => PerLaunch,
                      per_call => lists:append(PerLaunch), n => length(lists:append(PerLaunch)),
                      calls_s => calls_s(M), spread_of => launches,
                      words => median([W || #{words := W} <- Launches]),
                      reductions => median([R || #{reductions := R} <- Launches])}).

median(Xs) -> beamscale_stats:median(Xs).

%% Counted with the instruction clock: the median count over launches, its spread across them
%% (the count's own A/A floor), each launch's count and counted samples kept (`compare').
instructions(Launches, First) ->
    case [I || #{instructions := I} <- Launches] of
        Is when length(Is) =:= length(Launches), Is =/= [] ->
            First#{instructions => median(Is), launch_instructions => Is,
                   instructions_spread => beamscale_stats_instr:spread(Is),
                   launch_instructions_per_call => [P || #{instructions_per_call := P}
                                                             <- Launches]};
        _ -> First
    end.

calls_s(Ns) when Ns > 0 -> 1.0e9 / Ns;
calls_s(_) -> 0.0.

%% @doc Each row's time per call against the first row of the same input (a ratio across inputs
%% would compare work of other sizes), tested over launches, its A/A floor beside it.
-spec ratios([map()]) -> [map()].
ratios(Rows) ->
    {Out, _} = lists:mapfoldl(
                 fun(#{input := I, per_launch := L} = R, Bases) ->
                         case Bases of
                             #{I := Base} ->
                                 V = beamscale_stats_compare:launches(Base, L, #{}),
                                 {R#{ratio => V}, Bases};
                             #{} -> {R, Bases#{I => L}}
                         end
                 end, #{}, Rows),
    Out.

%% @doc The host now: its load average over one minute and its logical cores.
-spec host() -> beamscale_stats_floor:host().
host() ->
    Load = case file:read_file("/proc/loadavg") of
               {ok, Bin} ->
                   case beamscale_host_calc:loadavg(Bin) of
                       {L, _, _} when is_number(L) -> float(L);
                       _ -> 0.0
                   end;
               {error, _} -> 0.0
           end,
    #{loadavg => Load, cores => beamscale_os:logical_cores()}.

%% @doc A seed for the order of the launches (written to the results, given back by --seed).
-spec seed() -> pos_integer().
seed() -> erlang:phash2({os:system_time(), self()}, 1 bsl 30) + 1.
