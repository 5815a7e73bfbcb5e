%% Is it the loop's shape or where its code lies? The same expression in the bare loop's shape
%% (`a/1': `_ = EXPR', one argument) and in shapes nearer the generated loop (`b/4': State,
%% Input and the result kept; `c/4': result dropped, `ok' passed; `d/2': result kept alone;
%% `e/3': State and Input, result dropped), each in modules padded by 0, 3 and 8 functions before
%% it, all alternated ROUNDS times in one emulator: median ns per call and ratio to `a/1' unpadded.
%%   erl -noshell -pa DIR -eval 'micro_shapes_pad:main("EXPR", ROUNDS), halt().'
-module(micro_shapes_pad).
-export([main/2]).

-define(N, 20000).
-define(SAMPLES, 15).

main(Expr, Rounds) ->
    Mods = [{P, S, make(P, Expr)} || P <- [0, 3, 8], S <- [a, b, c, d, e]],
    Rs = [[{P, S, fresh(fun() -> timed(M, S) end)} || {P, S, M} <- Mods]
          || _ <- lists:seq(1, Rounds)],
    Ns = [{P, S, median([T || R <- Rs, {P1, S1, T} <- R, {P1, S1} =:= {P, S}])}
          || {P, S, _} <- Mods],
    {_, _, Base} = hd(Ns),
    io:format("~s (~b rounds)~n", [Expr, Rounds]),
    [io:format("  pad ~b ~s ~7.2f ns ~.3f~n", [P, S, T, T / Base]) || {P, S, T} <- Ns],
    ok.

make(P, Expr) ->
    M = list_to_atom("micro_pad_" ++ integer_to_list(P)),
    Src = ["-module(", atom_to_list(M), ").\n",
           [io_lib:format("f~b(X) -> {X, ~b}.\n", [I, I]) || I <- lists:seq(1, P)],
           "a(0) -> ok;\na(N) -> _ = ", Expr, ", a(N - 1).\n",
           "b(0, _, _, R) -> R;\nb(N, S, I, _) -> R = ", Expr, ", b(N - 1, S, I, R).\n",
           "c(0, _, _, R) -> R;\nc(N, S, I, _) -> _ = ", Expr, ", c(N - 1, S, I, ok).\n",
           "d(0, R) -> R;\nd(N, _) -> R = ", Expr, ", d(N - 1, R).\n",
           "e(0, _, _) -> ok;\ne(N, S, I) -> _ = ", Expr, ", e(N - 1, S, I).\n"],
    {ok, Tokens, _} = erl_scan:string(lists:flatten(Src)),
    Forms = [F || Ts <- forms(Tokens, []), {ok, F} <- [erl_parse:parse_form(Ts)]],
    {ok, M, Bin} = compile:forms(Forms, [binary, export_all, nowarn_export_all]),
    {module, M} = code:load_binary(M, atom_to_list(M) ++ ".erl", Bin),
    M.

forms([], []) -> [];
forms([{dot, _} = D | Rest], Cur) -> [lists:reverse([D | Cur]) | forms(Rest, [])];
forms([T | Rest], Cur) -> forms(Rest, [T | Cur]).

%% One untimed run, then the median of SAMPLES runs of N calls, in this fresh process.
timed(M, S) ->
    _ = call(M, S),
    median([begin
                T0 = erlang:monotonic_time(nanosecond),
                _ = call(M, S),
                (erlang:monotonic_time(nanosecond) - T0) / ?N
            end || _ <- lists:seq(1, ?SAMPLES)]).

call(M, a) -> M:a(?N);
call(M, b) -> M:b(?N, x, y, ok);
call(M, c) -> M:c(?N, x, y, ok);
call(M, d) -> M:d(?N, ok);
call(M, e) -> M:e(?N, x, y).

fresh(Fun) ->
    {Pid, Ref} = spawn_monitor(fun() -> exit({done, Fun()}) end),
    receive
        {'DOWN', Ref, process, Pid, {done, X}} -> X;
        {'DOWN', Ref, process, Pid, Reason} -> exit(Reason)
    end.

median(Xs) -> lists:nth((length(Xs) + 1) div 2, lists:sort(Xs)).
