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
      options => beamscale_cli_options:seed("the arrivals and think times") ++ [
          {quiet, "--quiet", flag, "print no live view"}]
          ++ beamscale_cli_options:name("load") ++ beamscale_cli_options:out()
          ++ beamscale_cli_options:msacc() ++ beamscale_cli_options:dist_address() ++ [
          {web, "--web", integer, "serve a live page on http://127.0.0.1:PORT/ (0: a free "
                                  "port; the address is printed first)"},
          {metrics, "--metrics", integer, "Prometheus' text on http://127.0.0.1:PORT/metrics "
                                          "while the load runs (0: a free port, printed)"},
          {thresholds, "--threshold", {list, text},
           "pass or fail: EXPR such as p95<300ms, p99{name=checkout}<1s, errors<1%, rate>90/s, "
           "checks>99%; :abort[=DELAY] stops the run when it fails (repeatable; "
           "docs/thresholds.md). Exit 1 when one fails, 99 when one aborted the run"},
          {max_error_rate, "--max-error-rate", integer,
           "exit 1 when more than PCT % of the requests failed"},
          {resolution, "--resolution", string,
           "the figures' interval: 100ms, 200ms, 250ms, 500ms or 1s; under a second, a row of "
           "each in RUNDIR/load_fine.csv",
           {value, beamscale_load_intervals:text(beamscale_load_intervals:default_ms())}},
          {dump, "--dump", integer, "write the first N request/reply exchanges and every "
                                    "error reason's first to RUNDIR/dump.log"},
          {replace, "--replace", flag, "replace an existing load run directory of that name"},
          {amoc, "--amoc", string, "FILE.erl: run an amoc scenario module, in place of SCENARIO "
                                   "(docs/amoc.md)"},
          {amoc_helpers, "--amoc-helper", {list, string},
           "with --amoc: FILE.erl, a module the scenario calls, compiled and loaded with it "
           "(its -required_variable too; repeatable)"},
          {users, "--users", integer, "with --amoc: how many users run it"},
          {load_nodes, "--load-nodes", integer,
           "with --amoc: N load nodes on this host share the users", {text, "0: this node"}},
          {rate, "--rate", number, "with --amoc: users started per second",
           {text, "1000 / AMOC_INTERARRIVAL ms, else "
                  ++ float_to_list(beamscale_loadtest_amoc:default_rate(),
                                   [{decimals, 3}, compact])}},
          {set, "--set", {list, text}, "with --amoc: NAME=VALUE, an Erlang term for the "
                                       "scenario's required variable NAME (repeatable)"}]
          ++ beamscale_cli_options:profile("each sampled target node",
                                           {"ms profiled, in the middle of the run", ""})
          ++ beamscale_cli_cookie:options()}.

%% @doc Load the scenario and run it (`beamscale_loadtest').
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := #{msacc := Pct}}) when Pct < 0; Pct > 100 ->
    {error, {bad_msacc, Pct}};
do(#{opts := #{max_error_rate := Pct}}) when Pct < 0; Pct > 100 ->
    {error, {bad_max_error_rate, Pct}};
do(#{opts := #{dump := N}}) when N < 0 -> {error, {bad_dump, N}};
do(#{opts := #{thresholds := [T | _] = Texts} = Opts} = Parsed) when is_list(T) ->
    case beamscale_stats_threshold:parse_list(Texts) of
        {ok, Ths} -> do(Parsed#{opts := Opts#{thresholds := Ths}});
        {error, {I, Msg}} -> {error, {bad_threshold, lists:nth(I, Texts), Msg}}
    end;
do(#{opts := #{resolution := R} = Opts} = Parsed) when is_list(R) ->
    case resolution(R) of
        {ok, Ms} -> do(Parsed#{opts := Opts#{resolution := Ms}});
        error -> {error, {bad_resolution, R}}
    end;
do(#{opts := #{amoc := File} = Opts, args := []}) -> named(File, Opts);
do(#{opts := #{amoc := _}, args := [Extra | _]} = Parsed) ->
    beamscale_cmd_run:extra_argument(Parsed, Extra);
do(#{opts := Opts, args := [_]}) when is_map_key(users, Opts); is_map_key(rate, Opts);
                                      is_map_key(set, Opts); is_map_key(amoc_helpers, Opts);
                                      is_map_key(load_nodes, Opts) ->
    {error, amoc_only};
do(#{opts := Opts, args := [File]}) -> named(File, Opts);
do(#{args := []}) -> {error, no_scenario};
do(#{args := [_, Extra | _]} = Parsed) -> beamscale_cmd_run:extra_argument(Parsed, Extra).

named(File, Opts) ->
    Name = name(Opts),
    Dir = filename:join(beamscale_args:get(out, Opts, beamscale_cli_options:out()), Name),
    case beamscale_config:check(name, Name) of
        {error, _, Msg} -> {error, {bad_name, Name, Msg}};
        {ok, _} ->
            held(Dir, fun() -> maybe_run(fresh(Dir, maps:get(replace, Opts, false)),
                                         beamscale_cli_cookie:exec(Opts, #{dir => Dir}),
                                         File, Opts)
                      end)
    end.

%% The run directory is held by one `load' at a time, as `run' holds its own: two at once wrote
%% one directory and both exited 0. The lock is beside the directory (`OUT/.NAME.lock'), so a
%% load refused before it starts leaves no directory; one killed leaves a lock taken over.
held(Dir, Fun) ->
    Lock = beamscale_format_rundir:beside(Dir, load_lock),
    Me = io_lib:format("a load of OS pid ~s", [os:getpid()]),
    case filelib:ensure_dir(Lock) =:= ok andalso beamscale_target_lock:take(Lock, Me) of
        ok -> try Fun() after beamscale_target_lock:release(Lock) end;
        {in_use, Holder} -> {error, {in_use, Dir, Holder}};
        false -> {error, {lock, Lock, filelib:ensure_dir(Lock)}};
        {error, Reason} -> {error, {lock, Lock, Reason}}
    end.

%% The scenario is read (and the targets started) only once the name and directory are good.
maybe_run({error, _} = Error, _Cookie, _File, _Opts) -> Error;
maybe_run(ok, {error, _} = Error, _File, _Opts) -> Error;
maybe_run(ok, {ok, Exec0}, File, Opts) ->
    case beamscale_cmd_run:checked_profile(Opts) of
        {error, Expected} -> {error, {bad_profile, Expected}};
        {ok, Profile} ->
            case read(File, Opts) of
                {ok, Scenario, Finish, Exec} ->
                    Outcome = try loaded(Scenario, maps:merge(Exec0, Exec), Profile, Opts)
                              catch C:R:St -> _ = Finish(), erlang:raise(C, R, St)
                              end,
                    finished(Finish(), Outcome);
                {error, _} = Error -> Error
            end
    end.

%% An amoc scenario's terminate that raised fails a load that did not fail otherwise.
finished(ok, Outcome) -> Outcome;
finished({error, Reason}, ok) -> {failed, beamscale_error:format(Reason)};
finished({error, _}, Outcome) -> Outcome.

%% The scenario file (terms or Tsung XML), or the amoc scenario module of `--amoc', what to do
%% once the load ends (the amoc scenario's terminate) and the load's options it needs.
read(File, #{amoc := _} = Opts) -> beamscale_loadtest_amoc:read(File, Opts);
read(File, _Opts) ->
    case beamscale_scenario_file:read(File) of
        {ok, Scenario} -> {ok, Scenario, fun() -> ok end, #{}};
        {error, _} = Error -> Error
    end.

loaded(Scenario0, Exec0, Profile, Opts) ->
    Scenario = maps:merge(Scenario0, maps:with([dump], Opts)),
    Ths = beamscale_loadtest_thresholds:of_run(Scenario, Opts),
    Exec1 = maps:merge(Exec0, maps:merge(resolution_ms(Opts),
                                         maps:merge(maps:with([seed, quiet, msacc],
                                                              Opts),
                                                    Profile#{thresholds => Ths}))),
    %% Without --web the server still answers `beamscale ctl' (not the page).
    Run = fun(Web, M) -> run(Scenario, with(metrics, M, Exec1), Web) end,
    ok = beamscale_interrupt:install("beamscale load", fun beamscale_load_run:interrupt/0),
    case beamscale_web:with(maps:get(web, Opts, none),
                            metrics(maps:get(metrics, Opts, none), Run)) of
        {ok, _Dir, Outcome} ->
            io:put_chars(beamscale_loadtest_thresholds:table(
                           maps:get(thresholds, Outcome))),
            verdict(Outcome, outcome(Outcome, maps:get(max_error_rate, Opts, none)));
        {error, _} = Error -> Error
    end.

run(Scenario, Exec, none) ->
    beamscale_web:with(quiet, fun(Ctl) -> beamscale_loadtest:run(Scenario, Exec#{ctl => Ctl}) end);
run(Scenario, Exec, Web) -> beamscale_loadtest:run(Scenario, Exec#{web => Web, ctl => Web}).

%% `--resolution': 100ms ... 1s, a divisor of a second.
resolution(Text) ->
    Ms = case string:to_integer(Text) of
             {N, "ms"} when is_integer(N) -> N;
             {N, "s"} when is_integer(N) -> N * 1000;
             _ -> none
         end,
    case lists:member(Ms, beamscale_load_intervals:resolutions()) of
        true -> {ok, Ms};
        false -> error
    end.

resolution_ms(#{resolution := Ms}) -> #{resolution_ms => Ms};
resolution_ms(_Opts) -> #{}.

with(_Key, none, Map) -> Map;
with(Key, V, Map) -> Map#{Key => V}.

%% --metrics PORT: a server of its own for Prometheus, beside the page's (if any).
metrics(none, Run) -> fun(Web) -> Run(Web, none) end;
metrics(Port, Run) ->
    fun(Web) ->
            case beamscale_web:start(#{port => Port}) of
                {ok, M} ->
                    io:format("metrics: ~tsmetrics~n", [beamscale_web:url(M)]),
                    try Run(Web, M) after beamscale_web:stop(M) end;
                {error, _} = Error -> Error
            end
    end.

%% A directory that exists is never written over silently: with --replace, one that holds a
%% load run (or nothing) is removed first; anything else is refused.
fresh(Dir, Replace) ->
    case {filelib:is_dir(Dir), Replace} of
        {false, _} -> ok;
        {true, false} -> {error, {exists, Dir}};
        {true, true} ->
            case file:list_dir(Dir) of
                {ok, []} -> ok;
                {ok, Files} -> case lists:member(beamscale_format_rundir:name(load_csv), Files) of
                                   true -> _ = file:del_dir_r(Dir), ok;
                                   false -> {error, {not_a_load_run, Dir}}
                               end;
                {error, Reason} -> {error, {exists, Dir, Reason}}
            end
    end.

%% A load stopped by SIGTERM (or Ctrl-C, which the ./beamscale script turns into one) wrote all
%% its files; it ends with the signal's status (the script makes it 130 for Ctrl-C).
outcome(#{stopped := interrupted}, _Max) -> {interrupted, 143};
%% A load node that went down took its share of the load with it: the run did not offer what
%% the scenario asks, so it fails (exit 1), as a suite run whose node died.
outcome(#{load_nodes_down := Down}, _Max) when Down > 0 ->
    {failed, io_lib:format("load nodes down: ~b; the load offered was less than the "
                           "scenario asks", [Down])};
outcome(_Outcome, none) -> ok;
%% --max-error-rate: the share of failed requests.
outcome(#{requests := Req, errors := Err}, Max) ->
    Rate = 100 * Err / max(Req, 1),
    case Rate > Max of
        true -> {failed, io_lib:format("~b of ~b requests failed (~.1f %), more than "
                                       "--max-error-rate ~b %", [Err, Req, Rate, Max])};
        false -> ok
    end.

%% The thresholds' verdict after the other reasons to fail: an abort (99) before a signal's
%% status; a threshold failed at the end (1) when nothing else failed.
verdict(#{stopped := aborted, aborted_by := By}, _Other) ->
    {aborted, ["aborted by the threshold ", lists:join(", ", By)]};
verdict(#{thresholds := Verdicts}, ok) ->
    case beamscale_loadtest_thresholds:failed(Verdicts) of
        [] -> ok;
        Failed -> {failed, ["thresholds failed: ", lists:join(", ", Failed)]}
    end;
verdict(_Outcome, Other) -> Other.

%% @doc One line for this command's own errors (`beamscale_error' sends others' elsewhere).
-spec format_error(term()) -> iodata().
format_error({bad_profile, Expected}) -> ["option --profile-*: ", Expected];
format_error({bad_msacc, Pct}) ->
    io_lib:format("option --msacc: ~b is not a share from 0 to 100 (%)", [Pct]);
format_error({bad_max_error_rate, Pct}) ->
    io_lib:format("option --max-error-rate: ~b is not a share from 0 to 100 (%)", [Pct]);
format_error({bad_threshold, Text, Msg}) ->
    io_lib:format("option --threshold ~0tp: ~ts", [Text, Msg]);
format_error({bad_dump, N}) ->
    io_lib:format("option --dump: ~b is not a number of exchanges (0 or more)", [N]);
format_error({bad_resolution, R}) ->
    io_lib:format("option --resolution: ~ts is not one of 100ms, 200ms, 250ms, 500ms, 1s",
                  [R]);
format_error({bad_name, Name, Msg}) ->
    io_lib:format("option --name ~0tp: expected ~ts", [Name, Msg]);
format_error({in_use, Dir, Holder}) ->
    io_lib:format("~ts is in use by ~ts: wait for that load to end, or give another --name",
                  [Dir, Holder]);
format_error({lock, Lock, {error, Reason}}) -> format_error({lock, Lock, Reason});
format_error({lock, Lock, Reason}) ->
    io_lib:format("cannot create ~ts: ~ts", [Lock, file:format_error(Reason)]);
format_error({exists, Dir}) ->
    io_lib:format("~ts exists: give another --name, or --replace to replace it", [Dir]);
format_error({exists, Dir, Reason}) ->
    io_lib:format("~ts exists and cannot be read: ~ts", [Dir, file:format_error(Reason)]);
format_error({not_a_load_run, Dir}) ->
    io_lib:format("~ts exists and holds no load run (no load.csv): not replaced", [Dir]);
format_error(amoc_only) ->
    "options --users, --rate, --set, --amoc-helper and --load-nodes go with --amoc FILE";
format_error(no_scenario) -> "give the scenario file (see docs/scenario.md)".

name(#{name := Name}) -> Name;
name(_) ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:local_time(),
    lists:flatten(io_lib:format("load-~4..0b~2..0b~2..0b-~2..0b~2..0b~2..0b",
                                [Y, Mo, D, H, Mi, S])).
