%% @doc `beamscale load': run a load scenario (docs/scenario.md) against its targets, print one
%% line per second, and write the load run directory OUT/NAME (run.json, load.csv, samples.csv,
%% summary.json, index.html).
-module(beamscale_cmd_load).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "load", summary => "drive an open-model load against a node or server",
      usage => "beamscale load SCENARIO|TSUNG.xml [OPTIONS]",
      details => "Users arrive by a Poisson process at each phase's rate and run one session "
                 "each.\nLatency is measured from each request's intended start (coordinated "
                 "omission\ncorrected) and from its actual send; both are in summary.json.",
      options => [
          {name, "--name", string, "the run's name (default: load-DATE-TIME)"},
          {out, "--out", string, "where run directories go (default: runs)"},
          {cookie, "--cookie", string, "cookie of existing target nodes (default: the "
                                       "scenario's, else ~/.erlang.cookie)"},
          {seed, "--seed", integer, "seed of the arrivals and think times"},
          {msacc, "--msacc", integer, "% of each sampling interval msacc is on (default 10)"},
          {quiet, "--quiet", flag, "print no live view"}]}.

%% @doc Load the scenario and run it (`beamscale_load_exec').
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := #{msacc := Pct}}) when Pct < 0; Pct > 100 ->
    {error, {bad_msacc, Pct}};
do(#{opts := Opts, args := [File]}) ->
    case scenario(File) of
        {ok, Scenario} ->
            Dir = filename:join(maps:get(out, Opts, "runs"), name(Opts)),
            Exec = maps:merge(#{dir => Dir}, maps:with([seed, quiet, msacc], Opts)),
            Exec1 = case maps:find(cookie, Opts) of
                        {ok, C} -> Exec#{cookie => list_to_atom(C)};
                        error -> Exec
                    end,
            case beamscale_load_exec:run(Scenario, Exec1) of
                {ok, _Dir} -> ok;
                {error, _} = Error -> Error
            end;
        {error, _} = Error -> Error
    end;
do(#{args := []}) -> {error, no_scenario};
do(#{args := [_, Extra | _]}) -> {error, {unexpected_argument, Extra}}.

%% A Tsung XML file (by its extension) or a terms file; the Tsung settings that do not change
%% the load are listed in one warning line.
scenario(File) ->
    case beamscale_load_tsung:is_tsung(File) of
        true ->
            case beamscale_load_tsung:load(File) of
                {ok, Scenario, Ignored} ->
                    io:put_chars(standard_error, beamscale_load_tsung:warning_line(File, Ignored)),
                    {ok, Scenario};
                {error, _} = Error -> Error
            end;
        false -> beamscale_load_scenario:load(File)
    end.

%% @doc One line for this command's own errors (`beamscale_error' sends others' elsewhere).
-spec format_error(term()) -> iodata().
format_error({bad_msacc, Pct}) ->
    io_lib:format("option --msacc: ~b is not a share from 0 to 100 (%)", [Pct]);
format_error(no_scenario) -> "give the scenario file (see docs/scenario.md)";
format_error({unexpected_argument, A}) -> ["unexpected argument ", A].

name(#{name := Name}) -> Name;
name(_) ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:local_time(),
    lists:flatten(io_lib:format("load-~4..0b~2..0b~2..0b-~2..0b~2..0b~2..0b",
                                [Y, Mo, D, H, Mi, S])).
