%% The sampler against real peer nodes: rows at about one per interval per node, a node killed
%% from outside ends its sampling cleanly, the counters are off on the node afterwards, and a run
%% through the coordinator leaves samples.csv and its summary in the run directory; microstate
%% accounting is on for its share of each interval only. A sampler that cannot open its run
%% directory says so at start, and one whose owner dies ends with it.
-module(beamscale_sampler_SUITE).
-include_lib("common_test/include/ct.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([rows_per_second/1, node_killed/1, run_writes_samples/1, no_sample/1,
         msacc_window/1, msacc_off/1, msacc_late_watch/1, bad_dir/1, owner_dies/1]).
-export([rows_per_second/0, node_killed/0, run_writes_samples/0, no_sample/0, msacc_window/0,
         msacc_off/0, msacc_late_watch/0, bad_dir/0, owner_dies/0]).

-define(WATCH_MS, 3500).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [rows_per_second, node_killed, run_writes_samples, no_sample, msacc_window, msacc_off,
          msacc_late_watch, bad_dir, owner_dies].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

%% Two nodes watched for 3.5 s at the default 1 s interval: 3 ticks and the last part interval.
%% A loaded 2-core host may delay a tick past the stop, so 2 rows pass too: still "about one a
%% second", where a sampler that does not repeat gives 1 and one that races gives many more.
rows_per_second() -> [{doc, "Two nodes watched 3.5 s get 2 to 5 ok rows each."}].
rows_per_second(Config) ->
    Dir = ?config(priv_dir, Config) ++ "/rows",
    [H1, H2] = Handles = [start_node("a"), start_node("b")],
    try
        {ok, S} = beamscale_sampler:start(#{dir => Dir, bench => <<"b">>, env => <<"e">>}),
        ok = beamscale_sampler:watch(S, Handles),
        ok = beamscale_sampler:set_args(S, <<"[1,2]">>),
        timer:sleep(?WATCH_MS),
        ok = beamscale_sampler:stop(S),
        false = is_process_alive(S),
        Rows = read(Dir),
        [begin
             Mine = [R || #{node := N} = R <- Rows, N =:= atom_to_binary(Node)],
             true = length(Mine) >= 2 andalso length(Mine) =< 5,
             [<<"ok">>] = lists:usort([St || #{status := St} <- Mine]),
             [<<"[1,2]">>] = lists:usort([A || #{args := A} <- Mine])
         end || #{node := Node} <- Handles],
        [counters_off(H) || H <- Handles],
        [#{samples := N}] = beamscale_stats_samples:summarise(Rows),
        true = N =:= length(Rows),
        true = filelib:is_regular(filename:join(Dir, "samples_summary.csv")),
        [_, _] = [L || #{status := <<"not_available">>} = L
                           <- beamscale_store:read_rows(filename:join(Dir, "lcnt.csv"))]
    after
        [beamscale_node:stop(H) || H <- [H1, H2]]
    end.

%% A node killed with SIGKILL gets one `down' row and no row after it; the sampler lives on and
%% keeps sampling the other node.
node_killed() -> [{doc, "A SIGKILLed node ends with one down row; others sampled on."}].
node_killed(Config) ->
    Dir = ?config(priv_dir, Config) ++ "/killed",
    [Victim, Other] = [start_node("victim"), start_node("other")],
    try
        {ok, S} = beamscale_sampler:start(#{dir => Dir, bench => <<"b">>, env => <<"e">>,
                                            interval => 300}),
        ok = beamscale_sampler:watch(S, [Victim, Other]),
        timer:sleep(1000),
        _ = os:cmd("kill -9 " ++ beamscale_node:os_pid(Victim)),
        timer:sleep(1500),
        true = is_process_alive(S),
        ok = beamscale_sampler:unwatch(S, [Victim]),
        ok = beamscale_sampler:stop(S),
        Rows = read(Dir),
        VictimName = atom_to_binary(maps:get(node, Victim)),
        Statuses = [St || #{node := N, status := St} <- Rows, N =:= VictimName],
        [<<"down">> | Before] = lists:reverse(Statuses),
        true = length(Before) >= 2,
        [<<"ok">>] = lists:usort(Before),
        %% Sampled on after the death: rows of the other node follow the down row (1.5 s at
        %% 300 ms gives about 5; 2 is enough to tell, and holds on a loaded host).
        OtherName = atom_to_binary(maps:get(node, Other)),
        {_, [_Down | After]} = lists:splitwith(
                                 fun(#{node := N, status := St}) ->
                                         not (N =:= VictimName andalso St =:= <<"down">>)
                                 end, Rows),
        true = length([R || #{node := N} = R <- After, N =:= OtherName]) >= 2,
        counters_off(Other)
    after
        [beamscale_node:stop(H) || H <- [Victim, Other]]
    end.

%% A whole run: samples.csv has rows for every job, the summary a line per benchmark and args.
run_writes_samples() -> [{doc, "A run writes samples.csv and a summary per bench/args."}].
run_writes_samples(Config) ->
    Out = ?config(priv_dir, Config) ++ "/runs",
    {ok, Conf} = beamscale_config:load(undefined, [{benchmarks, [big]}, {schedulers, [1, 2]},
                                                    {iterations, 1}, {launches, 1},
                                                    {warmups, 0}, {out, Out}, {name, "s"}]),
    {ok, #{dir := Dir}} = beamscale_coordinator:run(Conf, quiet),
    Rows = read(Dir),
    [<<"big">>] = lists:usort([B || #{benchmark := B} <- Rows]),
    [<<"default/default/1/1">>, <<"default/default/2/1">>] =
        lists:usort([E || #{env := E} <- Rows]),
    Summary = beamscale_store:read_rows(filename:join(Dir, "samples_summary.csv")),
    2 = length(Summary).

no_sample() -> [{doc, "sample false writes no samples.csv; a bad value is refused."}].
no_sample(Config) ->
    Out = ?config(priv_dir, Config) ++ "/runs",
    {ok, Conf} = beamscale_config:load(undefined, [{benchmarks, [big]}, {schedulers, [1]},
                                                    {iterations, 1}, {launches, 1},
                                                    {warmups, 0}, {out, Out},
                                                    {name, "n"}, {sample, false}]),
    {ok, #{dir := Dir}} = beamscale_coordinator:run(Conf, quiet),
    false = filelib:is_regular(filename:join(Dir, "samples.csv")),
    {error, {beamscale_config, _}} = beamscale_config:load(undefined, [{sample, 5}]).

%% With msacc on for 25 % of each 200 ms interval, the schedulers' msacc counters grow by about a
%% quarter of the wall time (all of it when always on), and the rows still hold a breakdown.
msacc_window() -> [{doc, "msacc at 25 % counts ~1/4 of the time; states sum to 100."}].
msacc_window(Config) ->
    Dir = ?config(priv_dir, Config) ++ "/window",
    [Quarter, Always] = [msacc_counted(Dir ++ integer_to_list(Pct), Pct) || Pct <- [25, 100]],
    ct:pal("msacc counted ~.3f of the time at 25 %, ~.3f at 100 %", [Quarter, Always]),
    true = Quarter > 0.15 andalso Quarter < 0.4,
    true = Always > 0.9,
    Rows = [R || #{status := <<"ok">>} = R <- read(Dir ++ "25")],
    true = length(Rows) >= 5,
    [true = abs(100 - msacc_sum(R)) < 1 || R <- Rows].

%% msacc 0: never switched on, its columns are empty.
msacc_off() -> [{doc, "msacc 0 is never switched on; the msacc columns stay empty."}].
msacc_off(Config) ->
    Dir = ?config(priv_dir, Config) ++ "/off",
    0.0 = msacc_counted(Dir, 0),
    [_ | _] = Rows = [R || #{status := <<"ok">>} = R <- read(Dir)],
    [<<>>] = lists:usort([E || #{msacc_sched_emulator := E} <- Rows]).

%% A node watched between two readings still gets its windows aligned to the sampler's ticks:
%% every row has a full breakdown, or none when the node was too busy to open that interval's
%% window (the probe skips ticks it missed; documented as empty columns). Most rows have one;
%% no row has a part breakdown.
msacc_late_watch() -> [{doc, "A node watched late gets full msacc rows (or empty ones)."}].
msacc_late_watch(Config) ->
    Dir = ?config(priv_dir, Config) ++ "/late",
    H = start_node("late"),
    try
        {ok, S} = beamscale_sampler:start(#{dir => Dir, bench => <<"b">>, env => <<"e">>,
                                            interval => 200, msacc => 10}),
        timer:sleep(130),
        ok = beamscale_sampler:watch(S, [H]),
        timer:sleep(1050),
        ok = beamscale_sampler:stop(S),
        Rows = [R || #{status := <<"ok">>} = R <- read(Dir)],
        true = length(Rows) >= 5,
        Kinds = [msacc_kind(R) || R <- Rows],
        ct:pal("msacc rows of the late node: ~p", [Kinds]),
        [] = [K || K <- Kinds, K =/= full, K =/= empty],
        true = 2 * length([full || full <- Kinds]) >= length(Kinds)
    after
        beamscale_node:stop(H)
    end.

%% A run directory under a regular file cannot be created: start says so at once, no process is
%% left behind, and calls on `none' stay no-ops.
bad_dir() -> [{doc, "A sampler whose run directory cannot be made returns an error at start."}].
bad_dir(Config) ->
    File = filename:join(?config(priv_dir, Config), "plain_file"),
    ok = file:write_file(File, <<"not a directory">>),
    Before = erlang:processes(),
    T0 = erlang:monotonic_time(millisecond),
    {error, Reason} = beamscale_sampler:start(#{dir => filename:join(File, "run"),
                                                bench => <<"b">>, env => <<"e">>}),
    Ms = erlang:monotonic_time(millisecond) - T0,
    ct:pal("start failed in ~b ms: ~p", [Ms, Reason]),
    true = Ms < 5000,
    ok = no_sampler_left(Before, 50),
    ok = beamscale_sampler:watch(none, []),
    ok = beamscale_sampler:stop(none).

%% The sampler ends when the process that started it ends, without a stop, and still rewrites
%% the summary; calls on the ended sampler are no-ops.
owner_dies() -> [{doc, "A sampler ends with its owner and still rewrites the summary."}].
owner_dies(Config) ->
    Dir = ?config(priv_dir, Config) ++ "/owner",
    Self = self(),
    Owner = spawn(fun() ->
                          Self ! {sampler, beamscale_sampler:start(#{dir => Dir, bench => <<"b">>,
                                                                     env => <<"e">>})},
                          receive die -> ok end
                  end),
    S = receive {sampler, {ok, Pid}} -> Pid after 5000 -> ct:fail(no_sampler) end,
    Ref = monitor(process, S),
    true = is_process_alive(S),
    Owner ! die,
    receive {'DOWN', Ref, process, S, normal} -> ok after 5000 -> ct:fail(sampler_lives_on) end,
    true = filelib:is_regular(filename:join(Dir, "samples_summary.csv")),
    ok = beamscale_sampler:set_args(S, <<"[1]">>),
    ok = beamscale_sampler:stop(S).

%% A failed init acknowledges before it exits: give the process a moment to be gone.
no_sampler_left(Before, Tries) ->
    case [P || P <- erlang:processes() -- Before,
               proc_lib:translate_initial_call(P) =:= {beamscale_sampler, init, 1}] of
        [] -> ok;
        Left when Tries =:= 0 -> {left, Left};
        _ -> timer:sleep(20), no_sampler_left(Before, Tries - 1)
    end.

%% The share of 2 s of wall time the node's normal schedulers counted in msacc while watched.
msacc_counted(Dir, Pct) ->
    #{node := Node} = H = start_node("msacc" ++ integer_to_list(Pct)),
    try
        {ok, S} = beamscale_sampler:start(#{dir => Dir, bench => <<"b">>, env => <<"e">>,
                                            interval => 200, msacc => Pct}),
        ok = beamscale_sampler:watch(S, [H]),
        {C0, T0} = sched_msacc(Node),
        timer:sleep(2000),
        {C1, T1} = sched_msacc(Node),
        ok = beamscale_sampler:stop(S),
        counters_off(H),
        (C1 - C0) / (2 * (T1 - T0))
    after
        beamscale_node:stop(H)
    end.

%% Time counted by the two normal schedulers' msacc, and the node's clock, both in perf_counter
%% units.
sched_msacc(Node) ->
    Threads = erpc:call(Node, erlang, statistics, [microstate_accounting]),
    {lists:sum([lists:sum(maps:values(C)) || #{type := scheduler, counters := C} <- Threads]),
     erpc:call(Node, os, perf_counter, [])}.

msacc_kind(Row) ->
    case lists:usort([V || {K, V} <- maps:to_list(Row),
                           lists:prefix("msacc_sched_", atom_to_list(K))]) of
        [<<>>] -> empty;
        _ -> case abs(100 - msacc_sum(Row)) < 1 of
                 true -> full;
                 false -> {part, msacc_sum(Row)}
             end
    end.

msacc_sum(Row) ->
    lists:sum([beamscale_format_csv:number(V)
               || {K, V} <- maps:to_list(Row), lists:prefix("msacc_sched_", atom_to_list(K))]).

start_node(Label) ->
    {ok, H} = beamscale_node:start(Label, #{erl => os:find_executable("erl"), flags => "",
                                            schedulers => 2}),
    H.

read(Dir) -> beamscale_store:read_rows(filename:join(Dir, "samples.csv")).

%% scheduler_wall_time reports `undefined' when off; microstate accounting keeps its frozen
%% counters, but switching it off again says it was off already.
counters_off(#{node := Node}) ->
    undefined = erpc:call(Node, erlang, statistics, [scheduler_wall_time]),
    false = erpc:call(Node, erlang, system_flag, [microstate_accounting, false]).
