%% `beamscale bench''s timing harness on this emulator: with `process => fresh' each sample in a
%% fresh process, so an allocating loop collects as often in every sample; by default (runner)
%% all in one long-lived process. This module is the benchmark module too.
-module(beamscale_bench_micro_tests).
-include_lib("eunit/include/eunit.hrl").

-export([input/0, init/1, init_runner/2, run/3]).

%% Samples of an allocating loop: every one ran in a process of its own and ended with the same
%% heap size. In one process for calibration, warm-up and samples, they ended with 233 or 376
%% words here (and from 233 to 2586 in longer runs, collecting up to 12 times less often).
samples_in_fresh_processes_test() ->
    true = register(?MODULE, self()),
    try
        {ok, Samples} = beamscale_bench_micro:time(?MODULE, #{time => 200, samples => 20,
                                                               warmup => 20, process => fresh}),
        ?assertMatch([_ | _], Samples),
        %% Calibration and warm-up ran it too: the samples are the last runs.
        All = ran(),
        Ran = lists:nthtail(length(All) - 20, All),
        ?assertEqual(20, length(lists:usort([Pid || {Pid, _} <- Ran]))),
        ?assertMatch([_], lists:usort([Heap || {_, Heap} <- Ran]))
    after
        unregister(?MODULE)
    end.

%% The runner shape: calibration, warm-up and every sample in one process, as erlperf's runner.
samples_in_one_runner_test() ->
    true = register(?MODULE, self()),
    try
        {ok, [_ | _]} = beamscale_bench_micro:time(?MODULE, #{time => 100, samples => 10,
                                                               warmup => 10}),
        ?assertMatch([_], lists:usort([Pid || {Pid, _} <- ran()]))
    after
        unregister(?MODULE)
    end.

ran() -> ran([]).

ran(Acc) ->
    receive {ran, Pid, Heap} -> ran([{Pid, Heap} | Acc])
    after 0 -> lists:reverse(Acc)
    end.

%% A crash in the user's loop comes back as its reason.
crash_is_the_reason_test() ->
    ?assertMatch({error, {thirteen, _}},
                 beamscale_bench_micro:time(?MODULE, #{time => 10, samples => 1, warmup => 0,
                                                       calls => 13})).

input() -> undefined.
init(_Input) -> undefined.
init_runner(Init, _Input) -> Init.

run(13, _State, _Input) -> erlang:error(thirteen);
run(N, _State, _Input) ->
    ok = loop(N),
    {heap_size, Heap} = process_info(self(), heap_size),
    ?MODULE ! {ran, self(), Heap}.

loop(0) -> ok;
loop(N) -> _ = lists:seq(1, 20), loop(N - 1).
