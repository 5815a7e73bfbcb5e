%% @doc Where each benchmark comes from: a user's handler on the bench path, else a built-in one.
%%
%% A bench path directory is read in any of three layouts (docs/benchmarks.md):
%% - flat: `DIR/NAME.erl' or `DIR/NAME.beam', every source of DIR compiled beside it, data in
%%   `DIR/data';
%% - bencherl's `bench/NAME': `NAME/src/NAME.erl' with the other sources of `src/', data in
%%   `NAME/data', settings in `NAME/conf/bench.conf';
%% - bencherl's `bench/': every `bench/NAME' of the layout above.
%% A handler of the same name as a built-in benchmark shadows it (the user's handler wins); the
%% built-in stays reachable as `builtin:NAME'.
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

%% A directory is bencherl's `bench/NAME' when it has `src/NAME.erl', bencherl's `bench/' when
%% some `*/src/*.erl' are in it, else flat.
in_dir(Dir) ->
    Name = filename:basename(Dir),
    case filelib:is_regular(filename:join([Dir, "src", Name ++ ".erl"])) of
        true -> [bencherl(Dir)];
        false ->
            Nested = [filename:dirname(S) || S <- lists:sort(filelib:wildcard("*/src", Dir)),
                                             filelib:is_regular(filename:join([Dir, S,
                                               filename:dirname(S) ++ ".erl"]))],
            [bencherl(filename:join(Dir, N)) || N <- Nested] ++ flat(Dir)
    end.

bencherl(Dir) ->
    Name = list_to_atom(filename:basename(Dir)),
    Conf = filename:join([Dir, "conf", "bench.conf"]),
    maps:merge(#{name => Name, module => Name, origin => {path, Dir},
                 sources => lists:sort(filelib:wildcard(filename:join([Dir, "src", "*.erl"]))),
                 datadir => filename:join(Dir, "data")},
               maps:from_list([{bench_conf, Conf} || filelib:is_regular(Conf)])).

flat(Dir) ->
    Sources = lists:sort(filelib:wildcard(filename:join(Dir, "*.erl"))),
    Names = lists:usort([list_to_atom(filename:basename(F, filename:extension(F)))
                         || F <- filelib:wildcard(filename:join(Dir, "*.{erl,beam}"))]),
    [#{name => N, module => N, origin => {path, Dir}, sources => Sources,
       datadir => filename:join(Dir, "data")} || N <- Names].

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
