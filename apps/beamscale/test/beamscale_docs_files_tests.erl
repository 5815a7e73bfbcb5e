%% The docs' tables of run files and counters against the code: docs/run-directory.md's tables
%% headed `| file | by |' name each file `beamscale_format_rundir:all/0' declares and no other,
%% each with the commands it declares (a row's `by'); no source but the registry spells a
%% registered name as a string of its own; a table headed `| counter |' names each count a kind
%% declares (`measures/0') and no other count of a kind's name.
-module(beamscale_docs_files_tests).
-include_lib("eunit/include/eunit.hrl").

-export([problems/1]).

-define(DOC, "docs/run-directory.md").

tables_agree_with_the_code_test_() ->
    {timeout, 60, fun() -> ?assertEqual([], problems(beamscale_docs_tests:root())) end}.

%% A file not registered, a registered one left out, other writers than the registry's, a
%% kind's count it does not declare and one it lacks: each named.
planted_test() ->
    Doc = ["| file | by | what |", "|---|---|---|", "| `run.json`, `gone.csv` | `run` | x |",
           "| `dump.log` | `load`, `run` | x |", "",
           "| counter | when |", "|---|---|", "| `mqtt_teleported` | x |"],
    Problems = check("T.md", Doc),
    Expected = ["T.md:3: `gone.csv` is no file beamscale_format_rundir:all/0 declares: correct "
                "or remove it",
                "T.md: lacks `counters.csv` (beamscale_format_rundir:all/0: by load): add its row",
                "T.md: `dump.log` is written by load (beamscale_format_rundir:all/0), its rows "
                "say load, run",
                "T.md: `run.json` is written by bench, load, run, saturate, study "
                "(beamscale_format_rundir:all/0), its rows say run",
                "T.md:8: `mqtt_teleported` is no count beamscale_load_mqtt:measures/0 declares: "
                "correct or remove it",
                "T.md:6: the table lacks `mqtt_connected` (beamscale_load_mqtt:measures/0)"],
    ?assertEqual([], Expected -- Problems),
    %% A writer spelling a registered name itself, and one taking it from the registry.
    ?assertEqual(["w.erl:2: \"events.csv\" spelled out: beamscale_format_rundir:path(Dir, "
                  "events)"],
                 literals([{"w.erl", "f(Dir) ->\n    filename:join(Dir, \"events.csv\").\n"
                                     "g(Dir) -> beamscale_format_rundir:path(Dir, events).\n"}])).

%% @doc Every disagreement of the docs under `Root' with the files and counts of the code.
-spec problems(file:filename()) -> [string()].
problems(Root) ->
    Docs = ["README.md" | [filename:join("docs", F)
                           || F <- filelib:wildcard("**/*.md", filename:join(Root, "docs"))]],
    lists:append([tables(Rel, lines(filename:join(Root, Rel))) || Rel <- Docs])
        ++ files(?DOC, numbered(lines(filename:join(Root, ?DOC))))
        ++ literals(sources(Root))
        ++ [lists:flatten(io_lib:format("beamscale_format_rundir:all/0: ~ts's writer ~s is no "
                                        "command", [N, W]))
            || #{name := N, writers := Ws} <- beamscale_format_rundir:all(), W <- Ws,
               W =/= any, beamscale_cmd:find(atom_to_list(W)) =:= error].

%% A document's own check, both ways for the files when it is the one of run files.
check(Rel, Lines) -> tables(Rel, Lines) ++ files(Rel, numbered(Lines)).

tables(Rel, Lines) ->
    Numbered = numbered(Lines),
    lists:append([table(Rel, N, head(L), rows(N, Numbered)) || {N, L} <- Numbered]).

numbered(Lines) -> lists:zip(lists:seq(1, length(Lines)), Lines).

head(Line) ->
    case re:run(Line, "^\\|\\s*(file|counter)\\s*\\|", [unicode, {capture, all_but_first, list}]) of
        {match, [H]} -> H;
        nomatch -> none
    end.

%% The rows below a head (its `|---|' line skipped), to the first line that is no row.
rows(N, Numbered) ->
    lists:takewhile(fun({_, L}) -> lists:prefix("|", L) end,
                    [R || {M, _} = R <- Numbered, M > N + 1]).

%% Any table of files names registered files only.
table(Rel, _N, "file", Rows) ->
    Names = [N || #{name := N} <- beamscale_format_rundir:all()],
    [lists:flatten(io_lib:format("~ts:~b: `~ts` is no file beamscale_format_rundir:all/0 "
                                 "declares: correct or remove it", [Rel, M, F]))
     || {M, Row} <- Rows, F <- codes(cell(1, Row)), not lists:member(F, Names)];
table(Rel, N, "counter", Rows) ->
    Declared = [{atom_to_list(K:name()), K, [binary_to_list(C) || C <- Cs]}
                || K <- beamscale_load_kinds:all(),
                   {Cs, _} <- [measures(K)], Cs =/= []],
    Named = [{M, C} || {M, Row} <- Rows, C <- codes(cell(1, Row))],
    [lists:flatten(io_lib:format("~ts:~b: `~ts` is no count ~s:measures/0 declares: correct or "
                                 "remove it", [Rel, M, C, K]))
     || {M, C} <- Named, {Kind, K, Cs} <- Declared, lists:prefix(Kind ++ "_", C),
        not lists:member(C, Cs)]
    ++ [lists:flatten(io_lib:format("~ts:~b: the table lacks `~ts` (~s:measures/0)",
                                    [Rel, N, C, K]))
        || {_, K, Cs} <- Declared, C <- Cs, not lists:keymember(C, 2, Named)];
table(_, _, none, _) -> [].

%% The run files' document: each registered file in a row, its rows' `by' its writers.
files(Rel, Numbered) ->
    Rows = lists:append([rows(N, Numbered) || {N, L} <- Numbered, head(L) =:= "file"]),
    By = [{F, W} || {_, Row} <- Rows, F <- codes(cell(1, Row)), W <- writers(cell(2, Row))],
    lists:append([file(Rel, E, [W || {F, W} <- By, F =:= N])
                  || #{name := N} = E <- beamscale_format_rundir:all()]).

file(Rel, #{name := N, writers := Ws}, []) ->
    [lists:flatten(io_lib:format("~ts: lacks `~ts` (beamscale_format_rundir:all/0: by ~ts): "
                                 "add its row", [Rel, N, commas(Ws)]))];
file(Rel, #{name := N, writers := Ws}, Said) ->
    [lists:flatten(io_lib:format("~ts: `~ts` is written by ~ts (beamscale_format_rundir:all/0), "
                                 "its rows say ~ts", [Rel, N, commas(Ws), commas(Said)]))
     || lists:sort(Ws) =/= lists:usort(Said)].

%% `by': the commands in code spans, or `any command'.
writers(Cell) ->
    [list_to_atom(C) || C <- codes(Cell)] ++ [any || string:find(Cell, "any command") =/= nomatch].

commas(Ws) -> lists:join(", ", [atom_to_list(W) || W <- lists:usort(Ws)]).

cell(I, "|" ++ Row) -> lists:nth(I, string:split(Row, "|", all) ++ [""]).

codes(Cell) -> [C || [C] <- matches(Cell, "`([^`]+)`")].

%% A source other than the registry that writes a registered name as a string of its own.
literals(Sources) ->
    Names = [{string:trim(N, trailing, "/"), F} || #{name := N, file := F}
                                                      <- beamscale_format_rundir:all()],
    [lists:flatten(io_lib:format("~ts:~b: \"~ts\" spelled out: beamscale_format_rundir:path(Dir, "
                                 "~s)", [Path, L, N, F]))
     || {Path, Text} <- Sources, filename:basename(Path) =/= "beamscale_format_rundir.erl",
        {L, Line} <- numbered(string:split(Text, "\n", all)),
        not lists:prefix("%", string:trim(Line, leading)),
        {N, F} <- Names, string:find(Line, "\"" ++ N ++ "\"") =/= nomatch].

measures(K) ->
    _ = code:ensure_loaded(K),
    case erlang:function_exported(K, measures, 0) of
        true -> K:measures();
        false -> {[], []}
    end.

sources(Root) ->
    [{F, unicode:characters_to_list(B)}
     || F <- filelib:wildcard("apps/*/src/**/*.erl", Root),
        {ok, B} <- [file:read_file(filename:join(Root, F))]].

lines(File) ->
    {ok, Bin} = file:read_file(File),
    string:split(unicode:characters_to_list(Bin), "\n", all).

matches(Text, Re) ->
    case re:run(Text, Re, [global, unicode, {capture, all_but_first, list}]) of
        {match, Ms} -> Ms;
        nomatch -> []
    end.
