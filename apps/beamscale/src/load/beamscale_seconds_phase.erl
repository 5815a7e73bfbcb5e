%% @doc A per-second handler (`beamscale_seconds'): the sampler told the coming second's phase
%% when it changes, so each sample row names the phase it was taken in.
-module(beamscale_seconds_phase).
-behaviour(beamscale_seconds).

-export([start/2, second/2, stop/1, name/2]).

%% @doc The sampler told the first second's phase.
-spec start(beamscale_sampler:sampler(), beamscale_load_scenario:scenario()) ->
    {beamscale_sampler:sampler(), beamscale_load_scenario:scenario()}.
start(Sampler, Scenario) ->
    ok = beamscale_sampler:set_args(Sampler, name(Scenario, 0.5)),
    {Sampler, Scenario}.

%% @doc After second `T': the phase of the next, if another.
-spec second({beamscale_sampler:sampler(), beamscale_load_scenario:scenario()},
             beamscale_load_run:row()) -> ok.
second({Sampler, Scenario}, #{t_s := T}) ->
    Next = name(Scenario, T + 0.5),
    _ = Next =:= name(Scenario, T - 0.5) orelse beamscale_sampler:set_args(Sampler, Next),
    ok.

%% @doc Nothing to end: the sampler is stopped by its owner.
-spec stop(term()) -> ok.
stop(_) -> ok.

%% @doc The name of the phase at `T' seconds, `drain' after the last.
-spec name(beamscale_load_scenario:scenario(), number()) -> binary().
name(Scenario, T) ->
    case beamscale_load_scenario:phase_at(Scenario, T) of
        drain -> <<"drain">>;
        #{name := Name} when is_atom(Name) -> atom_to_binary(Name);
        %% Several scenarios: those running, named together.
        #{name := Names} -> Names
    end.
