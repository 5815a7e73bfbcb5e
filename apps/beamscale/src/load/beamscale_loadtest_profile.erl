%% @doc `--profile' on load runs (`saturate' levels, a `load', docs/profiles.md): each sampled
%% target node (one with an OS pid on this host) profiled in a window in the middle of a level's
%% measured seconds (a load is one level), folded once the level has ended into
%% `profiles/TARGET/level-N' with the level's number and rate, which
%% `beamscale_profile:read_levels/1' reads back for the page.
-module(beamscale_loadtest_profile).

-export([scenario/2, start/3, finish/3, drop_maps/2]).
-export_type([windows/0]).

-opaque windows() :: [{atom(), beamscale_profile:window()}].

-define(MS, 1000).

%% @doc The scenario with its started target nodes given the JIT's perf maps when profiled
%% (Erlang functions named in perf's stacks); unchanged otherwise.
-spec scenario(beamscale_load_scenario:scenario(), map()) -> beamscale_load_scenario:scenario().
scenario(#{targets := Targets} = Sc, #{profile := _}) ->
    Sc#{targets := maps:map(fun(_, #{start := #{flags := F} = S} = T) ->
                                    T#{start := S#{flags := F ++ " "
                                                   ++ beamscale_profile:node_flags()}};
                               (_, T) -> T
                            end, Targets)};
scenario(Sc, _Opts) -> Sc.

%% @doc Start the windows of level `L' (seconds `Hold', of which the first `Warmup' are not
%% measured): one per watched node (not hosts), centred in the measured seconds, at most as long.
-spec start(pos_integer(), {number(), number()}, map()) -> windows().
start(L, {Hold, Warmup}, #{profile := #{window_ms := W} = Opts, dir := Dir, watched := Watched}) ->
    Measured = round((Hold - Warmup) * ?MS),
    Window = max(1, min(W, Measured)),
    Delay = round(Warmup * ?MS) + (Measured - Window) div 2,
    [{Name, beamscale_profile:start_window(
              #{base => beamscale_format_rundir:path(Dir, profiles,
                                                     [atom_to_list(Name),
                                                      "level-" ++ integer_to_list(L)]),
                os_pid => OsPid, node => Node, opts => Opts#{window_ms := Window}}, Delay)}
     || #{node := Node, os_pid := OsPid, target := Name} = Watch <- Watched,
        not is_map_key(host_watch, Watch)];
start(_L, _Hold, _Ctx) -> [].

%% @doc Fold and write the level's profiles, with its number and its rate (or users) in `Unit';
%% returns the milliseconds this took (not the search's time).
-spec finish(windows(), pos_integer(), {number(), binary()}) -> non_neg_integer().
finish(Windows, L, {X, Unit}) ->
    T0 = erlang:monotonic_time(millisecond),
    [ok = beamscale_profile:end_window(W, #{cell => atom_to_binary(Name), level => L, rate => X,
                                            unit => Unit})
     || {Name, W} <- Windows],
    erlang:monotonic_time(millisecond) - T0.

%% @doc Remove the JIT's perf maps of the watched nodes the scenario starts (`scenario/2' gave
%% them one; they stop after the run); an existing node's map is its owner's.
-spec drop_maps(beamscale_load_scenario:scenario(), [map()]) -> ok.
drop_maps(#{targets := Targets}, Watched) ->
    _ = [beamscale_profile:drop_map(P) || #{os_pid := P, target := T} <- Watched,
                                          is_map_key(start, maps:get(T, Targets, #{}))],
    ok.
