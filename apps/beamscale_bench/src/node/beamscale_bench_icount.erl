%% @private The instruction clock on the node under test: the NIF built by `beamscale_icount'
%% (its C source is `beamscale_icount_c'), and `bench''s loop counted in instructions retired,
%% only between the two NIF calls around `Mod:run/3' (not boot, not the harness): by callgrind
%% (the node runs under Valgrind with collection off; each sample zeroes the costs, collects,
%% and dumps them to a file read back here) or by the CPU's counter (perf_event_open on the
%% scheduler's thread: the node runs with one scheduler).
-module(beamscale_bench_icount).

-export([load/1, count/3, counted/2, summary/1, pmu/0, heap_words/0, carrier_flag/0,
         format_error/1]).
-export([on_valgrind/0, vg_start/0, vg_stop/0, pmu_start/0, pmu_stop/1]).
-export([sample/5]).
-export_type([counter/0, sample/0]).

%% valgrind: the dumps of this node go to `Dir' (callgrind's --callgrind-out-file=Dir/cg.%p).
-type counter() :: {valgrind, file:filename()} | pmu.
%% Calls made, instructions retired.
-type sample() :: {pos_integer(), non_neg_integer()}.

%% A dump's summary line comes in its first lines (after the command line, which may be long).
-define(HEAD_BYTES, 65536).
%% Calibration aims a sample at this many instructions (2^22): under callgrind 0.05-0.2 s.
%% Short: what else the scheduler's thread does (aux work, timers) lands in few samples.
-define(SAMPLE_INSTRUCTIONS, 4194304).
-define(MAX_CALLS, 1048576).
-define(PROBE_CALLS, 64).
%% Words a sample process's heap starts at. Each collection of an allocating call gets a new
%% heap, whose cost in the allocator moves with what the emulator's history made of its free
%% blocks (100-220 instructions a collection): at the default 233 words `lists:seq(1,100)'
%% collected once a call and read 4368-4473 instructions a call over five emulators (2.4 %).
%% At 4096 it collects once in 21 calls and read 2364.3-2366.6 (0.1 %) over four.
-define(COUNT_HEAP, 4096).

%% @doc Load the NIF built at `Path' (without its extension).
-spec load(file:filename()) -> ok | {error, {?MODULE, term()}}.
load(Path) ->
    case erlang:load_nif(Path, 0) of
        ok -> ok;
        {error, {reload, _}} -> ok;
        {error, {_, Text}} -> {error, {?MODULE, {load, Path, Text}}}
    end.

%% @doc Count `Mod''s loop: `Samples' samples of `Calls' calls each (`auto': the power of two
%% that makes a sample retire up to 2^22 instructions: the same calls in every run of the same
%% code, as how often an allocating call collects depends on the calls a process made), each
%% in a fresh process with its own `init_runner/2' state and a heap of `heap_words/0' at
%% start, after one uncounted sample (code loading, first calls).
-spec count(module(), counter(), #{samples := pos_integer(), calls := pos_integer() | auto}) ->
    {ok, [sample()]} | {error, term()}.
count(Mod, Counter, #{samples := K, calls := Calls0}) ->
    try
        Input = Mod:input(),
        Setup = {Mod:init(Input), Input},
        %% Per call from 64 calls: a fresh process's first call counted alone read 4-7x the
        %% call (its setup), and its noise moved the calls between runs (128 or 256).
        {_, Probe} = fresh(Mod, Setup, Counter, ?PROBE_CALLS),
        Calls = case Calls0 of
                    auto -> calls(max(1, Probe div ?PROBE_CALLS));
                    C -> C
                end,
        _ = fresh(Mod, Setup, Counter, Calls),
        {ok, [fresh(Mod, Setup, Counter, Calls) || _ <- lists:seq(1, K)]}
    catch throw:{error, _} = Error -> Error
    end.

calls(One) -> calls(One, 1).

calls(One, N) when N * 2 * One > ?SAMPLE_INSTRUCTIONS; N >= ?MAX_CALLS -> N;
calls(One, N) -> calls(One, N * 2).

%% The sample process runs `sample/5' itself: the measured calls are made from its first
%% function, under one frame, as a process spawned to call them would make them. How often an
%% allocating call collects, and what a collection costs, moves with the words on its heap and
%% stack when the calls start (they share one block): `lists:reverse(lists:seq(1, 30))' under
%% three more frames (a fun, `sample', `counted') took the allocating path of
%% `lists:reverse/2' at every collection, whose heap fragment grew the heap to 6772 words and
%% the next collection shrank it (a `realloc' that often copies it), 45 collections in 2048
%% calls against 37: 1565 instructions a call against the bare loop's 1220. So the sample is
%% given nothing of the harness's that takes words: not the dump directory (its path's length,
%% with the OS pid and TMPDIR in it, moved which of its collections took a fragment, 1 or 3 in
%% 37): this process reads the dump (docs/micro.md).
fresh(Mod, {Init, Input}, Counter, N) ->
    {Pid, Ref} = spawn_opt(?MODULE, sample, [self(), Mod, {Init, Input}, kind(Counter), N],
                           [monitor, {min_heap_size, heap_words()}]),
    receive
        {Pid, Result} ->
            demonitor(Ref, [flush]),
            case read(Counter, Result) of
                {ok, Count} -> {N, Count};
                {error, _} = Error -> throw(Error)
            end;
        {'DOWN', Ref, process, Pid, Reason} -> throw({error, {?MODULE, {crashed, Reason}}})
    end.

kind({valgrind, _Dir}) -> valgrind;
kind(pmu) -> pmu.

read({valgrind, Dir}, stopped) -> read_dump(Dir);
read(pmu, Result) -> Result.

%% @private A counted sample (`fresh/4''s process): `N' calls of `Mod:run/3' between the two
%% NIF calls, then `stopped' (the dump is its parent's to read) or the CPU's count sent to
%% `Parent'.
-spec sample(pid(), module(), {term(), term()}, valgrind | pmu, pos_integer()) -> term().
sample(Parent, Mod, {Init, Input}, valgrind, N) ->
    State = Mod:init_runner(Init, Input),
    ok = vg_start(),
    _ = Mod:run(N, State, Input),
    ok = vg_stop(),
    Parent ! {self(), stopped};
sample(Parent, Mod, {Init, Input}, pmu, N) ->
    State = Mod:init_runner(Init, Input),
    case pmu_start() of
        {ok, Fd} ->
            _ = Mod:run(N, State, Input),
            Parent ! {self(), pmu_stop(Fd)};
        {error, Why} -> Parent ! {self(), {error, {?MODULE, {pmu, Why}}}}
    end.

%% @doc Call `Run' counted by `Counter' (on this process's scheduler thread only: the node runs
%% one scheduler): its result and the instructions retired between the two NIF calls around it
%% (`run''s iteration is one call of a benchmark's `run/3').
-spec counted(counter(), fun(() -> R)) -> {R, {ok, non_neg_integer()} | {error, term()}}.
counted({valgrind, Dir}, Run) ->
    ok = vg_start(),
    Result = Run(),
    ok = vg_stop(),
    {Result, read_dump(Dir)};
counted(pmu, Run) ->
    case pmu_start() of
        {ok, Fd} ->
            Result = Run(),
            {Result, pmu_stop(Fd)};
        {error, Why} -> {Run(), {error, {?MODULE, {pmu, Why}}}}
    end.

%% Callgrind numbers the dumps of process P as cg.P.1, cg.P.2..: each is read, then removed,
%% so that the one there is the last one.
read_dump(Dir) ->
    case filelib:wildcard(filename:join(Dir, "cg." ++ os:getpid() ++ ".*")) of
        [File] ->
            Head = head(File),
            ok = file:delete(File),
            summary(Head);
        Files -> {error, {?MODULE, {dumps, Dir, length(Files)}}}
    end.

head(File) ->
    {ok, F} = file:open(File, [read, binary, raw]),
    try file:read(F, ?HEAD_BYTES) of
        {ok, Bin} -> Bin;
        eof -> <<>>
    after file:close(F)
    end.

%% @doc The instructions (Ir) of a callgrind dump from its first bytes: its `events:' line must
%% name Ir first, its `summary:' line gives the count.
-spec summary(binary()) -> {ok, non_neg_integer()} | {error, {?MODULE, term()}}.
summary(Head) ->
    Lines = binary:split(Head, <<"\n">>, [global]),
    case {field(<<"events:">>, Lines), field(<<"summary:">>, Lines)} of
        {[<<"Ir">> | _], [Count | _]} ->
            case string:to_integer(Count) of
                {N, <<>>} when is_integer(N), N >= 0 -> {ok, N};
                _ -> {error, {?MODULE, {dump, bad_summary}}}
            end;
        {none, _} -> {error, {?MODULE, {dump, no_events}}};
        {_, none} -> {error, {?MODULE, {dump, no_summary}}};
        {Events, _} -> {error, {?MODULE, {dump, {not_ir, Events}}}}
    end.

field(Key, Lines) ->
    case [Rest || L <- Lines, <<K:(byte_size(Key))/binary, Rest/binary>> <- [L], K =:= Key] of
        [Value | _] -> string:lexemes(Value, " ");
        [] -> none
    end.

%% @doc Whether this thread can count its instructions retired with the CPU's counter: `ok', or
%% the system's words (a VM without a PMU: "No such file or directory").
-spec pmu() -> ok | {error, string()}.
pmu() ->
    case pmu_start() of
        {ok, Fd} -> element(1, pmu_stop(Fd));
        {error, _} = Error -> Error
    end.

%% @doc The words a counted sample process's heap starts at (its `min_heap_size'): 4096, or the
%% node's own default when `+hms' made it larger.
-spec heap_words() -> pos_integer().
heap_words() -> max(?COUNT_HEAP, element(2, erlang:system_info(min_heap_size))).

%% @doc The counted node's flag that gives every process heap of `heap_words/0''s size or more
%% a single-block carrier of its own (eheap_alloc's `sbct', in KiB). In the shared multiblock
%% carriers each collection's new heap and freed old one are a lookup, an insert and a delete
%% in eheap_alloc's address-ordered tree of free blocks, whose cost moved with the blocks the
%% node's history left there: `lists:seq(1, 100)''s 52 collections in a 1024-call sample read
%% 2357-2375 instructions a call, sample to sample in one emulator (identical collections;
%% 10 700 of a sample's 10 900 extra in `erl_ao_firstfit_alloc.c''s tree code). A carrier of
%% its own comes from mseg_alloc's cache at the same cost each time: 2363.8-2364.6 over four
%% emulators' twenty samples (docs/micro.md).
-spec carrier_flag() -> string().
carrier_flag() -> "+MHsbct " ++ integer_to_list(?COUNT_HEAP * 8 div 1024).

%% @doc NIF: how many Valgrinds this node runs under (0: none).
-spec on_valgrind() -> non_neg_integer().
on_valgrind() -> erlang:nif_error(not_loaded).

%% @doc NIF: zero callgrind's costs and switch its collection on.
-spec vg_start() -> ok.
vg_start() -> erlang:nif_error(not_loaded).

%% @doc NIF: switch callgrind's collection off and dump its costs.
-spec vg_stop() -> ok.
vg_stop() -> erlang:nif_error(not_loaded).

%% @doc NIF: a counter of this thread's instructions retired, from now.
-spec pmu_start() -> {ok, integer()} | {error, string()}.
pmu_start() -> erlang:nif_error(not_loaded).

%% @doc NIF: the instructions counted since `pmu_start/0'; the counter closed.
-spec pmu_stop(integer()) -> {ok, non_neg_integer()} | {error, string()}.
pmu_stop(_Fd) -> erlang:nif_error(not_loaded).

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({load, Path, Text}) ->
    io_lib:format("the instruction clock's NIF ~ts does not load: ~ts", [Path, Text]);
format_error({pmu, Why}) ->
    ["the CPU's instruction counter does not open (perf_event_open): ", Why];
format_error({dumps, Dir, N}) ->
    io_lib:format("expected one callgrind dump of this node in ~ts, found ~b", [Dir, N]);
format_error({dump, What}) ->
    io_lib:format("a callgrind dump is not understood: ~0tp", [What]);
format_error({crashed, Why}) ->
    io_lib:format("the benchmark crashed while counted: ~0tp", [Why]).
