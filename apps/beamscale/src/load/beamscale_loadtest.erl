%% @doc One load run, end to end, for `beamscale load' and for studies that run many load levels:
%% load nodes up (if the scenario asks), the target nodes sampled (`beamscale_sampler' writes
%% `samples.csv') for the whole run, the load run itself (`beamscale_load_run'), then the run
%% directory: `load.csv' (a row a second, written as it goes), `summary.json', `run.json' and
%% `index.html' (`beamscale_writer'). Load nodes and the sampler are stopped whatever happens.
-module(beamscale_loadtest).

-export([run/2, run/3, watched/2, format_error/1]).
-export_type([opts/0, outcome/0]).

%% The reasons the closing lines name; errors.csv and summary.json have them all.
-define(TOP_REASONS, 5).

%% dir: the run directory itself; label: the `env' of samples.csv (default: the scenario file's
%% base name); cookie: of existing target nodes (run/2); quiet: no live line, no closing lines;
%% sample_interval: ms between samples (default 1000); msacc: the share (%) of each interval
%% microstate accounting is on (default 10, beamscale_sampler); web: the live page's server,
%% fed each second (`beamscale_web_load'); profile: a CPU profile of each sampled target node
%% in the middle of the run (docs/profiles.md); resolution_ms: the agents' report interval, rows
%% of each in load_fine.csv when under a second (default 1000: none); on_load_nodes: what to do
%% on the load nodes once they are up, before any user (an amoc scenario's init/0,
%% beamscale_loadtest_amoc), and its undoing before they stop; summary_extra: keys of a
%% load's own added to summary.json when the users are done (an amoc scenario's figures);
%% throttle: what `ctl throttle NAME RATE' changes (an amoc scenario's, beamscale_loadtest_ctl).
%% A finished load's figures the command's exit status depends on.
-type outcome() :: #{stopped := atom(), requests := non_neg_integer(),
                     errors := non_neg_integer(), load_nodes_down := non_neg_integer(),
                     thresholds := [beamscale_stats_threshold:verdict()],
                     aborted_by := [binary()]}.
-type opts() :: #{dir := file:filename(), seed => integer(), quiet => boolean(),
                  label => binary(), cookie => atom(), sample_interval => pos_integer(),
                  msacc => 0..100, web => beamscale_web:web(), ctl => beamscale_web:web(),
                  metrics => beamscale_web:web(), profile => beamscale_profile:opts(),
                  resolution_ms => pos_integer(),
                  thresholds => [beamscale_stats_threshold:threshold()],
                  on_load_nodes => fun(([node()]) -> {ok, fun(() -> ok)} | {error, term()}),
                  summary_extra => fun(() -> #{atom() => term()}),
                  throttle => beamscale_loadtest_ctl:throttle()}.

%% @doc Resolve the scenario's targets (start the nodes it starts), run it, stop them.
-spec run(beamscale_load_scenario:scenario(), opts()) ->
    {ok, file:filename(), outcome()} | {error, {module(), term()}}.
run(Scenario, Opts) ->
    case beamscale_node:distribute() of
        {ok, _} -> resolve(Scenario, Opts);
        {error, Reason} -> {error, {?MODULE, Reason}}
    end.

resolve(Scenario0, Opts) ->
    Cookie = maps:get(cookie, Opts, undefined),
    Scenario = beamscale_loadtest_profile:scenario(Scenario0, Opts),
    case beamscale_loadtest_targets:resolve(maps:get(targets, Scenario), Cookie) of
        {ok, Targets, Started} ->
            try beamscale_loadtest_targets:check_calls(Scenario, Targets) of
                ok -> run(Scenario, Targets, Opts);
                {error, _} = Error -> Error
            after beamscale_loadtest_targets:stop(Started)
            end;
        {error, _} = Error -> Error
    end.

%% @doc Run `Scenario' against resolved targets (`beamscale_loadtest_targets:resolve/2') and
%% write the run directory `dir'; returns it and the run's outcome.
-spec run(beamscale_load_scenario:scenario(), #{atom() => map()}, opts()) ->
    {ok, file:filename(), outcome()} | {error, {module(), term()}}.
run(Scenario, Targets, Opts) when not is_map_key(seed, Opts) ->
    %% Each run its own draw of arrivals and think times, written to run.json to be drawn again;
    %% a Tsung file's `<option name="seed">' fixes it.
    Seed = case Scenario of
               #{seed := S} -> S;
               _ -> beamscale_load_run:new_seed()
           end,
    run(Scenario, Targets, Opts#{seed => Seed});
run(#{load_nodes := N} = Scenario, Targets, #{dir := Dir} = Opts) ->
    {ok, _} = beamscale_node:distribute(),
    ok = beamscale_format_file:written(filelib:ensure_path(Dir), Dir),
    case beamscale_loadtest_nodes:start(N, beamscale_loadtest_nodes:user_code(Scenario)) of
        {ok, LoadNodes} ->
            Nodes = [Node || #{node := Node} <- LoadNodes],
            %% The file limit of every process that holds users, checked before the load.
            try beamscale_loadtest_files:check_nodes(Scenario, Nodes) of
                {ok, Limit} ->
                    Procs = #{file_limit => Limit, os_pids => os_pids(LoadNodes)},
                    set_up(Nodes, Opts, fun() -> measure(Scenario, Targets, Opts,
                                                         {Nodes, Procs})
                                        end);
                {error, _} = Error -> Error
            after beamscale_loadtest_nodes:stop(LoadNodes)
            end;
        {error, Reason} -> {error, {?MODULE, {load_nodes, Reason}}}
    end.

set_up(Nodes, #{on_load_nodes := SetUp}, Measure) when Nodes =/= [] ->
    case SetUp(Nodes) of
        {ok, Undo} -> try Measure() after Undo() end;
        {error, _} = Error -> Error
    end;
set_up(_Nodes, _Opts, Measure) -> Measure().

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({distribution, R}) ->
    ["cannot make this node distributed: ", beamscale_error:format(R)];
format_error({load_nodes, R}) -> ["cannot start load nodes: ", beamscale_error:format(R)];
format_error({sampler, R}) -> ["cannot start the sampler: ", beamscale_error:format(R)].

os_pids([]) -> [os:getpid()];
os_pids(LoadNodes) -> [where_pid(H) || H <- LoadNodes].

%% A node on another host: its memory is read there.
where_pid(#{ssh := _, node := Node} = H) -> {Node, beamscale_node:os_pid(H)};
where_pid(H) -> beamscale_node:os_pid(H).

measure(Scenario, Targets, #{dir := Dir} = Opts, Nodes) ->
    Started = beamscale_runinfo:now_iso(),
    {Watched, Notes} = watched(Scenario, Targets),
    %% Hosts (docs/samples.md, "Host rows"): their reading nodes live as long as the run.
    {Hosts, HostNodes, HostNotes} = beamscale_loadtest_hosts:start(Scenario, Targets),
    try beamscale_sampler:start(#{dir => Dir, bench => <<"load">>, env => label(Scenario, Opts),
                                  interval => maps:get(sample_interval, Opts, 1000),
                                  msacc => msacc(Opts)}) of
        {ok, Sampler} -> measure(Scenario, Targets, Opts, Nodes, Sampler, Watched ++ Hosts,
                                 #{started => Started, notes => Notes ++ HostNotes});
        {error, Reason} -> {error, {?MODULE, {sampler, Reason}}}
    after beamscale_loadtest_hosts:stop(HostNodes)
    end.

measure(Scenario, Targets, #{dir := Dir} = Opts, Nodes, Sampler, Watched, Info0) ->
    Phase = beamscale_seconds_phase:start(Sampler, Scenario),
    ok = beamscale_sampler:watch(Sampler, Watched),
    Quiet = maps:get(quiet, Opts, false),
    {LoadNodes, #{os_pids := OsPids} = Procs} = Nodes,
    Memory = beamscale_loadtest_memory:start(OsPids),
    Seconds = seconds(Scenario, Opts, Phase, Memory),
    Fine = fine(Opts),
    OnDown = fun(Down) -> Quiet orelse io:put_chars(load_node_down_line(Down)) end,
    RunOpts = maps:merge(#{on_second => beamscale_seconds:on_second(Seconds),
                           on_interval => beamscale_seconds:on_second(Fine),
                           on_load_node_down => OnDown,
                           on_event => beamscale_loadtest_ctl:on_event(Dir, page(Opts)),
                           %% ctl.json once the load takes commands: `ctl' then always finds a
                           %% load that records what it changes.
                           on_start => fun() -> ctl_start(Dir, Opts) end},
                         maps:merge(maps:with([seed, resolution_ms], Opts),
                                    beamscale_loadtest_thresholds:run_opts(
                                      maps:get(thresholds, Opts, [])))),
    RunOpts1 = case LoadNodes of
                   [] -> RunOpts;
                   _ -> Where = maps:get(load_nodes, Scenario),
                        RunOpts#{load_nodes => LoadNodes,
                                 weights => beamscale_loadtest_nodes:weights(Where),
                                 node_sources => beamscale_loadtest_nodes:sources(Where)}
               end,
    Watch = beamscale_loadtest_targets:watch(Targets, #{start => erlang:monotonic_time(millisecond),
                                               quiet => Quiet}),
    Windows = beamscale_loadtest_profile:start(1, {beamscale_load_scenario:duration_s(Scenario),
                                                   0}, Opts#{watched => Watched}),
    Result = try with_dump(Scenario, Dir,
                           fun(D) -> beamscale_load_run:run(Scenario, Targets,
                                                            maps:merge(RunOpts1, D))
                           end)
             after
                 _ = beamscale_loadtest_profile:finish(Windows, 1, {mean_rate(Scenario),
                                                                    <<"sessions/s">>}),
                 ok = beamscale_loadtest_profile:drop_maps(Scenario, Watched),
                 ok = beamscale_loadtest_ctl:stop(Dir),
                 ok = beamscale_sampler:stop(Sampler),
                 ok = beamscale_seconds:stop(Seconds),
                 ok = beamscale_seconds:stop(Fine)
             end,
    Downs = beamscale_loadtest_targets:downs(Watch),
    case Result of
        {ok, R} ->
            Info = Info0#{load_nodes => LoadNodes,
                          sampled => [N || #{target := N} <- Watched]
                              ++ [beamscale_sampler_host:label(H)
                                  || #{host_watch := _} = H <- Watched],
                          load_nodes_down => maps:get(load_nodes_down, R, []),
                          downs => Downs, memory => beamscale_loadtest_memory:peak(Memory),
                          file_limit => maps:get(file_limit, Procs)},
            write(Dir, Scenario, R, Info, Opts);
        {error, _} = Error -> unlink(Memory), exit(Memory, kill), Error
    end.

%% `--dump N' (a scenario's `dump'): `dump.log''s writer for the run's agents.
with_dump(#{dump := N}, Dir, Run) ->
    case beamscale_load_dump:open(beamscale_format_rundir:path(Dir, dump), N) of
        {ok, W} -> try Run(#{dump => {W, N}}) after beamscale_load_dump:close(W) end;
        {error, _} = Error -> Error
    end;
with_dump(_Scenario, _Dir, Run) -> Run(#{}).

%% Each second, in turn: load.csv, errors.csv and statuses.csv rows, the memory tracker, the
%% sampler told the coming second's phase, the live page (--web), the live line (unless quiet).
seconds(Scenario, #{dir := Dir} = Opts, Phase, Memory) ->
    Csv = fun(File, Header, Rows) -> csv(Dir, File, Header, Rows) end,
    [Csv(load_csv, beamscale_load_results:csv_header(),
         fun(Row) -> [beamscale_load_results:csv_row(Row)] end),
     Csv(errors, beamscale_load_results:errors_header(),
         fun beamscale_load_results:errors_rows/1),
     Csv(statuses, beamscale_load_results:statuses_header(),
         fun beamscale_load_results:statuses_rows/1),
     {beamscale_loadtest_memory, Memory},
     {beamscale_seconds_phase, Phase}]
        ++ [{beamscale_web_load, Web} || Web <- [web_start(Scenario, Opts)], Web =/= none]
        ++ [{beamscale_seconds_prom, beamscale_seconds_prom:start(Web)}
            || Web <- [maps:get(metrics, Opts, none)], Web =/= none]
        ++ [{beamscale_seconds_line, none} || not maps:get(quiet, Opts, false)].

csv(Dir, File, Header, Rows) ->
    Path = beamscale_format_rundir:path(Dir, File),
    {beamscale_seconds_csv, beamscale_seconds_csv:start(Path, Header, Rows)}.

%% Under a second (--resolution): each interval's row in load_fine.csv, load.csv's columns.
fine(#{resolution_ms := Ms, dir := Dir}) when Ms < 1000 ->
    [csv(Dir, load_fine, beamscale_load_results:csv_header(),
         fun(Row) -> [beamscale_load_results:csv_row(Row)] end)];
fine(_Opts) -> [].

%% The scenario's arrivals a second, over its phases (a profiled load's one "level").
mean_rate(#{phases := Phases} = Scenario) ->
    lists:sum([R * D || #{rate := R, duration_s := D} <- Phases])
        / max(1.0e-9, beamscale_load_scenario:duration_s(Scenario)).

%% The live page (--web) told a run begins: its phases, label and directory.
page(Opts) -> maps:get(web, Opts, none).

ctl_start(Dir, Opts) ->
    _ = [beamscale_loadtest_ctl:start(Web, Dir, page(Opts), maps:get(throttle, Opts, none))
         || Web <- [maps:get(ctl, Opts, none)], Web =/= none],
    ok.

web_start(Scenario, #{web := Web, dir := Dir} = Opts) ->
    ok = beamscale_web_load:start_run(Web, Scenario, #{dir => Dir, label => label(Scenario, Opts),
                                                       msacc => msacc(Opts)}),
    Web;
web_start(_Scenario, _Opts) -> none.

label(_Scenario, #{label := L}) -> L;
label(#{file := File}, _) ->
    unicode:characters_to_binary(filename:rootname(filename:basename(File))).

%% @doc The node targets to sample (the scenario's `sample' list), with their OS pid; and why
%% the others are not sampled.
-spec watched(beamscale_load_scenario:scenario(), #{atom() => map()}) ->
    {[beamscale_sampler:watched()], [#{target := atom(), reason := binary()}]}.
watched(#{sample := Sample}, Targets) ->
    lists:foldr(fun({Name, T}, {W, Notes}) ->
                        case watch_one(Name, T, lists:member(Name, Sample)) of
                            {ok, H} -> {[H | W], Notes};
                            host -> {W, Notes};
                            {no, Why} -> {W, [#{target => Name, reason => Why} | Notes]}
                        end
                end, {[], []}, lists:sort(maps:to_list(Targets))).

watch_one(_Name, #{host := _}, true) -> host;
watch_one(_Name, #{host := H, port := P}, false) ->
    {no, iolist_to_binary(io_lib:format("~ts:~b is host:port: no node to sample (name it in "
                                        "sample to sample its host)", [H, P]))};
watch_one(_Name, #{dir := D}, _) ->
    {no, iolist_to_binary(io_lib:format("~ts is a directory: no node to sample", [D]))};
watch_one(_Name, _T, false) -> {no, <<"not in the scenario's sample list">>};
watch_one(Name, #{node := Node}, true) ->
    case local(Node) of
        false -> {no, <<"node not on this host">>};
        true ->
            try erpc:call(Node, os, getpid, [], 5000) of
                OsPid -> {ok, #{node => Node, os_pid => OsPid, target => Name}}
            catch _:Reason -> {no, iolist_to_binary(io_lib:format("~0tp", [Reason]))}
            end
    end.

local(Node) ->
    [_, Host] = string:split(atom_to_list(Node), "@"),
    beamscale_loadtest_hosts:is_local(Host).

write(Dir, Scenario, Result, Info, Opts) ->
    Base = beamscale_load_results:summary(Result),
    Verdicts = beamscale_loadtest_thresholds:verdicts(
                 maps:get(thresholds, Opts, []), Result),
    Extra = (maps:get(summary_extra, Opts, fun() -> #{} end))(),
    Summary = (maps:merge(Extra, Base))#{
                memory => maps:get(memory, Info), events => maps:get(events, Result, []),
                thresholds => beamscale_loadtest_thresholds:json(Verdicts),
                aborted_by => maps:get(aborted_by, Result, [])},
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, summary_json),
                                    beamscale_format_json:encode(Summary)),
    Requests = [beamscale_load_results:requests_header()
                | beamscale_load_results:requests_rows(Base)],
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, requests),
                                    [beamscale_format_csv:line(L) || L <- Requests]),
    %% A run with tags only: `requests.csv''s columns a tag pair.
    _ = [beamscale_store:write_file(
           beamscale_format_rundir:path(Dir, tags),
           [beamscale_format_csv:line(L) || L <- [beamscale_load_results:tags_header() | Rows]])
         || Rows <- [beamscale_load_results:tags_rows(Base)], Rows =/= []],
    %% The named counts (match/nomatch, request_noack, a kind's own: Tsung's counters), one a row.
    Counters = [beamscale_format_csv:line([<<"counter">>, <<"count">>])
                | [beamscale_format_csv:line([K, N])
                   || {K, N} <- lists:sort(maps:to_list(maps:get(counts, Base, #{})))]],
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, counters), Counters),
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, run_json),
                                    beamscale_format_json:encode(run_info(Scenario, Info, Opts))),
    {ok, Index} = beamscale_writer:write(Dir),
    maps:get(quiet, Opts, false) orelse closing(Dir, Index, Summary, Info),
    {ok, Dir, (outcome(Summary, Info))#{thresholds => Verdicts}}.

%% What the command decides its exit status on, handed back rather than read again from the
%% files just written.
outcome(Summary, Info) ->
    (maps:with([stopped, requests, errors, aborted_by], Summary))#{
        load_nodes_down => length(maps:get(load_nodes_down, Info))}.

%% The closing lines: where the run is, its counts, its errors by reason, and what cut it short.
closing(Dir, Index, Summary,
        #{downs := Downs, memory := Memory, file_limit := Limit} = Info) ->
    #{latency_corrected := #{p99_ms := P99}, latency_uncorrected := #{p99_ms := U99}} = Summary,
    #{sessions_started := Started, sessions_done := Done, errors_by_reason := Reasons} = Summary,
    io:format("~nLoad run directory: ~ts~n~b sessions started, ~b done, ~b requests, ~b errors; "
              "p99 ~.3f ms (from intended start), ~.3f ms (from send)~n",
              [Dir, Started, Done, maps:get(requests, Summary), maps:get(errors, Summary),
               P99, U99]),
    counts_line(Summary),
    Top = beamscale_load_results:top_reasons(Reasons, ?TOP_REASONS),
    _ = Top =:= [] orelse
        io:format("errors by reason: ~ts~ts~n",
                  [lists:join("; ", [io_lib:format("~b ~ts", [N, R]) || {R, N} <- Top]),
                   case map_size(Reasons) - length(Top) of
                       0 -> "";
                       More -> io_lib:format(" (~b more reasons in errors.csv)", [More])
                   end]),
    _ = [io:put_chars(L) || L <- [beamscale_load_results:statuses_line(
                                    maps:get(statuses, Summary))], L =/= none],
    _ = maps:get(stopped, Summary) =:= time_limit andalso
        io:format("cut by the time limit after ~.1f s: ~b sessions started, ~b done~n",
                  [maps:get(duration_s, Summary), Started, Done]),
    _ = maps:get(stopped, Summary) =:= interrupted andalso
        io:format("interrupted after ~.1f s: arrivals stopped, sessions in flight given the "
                  "drain; ~b sessions started, ~b done~n",
                  [maps:get(duration_s, Summary), Started, Done]),
    _ = maps:get(stopped, Summary) =:= aborted andalso
        io:format("aborted after ~.1f s by the threshold ~ts: the users in flight ended~n",
                  [maps:get(duration_s, Summary),
                   lists:join(", ", maps:get(aborted_by, Summary))]),
    [io:format("target ~p: node ~p went down at ~.1f s~n", [T, N, At])
     || #{target := T, node := N, at_s := At} <- Downs],
    [io:put_chars(load_node_down_line(D)) || D <- maps:get(load_nodes_down, Info)],
    [io:format("~ts (from ~.1f s into the run)~n", [E, T])
     || #{lasted_s := _, t_s := T, event := E} <- maps:get(events, Summary)],
    io:put_chars(beamscale_loadtest_memory:closing_line(Memory)),
    _ = [io:put_chars(L)
         || L <- [beamscale_loadtest_files:emfile_line(Reasons, Limit)], L =/= none],
    io:put_chars(beamscale_profile:notes(Dir)),
    io:format("~ts~n", [Index]).

%% The counters of the run files' table (`beamscale_format_load') the first line leaves out,
%% those the run counted (timeouts, bytes, rows...).
counts_line(Summary) ->
    First = [sessions_started, sessions_done, requests, errors],
    Parts = [io_lib:format("~b ~ts", [N, L])
             || #{key := K, label := L} <- beamscale_format_load:counters(),
                not lists:member(K, First), N <- [maps:get(K, Summary, 0)], N > 0],
    _ = Parts =:= [] orelse io:format("~ts~n", [lists:join(", ", Parts)]),
    ok.

%% One line, at once and in the closing lines: a load node gone takes its share of the users.
load_node_down_line(#{node := N, at_s := At, reason := Why}) ->
    io_lib:format("load node ~p went down at ~.1f s (~ts): its users stopped there, the load "
                  "offered was less than asked~n", [N, At, down_reason(Why)]).

down_reason(Why) -> io_lib:format("~0tp", [Why], [{chars_limit, 200}]).

msacc(Opts) -> maps:get(msacc, Opts, maps:get(msacc, beamscale_sampler:defaults())).

run_info(#{file := File} = Scenario, #{started := Started} = Info, Opts) ->
    {ok, Host} = inet:gethostname(),
    #{tool => <<"beamscale">>, kind => load, scenario => {string, File},
      host => list_to_binary(Host), logical_cores => erlang:system_info(logical_processors),
      otp_release => list_to_binary(erlang:system_info(otp_release)),
      started => Started, ended => beamscale_runinfo:now_iso(),
      phases => [beamscale_runinfo:to_json(P) || P <- maps:get(phases, Scenario)],
      time_limit_s => maps:get(time_limit_s, Scenario), label => label(Scenario, Opts),
      load_nodes => [atom_to_binary(N) || N <- maps:get(load_nodes, Info)],
      sampled => maps:get(sampled, Info), msacc => msacc(Opts),
      resolution_ms => maps:get(resolution_ms, Opts, beamscale_load_intervals:default_ms()),
      seed => maps:get(seed, Opts),
      not_sampled => [beamscale_runinfo:to_json(N) || N <- maps:get(notes, Info)],
      warnings => maps:get(warnings, Scenario, []),
      targets_down => [beamscale_runinfo:to_json(D) || D <- maps:get(downs, Info)],
      load_nodes_down => [#{node => atom_to_binary(N), at_s => At,
                            reason => unicode:characters_to_binary(down_reason(Why))}
                          || #{node := N, at_s := At, reason := Why}
                                 <- maps:get(load_nodes_down, Info)]}.
