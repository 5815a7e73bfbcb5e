%% @private The part of `beamscale bench' that runs on the fresh node under test. A benchmark
%% module (generated and compiled on the node by the command) exports `init/1' (once per run),
%% `init_runner/2' (once per calling process) and `run/3', a tight loop of N calls. This module
%% times that loop in samples, counts its reductions and the heap words it allocates (from
%% garbage-collection tracing, as Benchee measures memory), and runs it in concurrent callers
%% to count calls per second.
-module(beamscale_bench_micro).

-export([time/2, memory/2, throughput/3]).
-export_type([sample/0, budget/0]).

%% One timed run of the loop: calls made, nanoseconds, reductions.
-type sample() :: {pos_integer(), non_neg_integer(), non_neg_integer()}.
%% Measuring time (ms) and number of samples, warm-up (ms), calls per sample (none: calibrated),
%% the process shape (`time/2').
-type budget() :: #{time := pos_integer(), samples := pos_integer(), warmup := non_neg_integer(),
                    calls => pos_integer(), process => runner | fresh}.

%% A calibration run shorter than this is too noisy to scale up from.
-define(CALIBRATE_NS, 5000000).
%% A caller counts its calls in chunks of about this long (stopping lags by one chunk at most).
-define(CHUNK_NS, 1000000).

%% @doc Time `Mod''s loop in `Samples' runs of calls filling `Time' ms after `Warmup' ms: per
%% sample, calls, nanoseconds and reductions. How often an allocating call collects depends on
%% its process's heap size, which grows with the process's history: the shape is chosen.
%% `runner' (the default, the shape erlperf's and Benchee's users compare against): one
%% long-lived process, its state from `init_runner/2' once, calibrates, warms up and takes
%% every sample, its heap grown by the runs before. `fresh': each run (calibration, warm-up,
%% every sample) in a fresh process of its own with a state of its own, a small heap each time.
-spec time(module(), budget()) -> {ok, [sample()]} | {error, term()}.
time(Mod, #{process := fresh} = Budget) ->
    isolated(fun() ->
                     Input = Mod:input(),
                     timed(Mod, {Mod:init(Input), Input}, Budget)
             end);
time(Mod, Budget) ->
    isolated(fun() ->
                     Input = Mod:input(),
                     State = Mod:init_runner(Mod:init(Input), Input),
                     timed(Mod, {state, State, Input}, Budget)
             end).

timed(Mod, Setup, #{time := Time, samples := K, warmup := Warmup} = Budget) ->
    Calls = case Budget of
                #{calls := C} -> C;
                _ -> max(1, round(runner(Mod, Setup, fun calls_per_ns/3) * Time * 1.0e6 / K))
            end,
    Until = erlang:monotonic_time(millisecond) + Warmup,
    ok = runner(Mod, Setup, fun(M, State, Input) -> warm(M, State, Input, Calls, Until) end),
    [runner(Mod, Setup, fun(M, State, Input) -> sample(M, State, Input, Calls) end)
     || _ <- lists:seq(1, K)].

%% `Fun(Mod, State, Input)': in this long-lived runner, or in a fresh process, `State' made
%% there by `init_runner/2' (its crash ends this process with the same reason).
runner(Mod, {state, State, Input}, Fun) -> Fun(Mod, State, Input);
runner(Mod, {Init, Input}, Fun) ->
    case isolated(fun() -> Fun(Mod, Mod:init_runner(Init, Input), Input) end) of
        {ok, Result} -> Result;
        {error, Reason} -> exit(Reason)
    end.

%% Calls per nanosecond from a run of at least CALIBRATE_NS, doubling the calls till then.
%% One untimed call first: a first call that loads code (an Elixir module and Enum from a
%% --mix path) can take the whole calibration, leaving samples of a call or two (an
%% elixir_mix_module case read 0 words a call in a fresh-clone CI).
calls_per_ns(Mod, State, Input) ->
    _ = sample(Mod, State, Input, 1),
    calls_per_ns(Mod, State, Input, 1).

calls_per_ns(Mod, State, Input, N) ->
    case sample(Mod, State, Input, N) of
        {N, Ns, _} when Ns >= ?CALIBRATE_NS -> N / Ns;
        {N, _, _} -> calls_per_ns(Mod, State, Input, N * 2)
    end.

warm(Mod, State, Input, Calls, Until) ->
    case erlang:monotonic_time(millisecond) >= Until of
        true -> ok;
        false -> _ = Mod:run(Calls, State, Input), warm(Mod, State, Input, Calls, Until)
    end.

sample(Mod, State, Input, N) ->
    {reductions, R0} = process_info(self(), reductions),
    T0 = erlang:monotonic_time(nanosecond),
    _ = Mod:run(N, State, Input),
    T1 = erlang:monotonic_time(nanosecond),
    {reductions, R1} = process_info(self(), reductions),
    {N, T1 - T0, R1 - R0}.

%% @doc The heap words `Calls' calls of the loop allocate, in a fresh process whose garbage
%% collections are traced: the young heap's growth between collections, heap fragments
%% included (the process's own bookkeeping is the same for the empty loop, subtracted by the
%% caller).
-spec memory(module(), pos_integer()) -> {ok, non_neg_integer()} | {error, term()}.
memory(Mod, Calls) ->
    Self = self(),
    Worker = spawn(fun() ->
                           Input = Mod:input(),
                           State = Mod:init_runner(Mod:init(Input), Input),
                           Self ! {ready, self()},
                           receive go -> ok end,
                           true = erlang:garbage_collect(),
                           H0 = used(),
                           _ = Mod:run(Calls, State, Input),
                           Self ! {done, self(), H0, used()}
                   end),
    receive {ready, Worker} -> ok end,
    1 = erlang:trace(Worker, true, [garbage_collection, {tracer, self()}]),
    Worker ! go,
    collect(Worker, [], none).

%% Words used on the young heap and in heap fragments.
used() ->
    {garbage_collection_info, Info} = process_info(self(), garbage_collection_info),
    proplists:get_value(heap_size, Info) + proplists:get_value(mbuf_size, Info).

%% Trace messages may come after the worker's last message: all of them are awaited
%% (`erlang:trace_delivered/1') before the sum.
collect(Worker, Events, Done) ->
    receive
        {trace, Worker, Event, Info} when Event =:= gc_minor_start; Event =:= gc_major_start ->
            collect(Worker, [{start, used(Info)} | Events], Done);
        {trace, Worker, Event, Info} when Event =:= gc_minor_end; Event =:= gc_major_end ->
            collect(Worker, [{'end', used(Info)} | Events], Done);
        {trace, Worker, _, _} -> collect(Worker, Events, Done);
        {done, Worker, H0, H1} ->
            collect(Worker, Events, {erlang:trace_delivered(Worker), H0, H1});
        {trace_delivered, Worker, Ref} when element(1, Done) =:= Ref ->
            {_, H0, H1} = Done,
            {ok, allocated(H0, after_first(lists:reverse(Events)), H1)}
    after 600000 -> {error, memory_timeout}
    end.

used(Info) -> proplists:get_value(heap_size, Info) + proplists:get_value(mbuf_size, Info, 0).

%% The first collection traced is the worker's own `garbage_collect()' before `H0' was read:
%% its start counts the set-up's garbage (input, init), not the calls'. Counted, it made the
%% figure of a few calls swing by that garbage, and once read 0 words for a call of 93.
after_first([{'end', _} | Rest]) -> Rest;
after_first([_ | Rest]) -> after_first(Rest);
after_first([]) -> [].

%% From the heap used after the last collection (or at the start) to the next collection's
%% start, and to the end.
allocated(From, [{start, S}, {'end', E} | Rest], H1) -> S - From + allocated(E, Rest, H1);
allocated(From, [_ | Rest], H1) -> allocated(From, Rest, H1);
allocated(From, [], H1) -> H1 - From.

%% @doc Calls per second of `Callers' processes each running the loop at once: one figure per
%% sample of `Time'/`Samples' ms, after `Warmup' ms. Each caller has its own `init_runner/2'
%% state; `init/1' runs once.
-spec throughput(module(), pos_integer(), budget()) -> {ok, [float()]} | {error, term()}.
throughput(Mod, Callers, #{time := Time, samples := K, warmup := Warmup}) ->
    isolated(
      fun() ->
              Input = Mod:input(),
              Init = Mod:init(Input),
              Chunk = max(1, round(calls_per_ns(Mod, Mod:init_runner(Init, Input), Input)
                                   * ?CHUNK_NS)),
              Count = counters:new(1, [write_concurrency]),
              Stop = atomics:new(1, []),
              Pids = [spawn_link(fun() -> caller(Mod, Init, Input, Chunk, Count, Stop) end)
                      || _ <- lists:seq(1, Callers)],
              timer:sleep(Warmup),
              Rates = rates(Count, Time div K, K),
              ok = atomics:put(Stop, 1, 1),
              ok = wait_down([monitor(process, P) || P <- Pids]),
              Rates
      end).

caller(Mod, Init, Input, Chunk, Count, Stop) ->
    chunks(Mod, Mod:init_runner(Init, Input), Input, Chunk, Count, Stop).

chunks(Mod, State, Input, Chunk, Count, Stop) ->
    _ = Mod:run(Chunk, State, Input),
    ok = counters:add(Count, 1, Chunk),
    case atomics:get(Stop, 1) of
        0 -> chunks(Mod, State, Input, Chunk, Count, Stop);
        _ -> ok
    end.

rates(Count, Ms, K) ->
    T0 = erlang:monotonic_time(nanosecond),
    rates(Count, Ms, K, T0, counters:get(Count, 1)).

rates(_Count, _Ms, 0, _T, _C) -> [];
rates(Count, Ms, K, T0, C0) ->
    timer:sleep(Ms),
    T1 = erlang:monotonic_time(nanosecond),
    C1 = counters:get(Count, 1),
    [(C1 - C0) * 1.0e9 / max(1, T1 - T0) | rates(Count, Ms, K - 1, T1, C1)].

wait_down([]) -> ok;
wait_down([Ref | Rest]) ->
    receive {'DOWN', Ref, process, _, _} -> wait_down(Rest) end.

%% Run `Fun' in a fresh process (a clean heap and reduction count); a crash in the user's code
%% comes back as its reason.
isolated(Fun) ->
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() -> Self ! {self(), result, Fun()} end),
    receive
        {Pid, result, Result} -> demonitor(Ref, [flush]), {ok, Result};
        {'DOWN', Ref, process, Pid, Reason} -> {error, Reason}
    end.
