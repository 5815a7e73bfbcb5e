%% @doc The sampler: a process beside a job that, every interval, reads each watched node's OS
%% CPU (`/proc'), the host's CPU, and the node's scheduler, microstate, run queue, memory and IO
%% counters, and appends one row per node to `samples.csv' in the run directory
%% (docs/samples.md). Watching a node switches `scheduler_wall_time' and microstate accounting on
%% there; unwatching (or the sampler's end) switches them off. A node that dies gets a `down' row
%% and is not sampled again; the sampler never takes the run down with it.
-module(beamscale_sampler).

-export([start/1, watch/2, unwatch/2, set_args/2, stop/1, write_summary/1, defaults/0]).
-export_type([opts/0, sampler/0, watched/0]).

%% `interval': ms between readings (default 1000); `msacc': the share (%) of each interval
%% microstate accounting is on, from its start (default 10; 0 leaves it off, and the msacc
%% columns of an interval it counted nothing in are empty, `beamscale_sample_calc:msacc/2').
-type opts() :: #{dir := file:filename(), bench := binary(), env := binary(),
                  interval => pos_integer(), msacc => 0..100, lcnt_top => pos_integer()}.
-type sampler() :: pid() | none.
%% A node to watch: a `beamscale_node' handle, or any node on this host with its OS pid.
-type watched() :: #{node := node(), os_pid := string(), atom() => term()}.

-define(DEFAULT_INTERVAL, 1000).
-define(DEFAULT_MSACC_PCT, 10).
-define(LCNT_TOP, 10).
-define(READ_TIMEOUT, 500).
-define(RPC_TIMEOUT, 5000).
-define(CALL_TIMEOUT, 60000).
-define(PROBE, beamscale_bench_probe).
-define(LCNT_HEADER,
        [benchmark, env, node, status, lock, tries, collisions, collision_pct, wait_us]).

%% @doc The options a sampler fills in when not given.
-spec defaults() -> #{interval := pos_integer(), msacc := 0..100, lcnt_top := pos_integer()}.
defaults() ->
    #{interval => ?DEFAULT_INTERVAL, msacc => ?DEFAULT_MSACC_PCT, lcnt_top => ?LCNT_TOP}.

%% @doc Start a sampler for one job; it ends when stopped or when its caller ends.
-spec start(opts()) -> {ok, pid()}.
start(Opts0) ->
    Opts = options(Opts0),
    Owner = self(),
    {ok, proc_lib:spawn(fun() -> init(Owner, Opts) end)}.

%% @doc Start sampling these nodes (handles of `beamscale_node', or nodes with their OS pid).
-spec watch(sampler(), [watched()]) -> ok.
watch(Sampler, Handles) -> call(Sampler, {watch, Handles}).

%% @doc Stop sampling these nodes and switch their counters off; call it before stopping them.
-spec unwatch(sampler(), [watched()]) -> ok.
unwatch(Sampler, Handles) -> call(Sampler, {unwatch, Handles}).

%% @doc The argument set the rows from now on belong to.
-spec set_args(sampler(), binary()) -> ok.
set_args(Sampler, Args) -> call(Sampler, {args, Args}).

%% @doc Unwatch every node, close the files and rewrite `samples_summary.csv'.
-spec stop(sampler()) -> ok.
stop(Sampler) -> call(Sampler, stop).

%% @doc Rewrite `samples_summary.csv' of a run directory from its `samples.csv'.
-spec write_summary(file:filename()) -> ok.
write_summary(Dir) ->
    Rows = beamscale_store:read_rows(filename:join(Dir, "samples.csv")),
    beamscale_store:write_file(filename:join(Dir, "samples_summary.csv"),
                               beamscale_stats_samples:csv(Rows)).

%%% The process

options(Opts) ->
    maps:merge(defaults(), Opts).

init(Owner, #{dir := Dir, interval := Interval} = Opts) ->
    OwnerRef = monitor(process, Owner),
    ok = filelib:ensure_path(Dir),
    {_, Fd} = beamscale_store:open_csv(filename:join(Dir, "samples.csv"),
                                       beamscale_sample_calc:columns()),
    Next = now_ms() + Interval,
    _ = erlang:send_after(Next, self(), tick, [{abs, true}]),
    loop(#{opts => Opts, fd => Fd, owner => OwnerRef, nodes => #{}, args => <<>>,
           next => Next, cores => beamscale_os:logical_cores(), ticks => clock_ticks()}).

loop(#{owner := OwnerRef} = State) ->
    receive
        tick -> loop(tick(State));
        {call, From, Ref, stop} ->
            finish(State),
            From ! {Ref, ok};
        {call, From, Ref, Request} ->
            State1 = handle(Request, State),
            From ! {Ref, ok},
            loop(State1);
        {'DOWN', OwnerRef, process, _, _} ->
            finish(State)
    end.

handle({watch, Handles}, State) -> lists:foldl(fun add_node/2, State, Handles);
handle({unwatch, Handles}, State) -> lists:foldl(fun drop_node/2, State, Handles);
handle({args, Args}, #{nodes := Nodes} = State) ->
    State#{args := Args, nodes := maps:map(fun(_, #{meta := M} = N) -> N#{meta := M#{args := Args}}
                                           end, Nodes)}.

finish(#{nodes := Nodes, fd := Fd, opts := #{dir := Dir}} = State) ->
    #{nodes := _} = maps:fold(fun(_, #{handle := H}, S) -> drop_node(H, S) end, State, Nodes),
    ok = file:close(Fd),
    write_summary(Dir).

%% Readings are taken on a fixed schedule; a late tick skips the intervals it missed.
tick(#{nodes := Nodes, fd := Fd, next := Next, opts := #{interval := Interval}} = State) ->
    {Rows, Nodes1} = maps:fold(fun sample/3, {[], Nodes}, Nodes),
    ok = file:write(Fd, [beamscale_format_csv:line(R) || R <- lists:reverse(Rows)]),
    Now = now_ms(),
    Next1 = Next + Interval * (1 + max(0, (Now - Next) div Interval)),
    _ = erlang:send_after(Next1, self(), tick, [{abs, true}]),
    State#{nodes := Nodes1, next := Next1}.

sample(Node, #{handle := H, meta := Meta, prev := Prev} = N, {Rows, Nodes}) ->
    case read(H) of
        {ok, Cur} -> {[beamscale_sample_calc:row(Meta, Prev, Cur) | Rows],
                      Nodes#{Node := N#{prev := Cur}}};
        {error, timeout} -> {[beamscale_sample_calc:status_row(Meta, stamp(), timeout) | Rows],
                             Nodes};
        {error, _} -> {[beamscale_sample_calc:status_row(Meta, stamp(), down) | Rows],
                       maps:remove(Node, Nodes)}
    end.

add_node(#{node := Node} = H, #{nodes := Nodes} = State) when is_map_key(Node, Nodes) ->
    State#{nodes := Nodes#{Node := (maps:get(Node, Nodes))#{handle := H}}};
add_node(#{node := Node} = H, #{nodes := Nodes, fd := Fd} = State) ->
    Meta0 = meta(H, State),
    case start_probe(Node, State) of
        {ok, #{holder := Holder} = Info} ->
            case read(H) of
                {ok, First} ->
                    Meta = Meta0#{t0 := maps:get(mono, First),
                                  schedulers := maps:get(schedulers, Info),
                                  dirty_cpu := maps:get(dirty_cpu, Info)},
                    State#{nodes := Nodes#{Node => #{handle => H, meta => Meta, prev => First,
                                                     holder => Holder}}};
                {error, _} ->
                    _ = catch erpc:call(Node, ?PROBE, stop, [Holder], ?RPC_TIMEOUT),
                    write_status(Fd, Meta0, down),
                    State
            end;
        {error, _} ->
            write_status(Fd, Meta0, down),
            State
    end.

drop_node(#{node := Node}, #{nodes := Nodes, fd := Fd} = State) ->
    case maps:take(Node, Nodes) of
        {#{holder := Holder, meta := Meta} = N, Rest} ->
            %% The part interval since the last tick is kept too: short jobs get a row.
            {Rows, _} = sample(Node, N, {[], Nodes}),
            ok = file:write(Fd, [beamscale_format_csv:line(R) || R <- Rows]),
            record_lcnt(Node, Meta, State),
            _ = catch erpc:call(Node, ?PROBE, stop, [Holder], ?RPC_TIMEOUT),
            State#{nodes := Rest};
        error -> State
    end.

meta(#{node := Node}, #{opts := #{bench := B, env := E}, args := A, cores := C, ticks := T}) ->
    #{bench => B, env => E, args => A, node => atom_to_binary(Node), t0 => now_us(),
      cores => C, ticks => T, schedulers => 1, dirty_cpu => 0}.

%% The probe is part of the node-side code the executor loads; other nodes get it here.
start_probe(Node, #{opts := Opts, next := Next}) ->
    try
        ok = beamscale_code:ensure(Node, ?PROBE),
        ProbeOpts = (maps:with([interval, msacc], Opts))#{next_tick => max(0, Next - now_ms())},
        erpc:call(Node, ?PROBE, start, [self(), ProbeOpts], ?RPC_TIMEOUT)
    catch
        Class:Reason -> {error, {Class, Reason}}
    end.

read(#{node := Node, os_pid := OsPid}) ->
    try
        {ok, Proc} = beamscale_sample_calc:parse_pid_stat(proc("/proc/" ++ OsPid ++ "/stat")),
        {ok, Host} = beamscale_sample_calc:parse_host_stat(proc("/proc/stat")),
        Vm = erpc:call(Node, ?PROBE, read, [], ?READ_TIMEOUT),
        {ok, (stamp())#{proc => Proc, host => Host, vm => Vm}}
    catch
        error:{erpc, timeout} ->
            {error, case beamscale_node:alive(OsPid) of true -> timeout; false -> down end};
        _:Reason -> {error, Reason}
    end.

proc(File) ->
    {ok, Bin} = file:read_file(File),
    Bin.

record_lcnt(Node, #{bench := B, env := E, node := N}, #{opts := #{dir := Dir, lcnt_top := Top}}) ->
    Rows = case catch erpc:call(Node, ?PROBE, lcnt, [], ?RPC_TIMEOUT) of
               {ok, Data} ->
                   [[B, E, N, ok, Lock, Tries, Colls, pct(Colls, Tries), Wait]
                    || {Lock, Tries, Colls, Wait} <- beamscale_sample_calc:lcnt_top(Data, Top)];
               _ -> [[B, E, N, not_available, <<>>, <<>>, <<>>, <<>>, <<>>]]
           end,
    {_, Fd} = beamscale_store:open_csv(filename:join(Dir, "lcnt.csv"), ?LCNT_HEADER),
    ok = file:write(Fd, [beamscale_format_csv:line(R) || R <- Rows]),
    ok = file:close(Fd).

write_status(Fd, Meta, Status) ->
    Row = beamscale_sample_calc:status_row(Meta, stamp(), Status),
    ok = file:write(Fd, beamscale_format_csv:line(Row)).

pct(_, 0) -> 0.0;
pct(Part, Whole) -> round(10000 * Part / Whole) / 100.

%%% Calls: a sampler that is gone is not an error, the run goes on without it.

call(none, _Request) -> ok;
call(Pid, Request) ->
    Ref = monitor(process, Pid),
    Pid ! {call, self(), Ref, Request},
    receive
        {Ref, Reply} -> demonitor(Ref, [flush]), Reply;
        {'DOWN', Ref, process, Pid, _} -> ok
    after ?CALL_TIMEOUT ->
        demonitor(Ref, [flush]),
        ok
    end.

stamp() -> #{mono => now_us(), wall => erlang:system_time(microsecond)}.

now_us() -> erlang:monotonic_time(microsecond).

now_ms() -> erlang:monotonic_time(millisecond).

%% Linux's USER_HZ, the unit of the CPU times in /proc.
clock_ticks() ->
    case string:to_integer(os:cmd("getconf CLK_TCK")) of
        {N, _} when is_integer(N), N > 0 -> N;
        _ -> 100
    end.
