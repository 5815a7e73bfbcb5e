%% The work of bench/noise_gate.sh's `bench' side: `work(Rounds)' hashes Rounds integers;
%% `rounds/0' (the runner's state, once per caller) is 1000 made N % more by the environment
%% variable CI_GATE_SLOWDOWN=N, which the nodes under test inherit: the known slowdown the gate
%% has to catch, the expression's text (the result's key) unchanged.
-module(bench_work).
-export([rounds/0, work/1]).

rounds() -> 1000 * (100 + list_to_integer(os:getenv("CI_GATE_SLOWDOWN", "0"))) div 100.

work(0) -> ok;
work(N) -> _ = erlang:phash2(N), work(N - 1).
