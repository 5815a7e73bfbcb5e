%% @doc Functions to call with `rpc' requests in tests and examples.
-module(beamscale_target_echo).

-export([echo/1, noop/0, work/1]).

%% @doc Return the argument.
-spec echo(T) -> T.
echo(X) -> X.

%% @doc Do nothing.
-spec noop() -> ok.
noop() -> ok.

%% @doc Some CPU work: sum the squares of 1..N.
-spec work(non_neg_integer()) -> non_neg_integer().
work(N) -> lists:sum([I * I || I <- lists:seq(1, N)]).
