%% @doc Where each benchmark comes from: a user's handler on the bench path, else a built-in one.
%%
%% A bench path directory is read in any of three layouts (docs/benchmarks.md):
%% - flat: `DIR/NAME.erl', `DIR/NAME.beam' or `DIR/NAME.ex', every source of DIR compiled
%%   beside it, data in `DIR/data';
%% - bencherl's `bench/NAME': `NAME/src/NAME.erl' (or `.ex') with the other sources of `src/',
%%   data in `NAME/data', settings in `NAME/conf/bench.conf';
%% - bencherl's `bench/': every `bench/NAME' of the layout above.
%% A handler of the same name as a built-in benchmark shadows it (the user's handler wins); the
%% built-in stays reachable as `builtin:NAME'. A handler written in Elixir (`NAME.ex') runs the
%% module its file defines, compiled on the node under test with the Erlang sources beside it.
-module(beamscale_handlers).

-export([find/1, available/1, lookup/2, module/2, shadowed/2, extra_flags/1, near/2]).
-export_type([handler/0]).

-type handler() :: #{name := atom(), module := module(),
                     origin := builtin | {path, file:filename()},
                     sources := [file:filename()], datadir => file:filename(),
                     bench_conf => file:filename()}.

-define(QUALIFIER, "builtin:").

%% @doc The handlers found on a bench path, first directory first; a name found twice is the
%% first one's.
-spec find([file:filename()]) -> [handler()].
find(Path) ->
    Found = lists:append([in_dir(filename:absname(D)) || D <- Path]),
    first_of_each(Found, #{}).

%% @doc Every benchmark name: the path's handlers, the built-ins they do not shadow, and
%% `builtin:NAME' for those they do.
-spec available([file:filename()]) -> [atom()].
available(Path) ->
    Own = [N || #{name := N} <- find(Path)],
    Builtin = [N || {N, _} <- beamscale_bench:builtin()],
    lists:usort(Own ++ [qualify(N, Own) || N <- Builtin]).

%% @doc The handler of a benchmark name, or `error'.
-spec lookup(atom(), [file:filename()]) -> {ok, handler()} | error.
lookup(Name, Path) ->
    Text = atom_to_list(Name),
    case lists:search(fun(#{name := N}) -> N =:= Name end, find(Path)) of
        {value, H} -> {ok, H};
        false ->
            Bare = case lists:prefix(?QUALIFIER, Text) of
                       true -> list_to_atom(lists:nthtail(length(?QUALIFIER), Text));
                       false -> Name
                   end,
            case lists:keyfind(Bare, 1, beamscale_bench:builtin()) of
                {Bare, Mod} -> {ok, #{name => Name, module => Mod, origin => builtin,
                                      sources => []}};
                false -> error
            end
    end.

%% @doc The module that runs benchmark `Name': the path's handler, else a built-in, else a
%% module of that name (a handler on the code path).
-spec module(atom(), [file:filename()]) -> module().
module(Name, Path) ->
    case lookup(Name, Path) of
        {ok, #{module := Mod}} -> Mod;
        error -> Name
    end.

%% @doc The built-ins among `Names' that a handler on the path shadows, with its directory.
-spec shadowed([atom()], [file:filename()]) -> [{atom(), file:filename()}].
shadowed(Names, Path) ->
    Builtin = [N || {N, _} <- beamscale_bench:builtin()],
    [{N, Dir} || #{name := N, origin := {path, Dir}} <- find(Path), lists:member(N, Names),
                 lists:member(N, Builtin)].

%% @doc The emulator flags a bencherl `conf/bench.conf' adds (EXTRA_ERL_ARGS), "" without one.
-spec extra_flags(handler() | #{sources := []}) -> string().
extra_flags(#{bench_conf := File}) ->
    case file:read_file(File) of
        {ok, Bin} -> extra_erl_args(string:split(binary_to_list(Bin), "\n", all));
        {error, _} -> ""
    end;
extra_flags(_) -> "".

%% @doc A few known names close to a wrong one, as text for an error (not the hundreds of names
%% a code path may hold).
-spec near(atom() | string(), [atom()]) -> iodata().
near(Name, Known) when is_atom(Name) -> near(atom_to_list(Name), Known);
near(Text, Known) ->
    Scored = lists:sort([{distance(Text, K), K} || A <- Known, K <- [atom_to_list(A)]]),
    Close = [K || {D, K} <- Scored, D =< max(2, length(Text) div 3)],
    case lists:sublist(Close, 5) of
        [] -> " (beamscale list shows the benchmarks)";
        Some -> [" (did you mean ", lists:join(", ", Some), "?)"]
    end.

%% Edit distance (Levenshtein), one row at a time.
distance(A, B) ->
    First = lists:seq(0, length(B)),
    {Last, _} = lists:foldl(fun(CA, {Prev, I}) -> {row(CA, B, Prev, [I]), I + 1} end,
                            {First, 1}, A),
    lists:last(Last).

row(_CA, [], _Prev, Acc) -> lists:reverse(Acc);
row(CA, [CB | Bs], [Diag, Up | _] = Prev, [Left | _] = Acc) ->
    Cost = case CA =:= CB of true -> 0; false -> 1 end,
    row(CA, Bs, tl(Prev), [min(min(Up + 1, Left + 1), Diag + Cost) | Acc]).

%%% Internals

qualify(N, Own) ->
    case lists:member(N, Own) of
        true -> list_to_atom(?QUALIFIER ++ atom_to_list(N));
        false -> N
    end.

%% A directory is bencherl's `bench/NAME' when it has `src/NAME.erl' (or `.ex'), bencherl's
%% `bench/' when some `*/src/*.erl' (or `.ex') are in it, else flat.
in_dir(Dir) ->
    Name = filename:basename(Dir),
    case main_source(filename:join(Dir, "src"), Name) of
        {ok, _} -> [bencherl(Dir)];
        error ->
            Nested = [N || S <- lists:sort(filelib:wildcard("*/src", Dir)),
                           N <- [filename:dirname(S)],
                           main_source(filename:join(Dir, S), N) =/= error],
            [bencherl(filename:join(Dir, N)) || N <- Nested] ++ flat(Dir)
    end.

%% A handler's own file: NAME.erl, else NAME.ex (a handler written in Elixir).
main_source(Dir, Name) ->
    Files = [filename:join(Dir, Name ++ Ext) || Ext <- [".erl", ".ex"]],
    case [F || F <- Files, filelib:is_regular(F)] of
        [F | _] -> {ok, F};
        [] -> error
    end.

bencherl(Dir) ->
    Base = filename:basename(Dir),
    Name = list_to_atom(Base),
    Src = filename:join(Dir, "src"),
    {ok, Main} = main_source(Src, Base),
    Conf = filename:join([Dir, "conf", "bench.conf"]),
    maps:merge(#{name => Name, module => module_in(Main, Name), origin => {path, Dir},
                 sources => sources(Src), datadir => filename:join(Dir, "data")},
               maps:from_list([{bench_conf, Conf} || filelib:is_regular(Conf)])).

flat(Dir) ->
    Files = filelib:wildcard(filename:join(Dir, "*.{erl,beam,ex}")),
    Names = lists:usort([filename:basename(F, filename:extension(F)) || F <- Files]),
    [#{name => list_to_atom(N), module => module_in(filename:join(Dir, N ++ ".ex"),
                                                    list_to_atom(N)),
       origin => {path, Dir}, sources => sources(Dir), datadir => filename:join(Dir, "data")}
     || N <- Names].

%% The sources compiled with a handler: every `.erl' and `.ex' of its directory.
sources(Dir) ->
    lists:sort(filelib:wildcard(filename:join(Dir, "*.erl")))
        ++ lists:sort(filelib:wildcard(filename:join(Dir, "*.ex"))).

%% An Elixir handler's module is the one its file defines (`defmodule EtsBench' or
%% `defmodule :ets_bench'); an Erlang one's is its name.
module_in(File, Name) ->
    case filename:extension(File) =:= ".ex" andalso filelib:is_regular(File)
        andalso not filelib:is_regular(filename:rootname(File) ++ ".erl") of
        true -> case beamscale_elixir:module_of(File) of
                    {ok, Mod} -> Mod;
                    default -> Name
                end;
        false -> Name
    end.

first_of_each([], _Seen) -> [];
first_of_each([#{name := N} | T], Seen) when is_map_key(N, Seen) -> first_of_each(T, Seen);
first_of_each([#{name := N} = H | T], Seen) -> [H | first_of_each(T, Seen#{N => true})].

%% bench.conf is a shell file: `EXTRA_ERL_ARGS="..."' (or unquoted); the last one counts.
extra_erl_args(Lines) ->
    Values = [unquote(string:trim(V))
              || L <- Lines, ["EXTRA_ERL_ARGS", V] <- [string:split(string:trim(L), "=")]],
    case Values of
        [] -> "";
        _ -> string:trim(lists:last(Values))
    end.

unquote([Q | Rest]) when Q =:= $"; Q =:= $' -> lists:takewhile(fun(C) -> C =/= Q end, Rest);
unquote(V) -> V.
