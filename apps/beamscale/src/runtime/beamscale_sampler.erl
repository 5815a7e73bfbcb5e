%% @doc The sampler: a process beside a job that, every interval, reads each watched node's OS
%% CPU (`/proc'), the host's CPU, and the node's scheduler, microstate, run queue, memory and IO
%% counters, and appends one row per node to `samples.csv' in the run directory
%% (docs/samples.md). Watching a node switches `scheduler_wall_time' and microstate accounting on
%% there; unwatching (or the sampler's end) switches them off. A node that dies gets a `down' row
%% and is not sampled again; the sampler never takes the run down with it.
%%
%% A `gen_server' (after erlperf's `erlperf_monitor'): `start/1' returns once the run directory
%% and `samples.csv' are open, or `{error, Reason}'; readings come from an absolute-time tick.
-module(beamscale_sampler).
-behaviour(gen_server).

-export([start/1, watch/2, unwatch/2, set_args/2, stop/1, write_summary/1, defaults/0]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).
-export_type([opts/0, sampler/0, watched/0]).

%% `interval': ms between readings (default 1000); `msacc': the share (%) of each interval
%% microstate accounting is on, from its start (default 10; 0 leaves it off, and the msacc
%% columns of an interval it counted nothing in are empty, `beamscale_sample_calc:msacc/2').
-type opts() :: #{dir := file:filename(), bench := binary(), env := binary(),
                  interval => pos_integer(), msacc => 0..100, lcnt_top => pos_integer()}.
%% `none' stands for no sampling: every call on it is a no-op.
-type sampler() :: pid() | none.
%% A node to watch: a `beamscale_node' handle, or any node on this host with its OS pid; or a
%% host (`beamscale_sampler_host').
-type watched() :: #{node := node(), os_pid := string(), atom() => term()}
                 | beamscale_sampler_host:watched().
-type state() :: #{opts := map(), fd := file:io_device(), owner := reference(),
                   nodes := #{node() | {host, binary()} => map()}, args := binary(),
                   next := integer(), cores := pos_integer(), ticks := pos_integer(),
                   failed => term()}.

-define(DEFAULT_INTERVAL, 1000).
-define(DEFAULT_MSACC_PCT, 10).
-define(LCNT_TOP, 10).
%% A reading is late past half the default interval: the node gets a `timeout' row and is asked
%% again at the next tick instead of delaying the other nodes' rows (docs/samples.md).
-define(READ_TIMEOUT, 500).
%% Starting and stopping the probe and collecting lcnt are one-off calls; a node that does not
%% answer them in this time is taken for down and let go.
-define(RPC_TIMEOUT, 5000).
%% A call may let go of several nodes (a few RPC_TIMEOUTs each) and rewrite the summary; past
%% this the caller goes on without the sampler rather than hang the run.
-define(CALL_TIMEOUT, 60000).
%% Init only creates the directory, opens samples.csv and asks getconf for CLK_TCK; slower than
%% this means a hung file system, and the job fails instead of waiting on it.
-define(START_TIMEOUT, 30000).
%% `getconf CLK_TCK' answers at once; the bound only guards a stuck one.
-define(GETCONF_TIMEOUT, 5000).
-define(PROBE, beamscale_bench_probe).
-define(LCNT_HEADER,
        [benchmark, env, node, status, lock, tries, collisions, collision_pct, wait_us]).

%% @doc The options a sampler fills in when not given.
-spec defaults() -> #{interval := pos_integer(), msacc := 0..100, lcnt_top := pos_integer()}.
defaults() ->
    #{interval => ?DEFAULT_INTERVAL, msacc => ?DEFAULT_MSACC_PCT, lcnt_top => ?LCNT_TOP}.

%% @doc Start a sampler for one job; it ends when stopped or when its caller ends. Returns
%% `{error, Reason}' if the run directory or `samples.csv' cannot be opened.
-spec start(opts()) -> {ok, pid()} | {error, term()}.
start(Opts) ->
    %% Not linked, so a sampler that crashes never takes the run down; it monitors its caller
    %% instead, to end with it.
    case gen_server:start(?MODULE, {self(), options(Opts)}, [{timeout, ?START_TIMEOUT}]) of
        %% Said by the caller in one line, not by a crash report of init/1 as well.
        {error, {shutdown, Reason}} -> {error, Reason};
        Started -> Started
    end.

%% @doc Start sampling these nodes (handles of `beamscale_node', or nodes with their OS pid).
-spec watch(sampler(), [watched()]) -> ok.
watch(Sampler, Handles) -> call(Sampler, {watch, Handles}).

%% @doc Stop sampling these nodes and switch their counters off; call it before stopping them.
-spec unwatch(sampler(), [watched()]) -> ok.
unwatch(Sampler, Handles) -> call(Sampler, {unwatch, Handles}).

%% @doc The argument set the rows from now on belong to.
-spec set_args(sampler(), binary()) -> ok.
set_args(Sampler, Args) -> call(Sampler, {args, Args}).

%% @doc Unwatch every node, close the files and rewrite `samples_summary.csv'. A file that could
%% not be written (a full disk) is raised here, naming it (`beamscale_format_file:written/2').
-spec stop(sampler()) -> ok.
stop(Sampler) ->
    case call(Sampler, stop) of
        {error, Why} -> error(Why);
        ok -> ok
    end.

%% @doc Rewrite `samples_summary.csv' of a run directory from its `samples.csv'.
-spec write_summary(file:filename()) -> ok.
write_summary(Dir) ->
    Rows = beamscale_store:read_rows(beamscale_format_rundir:path(Dir, samples)),
    beamscale_store:write_file(beamscale_format_rundir:path(Dir, samples_summary),
                               beamscale_stats_samples:csv(Rows)).

%%% The process

options(Opts) ->
    maps:merge(defaults(), Opts).

%% @private
-spec init({pid(), opts()}) -> {ok, state()} | {stop, term()}.
init({Owner, #{dir := Dir, interval := Interval} = Opts}) ->
    OwnerRef = monitor(process, Owner),
    case open_samples(Dir) of
        {ok, Fd} ->
            Next = now_ms() + Interval,
            _ = erlang:send_after(Next, self(), tick, [{abs, true}]),
            {ok, #{opts => Opts, fd => Fd, owner => OwnerRef, nodes => #{}, args => <<>>,
                   next => Next, cores => beamscale_os:logical_cores(),
                   ticks => clock_ticks()}};
        {error, Reason} ->
            {stop, {shutdown, Reason}}
    end.

%% @private
-spec handle_call(term(), gen_server:from(), state()) ->
    {reply, ok, state()} | {stop, normal, ok | {error, term()}, state()}.
handle_call(stop, _From, State) ->
    try finish(State) of
        _ -> {stop, normal, maps:get(failed, State, ok), State}
    catch error:{beamscale_format_file, _} = Why -> {stop, normal, {error, Why}, State}
    end;
handle_call(Request, _From, State) ->
    {reply, ok, handle(Request, State)}.

%% @private
-spec handle_cast(term(), state()) -> {noreply, state()}.
handle_cast(_Request, State) -> {noreply, State}.

%% @private
-spec handle_info(term(), state()) -> {noreply, state()} | {stop, normal, state()}.
handle_info(tick, State) ->
    %% A samples.csv that cannot be written (a full disk) ends the sampling, not the sampler: the
    %% failure is told by `stop/1', in one line, rather than by a crash report.
    try {noreply, tick(State)}
    catch error:{beamscale_format_file, _} = Why -> {noreply, State#{failed => {error, Why}}}
    end;
handle_info({'DOWN', OwnerRef, process, _, _}, #{owner := OwnerRef} = State) ->
    finish(State),
    {stop, normal, State};
handle_info(_Stray, State) ->
    %% e.g. a late erpc reply; nothing else is expected.
    {noreply, State}.

%% The directory and samples.csv (kept if there, as on a rerun); `open_csv' crashes on errors.
open_samples(Dir) ->
    case filelib:ensure_path(Dir) of
        ok ->
            File = beamscale_format_rundir:path(Dir, samples),
            try beamscale_store:open_csv(File, beamscale_sample_calc:columns()) of
                {_, Fd} -> {ok, Fd}
            catch
                error:{badmatch, {error, Posix}} when is_atom(Posix) ->
                    {error, {beamscale_format_file, {write, File, Posix}}};
                error:Reason -> {error, {File, Reason}}
            end;
        {error, Reason} ->
            {error, {Dir, Reason}}
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
tick(#{nodes := Nodes, next := Next, opts := #{interval := Interval}} = State) ->
    {Rows, Nodes1} = maps:fold(fun sample/3, {[], Nodes}, Nodes),
    ok = write(State, [beamscale_format_csv:line(R) || R <- lists:reverse(Rows)]),
    Now = now_ms(),
    Next1 = Next + Interval * (1 + max(0, (Now - Next) div Interval)),
    _ = erlang:send_after(Next1, self(), tick, [{abs, true}]),
    State#{nodes := Nodes1, next := Next1}.

sample(Node, #{handle := H, meta := Meta, prev := Prev} = N, {Rows, Nodes}) ->
    case read(H) of
        {ok, Cur} when Prev =:= none -> {Rows, Nodes#{Node := N#{prev := Cur}}};
        {ok, Cur} -> {lists:reverse(rows(H, Meta, Prev, Cur), Rows),
                      Nodes#{Node := N#{prev := Cur}}};
        {error, timeout} -> {[beamscale_sample_calc:status_row(Meta, stamp(), timeout) | Rows],
                             Nodes};
        {error, _} -> {[beamscale_sample_calc:status_row(Meta, stamp(), down) | Rows],
                       maps:remove(Node, Nodes)}
    end.

add_node(#{host_watch := _} = H, #{nodes := Nodes, fd := Fd} = State) ->
    Key = beamscale_sampler_host:key(H),
    Meta = meta(H, State),
    case {maps:find(Key, Nodes), read(H)} of
        {{ok, N}, _} -> State#{nodes := Nodes#{Key := N#{handle := H}}};
        {error, {ok, #{mono := T0} = First}} ->
            State#{nodes := Nodes#{Key => #{handle => H, meta => Meta#{t0 := T0},
                                            prev => First}}};
        %% A host slow to answer at first (munin-node forking its plugins) is asked again.
        {error, {error, timeout}} ->
            write_status(Fd, Meta, timeout),
            State#{nodes := Nodes#{Key => #{handle => H, meta => Meta, prev => none}}};
        {error, {error, _}} -> write_status(Fd, Meta, down), State
    end;
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

drop_node(H, #{nodes := Nodes} = State) ->
    Key = key(H),
    case maps:take(Key, Nodes) of
        {N, Rest} ->
            %% The part interval since the last tick is kept too: short jobs get a row.
            {Rows, _} = sample(Key, N, {[], Nodes}),
            ok = write(State, [beamscale_format_csv:line(R) || R <- lists:reverse(Rows)]),
            release(N, State),
            State#{nodes := Rest};
        error -> State
    end.

%% A node's lock counts are kept and its probe stopped; a host has neither.
release(#{handle := #{node := Node}, holder := Holder, meta := Meta}, State) ->
    record_lcnt(Node, Meta, State),
    _ = catch erpc:call(Node, ?PROBE, stop, [Holder], ?RPC_TIMEOUT),
    ok;
release(_HostWatch, _State) -> ok.

key(#{host_watch := _} = H) -> beamscale_sampler_host:key(H);
key(#{node := Node}) -> Node.

meta(H, #{opts := #{bench := B, env := E}, args := A, cores := C, ticks := T}) ->
    Name = case H of
               #{host_watch := _} -> beamscale_sampler_host:label(H);
               #{node := Node} -> atom_to_binary(Node)
           end,
    #{bench => B, env => E, args => A, node => Name, t0 => now_us(),
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

rows(#{host_watch := _} = H, Meta, Prev, Cur) -> beamscale_sampler_host:rows(H, Meta, Prev, Cur);
rows(_Node, Meta, Prev, Cur) -> [beamscale_sample_calc:row(Meta, Prev, Cur)].

read(#{host_watch := _} = H) -> beamscale_sampler_host:read(H);
read(#{node := Node, os_pid := OsPid} = Watched) ->
    %% A node on another host (started through ssh): its /proc is read there.
    Where = case Watched of #{ssh := _} -> Node; _ -> here end,
    try
        {ok, Proc} = beamscale_sample_calc:parse_pid_stat(proc(Where,
                                                                "/proc/" ++ OsPid ++ "/stat")),
        {ok, Host} = beamscale_sample_calc:parse_host_stat(proc(Where, "/proc/stat")),
        Vm = erpc:call(Node, ?PROBE, read, [], ?READ_TIMEOUT),
        {ok, (stamp())#{proc => Proc, host => Host, vm => Vm}}
    catch
        error:{erpc, timeout} ->
            {error, case beamscale_node:alive(OsPid) of true -> timeout; false -> down end};
        _:Reason -> {error, Reason}
    end.

proc(here, File) ->
    {ok, Bin} = file:read_file(File),
    Bin;
proc(Node, File) ->
    {ok, Bin} = erpc:call(Node, file, read_file, [File], ?READ_TIMEOUT),
    Bin.

record_lcnt(Node, #{bench := B, env := E, node := N}, #{opts := #{dir := Dir, lcnt_top := Top}}) ->
    Rows = case catch erpc:call(Node, ?PROBE, lcnt, [], ?RPC_TIMEOUT) of
               {ok, Data} ->
                   [[B, E, N, ok, Lock, Tries, Colls, pct(Colls, Tries), Wait]
                    || {Lock, Tries, Colls, Wait} <- beamscale_sample_calc:lcnt_top(Data, Top)];
               _ -> [[B, E, N, not_available, <<>>, <<>>, <<>>, <<>>, <<>>]]
           end,
    {_, Fd} = beamscale_store:open_csv(beamscale_format_rundir:path(Dir, lcnt), ?LCNT_HEADER),
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
    try gen_server:call(Pid, Request, ?CALL_TIMEOUT)
    catch
        exit:_ -> ok
    end.

write(#{fd := Fd, opts := #{dir := Dir}}, Data) ->
    beamscale_format_file:written(file:write(Fd, Data), beamscale_format_rundir:path(Dir, samples)).

stamp() -> #{mono => now_us(), wall => erlang:system_time(microsecond)}.

now_us() -> erlang:monotonic_time(microsecond).

now_ms() -> erlang:monotonic_time(millisecond).

%% Linux's USER_HZ, the unit of the CPU times in /proc.
clock_ticks() ->
    case os:find_executable("getconf") of
        false -> 100;
        Getconf ->
            case beamscale_os:cmd(Getconf, ["CLK_TCK"], ?GETCONF_TIMEOUT) of
                {0, Out} -> case string:to_integer(Out) of
                                {N, _} when is_integer(N), N > 0 -> N;
                                _ -> 100
                            end;
                _ -> 100
            end
    end.
