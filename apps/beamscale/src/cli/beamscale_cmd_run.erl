%% @doc `beamscale run': run benchmarks across the environments of a configuration and write the
%% run directory OUT/NAME. Rerunning the same command continues an interrupted run.
-module(beamscale_cmd_run).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1, overrides/1]).
-export([profile/1, checked_profile/1, extra_argument/2]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "run", summary => "run benchmarks across runtime environments",
      usage => "beamscale run [--config FILE | --preset NAME] [OPTIONS]",
      details => "Without --config or --preset the embedded default runs: every benchmark, "
                 "short,\nschedulers 1..cores, 3 iterations. Options override the file or preset. "
                 "Rerun the\nsame command (same --name) to continue an interrupted run.",
      options => [
          {config, "--config", string, "the run configuration (docs/config.md)"},
          {preset, "--preset", string, "a built-in configuration instead of a file: quick"},
          {bencherl_conf, "--bencherl-conf", string,
           "bencherl's conf/run.conf, read as settings (options override it)"},
          {benchmarks, "--bench", {list, string}, "benchmarks to run (comma-separated, or all)"},
          {version, "--version", string, "short, intermediate or long"},
          {schedulers, "--schedulers", string, "scheduler counts: 1,2,4 or 1..8 or all or 1,all"},
          {nodes, "--nodes", string, "node counts: 1,2 or 1..4 (nodes in all)"},
          {iterations, "--iterations", integer, "timed iterations per argument set"},
          {warmups, "--warmups", integer, "untimed runs before the timed ones"},
          {launches, "--launches", integer, "fresh emulators per environment (interleaved)"},
          {clock, "--clock", string, "wall (elapsed time), cpu (the emulator's CPU time) or "
                                     "instructions (retired per iteration, beside wall time)"},
          {sweep, "--sweep", string, "cross (every combination) or bencherl (two sweeps)"},
          {timeout, "--timeout", integer, "seconds one iteration may take"},
          {bench_path, "--bench-path", {list, string}, "directories of bencherl handlers"},
          {code_path, "--code-path", {list, string},
           "your compiled code: ebin dir, glob or lib dir as ERL_LIBS (repeatable)"},
          {no_sample, "--no-sample", flag, "do not sample CPU and schedulers (docs/samples.md)"}]
          ++ beamscale_cli_options:name("run") ++ beamscale_cli_options:out()
          ++ beamscale_cli_options:msacc()
          ++ beamscale_cli_options:seed("each launch's order of the jobs (drawn, in run.json)")
          ++ beamscale_cli_options:profile("each point", {"ms of profiled calls per point",
                                                          "; as long again unprofiled"}) ++ [
          {otp, "--otp", {list, string},
           "OTP releases to run on, as erls: 25,27,29 (installed by beamscale otp install)"},
          {emu_flavor, "--emu-flavor", {list, string},
           "emulator flavours of each --otp release: jit,emu,lcnt (docs/otp.md)"},
          {lcnt, "--lcnt", flag,
           "on each release's lock-counting emulator (RELEASE-lcnt): locks that grew "
           "(--profile lcnt: with profiles)"},
          {quiet, "--quiet", flag, "print no progress"}]
          ++ beamscale_cli_options:dist_address() ++ [
          {web, "--web", integer, "serve a live page of the run on http://127.0.0.1:PORT/ "
                                  "(0: a free port; the address is printed first)"}]}.

%% @doc Load the configuration, run it, print the sanity verdicts.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
%% `--profile lcnt' (the lock counts beside the profile) is `--profile --lcnt'.
do(#{opts := #{profile := true} = Opts, args := ["lcnt"]}) ->
    do(#{opts => Opts#{lcnt => true}, args => []});
do(#{opts := #{config := _, preset := _}, args := []}) ->
    {error, config_and_preset};
do(#{opts := Opts, args := []}) ->
    Source = case Opts of
                 #{preset := Name} -> {preset, Name};
                 _ -> maps:get(config, Opts, undefined)
             end,
    case {bencherl_conf(Opts), otp(Opts)} of
        {{ok, Bencherl}, {ok, Erls}} ->
            case beamscale_config:load(Source, Bencherl ++ overrides(Opts) ++ Erls) of
                {ok, Config} -> run(maps:merge(named(Config), maps:with([seed], Opts)), Opts);
                {error, _} = Error -> Error
            end;
        {{error, _} = Error, _} -> Error;
        {_, {error, _} = Error} -> Error
    end;
do(#{args := [Extra | _]}) ->
    {error, {unexpected_argument, Extra}}.

%% --otp and --emu-flavor: the erls, releases by name (beamscale_otp).
otp(#{lcnt := true} = Opts) -> otp(maps:remove(lcnt, Opts#{emu_flavor => ["lcnt"]}));
otp(Opts) when is_map_key(otp, Opts); is_map_key(emu_flavor, Opts) ->
    case beamscale_otp:erls(maps:get(otp, Opts, []), maps:get(emu_flavor, Opts, [])) of
        {ok, Erls} -> {ok, [{erls, Erls}]};
        {error, _} = Error -> Error
    end;
otp(_Opts) -> {ok, []}.

%% bencherl's run.conf comes between the configuration file and the options.
bencherl_conf(#{bencherl_conf := File} = Opts) ->
    beamscale_bencherl_conf:read(File, maps:get(bench_path, Opts, []));
bencherl_conf(_Opts) -> {ok, []}.

%% @doc One line for this command's own errors (`beamscale_error' sends others' elsewhere).
-spec format_error(term()) -> iodata().
format_error({unexpected_argument, A}) -> ["unexpected argument ", A];
format_error(lcnt_not_here) ->
    "--profile lcnt: lock counts are taken by `beamscale run' alone (docs/profiles.md); give "
    "--profile without lcnt";
format_error(config_and_preset) -> "--config and --preset exclude each other: give one".

%% @doc The configuration keys set by options, as terms for `beamscale_config:check/2'.
-spec overrides(#{atom() => term()}) -> [{atom(), term()}].
overrides(Opts) ->
    Keys = [benchmarks, version, schedulers, nodes, iterations, warmups, launches, clock, sweep,
            timeout, bench_path, code_path, name, out, msacc],
    NoSample = [{sample, false} || maps:get(no_sample, Opts, false)],
    [{K, term(K, V)} || K <- Keys, {ok, V} <- [maps:find(K, Opts)]] ++ NoSample
        ++ profile(Opts).

%% @doc The error of an argument left over (`load', `saturate', `study'): with --profile, an
%% `lcnt' is `run''s lock counting (`run --profile lcnt'), which these commands do not take.
-spec extra_argument(beamscale_args:parsed(), string()) -> {error, {?MODULE, term()}}.
extra_argument(#{opts := #{profile := true}, args := Args}, Extra) ->
    case lists:member("lcnt", Args) of
        true -> {error, {?MODULE, lcnt_not_here}};
        false -> {error, {?MODULE, {unexpected_argument, Extra}}}
    end;
extra_argument(_Parsed, Extra) -> {error, {?MODULE, {unexpected_argument, Extra}}}.

%% @doc The `profile' key the profile options set, if any: --profile-rate, --profile-window or
%% --profile-stacks imply --profile.
-spec profile(#{atom() => term()}) -> [{profile, #{atom() => term()}}].
profile(Opts) ->
    Named = [{profile_rate, rate}, {profile_window, window_ms}, {profile_stacks, stacks}],
    Set = maps:from_list([{K, profile_term(K, V)} || {O, K} <- Named,
                                                     {ok, V} <- [maps:find(O, Opts)]]),
    case maps:get(profile, Opts, false) orelse map_size(Set) > 0 of
        true -> [{profile, Set}];
        false -> []
    end.

%% @doc The profile options checked as `run''s `profile' key is (`study' and `saturate'):
%% `#{profile => Opts}', `#{}' without them, or what a bad value should have been.
-spec checked_profile(#{atom() => term()}) -> {ok, map()} | {error, iodata()}.
checked_profile(Opts) ->
    case profile(Opts) of
        [] -> {ok, #{}};
        [{profile, Set}] ->
            case beamscale_config:check(profile, Set) of
                {ok, Checked} -> {ok, #{profile => Checked}};
                {error, _, Expected} -> {error, Expected}
            end
    end.

term(benchmarks, ["all"]) -> all;
term(benchmarks, Names) -> [list_to_atom(N) || N <- Names];
term(K, V) when K =:= version; K =:= sweep; K =:= clock -> known_atom(V);
term(K, V) when K =:= schedulers; K =:= nodes -> counts(V);
term(_K, V) -> V.

%% A word the configuration knows as an atom; any other text stays text for the check to refuse
%% (no atom is made from the command line).
known_atom(Text) ->
    Known = [short, intermediate, long, cross, bencherl, wall, cpu, instructions],
    case [A || A <- Known, atom_to_list(A) =:= Text] of
        [A] -> A;
        [] -> Text
    end.

profile_term(stacks, "dwarf") -> dwarf;
profile_term(stacks, "fp") -> fp;
profile_term(_K, V) -> V.

%% "all", "1..8" or "1,2,4" ("1,all": one and all); anything else is passed on as text for the
%% config check to refuse.
counts("all") -> all;
counts(Text) ->
    case string:split(Text, "..") of
        [From, To] -> {int(From), int(To)};
        [_] -> [int(N) || N <- string:lexemes(Text, ",")]
    end.

int(Text) ->
    case string:trim(Text) of
        "all" -> all;
        Trimmed ->
            try list_to_integer(Trimmed)
            catch error:badarg -> Text
            end
    end.

named(#{name := _} = Config) -> Config;
named(Config) ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:local_time(),
    Config#{name => lists:flatten(io_lib:format("run-~4..0b~2..0b~2..0b-~2..0b~2..0b~2..0b",
                                                [Y, Mo, D, H, Mi, S]))}.

run(Config, Opts) ->
    ok = beamscale_interrupt:install("beamscale run"),
    Host = beamscale_micro_launches:host(),
    Mode = case maps:get(quiet, Opts, false) of
               true -> quiet;
               false -> beamscale_progress:mode()
           end,
    Run = fun(none) -> beamscale_coordinator:run(Config, Mode);
             (Web) ->
                  Watch = beamscale_web_run:start(Web, beamscale_coordinator:run_dir(Config)),
                  try beamscale_coordinator:run(Config, Mode)
                  after beamscale_web_run:stop(Watch)
                  end
          end,
    case beamscale_web:with(maps:get(web, Opts, none), Run) of
        {ok, Result} -> spread(Host, Config, maps:get(dir, Result)), report(Result);
        {error, _} = Error -> Error
    end.

%% The conditions of the run and each result's spread over its launches (cv and min..max of
%% the launch medians), with a warning where a figure is not to be trusted (docs/report.md).
spread(Host, Config, Dir) ->
    #{loadavg := Load, cores := Cores} = Host,
    io:format("~nhost: load average ~.2f at the start, ~b cores; OTP: ~ts; flags: ~ts~n",
              [Load, Cores, releases(Dir), aliases(maps:get(erl_args, Config, []))]),
    Groups = lists:sort(maps:to_list(beamscale_stats_launches:group(
                                       beamscale_store:measurements(Dir)))),
    Spreads = [{K, beamscale_stats_floor:over_launches([beamscale_stats:median(L) || L <- Ls])}
               || {K, Ls} <- Groups],
    [io:format("  ~ts ~ts: median ~ts s, cv ~.1f % over ~b launch(es), min..max ~ts..~ts~n",
               [B, A, fmt(M), Cv * 100, K, fmt(Min), fmt(Max)])
     || {{B, _, A, _, _, _, _}, #{median := M, cv := Cv, launches := K, min := Min,
                                  max := Max}} <- Spreads],
    Cvs = [Cv || {_, #{cv := Cv}} <- Spreads],
    [io:format("warning: ~ts~n", [W])
     || W <- beamscale_stats_floor:warnings(lists:max([0.0 | Cvs]), Host)],
    ok.

%% Each erl's release, as run.json says.
releases(Dir) ->
    Erls = case file:read_file(beamscale_format_rundir:path(Dir, run_json)) of
               {ok, Bin} ->
                   case beamscale_format_json:decode(Bin) of
                       {ok, #{<<"erls">> := #{} = E}} -> maps:to_list(E);
                       _ -> []
                   end;
               {error, _} -> []
           end,
    case [[A, "=", R] || {A, #{<<"otp_release">> := R}} <- Erls] of
        [] -> "?";
        Rs -> lists:join(", ", Rs)
    end.

aliases([]) -> "(default)";
aliases(Pairs) -> lists:join(", ", [io_lib:format("~ts=~ts", [text(A), text(V)])
                                    || {A, V} <- Pairs]).

text(A) when is_atom(A) -> atom_to_list(A);
text(T) -> T.

fmt(X) -> beamscale_report_svg:fmt(X).

report(#{dir := Dir, jobs := Jobs, failures := Failures, sanity := Sanity}) ->
    io:format("~nRun directory: ~ts (~b jobs)~nSanity check:~n", [Dir, Jobs]),
    %% A field width would cut longer names: pad to the longest instead.
    Width = lists:max([16 | [string:length(B) || {B, _} <- Sanity]]),
    [io:format("  ~ts ~ts~n", [string:pad(B, Width), beamscale_sanity:format(V)])
     || {B, V} <- Sanity],
    SanityFailed = [B || {B, {failed, _}} <- Sanity],
    %% The report's path is the last line printed, for scripts and `make run'.
    io:format("~ts", [beamscale_profile:summary(Dir)]),
    {ok, Index} = beamscale_writer:write(Dir),
    io:format("Report:~n~ts~n", [Index]),
    case {Failures, SanityFailed} of
        {0, []} -> ok;
        {0, _} -> {failed, io_lib:format("sanity check failed for ~s",
                                         [lists:join(", ", SanityFailed)])};
        {N, _} ->
            %% The last N rows are this run's; the first of them says what went wrong, also
            %% under --quiet.
            Rows = beamscale_store:failures(Dir),
            #{reason := First} = lists:nth(length(Rows) - N + 1, Rows),
            {failed, io_lib:format("~b failed (iterations, or jobs that could not start; see ~ts)"
                                   "; the first: ~ts",
                                   [N, beamscale_format_rundir:path(Dir, failures), First])}
    end.
