%% A bencherl handler that never returns.
-module(bs_hang).
-export([bench_args/2, run/3]).

bench_args(_Vrsn, _Conf) -> [[1]].

run([_ | _], _Slaves, _Conf) -> receive never -> ok end.
