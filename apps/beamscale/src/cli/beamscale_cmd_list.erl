%% @doc `beamscale list': every benchmark with what it stresses and its argument sets per size.
-module(beamscale_cmd_list).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "list", summary => "list the benchmarks, what they stress and their sizes",
      usage => "beamscale list [--bench-path DIR]",
      options => [{bench_path, "--bench-path", {list, string},
                   "also list the bencherl handlers in DIR"}]}.

%% @doc Print the benchmarks.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := Opts}) ->
    Path = maps:get(bench_path, Opts, []),
    case [D || D <- Path, not filelib:is_dir(D)] of
        [D | _] -> {error, {no_such_directory, D}};
        [] ->
            Cores = beamscale_os:logical_cores(),
            lists:foreach(fun(Name) -> print(Name, Path, Cores) end,
                          beamscale_handlers:available(Path))
    end.

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({no_such_directory, D}) -> ["--bench-path: no such directory: ", D].

print(Name, Path, Cores) ->
    {ok, Handler} = beamscale_handlers:lookup(Name, Path),
    case module(Handler) of
        {ok, Mod} ->
            %% The name alone on its line: scripts read the names from it.
            io:format("~s~n    [~ts] ~ts~n", [Name, origin(Handler), describe(Mod)]),
            Conf = [{number_of_cores, Cores}, {slaves, []}],
            [io:format("    ~-13s ~ts~n", [V, sizes(Mod, V, Conf)])
             || V <- [short, intermediate, long]];
        {error, Why} ->
            io:format("~s~n    [~ts] does not compile here: ~ts~n", [Name, origin(Handler), Why])
    end.

%% Where a benchmark comes from: built in, or a handler in a directory of the bench path.
origin(#{origin := builtin}) -> "built-in";
origin(#{origin := {path, Dir}}) -> ["handler in ", Dir].

%% A handler on the bench path is compiled here (with the sources beside it) only to ask it for
%% its description and sizes; the first compile error is what list says of it.
module(#{module := Mod, origin := builtin}) -> {ok, Mod};
module(#{module := Mod, sources := Sources}) ->
    {Ex, Erl} = lists:partition(fun(F) -> filename:extension(F) =:= ".ex" end, Sources),
    case [E || F <- Erl, {error, E} <- [load_source(F)]] ++ load_elixir(Ex) of
        [] -> {ok, Mod};
        [First | _] -> {error, First}
    end.

%% A handler written in Elixir is compiled here with Elixir's libraries added to this node.
load_elixir([]) -> [];
load_elixir(Files) ->
    Result = case beamscale_elixir:lib(none) of
                 {ok, Globs} ->
                     {ok, Dirs} = beamscale_code:expand_path(Globs),
                     ok = code:add_pathsz(Dirs),
                     beamscale_elixir:compile_files(node(), Files);
                 Error -> Error
             end,
    case Result of
        ok -> [];
        {error, Why} -> [beamscale_error:format(Why)]
    end.

load_source(File) ->
    case compile:file(File, [binary, return_errors, {i, filename:dirname(File)}]) of
        {ok, Mod, Bin} ->
            {module, Mod} = code:load_binary(Mod, File, Bin),
            ok;
        {error, [{F, [{Loc, M, Desc} | _]} | _], _} ->
            {error, io_lib:format("~ts:~w: ~ts", [F, line(Loc), M:format_error(Desc)])};
        _ -> {error, [File, ": does not compile"]}
    end.

line({Line, _Col}) -> Line;
line(Line) -> Line.

describe(Mod) ->
    case catch beamscale_bench:describe(Mod) of
        "" -> "(a bencherl handler: no description)";
        D when is_list(D) -> D;
        _ -> "(could not be loaded)"
    end.

sizes(Mod, Version, Conf) ->
    case beamscale_bench_runner:args(Mod, Version, Conf) of
        %% `l': [32, 32] is two numbers, not a string of two spaces.
        {ok, Sets} -> lists:join(" ", [io_lib:format("~0tlp", [S]) || S <- Sets]);
        {error, Reason} -> ["(bench_args failed: ", beamscale_error:format(Reason), ")"]
    end.
