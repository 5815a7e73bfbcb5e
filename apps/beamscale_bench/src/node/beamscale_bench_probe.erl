%% @private The part of the sampler that runs on the node under test. A holder process switches
%% `scheduler_wall_time' on for as long as the sampler watches, and microstate accounting on for
%% a window at the start of every sampler interval, and both off when told to stop or when the
%% sampler goes away (so a dead coordinator leaves nothing on). `scheduler_wall_time' is counted per
%% enabling process, which is why a process that lives as long as the watch must hold it: an
%% `erpc' worker would switch it off again when it exits.
%%
%% Why a window: msacc stamps the time at every scheduler state change, which cost a CPU-bound
%% benchmark about 1 % when on all the time (docs/samples.md). Its counters keep their values
%% while it is off, so the sampler's differences are the breakdown of the windows in each
%% interval, at the window's share of the cost.
-module(beamscale_bench_probe).

-export([start/2, stop/1, read/0, lcnt/0, activity/0]).
-export_type([opts/0, info/0, reading/0, activity/0]).

%% `interval': the sampler's interval (ms); `msacc': the share (%) of it msacc is on, from its
%% start (0: never, 100: always); `next_tick': ms until the sampler's next reading, where the
%% windows are aligned (default: one interval).
-type opts() :: #{interval := pos_integer(), msacc := 0..100, next_tick => non_neg_integer()}.
-type info() :: #{holder := pid(), schedulers := pos_integer(),
                  dirty_cpu := non_neg_integer(), dirty_io := non_neg_integer(),
                  build_type := atom()}.
-type reading() :: #{swt := [{pos_integer(), non_neg_integer(), non_neg_integer()}] | undefined,
                     msacc := [map()] | undefined, run_queues := [non_neg_integer()],
                     io := {non_neg_integer(), non_neg_integer()},
                     processes := non_neg_integer(), ports := non_neg_integer(),
                     memory := [{atom(), non_neg_integer()}]}.
%% `rpc': erpc calls and casts running here (the caller's own left out); `active': processes
%% running or ready to run (`total_active_tasks', the caller included).
-type activity() :: #{rpc := non_neg_integer(), active := non_neg_integer()}.

-define(ACK_TIMEOUT, 5000).

%% @doc Start a holder watched by `Owner'; returns what the sampler needs to know of the node.
-spec start(pid(), opts()) -> {ok, info()} | {error, term()}.
start(Owner, Opts) ->
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() -> hold(Owner, Self, Opts) end),
    receive
        {Pid, ready} ->
            demonitor(Ref, [flush]),
            {ok, #{holder => Pid, schedulers => erlang:system_info(schedulers),
                   dirty_cpu => erlang:system_info(dirty_cpu_schedulers),
                   dirty_io => erlang:system_info(dirty_io_schedulers),
                   build_type => erlang:system_info(build_type)}};
        {'DOWN', Ref, process, Pid, Reason} -> {error, Reason}
    after ?ACK_TIMEOUT ->
        exit(Pid, kill),
        {error, timeout}
    end.

%% @doc Stop a holder and wait until both flags are off again (a killed holder's
%% `scheduler_wall_time' goes off with it; msacc, global, is switched off here).
-spec stop(pid()) -> ok.
stop(Holder) ->
    Ref = monitor(process, Holder),
    Holder ! stop,
    receive {'DOWN', Ref, process, Holder, _} -> ok
    after ?ACK_TIMEOUT ->
        exit(Holder, kill),
        _ = msacc(false),
        ok
    end.

%% @doc One reading of the runtime's counters (cumulative; the sampler takes differences).
-spec read() -> reading().
read() ->
    {{input, In}, {output, Out}} = erlang:statistics(io),
    #{swt => erlang:statistics(scheduler_wall_time_all),
      msacc => erlang:statistics(microstate_accounting),
      run_queues => erlang:statistics(run_queue_lengths_all),
      io => {In, Out},
      processes => erlang:system_info(process_count),
      ports => erlang:system_info(port_count),
      memory => erlang:memory()}.

%% @doc What the node is still doing: a caller that gave up on an erpc call (its timeout, or
%% the load generator's level ending) leaves the call running here, out of sight of its run
%% queues while it waits (on a pool, a lock, a reply), so the calls are counted by their
%% initial call as well as the processes ready to run.
-spec activity() -> activity().
activity() ->
    Self = self(),
    Rpc = [P || P <- erlang:processes(), P =/= Self,
                case erlang:process_info(P, initial_call) of
                    {initial_call, {erpc, F, _}} -> F =:= execute_call orelse F =:= execute_cast;
                    _ -> false
                end],
    #{rpc => length(Rpc), active => erlang:statistics(total_active_tasks)}.

%% @doc Lock counting data since the holder started, on an emulator built with lock counting.
-spec lcnt() -> {ok, term()} | not_available.
lcnt() ->
    case erlang:system_info(build_type) of
        lcnt -> {ok, erts_debug:lcnt_collect()};
        _ -> not_available
    end.

%% High priority: the windows keep their length on a node whose schedulers are all busy.
hold(Owner, Parent, #{interval := Interval, msacc := Pct} = Opts) ->
    _ = process_flag(priority, high),
    Ref = monitor(process, Owner),
    _ = erlang:system_flag(scheduler_wall_time, true),
    _ = lcnt_clear(erlang:system_info(build_type)),
    Parent ! {self(), ready},
    Window = if Pct =:= 0 -> 0; true -> max(1, Interval * Pct div 100) end,
    FirstTick = now_ms() + maps:get(next_tick, Opts, Interval),
    _ = if
            Window >= Interval -> _ = msacc(true), wait(Owner, Ref, infinity);
            Window =:= 0 -> wait(Owner, Ref, infinity);
            true -> first_window(Owner, Ref, Interval, Window, FirstTick)
        end,
    off().

%% The first window starts at once, so that a job shorter than an interval gets a breakdown too;
%% the next ones at the sampler's ticks, each interval's at its start.
first_window(Owner, Ref, Interval, Window, FirstTick) ->
    _ = msacc(true),
    wait(Owner, Ref, min(now_ms() + Window, FirstTick))
        andalso off_until(Owner, Ref, FirstTick)
        andalso duty(Owner, Ref, Interval, Window, FirstTick).

%% msacc on for `Window' ms from `Start', off until the next tick; a holder that fell behind
%% (a busy node) skips the ticks it missed, as the sampler does.
duty(Owner, Ref, Interval, Window, Start) ->
    _ = msacc(true),
    Next = Start + Interval,
    wait(Owner, Ref, Start + Window)
        andalso off_until(Owner, Ref, Next)
        andalso duty(Owner, Ref, Interval, Window,
                     Next + Interval * max(0, (now_ms() - Next) div Interval)).

off_until(Owner, Ref, Until) ->
    _ = msacc(false),
    wait(Owner, Ref, Until).

%% false when told to stop or when the owner is gone; true at `Until'.
wait(Owner, Ref, Until) ->
    Timeout = case Until of infinity -> infinity; _ -> max(0, Until - now_ms()) end,
    receive
        stop -> false;
        {'DOWN', Ref, process, Owner, _} -> false
    after Timeout -> true
    end.

off() ->
    _ = erlang:system_flag(scheduler_wall_time, false),
    _ = msacc(false),
    ok.

msacc(On) -> erlang:system_flag(microstate_accounting, On).

now_ms() -> erlang:monotonic_time(millisecond).

%% copy_save: a benchmark's ETS tables are gone when lcnt is collected, and their locks' counts
%% with them unless kept (lcnt keeps deleted locks only so).
lcnt_clear(lcnt) ->
    _ = erts_debug:lcnt_control(copy_save, true),
    erts_debug:lcnt_clear();
lcnt_clear(_) -> ok.
