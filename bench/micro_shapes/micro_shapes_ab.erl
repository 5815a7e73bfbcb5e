%% The loops of micro_shapes in a module of their own, the generated loop without the State
%% and Input arguments (c), and with them but its result dropped (d).
-module(micro_shapes_ab).
-export([a/1, b/4, c/1, d/4]).

a(0) -> ok;
a(N) -> _ = rand:uniform(1000), a(N - 1).

b(0, _, _, R) -> R;
b(N, S, I, _) -> R = rand:uniform(1000), b(N - 1, S, I, R).

c(N) -> c(N, ok).

c(0, R) -> R;
c(N, _) -> R = rand:uniform(1000), c(N - 1, R).

d(0, _, _, R) -> R;
d(N, S, I, R) -> _ = rand:uniform(1000), d(N - 1, S, I, R).
