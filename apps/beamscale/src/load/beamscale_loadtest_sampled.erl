%% @doc One load level run with the target nodes sampled, for the commands and studies that run
%% many levels into one directory (`beamscale saturate', the IO studies): a sampler started for
%% the level (its rows appended to the directory's `samples.csv' under the level's
%% benchmark, env and args), the load generator against the targets, then the sample summary of
%% the level (`beamscale_stats_samples') back with the load result.
-module(beamscale_loadtest_sampled).

-export([run/5]).
-export_type([meta/0]).

%% bench, env, args: the level's key in samples.csv (args unique per level and run);
%% interval: ms between samples.
-type meta() :: #{dir := file:filename(), bench := binary(), env := binary(), args := binary(),
                  interval := pos_integer()}.

%% @doc Run `Scenario' against `Targets' (`beamscale_load_run:run/3' with `RunOpts'), sampling
%% the nodes `Watched'; returns the load result and the level's sample summary (`undefined'
%% when no row was taken).
-spec run(beamscale_load_scenario:scenario(), #{atom() => map()},
          [beamscale_sampler:watched()], meta(), map()) ->
    {ok, map(), map() | undefined} | {error, term()}.
run(Scenario, Targets, Watched, #{dir := Dir, bench := B, env := E, args := A} = Meta,
    RunOpts) ->
    case beamscale_sampler:start(#{dir => Dir, bench => B, env => E,
                                   interval => maps:get(interval, Meta)}) of
        {ok, S} ->
            ok = beamscale_sampler:set_args(S, A),
            ok = beamscale_sampler:watch(S, Watched),
            Result = try beamscale_load_run:run(Scenario, Targets, RunOpts)
                     after beamscale_sampler:stop(S)
                     end,
            case Result of
                {ok, R} -> {ok, R, summary(Meta)};
                {error, _} = Error -> Error
            end;
        {error, Reason} -> {error, {sampler, Reason}}
    end.

summary(#{dir := Dir, bench := B, env := E, args := A}) ->
    Rows = [X || X <- beamscale_store:read_rows(beamscale_format_rundir:path(Dir, samples)),
                 maps:get(benchmark, X) =:= B, maps:get(env, X) =:= E, maps:get(args, X) =:= A],
    case beamscale_stats_samples:summarise(Rows) of
        [Sum | _] -> Sum;
        [] -> undefined
    end.
