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
          {slo, "--slo", string, "the objective, e.g. \"p99<50ms,errors<1%\"",
           {text, "the scenario's slo key, else " ++ beamscale_stats_slo:default()
                  ++ "; achieved>90% is added unless given"}},
          {budget, "--budget", string, "time for the whole search, e.g. 3m or 90s",
           {text, duration(budget_s)}},
          {level, "--level", string, "length of a level, warm-up included",
           {text, duration(level_s)}},
          {warmup, "--warmup", string, "first seconds of a level not measured",
           {text, duration(warmup_s)}},
          {start, "--start", integer, "first rate, sessions/s; --closed: first number of users",
           {text, search_default(start, open) ++ "; --closed: "
                  ++ search_default(start, closed)}},
          {max_rate, "--max-rate", integer, "highest rate tried, sessions/s",
           {text, search_default(max_rate, open)}},
          {closed, "--closed", flag, "closed mode: N users each running the session in a loop "
                                     "with no think time, N rising until the throughput peaks"},
          {max_users, "--max-users", integer, "--closed: most users tried",
           {text, search_default(max_users, closed)}},
          {tolerance, "--tolerance", integer, "bracket width at which to stop, %",
           {text, search_default(tolerance, open)}}]
          ++ beamscale_cli_options:seed("the arrivals and think times") ++ [
          {quiet, "--quiet", flag, "print no line per level"}]
          ++ beamscale_cli_options:name("saturate") ++ beamscale_cli_options:out()
          ++ beamscale_cli_options:dist_address() ++ [
          {web, "--web", integer, "serve a live page on http://127.0.0.1:PORT/ (0: a free "
                                  "port; the address is printed first)"}]
          ++ beamscale_cli_options:profile("each sampled target node at each level",
                                           {"ms profiled per level, in the middle of its "
                                            "measured seconds", ""})
          ++ beamscale_cli_cookie:options()}.

%% A duration default of `beamscale_saturate:defaults/0' as the options write it: 3m, 10s.
duration(Key) ->
    case maps:get(Key, beamscale_saturate:defaults()) of
        S when S >= 60, S rem 60 =:= 0 -> integer_to_list(S div 60) ++ "m";
        S -> integer_to_list(S) ++ "s"
    end.

%% A default of the open or closed search (`beamscale_stats_search', `_closed'), in the
%% options' unit (the tolerance a %).
search_default(Key, Mode) ->
    Defaults = case Mode of
                   open -> beamscale_stats_search:defaults();
                   closed -> beamscale_stats_closed:defaults()
               end,
    V = maps:get(Key, Defaults),
    integer_to_list(round(case Key of tolerance -> V * 100; _ -> V end)).

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
        Dir = filename:join(beamscale_args:get(out, Opts, beamscale_cli_options:out()), name(Opts)),
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
