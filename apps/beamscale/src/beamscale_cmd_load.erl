%% @doc `beamscale load': run a load scenario (docs/scenario.md) against its targets, print one
%% line per second, and write the load run directory OUT/NAME (run.json, load.csv, summary.json).
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
          {quiet, "--quiet", flag, "print no live view"}]}.

%% @doc Load the scenario, resolve its targets, run it, write the run directory.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := Opts, args := [File]}) ->
    case scenario(File) of
        {ok, Scenario} ->
            {ok, _} = beamscale_node:distribute(),
            Cookie = case maps:find(cookie, Opts) of
                         {ok, C} -> list_to_atom(C);
                         error -> undefined
                     end,
            case beamscale_targets:resolve(maps:get(targets, Scenario), Cookie) of
                {ok, Targets, Started} ->
                    try run(Scenario, Targets, Opts)
                    after beamscale_targets:stop(Started)
                    end;
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

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({beamscale_load_scenario, _} = R) -> beamscale_load_scenario:format_error(R);
format_error({beamscale_load_tsung, _} = R) -> beamscale_load_tsung:format_error(R);
format_error({beamscale_targets, _} = R) -> beamscale_targets:format_error(R);
format_error({beamscale_load_run, R}) -> io_lib:format("load run failed: ~0tp", [R]);
format_error(no_scenario) -> "give the scenario file (see docs/scenario.md)";
format_error({unexpected_argument, A}) -> ["unexpected argument ", A].

run(Scenario, Targets, Opts) ->
    Dir = filename:join(maps:get(out, Opts, "runs"), name(Opts)),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Started = beamscale_runinfo:now_iso(),
    {ok, Csv} = file:open(filename:join(Dir, "load.csv"), [write]),
    ok = file:write(Csv, beamscale_csv:line(beamscale_load_report:csv_header())),
    Quiet = maps:get(quiet, Opts, false),
    OnSecond = fun(Row) ->
                       ok = file:write(Csv, beamscale_csv:line(beamscale_load_report:csv_row(Row))),
                       Quiet orelse io:put_chars(beamscale_load_report:live_line(Row))
               end,
    Sampler = start_sampler(Targets, Dir),
    RunOpts = maps:merge(#{on_second => OnSecond}, maps:with([seed], Opts)),
    Result = try beamscale_load_run:run(Scenario, Targets, RunOpts)
             after stop_sampler(Sampler), ok = file:close(Csv)
             end,
    case Result of
        {ok, R} -> write(Dir, Scenario, R, Started);
        {error, _} = Error -> Error
    end.

write(Dir, Scenario, Result, Started) ->
    Summary = beamscale_load_report:summary(Result),
    ok = beamscale_store:write_file(filename:join(Dir, "summary.json"),
                                    beamscale_json:encode(Summary)),
    ok = beamscale_store:write_file(filename:join(Dir, "run.json"),
                                    beamscale_json:encode(run_info(Scenario, Started))),
    #{latency_corrected := #{p99_ms := P99}, latency_uncorrected := #{p99_ms := U99}} = Summary,
    io:format("~nLoad run directory: ~ts~n~b sessions, ~b requests, ~b errors; p99 ~.3f ms "
              "(from intended start), ~.3f ms (from send)~n",
              [Dir, maps:get(sessions_done, Summary), maps:get(requests, Summary),
               maps:get(errors, Summary), P99, U99]).

run_info(#{file := File} = Scenario, Started) ->
    {ok, Host} = inet:gethostname(),
    #{tool => <<"beamscale">>, kind => load, scenario => {string, File},
      host => list_to_binary(Host), logical_cores => erlang:system_info(logical_processors),
      otp_release => list_to_binary(erlang:system_info(otp_release)),
      started => Started, ended => beamscale_runinfo:now_iso(),
      phases => [beamscale_runinfo:to_json(P) || P <- maps:get(phases, Scenario)],
      time_limit_s => maps:get(time_limit_s, Scenario)}.

%% Hook for the target's samples.csv: the sampler (beamscale_sampler, being written) will sample
%% the CPU and schedulers of the target nodes from here until stop_sampler/1.
start_sampler(_Targets, _Dir) -> none.

stop_sampler(none) -> ok.

name(#{name := Name}) -> Name;
name(_) ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:local_time(),
    lists:flatten(io_lib:format("load-~4..0b~2..0b~2..0b-~2..0b~2..0b~2..0b",
                                [Y, Mo, D, H, Mi, S])).
