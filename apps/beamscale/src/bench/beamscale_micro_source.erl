%% @doc The benchmark modules of `beamscale bench', made from the user's text (pure): an
%% expression (Erlang or Elixir) or a `Module:Function/Arity' becomes the body of a tight loop
%% in a module of its own, compiled on the node under test, so a call costs what it costs in
%% compiled code (not `erl_eval' per call). The module exports `input/0' (the `--input'
%% text), `init/1' (the `--init' text,
%% `Input' bound), `init_runner/2' (the `--init-runner' text, `Init' and `Input' bound; its
%% result is `State') and `run/3' (N calls, `State' and `Input' bound). The same module with the
%% body `ok' is the empty loop whose cost is subtracted.
-module(beamscale_micro_source).

-export([parse/2, erlang/3, elixir/3, format_error/1]).
-export_type([bench/0, spec/0]).

%% What one benchmark calls: parsed Erlang expressions, a function, or Elixir text.
-type bench() :: {exprs, [erl_parse:abstract_expr()]} | {mfa, atom(), atom(), arity()}
               | {elixir, string()} | {elixir_mfa, string(), string(), arity()}.
-type spec() :: #{input => string(), init => string(), init_runner => string()}.

-define(BODY, '__beamscale_body__').
-define(BODY_TEXT(K), ["'", atom_to_list(?BODY), "'(", atom_to_list(K), ")"]).

%% `--init' runs once per node, as its help says: the sampler calls `init/1' for the timing and
%% for the memory of both the benchmark and the empty loop (four times), so the first call
%% runs the text in a process that stays (owning what it makes: an ets table) and keeps the
%% result in a persistent term that the other calls, of either module, return.
-define(ONCE_ERL,
        "bs_once__(F) ->\n"
        "    case persistent_term:get(bs_micro_init__, none) of\n"
        "        {bs_init__, V} -> V;\n"
        "        none ->\n"
        "            P = self(),\n"
        "            {Pid, Ref} = spawn_monitor(fun() -> P ! {bs_init__, self(), F()},\n"
        "                                                receive after infinity -> ok end end),\n"
        "            receive\n"
        "                {bs_init__, Pid, V} -> erlang:demonitor(Ref, [flush]),\n"
        "                    persistent_term:put(bs_micro_init__, {bs_init__, V}), V;\n"
        "                {'DOWN', Ref, process, Pid, Why} -> exit(Why)\n"
        "            end\n"
        "    end.\n").
-define(ONCE_EX(Init),
        ["    case :persistent_term.get(:bs_micro_init__, :none) do\n"
         "      {:bs_init__, v} -> v\n"
         "      :none ->\n"
         "        bs_parent = self()\n"
         "        {pid, ref} = spawn_monitor(fn ->\n"
         "          send(bs_parent, {:bs_init__, self(), (\n", Init, "\n          )})\n"
         "          Process.sleep(:infinity)\n"
         "        end)\n"
         "        receive do\n"
         "          {:bs_init__, ^pid, v} ->\n"
         "            Process.demonitor(ref, [:flush])\n"
         "            :persistent_term.put(:bs_micro_init__, {:bs_init__, v})\n"
         "            v\n"
         "          {:DOWN, ^ref, :process, ^pid, why} -> exit(why)\n"
         "        end\n"
         "    end\n"]).

%% @doc The benchmark of one command-line argument: `erlang' or `elixir'.
-spec parse(string(), erlang | elixir) -> {ok, bench()} | {error, {?MODULE, term()}}.
parse(Text, Lang) ->
    case re:run(Text, "^\\s*([a-z][A-Za-z0-9_]*):([a-z][A-Za-z0-9_]*)/([0-9]+)\\s*$",
                [{capture, all_but_first, list}]) of
        {match, [M, F, A]} when Lang =:= erlang ->
            {ok, {mfa, list_to_atom(M), list_to_atom(F), list_to_integer(A)}};
        _ when Lang =:= elixir -> {ok, elixir_mfa(Text)};
        _ -> literal(Text, exprs(Text))
    end.

%% A constant costs nothing to return: measured as it is it reads 0 ns. `{M, F, Args}' is
%% erlperf's runner tuple, so it is called as `M:F(Args...)'; any other constant is refused.
literal(Text, {ok, {exprs, [Expr]}} = Parsed) ->
    try erl_parse:normalise(Expr) of
        {M, F, Args} when is_atom(M), is_atom(F), length(Args) >= 0 ->
            {tuple, L, [_, _, ArgList]} = Expr,
            Call = {call, L, {remote, L, {atom, L, M}, {atom, L, F}}, elements(ArgList)},
            {ok, {exprs, [Call]}};
        _ -> {error, {?MODULE, {constant, Text}}}
    catch _:_ -> Parsed
    end;
literal(_Text, Parsed) -> Parsed.

elements({nil, _}) -> [];
elements({cons, _, H, T}) -> [H | elements(T)].

%% Elixir's `Module.function/Arity' (`Enum.sort/1'), else an expression.
elixir_mfa(Text) ->
    case re:run(Text, "^\\s*([A-Z][A-Za-z0-9_.]*)\\.([a-z_][A-Za-z0-9_]*[?!]?)/([0-9]+)\\s*$",
                [{capture, all_but_first, list}]) of
        {match, [M, F, A]} -> {elixir_mfa, M, F, list_to_integer(A)};
        nomatch -> {elixir, Text}
    end.

exprs(Text) ->
    case erl_scan:string(Text) of
        {ok, Tokens, End} ->
            Dotted = case lists:last([{dot, End} | Tokens]) of
                         {dot, _} when Tokens =/= [] -> Tokens;
                         _ -> Tokens ++ [{dot, End}]
                     end,
            case erl_parse:parse_exprs(Dotted) of
                {ok, Exprs} -> {ok, {exprs, Exprs}};
                {error, {Loc, M, Why}} -> syntax(Text, Loc, M, Why)
            end;
        {error, {Loc, M, Why}, _} -> syntax(Text, Loc, M, Why)
    end.

syntax(Text, Loc, M, Why) -> {error, {?MODULE, {syntax, Text, Loc, M:format_error(Why)}}}.

%% @doc The forms of module `Mod' looping over `Bench' (`empty': the same loop calling nothing).
-spec erlang(module(), bench() | {empty, bench()}, spec()) ->
    {ok, [erl_parse:abstract_form()]} | {error, {?MODULE, term()}}.
erlang(Mod, Bench, Spec) ->
    {Empty, B} = case Bench of
                     {empty, Inner} -> {true, Inner};
                     _ -> {false, Bench}
                 end,
    try
        Parsed = [{K, exprs_or_throw(T)}
                  || K <- [input, init, init_runner], {ok, T} <- [maps:find(K, Spec)]],
        {ok, forms(Mod, B, Empty, maps:from_list(Parsed))}
    catch throw:Error -> Error
    end.

exprs_or_throw(Text) ->
    case exprs(Text) of
        {ok, {exprs, E}} -> E;
        Error -> throw(Error)
    end.

forms(Mod, Bench, Empty, Parsed) ->
    Args = args(Bench),
    Source = ["-module(", atom_to_list(Mod), ").\n",
              "-export([input/0, init/1, init_runner/2, run/3]).\n",
              "input() -> ", ?BODY_TEXT(input), ".\n",
              "init(Input) -> bs_once__(fun() -> ", ?BODY_TEXT(init), " end).\n",
              "init_runner(Init, Input) -> ", ?BODY_TEXT(init_runner), ".\n",
              ?ONCE_ERL,
              run(Bench, Args),
              loop(Args, Empty)],
    {ok, Tokens, _} = erl_scan:string(lists:flatten(Source)),
    Forms = [F || Ts <- split_forms(Tokens), {ok, F} <- [erl_parse:parse_form(Ts)]],
    Default = #{input => [{atom, 1, undefined}], init => [{atom, 1, undefined}],
                init_runner => init_runner(Bench), body => body(Bench, Empty)},
    Bodies = maps:merge(Default, Parsed),
    fill(Forms, Bodies).

%% The loop passes the last result first, where a call leaves it, and carries only what the
%% body reads: each variable kept across the call is a stack slot saved and restored per call.
%% `State' and `Input' carried unread cost `lists:seq(1, 20)' 11 instructions a call (2 %)
%% over the bare loop `f(N) -> _ = lists:seq(1, 20), f(N - 1).' (docs/micro.md). The empty
%% loop returns the result it is given, so that it does no more than the benchmark's loop.
loop(Args, Empty) ->
    Carried = [[", ", A] || A <- Args],
    ["loop(BsR__, 0", [", _" || _ <- Args], ") -> BsR__;\n",
     "loop(", case Empty of true -> "BsR0__"; false -> "_" end, ", BsN__", Carried, ") ->\n",
     "    BsR__ = ", ?BODY_TEXT(body), ",\n",
     "    loop(BsR__, BsN__ - 1", Carried, ").\n"].

%% The loop's own arguments: the function's arguments for a `Module:Function/Arity' (taken
%% from the list `State' once, not per call), for an expression those of `State' and `Input'
%% it names.
args({mfa, _, _, A}) -> ["BsA" ++ integer_to_list(I) ++ "__" || I <- lists:seq(1, A)];
args({exprs, Exprs}) -> [atom_to_list(V) || V <- ['State', 'Input'], names(V, Exprs)].

%% Whether variable `V' occurs anywhere in the parsed expressions (a use, a binding, a fun's
%% own: any occurrence keeps it carried, so that the body means what it meant).
names(V, {var, _, V}) -> true;
names(V, T) when is_tuple(T) -> names(V, tuple_to_list(T));
names(V, L) when is_list(L) -> lists:any(fun(X) -> names(V, X) end, L);
names(_V, _) -> false.

run({mfa, _, _, _}, Args) ->
    ["run(BsN__, [", lists:join(", ", Args), "], _Input) -> loop(ok, BsN__",
     [[", ", A] || A <- Args], ").\n"];
run(_, Args) ->
    ["run(BsN__, ", name("State", Args), ", ", name("Input", Args), ") -> loop(ok, BsN__",
     [[", ", A] || A <- Args], ").\n"].

name(V, Args) ->
    case lists:member(V, Args) of
        true -> V;
        false -> "_" ++ V
    end.

%% Without --init-runner a function of one argument takes the input, of none nothing.
init_runner({mfa, _, _, 0}) -> [{nil, 1}];
init_runner({mfa, _, _, 1}) -> [{cons, 1, {var, 1, 'Input'}, {nil, 1}}];
init_runner(_) -> [{var, 1, 'Init'}].

body(_, true) -> [{var, 1, 'BsR0__'}];
body({exprs, Exprs}, false) -> Exprs;
body({mfa, M, F, A}, false) ->
    [{call, 1, {remote, 1, {atom, 1, M}, {atom, 1, F}},
      [{var, 1, list_to_atom("BsA" ++ integer_to_list(I) ++ "__")} || I <- lists:seq(1, A)]}].

split_forms(Tokens) -> split_forms(Tokens, [], []).

split_forms([], [], Acc) -> lists:reverse(Acc);
split_forms([{dot, _} = D | Rest], Cur, Acc) ->
    split_forms(Rest, [], [lists:reverse([D | Cur]) | Acc]);
split_forms([T | Rest], Cur, Acc) -> split_forms(Rest, [T | Cur], Acc).

%% The placeholders '__beamscale_body__'(K) become blocks of the parsed expressions.
fill({call, _, {atom, _, ?BODY}, [{atom, _, K}]}, Bodies) ->
    {block, 1, maps:get(K, Bodies)};
fill(T, Bodies) when is_tuple(T) -> list_to_tuple(fill(tuple_to_list(T), Bodies));
fill(L, Bodies) when is_list(L) -> [fill(X, Bodies) || X <- L];
fill(X, _Bodies) -> X.

%% @doc The Elixir source of module `Mod' looping over Elixir text or `Module.function/Arity'
%% (`{empty, _}': the empty loop); the variables are `input', `init' and `state'. A function's
%% arguments are taken from the list `state' once, not per call, as for Erlang's M:F/A.
-spec elixir(module(), {elixir, string()} | {elixir_mfa, string(), string(), arity()}
                       | {empty, {elixir, string()} | {elixir_mfa, string(), string(), arity()}},
             spec()) -> binary().
elixir(Mod, Bench, Spec) ->
    {Empty, B} = case Bench of
                     {empty, Inner} -> {true, Inner};
                     _ -> {false, Bench}
                 end,
    Args = case B of
               {elixir_mfa, _, _, A} -> ["bs_a" ++ integer_to_list(I) || I <- lists:seq(1, A)];
               {elixir, _} -> ["state", "input"]
           end,
    Src = ["defmodule :", atom_to_list(Mod), " do\n",
           "  def input(), do: (\n", maps:get(input, Spec, "nil"), "\n  )\n",
           "  def init(input) do\n    _ = input\n", ?ONCE_EX(maps:get(init, Spec, "nil")),
           "  end\n",
           "  def init_runner(init, input) do\n    _ = {init, input}\n    (\n",
           maps:get(init_runner, Spec, ex_init_runner(B)), "\n    )\n  end\n",
           ex_run(B, Args),
           "  defp loop(0, ", ["_, " || _ <- Args], "bs_r), do: bs_r\n",
           "  defp loop(bs_n, ", [[A, ", "] || A <- Args], "_) do\n",
           "    _ = {", lists:join(", ", Args), "}\n    bs_r = (\n",
           ex_body(B, Empty, Args), "\n    )\n",
           "    loop(bs_n - 1, ", [[A, ", "] || A <- Args], "bs_r)\n  end\nend\n"],
    unicode:characters_to_binary(Src).

%% Without --init-runner a function of one argument takes the input, of none nothing.
ex_init_runner({elixir_mfa, _, _, 0}) -> "[]";
ex_init_runner({elixir_mfa, _, _, 1}) -> "[input]";
ex_init_runner(_) -> "init".

ex_run({elixir_mfa, _, _, _}, Args) ->
    ["  def run(bs_n, [", lists:join(", ", Args), "], _input), do: loop(bs_n, ",
     [[A, ", "] || A <- Args], ":ok)\n"];
ex_run({elixir, _}, _Args) ->
    "  def run(bs_n, state, input), do: loop(bs_n, state, input, :ok)\n".

ex_body(_, true, _Args) -> ":ok";
ex_body({elixir, Text}, false, _Args) -> Text;
ex_body({elixir_mfa, M, F, _}, false, Args) -> [M, ".", F, "(", lists:join(", ", Args), ")"].

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({constant, Text}) ->
    io_lib:format("~ts is a constant: returning it costs nothing to measure; write a call "
                  "(lists:seq(1, 10).), a function (lists:seq/2 with --input) or "
                  "{Module, Function, Args}", [Text]);
format_error({syntax, Text, Loc, Words}) ->
    io_lib:format("~ts: ~ts (at ~ts)", [Text, Words, loc(Loc)]).

loc({L, C}) -> io_lib:format("line ~b, column ~b", [L, C]);
loc(L) -> io_lib:format("line ~b", [L]).
