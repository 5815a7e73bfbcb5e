%% @doc bencherl's `conf/run.conf' read as a beamscale configuration: each `KEY=VALUE' line is
%% mapped to configuration keys, or refused with its file and line when beamscale has no
%% equivalent (docs/config.md, "bencherl's run.conf", lists each key). Comments and blank lines
%% are skipped; values may be quoted, as in the shell.
-module(beamscale_bencherl_conf).

-export([read/2, format_error/1]).

%% Bounds on what a file may make: run.conf is a few lines, and its aliases become atoms.
-define(MAX_BYTES, 1 bsl 20).
-define(MAX_ALIASES, 32).
-define(MAX_ALIAS_CHARS, 32).

%% @doc The configuration settings `File' stands for, the bench path `Bench' (bencherl's
%% `bench/', for INCLUDE_BENCH and EXCLUDE_BENCH) already among them when given.
-spec read(file:filename(), [file:filename()]) ->
    {ok, [{atom(), term()}]} | {error, {?MODULE, term()}}.
read(File, BenchPath) ->
    case beamscale_format_file:read(File, ?MAX_BYTES) of
        {error, Why} -> {error, {?MODULE, {File, 0, "", beamscale_format_file:format_error(Why)}}};
        {ok, Bin} ->
            Lines = lists:enumerate(string:split(unicode:characters_to_list(Bin), "\n", all)),
            try
                Pairs = [{N, K, unquote(string:trim(V))}
                         || {N, L} <- Lines, [K, V] <- [assignment(string:trim(L))]],
                {ok, settings(Pairs, default_bench(File, BenchPath))}
            catch throw:{refused, Line, Key, Why} -> {error, {?MODULE, {File, Line, Key, Why}}}
            end
    end.

%% @doc One line: file, line, key and why.
-spec format_error(term()) -> iodata().
format_error({File, Line, "", Why}) -> io_lib:format("~ts:~b: ~ts", [File, Line, Why]);
format_error({File, Line, Key, Why}) -> io_lib:format("~ts:~b: ~s: ~ts", [File, Line, Key, Why]).

%%% Internals

assignment("#" ++ _) -> none;
assignment("") -> none;
assignment(Line) ->
    case string:split(Line, "=") of
        [K, V] -> [string:trim(K), V];
        _ -> none
    end.

unquote([Q | Rest]) when Q =:= $"; Q =:= $' ->
    case lists:reverse(Rest) of
        [Q | Inner] -> lists:reverse(Inner);
        _ -> Rest
    end;
unquote(V) -> V.

%% run.conf lives in ROOT/conf; ROOT/bench holds the handlers unless a bench path is given.
default_bench(_File, [_ | _] = Path) -> Path;
default_bench(File, []) ->
    Bench = filename:join(filename:dirname(filename:dirname(filename:absname(File))), "bench"),
    [Bench || filelib:is_dir(Bench)].

settings(Pairs, Path) ->
    Mapped = lists:append([map(N, K, V, Path) || {N, K, V} <- Pairs, V =/= ""]),
    Include = proplists:get_value(include_bench, Mapped, all),
    Exclude = proplists:get_value(exclude_bench, Mapped, []),
    Benchmarks = case {Include, Exclude} of
                     {all, []} -> [];
                     {all, _} -> [{benchmarks, names(Path) -- Exclude}];
                     _ -> [{benchmarks, Include -- Exclude}]
                 end,
    [{bench_path, Path} || Path =/= []] ++ Benchmarks
        ++ [S || {K, _} = S <- Mapped, K =/= include_bench, K =/= exclude_bench].

%% `all' of a bencherl tree: its handlers, not beamscale's built-ins.
names(Path) -> [N || #{name := N, origin := {path, _}} <- beamscale_handlers:find(Path)].

map(N, "ITERATIONS", V, _) -> [checked(N, "ITERATIONS", iterations, int(N, "ITERATIONS", V))];
map(N, "VERSION", V, _) -> [checked(N, "VERSION", version, version(N, V))];
map(N, K, V, _) when K =:= "NUMBER_OF_SCHEDULERS"; K =:= "SCHEDULERS" ->
    [checked(N, K, schedulers, counts(N, K, V))];
map(N, "NUMBER_OF_SLAVE_NODES" = K, V, _) ->
    %% bencherl counts the slaves, beamscale the nodes in all (the node under test too).
    [checked(N, K, nodes, [C + 1 || C <- counts(N, K, V)])];
map(N, "OTPS" = K, V, _) ->
    [checked(N, K, erls, [{alias(N, K, A), filename:join([P, "bin", "erl"])}
                          || {A, P} <- aliases(N, K, V)])];
map(N, "ERL_ARGS" = K, V, _) ->
    [checked(N, K, erl_args, [{alias(N, K, A), F} || {A, F} <- aliases(N, K, V)])];
map(N, "INCLUDE_BENCH" = K, V, Path) -> [{include_bench, bench_names(N, K, V, Path)}];
map(N, "EXCLUDE_BENCH" = K, V, Path) -> [{exclude_bench, bench_names(N, K, V, Path)}];
map(_N, K, "1", _) when K =:= "CHECK_SANITY"; K =:= "PLOT"; K =:= "USE_LONG_NAMES" -> [];
map(_N, "CHECK_SANITY", "0", _) -> [];  % a verdict on the page; it never stops a run
map(_N, "PLOT", "0", _) -> [];          % the page's charts are drawn in any case
map(_N, "SKIP_SLAVE_SETUP", "0", _) -> [];
map(N, K, _V, _) -> refuse(N, K, why(K)).

why("USE_LONG_NAMES") -> "beamscale's nodes always have long names (name@address); remove it";
why("COOKIE") ->
    "a cookie is never put in run.conf's settings nor run.json: write it to a file of mode 0400 "
    "and give that file as cookie_file in a --config file";
why("MASTER_NODE") -> "beamscale starts the node under test itself, fresh per launch; remove it";
why("SLAVE_NODES") ->
    "beamscale starts the peers itself: give NUMBER_OF_SLAVE_NODES, and hosts in a --config "
    "file for peers on other machines";
why("SKIP_SLAVE_SETUP") -> "beamscale always starts the peers itself; remove it";
why("OUTPUT_FORMAT") ->
    "summary.csv always holds median, interval, mean, min and max; remove it";
why(_) -> "not a bencherl run.conf key beamscale knows".

-spec refuse(pos_integer(), string(), iodata()) -> no_return().
refuse(N, K, Why) -> throw({refused, N, K, Why}).

checked(N, K, Key, Value) ->
    case beamscale_config:check(Key, Value) of
        {ok, _} -> {Key, Value};
        {error, _, Message} -> refuse(N, K, Message)
    end.

%% Only the words beamscale knows become atoms: nothing in the file makes new ones but aliases.
version(_N, "short") -> short;
version(_N, "intermediate") -> intermediate;
version(_N, "long") -> long;
version(N, _V) -> refuse(N, "VERSION", "expected short, intermediate or long").

int(N, K, V) ->
    try list_to_integer(V)
    catch error:badarg -> refuse(N, K, "expected an integer")
    end.

%% "1,2,4" or "1..4", as bencherl reads them.
counts(N, K, V) ->
    case string:split(V, "..") of
        [From, To] -> lists:seq(int(N, K, From), int(N, K, To));
        [_] -> [int(N, K, string:trim(C)) || C <- string:lexemes(V, ", ")]
    end.

%% "ALIAS=value,ALIAS=value".
aliases(N, K, V) ->
    Pairs = string:lexemes(V, ","),
    length(Pairs) =< ?MAX_ALIASES
        orelse refuse(N, K, io_lib:format("more than ~b aliases", [?MAX_ALIASES])),
    [case string:split(P, "=") of
         [A, X] when A =/= "" -> {string:trim(A), string:trim(X)};
         _ -> refuse(N, K, "expected ALIAS=value, separated by commas")
     end || P <- Pairs].

%% An alias names an environment on the page: letters, digits, `_', `-' and `.', bounded.
alias(N, K, A) ->
    Ok = length(A) =< ?MAX_ALIAS_CHARS
        andalso lists:all(fun(C) -> lists:member(C, "_-.") orelse is_alnum(C) end, A),
    Ok orelse refuse(N, K, io_lib:format("alias ~0p: expected at most ~b letters, digits, _, - "
                                         "or .", [A, ?MAX_ALIAS_CHARS])),
    list_to_atom(A).

is_alnum(C) -> (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z)
                   orelse (C >= $0 andalso C =< $9).

%% Names of benchmarks there are (the path's handlers and the built-ins), never new atoms.
bench_names(N, K, V, Path) ->
    Known = beamscale_handlers:available(Path),
    ByText = maps:from_list([{atom_to_list(A), A} || A <- Known]),
    [case ByText of
         #{B := A} -> A;
         #{} -> refuse(N, K, ["unknown benchmark ", B, beamscale_handlers:near(B, Known)])
     end || B0 <- string:lexemes(V, ", "), B <- [string:trim(B0)]].
