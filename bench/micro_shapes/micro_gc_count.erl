%% Do `beamscale bench''s harness (beamscale_bench_micro) and the bare loop of
%% bench/micro_bare collect as often? Each expression of micro_bare, 10 samples of CALLS calls
%% on each side in one emulator, every sample process's garbage collections traced: collections
%% per call and the heap sizes the samples ended with. Needs micro_bare and beamscale's ebins:
%%   erl -noshell -pa DIR -pa _build/default/lib/*/ebin \
%%       -eval 'micro_gc_count:main(10000), halt().'
-module(micro_gc_count).
-export([main/1]).

-define(SAMPLES, 10).

main(Calls) ->
    [begin
         {ok, B} = beamscale_micro_source:parse(E, erlang),
         {ok, Forms} = beamscale_micro_source:erlang(bs_micro_bench, B, #{}),
         {ok, M, Bin} = compile:forms(Forms, [binary]),
         _ = code:purge(M),
         {module, M} = code:load_binary(M, "bs_micro_bench.erl", Bin),
         Budget = #{time => 100, samples => ?SAMPLES, warmup => 0, calls => Calls},
         Bench = traced(fun() -> {ok, _} = beamscale_bench_micro:time(M, Budget) end),
         Bare = traced(fun() -> [micro_bare:one(I, Calls) || _ <- lists:seq(1, ?SAMPLES)] end),
         io:format("~s~n  bench ~s~n  bare  ~s~n", [E, said(Bench, Calls), said(Bare, Calls)])
     end || {I, E} <- lists:enumerate(micro_bare:exprs())],
    ok.

%% Per process started by `Fun': {collections, heap size after the last}.
traced(Fun) ->
    _ = erlang:trace(new_processes, true, [garbage_collection, {tracer, self()}]),
    _ = Fun(),
    _ = erlang:trace(new_processes, false, [garbage_collection]),
    timer:sleep(100),
    drain(#{}).

drain(Acc) ->
    receive
        {trace, P, Event, Info} when Event =:= gc_minor_end; Event =:= gc_major_end ->
            {N, _} = maps:get(P, Acc, {0, 0}),
            drain(Acc#{P => {N + 1, proplists:get_value(heap_block_size, Info)}});
        {trace, _, _, _} -> drain(Acc)
    after 0 -> maps:values(Acc)
    end.

%% The sample processes (those that collected more than a few times).
said(Procs, Calls) ->
    Samples = [P || {N, _} = P <- Procs, N > 3],
    io_lib:format("~b sample processes collected; collections per call ~w; heaps ~w",
                  [length(Samples), lists:usort([round(10000 * N / Calls) / 10000
                                                 || {N, _} <- Samples]),
                   lists:usort([H || {_, H} <- Samples])]).
