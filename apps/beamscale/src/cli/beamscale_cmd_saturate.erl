%% @doc `beamscale saturate': find the highest arrival rate a target holds under a service-level
%% objective (docs/saturate.md) and write the run directory OUT/NAME (levels.csv, summary.json,
%% run.json, index.html).
-module(beamscale_cmd_saturate).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "saturate", summary => "find the highest rate a target holds under an objective",
      usage => "beamscale saturate SCENARIO|TSUNG.xml [OPTIONS]",
      details => "Rates rise geometrically until a level is not held, then the bracket is "
                 "halved.\nLatency is from each request's intended start. A rerun with the same "
                 "--name continues the search.\nSee docs/saturate.md.",
      options => [
          {slo, "--slo", string, "the objective, e.g. \"p99<50ms,errors<1%\" (default: the "
                                 "scenario's slo key, else " ++ beamscale_stats_slo:default()
                                 ++ "; achieved>90% is added unless given)"},
          {budget, "--budget", string, "time for the whole search, e.g. 3m or 90s (default 3m)"},
          {level, "--level", string, "length of a level, warm-up included (default 10s)"},
          {warmup, "--warmup", string, "first seconds of a level not measured (default 2s)"},
          {start, "--start", integer, "first rate, sessions/s (default 10; --closed: first "
                                      "number of users, default 1)"},
          {max_rate, "--max-rate", integer, "highest rate tried, sessions/s (default 100000)"},
          {closed, "--closed", flag, "closed mode: N users each running the session in a loop "
                                     "with no think time, N rising until the throughput peaks"},
          {max_users, "--max-users", integer, "--closed: most users tried (default 4096)"},
          {tolerance, "--tolerance", integer, "bracket width at which to stop, % (default 5)"},
          {name, "--name", string, "the run's name (default: saturate-DATE-TIME)"},
          {out, "--out", string, "where run directories go (default: runs)"},
          {seed, "--seed", integer, "seed of the arrivals and think times"},
          {quiet, "--quiet", flag, "print no line per level"},
          {dist_address, "--dist-address", string,
           "IPv4 address of this host for Erlang distribution (default 127.0.0.1): one that "
           "the hosts of ssh load or benchmark nodes reach"},
          {web, "--web", integer, "serve a live page on http://127.0.0.1:PORT/ (0: a free "
                                  "port; the address is printed first)"}]
          ++ beamscale_cmd_run:profile_options("each sampled target node at each level",
                                               "ms profiled per level, in the middle of its "
                                               "measured seconds (default 2000)")
          ++ beamscale_cli_cookie:options()}.

%% @doc Read the scenario and options, run the search (`beamscale_saturate').
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := Opts, args := [File]}) ->
    case options(Opts) of
        {ok, Exec} ->
            case beamscale_scenario_file:read(File) of
                {ok, Scenario} ->
                    beamscale_web:with(maps:get(web, Opts, none),
                                       fun(none) -> saturate(Scenario, Exec);
                                          (Web) -> saturate(Scenario, Exec#{web => Web})
                                       end);
                {error, _} = Error -> Error
            end;
        {error, _} = Error -> Error
    end;
do(#{args := []}) -> {error, no_scenario};
do(#{args := [_, Extra | _]} = Parsed) -> beamscale_cmd_run:extra_argument(Parsed, Extra).

saturate(Scenario, Exec) ->
    %% A search resumes from its levels.csv, as a run from its measurements.
    ok = beamscale_interrupt:install("beamscale saturate"),
    case beamscale_saturate:run(Scenario, Exec) of
        {ok, _Dir, _Summary} -> ok;
        %% A level that could not run is a failed measurement, not bad input.
        {error, {beamscale_saturate, {level, _, _, _}}} = Error ->
            {failed, beamscale_error:format(Error)};
        {error, _} = Error -> Error
    end.

%% The options as `beamscale_saturate:opts()'; each bad value names its option.
options(Opts) ->
    try
        Dir = filename:join(maps:get(out, Opts, "runs"), name(Opts)),
        Secs = [{K, seconds(Opt, maps:get(K, Opts))}
                || {K, Opt} <- [{budget, "--budget"}, {level, "--level"}, {warmup, "--warmup"}],
                   maps:is_key(K, Opts)],
        Exec0 = maps:from_list([{key(K), V} || {K, V} <- Secs]),
        Mode = case maps:get(closed, Opts, false) of
                   true -> closed;
                   false -> open
               end,
        Exec = Exec0#{dir => Dir, mode => Mode, search => search(Mode, Opts)},
        {ok, lists:foldl(fun(F, Acc) -> F(Opts, Acc) end, Exec,
                         [fun slo/2, fun cookie/2, fun plain/2, fun profile/2])}
    catch throw:{bad, Opt, Value, Why} -> {error, {bad_option, Opt, Value, Why}};
          throw:{error, _} = Error -> Error
    end.

key(budget) -> budget_s;
key(level) -> level_s;
key(warmup) -> warmup_s.

search(Mode, Opts) ->
    Pos = fun(K, Opt) ->
                  case maps:find(K, Opts) of
                      {ok, V} when V > 0 -> [{K, V}];
                      {ok, V} -> throw({bad, Opt, integer_to_list(V), "must be above 0"});
                      error -> []
                  end
          end,
    case Mode of
        open -> maps:from_list(Pos(start, "--start") ++ Pos(max_rate, "--max-rate")
                               ++ [{tolerance, T / 100}
                                   || {tolerance, T} <- Pos(tolerance, "--tolerance")]);
        closed -> maps:from_list(Pos(start, "--start") ++ Pos(max_users, "--max-users"))
    end.

slo(#{slo := Text}, Exec) ->
    case beamscale_stats_slo:parse(Text) of
        {ok, Slo} -> Exec#{slo => Slo};
        {error, Msg} -> throw({bad, "--slo", Text, Msg})
    end;
slo(_, Exec) -> Exec.

cookie(Opts, Exec) ->
    case beamscale_cli_cookie:exec(Opts, Exec) of
        {ok, Exec1} -> Exec1;
        {error, Why} -> throw({error, Why})
    end.

profile(Opts, Exec) ->
    case beamscale_cmd_run:checked_profile(Opts) of
        {ok, Profile} -> maps:merge(Exec, Profile);
        {error, Expected} -> throw({error, {bad_profile, Expected}})
    end.

plain(Opts, Exec) -> maps:merge(Exec, maps:with([seed, quiet], Opts)).

%% "3m", "90s" or "90" (seconds).
seconds(Opt, Text) ->
    case string:to_integer(Text) of
        {N, Unit} when is_integer(N), N >= 0 ->
            case Unit of
                "" -> N;
                "s" -> N;
                "m" -> N * 60;
                _ -> throw({bad, Opt, Text, "expected seconds such as 90s or 3m"})
            end;
        _ -> throw({bad, Opt, Text, "expected seconds such as 90s or 3m"})
    end.

%% @doc One line for this command's own errors (`beamscale_error' sends others' elsewhere).
-spec format_error(term()) -> iodata().
format_error(no_scenario) -> "give the scenario file (see docs/scenario.md)";
format_error({bad_profile, Expected}) -> ["option --profile-*: ", Expected];
format_error({bad_option, Opt, Value, Why}) ->
    io_lib:format("option ~s: ~ts: ~ts", [Opt, Value, Why]).

name(#{name := Name}) -> Name;
name(_) ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:local_time(),
    lists:flatten(io_lib:format("saturate-~4..0b~2..0b~2..0b-~2..0b~2..0b~2..0b",
                                [Y, Mo, D, H, Mi, S])).
