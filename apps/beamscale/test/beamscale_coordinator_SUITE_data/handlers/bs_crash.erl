%% A bencherl handler that crashes on every call.
-module(bs_crash).
-export([bench_args/2, run/3]).

bench_args(_Vrsn, _Conf) -> [[1]].

run([_ | _], _Slaves, _Conf) -> erlang:error(deliberate_crash).
