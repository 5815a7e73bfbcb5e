%% @doc The benchmark behaviour, compatible with bencherl's handler interface.
%%
%% A benchmark is a module with `bench_args/2' and `run/3'. `run/3' returns `ok' (one timed phase
%% named after the benchmark), `{{continue, Phase}, State}' (timed as `Phase', called again with
%% `[State | Args]'), `{{done, Phase}, _}' (timed as `Phase', iteration ends); `Phase' may be
%% `ignore' for an untimed call. A crash or `{error, Reason}' fails the iteration.
%%
%% beamscale's own benchmarks are the modules of this app named `beamscale_bench_NAME' that
%% declare `-behaviour(beamscale_bench)': that declaration is the registry, so adding a
%% benchmark is adding its module. `tags/0' (optional) says which built-in sets take it:
%% `quick' (the `quick' preset). A user's bencherl handler is a module named after its
%% benchmark, found on the bench path.
-module(beamscale_bench).

-export([builtin/0, tagged/1, tags/1, available/1, module/1, name/1, describe/1]).
-export_type([version/0, conf/0, args/0, phase/0, tag/0]).

-type version() :: short | intermediate | long.
-type conf() :: [{atom(), term()}].
-type args() :: [term()].
-type phase() :: atom() | string().
%% `quick': one of bencherl's synthetic set, run by the `quick' preset.
-type tag() :: quick.

-callback bench_args(version(), conf()) -> [args()].
-callback run(args(), [node()], conf()) -> term().
%% One line saying what the benchmark stresses, for `beamscale list'.
-callback description() -> string().
%% The built-in sets that take it (none unless it says).
-callback tags() -> [tag()].
-optional_callbacks([description/0, tags/0]).

-define(PREFIX, "beamscale_bench_").

%% @doc The built-in benchmarks as `{Name, Module}', sorted by name.
-spec builtin() -> [{atom(), module()}].
builtin() ->
    _ = application:load(beamscale_bench),
    {ok, Mods} = application:get_key(beamscale_bench, modules),
    lists:sort([{name(M), M} || M <- Mods, is_benchmark(M)]).

%% @doc The names of the built-in benchmarks tagged `Tag', sorted.
-spec tagged(tag()) -> [atom()].
tagged(Tag) -> [N || {N, M} <- builtin(), lists:member(Tag, tags(M))].

%% @doc A module's tags, [] when it gives none.
-spec tags(module()) -> [tag()].
tags(Mod) ->
    _ = code:ensure_loaded(Mod),
    case erlang:function_exported(Mod, tags, 0) of
        true -> Mod:tags();
        false -> []
    end.

%% @doc Every benchmark name: the built-in ones and the handlers (`NAME.erl' or `NAME.beam') found
%% in the directories of a bench path.
-spec available([file:filename()]) -> [atom()].
available(Path) ->
    Builtin = [N || {N, _} <- builtin()],
    Found = [list_to_atom(filename:basename(F, filename:extension(F)))
             || D <- Path, F <- filelib:wildcard("*.{erl,beam}", D)],
    lists:usort(Builtin ++ Found).

%% @doc The module that implements benchmark `Name': a built-in one, else a module of that name.
-spec module(atom()) -> module().
module(Name) ->
    case lists:keyfind(Name, 1, builtin_or_empty()) of
        {Name, Mod} -> Mod;
        false -> Name
    end.

%% @doc The benchmark name of a module: the prefix dropped for built-ins.
-spec name(module()) -> atom().
name(Mod) ->
    case atom_to_list(Mod) of
        ?PREFIX ++ Name -> list_to_atom(Name);
        _ -> Mod
    end.

%% @doc A module's one-line description, or "" when it gives none.
-spec describe(module()) -> string().
describe(Mod) ->
    _ = code:ensure_loaded(Mod),
    case erlang:function_exported(Mod, description, 0) of
        true -> Mod:description();
        false -> ""
    end.

%% A module of the app is a benchmark when it says so; its helpers (sizes, the node's runner)
%% share the prefix but not the behaviour.
is_benchmark(Mod) ->
    lists:prefix(?PREFIX, atom_to_list(Mod)) andalso
        code:ensure_loaded(Mod) =:= {module, Mod} andalso
        lists:member(?MODULE, behaviours(Mod)).

behaviours(Mod) ->
    Attrs = Mod:module_info(attributes),
    lists:append([Bs || {K, Bs} <- Attrs, K =:= behaviour orelse K =:= behavior]).

%% Outside the escript (a peer with only this module loaded) the app file may be absent.
builtin_or_empty() ->
    _ = application:load(beamscale_bench),
    case application:get_key(beamscale_bench, modules) of
        {ok, _} -> builtin();
        undefined -> []
    end.
