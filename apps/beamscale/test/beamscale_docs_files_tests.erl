%% The docs' tables of run files and counters against the code: a table headed `| file |' names
%% only files the sources name (a string `"NAME"' or `"NAME/'), and one headed `| counter |'
%% names each count a kind declares (`measures/0') and no other count of a kind's name.
-module(beamscale_docs_files_tests).
-include_lib("eunit/include/eunit.hrl").

-export([problems/1]).

tables_agree_with_the_code_test_() ->
    {timeout, 60, fun() -> ?assertEqual([], problems(beamscale_docs_tests:root())) end}.

%% A file no source names, a kind's count it does not declare and one it lacks: each named.
planted_test() ->
    Doc = ["| file | what |", "|---|---|", "| `run.json`, `gone.csv` | x |", "",
           "| counter | when |", "|---|---|", "| `mqtt_teleported` | x |"],
    Problems = check("T.md", Doc, sources(beamscale_docs_tests:root())),
    ?assert(lists:member("T.md:3: `gone.csv` is a file no source names: correct or remove it",
                         Problems)),
    ?assert(lists:member("T.md:7: `mqtt_teleported` is no count beamscale_load_mqtt:measures/0 "
                         "declares: correct or remove it", Problems)),
    ?assert(lists:member("T.md:5: the table lacks `mqtt_connected` "
                         "(beamscale_load_mqtt:measures/0)", Problems)),
    ?assertNot(lists:any(fun(P) -> string:find(P, "run.json") =/= nomatch end, Problems)).

%% @doc Every disagreement of the docs under `Root' with the files and counts of the code.
-spec problems(file:filename()) -> [string()].
problems(Root) ->
    Sources = sources(Root),
    Docs = ["README.md" | [filename:join("docs", F)
                           || F <- filelib:wildcard("**/*.md", filename:join(Root, "docs"))]],
    lists:append([check(Rel, lines(filename:join(Root, Rel)), Sources) || Rel <- Docs]).

check(Rel, Lines, Sources) ->
    Numbered = lists:zip(lists:seq(1, length(Lines)), Lines),
    lists:append([table(Rel, N, head(L), rows(N, Numbered), Sources) || {N, L} <- Numbered]).

head(Line) ->
    case re:run(Line, "^\\|\\s*(file|counter)\\s*\\|", [unicode, {capture, all_but_first, list}]) of
        {match, [H]} -> H;
        nomatch -> none
    end.

%% The rows below a head (its `|---|' line skipped), to the first line that is no row.
rows(N, Numbered) ->
    lists:takewhile(fun({_, L}) -> lists:prefix("|", L) end,
                    [R || {M, _} = R <- Numbered, M > N + 1]).

table(Rel, _N, "file", Rows, Sources) ->
    [lists:flatten(io_lib:format("~ts:~b: `~ts` is a file no source names: correct or remove it",
                                 [Rel, M, F]))
     || {M, Row} <- Rows, F <- first_codes(Row), is_file(F), not named(F, Sources)];
table(Rel, N, "counter", Rows, _Sources) ->
    Declared = [{atom_to_list(K:name()), K, [binary_to_list(C) || C <- Cs]}
                || K <- beamscale_load_kinds:all(),
                   {Cs, _} <- [measures(K)], Cs =/= []],
    Named = [{M, C} || {M, Row} <- Rows, C <- first_codes(Row)],
    [lists:flatten(io_lib:format("~ts:~b: `~ts` is no count ~s:measures/0 declares: correct or "
                                 "remove it", [Rel, M, C, K]))
     || {M, C} <- Named, {Kind, K, Cs} <- Declared, lists:prefix(Kind ++ "_", C),
        not lists:member(C, Cs)]
    ++ [lists:flatten(io_lib:format("~ts:~b: the table lacks `~ts` (~s:measures/0)",
                                    [Rel, N, C, K]))
        || {_, K, Cs} <- Declared, C <- Cs, not lists:keymember(C, 2, Named)];
table(_, _, none, _, _) -> [].

measures(K) ->
    _ = code:ensure_loaded(K),
    case erlang:function_exported(K, measures, 0) of
        true -> K:measures();
        false -> {[], []}
    end.

first_codes("|" ++ Row) ->
    [C || [C] <- matches(hd(string:split(Row, "|")), "`([^`]+)`")].

is_file(F) -> lists:suffix("/", F) orelse re:run(F, "^[a-z_.-]+\\.[a-z]+$", [unicode]) =/= nomatch.

named(F, Sources) ->
    Quoted = "\"" ++ string:trim(F, trailing, "/"),
    lists:any(fun(S) -> string:find(S, Quoted ++ "\"") =/= nomatch
                            orelse string:find(S, Quoted ++ "/") =/= nomatch end, Sources).

sources(Root) ->
    [unicode:characters_to_list(B)
     || F <- filelib:wildcard(filename:join(Root, "apps/*/src/**/*.erl")),
        {ok, B} <- [file:read_file(F)]].

lines(File) ->
    {ok, Bin} = file:read_file(File),
    string:split(unicode:characters_to_list(Bin), "\n", all).

matches(Text, Re) ->
    case re:run(Text, Re, [global, unicode, {capture, all_but_first, list}]) of
        {match, Ms} -> Ms;
        nomatch -> []
    end.
