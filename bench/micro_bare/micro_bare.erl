%% The floor for bench/micro_vs_bare_loop.sh: each expression in a hand-written tight loop of its
%% own, timed in a plain emulator. `exprs/0' gives the same expressions as text for `beamscale
%% bench'. `count/4' counts the loops' instructions instead (the instructions mode).
-module(micro_bare).
-export([exprs/0, main/2, one/2, count/4]).

%% `beamscale bench''s default measuring time, cut into as many samples as it is told.
-define(TIME_NS, 500000000).

exprs() -> [E || {E, _} <- loops()].

loops() ->
    [{"rand:uniform(1000).", fun uniform/1},
     {"lists:seq(1, 20).", fun seq/1},
     {"lists:reverse(lists:seq(1, 30)).", fun reverse/1},
     {"erlang:phash2({a, [1, 2, 3], <<\"bin\">>}).", fun phash2/1},
     {"maps:from_list([{a, 1}, {b, 2}, {c, 3}]).", fun from_list/1}].

uniform(0) -> ok;
uniform(N) -> _ = rand:uniform(1000), uniform(N - 1).

seq(0) -> ok;
seq(N) -> _ = lists:seq(1, 20), seq(N - 1).

reverse(0) -> ok;
reverse(N) -> _ = lists:reverse(lists:seq(1, 30)), reverse(N - 1).

phash2(0) -> ok;
phash2(N) -> _ = erlang:phash2({a, [1, 2, 3], <<"bin">>}), phash2(N - 1).

from_list(0) -> ok;
from_list(N) -> _ = maps:from_list([{a, 1}, {b, 2}, {c, 3}]), from_list(N - 1).

%% The loop with nothing in it: its cost per call (about 1 ns) is the loop's, not the call's.
empty(0) -> ok;
empty(N) -> empty(N - 1).

%% Prints "INDEX NS_PER_CALL P10" for expression `I': the median and 10th percentile of
%% `Samples' samples (together 0.5 s) less the empty loop's median. Each sample runs in a
%% process of its own, spawned for it: a process's heap size sets how often an allocating call
%% collects, and a process that lived through calibration and earlier samples has grown its
%% heap by its history (docs/micro.md).
main(Samples, I) ->
    SampleNs = ?TIME_NS div Samples,
    Floor = median(ns(fun empty/1, Samples, SampleNs)),
    {_, Loop} = lists:nth(I, loops()),
    Ns = [X - Floor || X <- ns(Loop, Samples, SampleNs)],
    io:format("~b ~.2f ~.2f~n", [I, median(Ns), tenth(Ns)]).

%% Prints "INDEX INSTRUCTIONS_PER_CALL" for each expression, `Calls' the calls per sample of
%% each (bench's own, so that both collect alike): the least of `Samples' counted samples less
%% the empty loop's least with the same calls, after one uncounted, each sample in a fresh
%% process whose heap starts at bench's words, as `bench --clock instructions' counts. The
%% emulator runs under callgrind with collection off, its dumps in `Dir'; `So' is the
%% instruction clock's NIF (beamscale_icount).
count(So, Dir, Calls, Samples) ->
    ok = beamscale_bench_icount:load(So),
    [begin
         {_, Loop} = lists:nth(I, loops()),
         Floor = lists:min(counts(fun empty/1, N, Samples, Dir)),
         io:format("~b ~.2f~n", [I, lists:min(counts(Loop, N, Samples, Dir)) - Floor])
     end || {I, N} <- lists:enumerate(Calls)],
    ok.

counts(Loop, N, Samples, Dir) ->
    _ = counted(Loop, N, Dir),
    [counted(Loop, N, Dir) / N || _ <- lists:seq(1, Samples)].

counted(Loop, N, Dir) ->
    Heap = [{min_heap_size, beamscale_bench_icount:heap_words()}],
    fresh(Heap, fun() ->
                        ok = beamscale_bench_icount:vg_start(),
                        ok = Loop(N),
                        ok = beamscale_bench_icount:vg_stop(),
                        dumped(Dir)
                end).

%% Each dump is read (its summary line comes first) and removed: one is there at a time.
dumped(Dir) ->
    [File] = filelib:wildcard(filename:join(Dir, "cg." ++ os:getpid() ++ ".*")),
    {ok, F} = file:open(File, [read, binary, raw]),
    {ok, Head} = file:read(F, 65536),
    ok = file:close(F),
    ok = file:delete(File),
    {ok, Count} = beamscale_bench_icount:summary(Head),
    Count.

%% Nanoseconds per call of `N' calls of expression `I' in a fresh process, nothing subtracted
%% (bench/micro_shapes/micro_gc_count.erl counts its collections).
one(I, N) ->
    {_, Loop} = lists:nth(I, loops()),
    fresh(fun() -> timed(Loop, N) / N end).

ns(Loop, Samples, SampleNs) ->
    N = fresh(fun() -> calls(Loop, 1000, SampleNs) end),
    [fresh(fun() -> timed(Loop, N) / N end) || _ <- lists:seq(1, Samples)].

fresh(Fun) -> fresh([], Fun).

fresh(Opts, Fun) ->
    {Pid, Ref} = spawn_opt(fun() -> exit({done, Fun()}) end, [monitor | Opts]),
    receive {'DOWN', Ref, process, Pid, {done, X}} -> X end.

%% Calls filling a sample: doubled until a run lasts 5 ms, then scaled (as `bench' calibrates).
calls(Loop, N, SampleNs) ->
    case timed(Loop, N) of
        Ns when Ns >= 5000000 -> max(1, round(N * SampleNs / Ns));
        _ -> calls(Loop, N * 2, SampleNs)
    end.

timed(Loop, N) ->
    T0 = erlang:monotonic_time(nanosecond),
    ok = Loop(N),
    erlang:monotonic_time(nanosecond) - T0.

median(Xs) -> lists:nth((length(Xs) + 1) div 2, lists:sort(Xs)).

%% The 10th percentile: on a shared host preemption only adds to a sample, so the low samples
%% are the call's; less hostage to the host's load than the median.
tenth(Xs) -> lists:nth(max(1, (length(Xs) + 5) div 10), lists:sort(Xs)).
