%% @doc A point's code onto its node under test (`beamscale_micro'): the runner, the user's
%% Erlang and Elixir files, and the benchmark and empty loop modules made from the user's text
%% (`beamscale_micro_source'), compiled by the node's compiler, or by this node's for a node
%% too slow to load its own (under Valgrind), and checked to find the modules they call.
-module(beamscale_micro_compile).

-export([load/6, format_error/1]).

-type options() :: #{files := [file:filename()], elixir := boolean(),
                     compile_here => boolean(), _ => _}.

%% @doc Load onto `Node' the runner, the user's files (`files', Elixir started first when
%% `elixir'), then the benchmark `Bench' as module `Mod' and its empty loop as `Empty'.
-spec load(node(), options(), {module(), module()}, beamscale_micro_source:bench(),
           beamscale_micro_source:spec(), binary()) -> ok | {error, {?MODULE, term()}}.
load(Node, Opts, {Mod, Empty}, Bench, Spec, Label) ->
    try
        ok = ok(beamscale_code:ensure(Node, beamscale_bench_micro)),
        ok = ok(load_files(Node, Opts)),
        Compiler = compiler(Opts, Node),
        ok = ok(compile(Compiler, Mod, Bench, Spec, Label)),
        ok(compile(Compiler, Empty, {empty, Bench}, Spec, Label))
    catch throw:{error, _} = Error -> Error
    end.

ok(ok) -> ok;
ok({error, _} = Error) -> throw(Error).

%% Erlang and Elixir source files the benchmarks call, compiled by the benchmark's compiler
%% (under Valgrind this node's: a 300-line file took the counted node past a minute at load 17).
load_files(Node, #{files := Files} = Opts) ->
    ok = start_elixir(Node, Opts),
    {Erl, Ex} = lists:partition(fun(F) -> filename:extension(F) =:= ".erl" end, Files),
    Compiler = case compiler(Opts, Node) of
                   {Here, Node} -> Here;
                   Node -> Node
               end,
    lists:foldl(fun(F, ok) -> F();
                   (_, Error) -> Error
                end, ok, [fun() -> beamscale_code:compile_load(Compiler, Node, F) end || F <- Erl]
                         ++ [fun() -> beamscale_elixir:compile_files(Node, Ex) end]).

start_elixir(Node, #{elixir := true}) ->
    case erpc:call(Node, application, ensure_all_started, [elixir]) of
        {ok, _} -> ok;
        {error, Why} -> throw({error, {?MODULE, {elixir, Why}}})
    end;
start_elixir(_Node, _Opts) -> ok.

%% A node under Valgrind takes 30-40 s to load the compiler: its Erlang benchmarks are compiled
%% here when both nodes run the same release (Elixir's still there).
compiler(#{compile_here := true}, Node) ->
    case erpc:call(Node, erlang, system_info, [otp_release])
        =:= erlang:system_info(otp_release) of
        true -> {node(), Node};
        false -> Node
    end;
compiler(_Opts, Node) -> Node.

compile({Here, Node}, Mod, Bench, Spec, Label) ->
    case is_elixir(Bench) of
        true -> compile(Node, Mod, Bench, Spec, Label);
        false -> erlang_forms(Here, Node, Mod, Bench, Spec, Label)
    end;
compile(Node, Mod, Bench, Spec, Label) ->
    case is_elixir(Bench) of
        true ->
            Src = beamscale_micro_source:elixir(Mod, Bench, Spec),
            case elixir_call(Node, 'Elixir.Code', compile_string, [Src], Label) of
                {ok, Compiled} -> imports_there(Node, proplists:get_value(Mod, Compiled), Label);
                Error -> Error
            end;
        false -> erlang_forms(Node, Node, Mod, Bench, Spec, Label)
    end.

is_elixir({empty, B}) -> is_elixir(B);
is_elixir({elixir, _}) -> true;
is_elixir({elixir_mfa, _, _, _}) -> true;
is_elixir(_) -> false.

%% The benchmark's forms compiled on `Compiler', loaded on `Node'.
erlang_forms(Compiler, Node, Mod, Bench, Spec, Label) ->
    case beamscale_micro_source:erlang(Mod, Bench, Spec) of
        {ok, Forms} ->
            case erpc:call(Compiler, compile, forms, [Forms, [binary, return_errors]]) of
                {ok, Mod, Bin, _} -> load_checked(Node, Mod, Bin, Label);
                {ok, Mod, Bin} -> load_checked(Node, Mod, Bin, Label);
                {error, Errors, _} -> {error, {?MODULE, {compile, Label, Errors}}}
            end;
        Error -> Error
    end.

load_checked(Node, Mod, Bin, Label) ->
    case beamscale_code:load(Node, [{Mod, atom_to_list(Mod) ++ ".erl", Bin}]) of
        ok -> imports_there(Node, Bin, Label);
        Error -> Error
    end.

%% The modules a benchmark calls must be on the node: named when one is not.
imports_there(Node, Bin, Label) ->
    {ok, {_, [{imports, Imports}]}} = beam_lib:chunks(Bin, [imports]),
    Mods = lists:usort([M || {M, _, _} <- Imports]),
    case [M || M <- Mods, erpc:call(Node, code, ensure_loaded, [M]) =/= {module, M}] of
        [] -> ok;
        Missing -> {error, {?MODULE, {missing, Label, Missing}}}
    end.

%% Elixir compiles and loads modules on the node; its exception is told in its own words.
elixir_call(Node, M, F, Args, What) ->
    try erpc:call(Node, M, F, Args) of
        Result -> {ok, Result}
    catch error:{exception, E, _} ->
        Words = try erpc:call(Node, 'Elixir.Exception', message, [E])
                catch _:_ -> io_lib:format("~0tp", [E])
                end,
        {error, {?MODULE, {elixir_compile, What, Words}}}
    end.

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({missing, Label, Mods}) ->
    io_lib:format("~ts calls module(s) not on the node's code path: ~ts (give --code-path DIR, "
                  "--mix PATH, or the source file)",
                  [Label, lists:join(", ", [atom_to_list(M) || M <- Mods])]);
format_error({compile, Label, Errors}) ->
    io_lib:format("~ts does not compile: ~ts",
                  [Label, lists:join("; ", [M:format_error(D) || {_, Es} <- Errors,
                                                                 {_, M, D} <- Es])]);
format_error({elixir_compile, What, Words}) ->
    io_lib:format("~ts: Elixir says: ~ts", [What, Words]);
format_error({elixir, Why}) ->
    io_lib:format("Elixir does not start on the node (is it installed? --elixir-lib): ~0tp",
                  [Why]).
