%% The docs' command lines against the commands' option declarations: each `--flag' written
%% after `beamscale CMD' (in a line, a code span or a fenced block with `\' continuations) is
%% an option CMD declares, and docs/config.md names each option of `run', its table of keys
%% only options of `run'. Each failure is one line: the doc, its line, what to change.
-module(beamscale_docs_options_tests).
-include_lib("eunit/include/eunit.hrl").

-export([problems/1]).

docs_name_declared_options_test_() ->
    {timeout, 60, fun() -> ?assertEqual([], problems(beamscale_docs_tests:root())) end}.

%% A flag no command declares, one of another command, and an option of `run' config.md does
%% not name: each said with its line.
planted_test() ->
    Doc = ["Run `beamscale run --launches 3 --rate 5`, then", "```",
           "./beamscale load x.scenario \\", "  --out runs --nope", "```",
           "`beamscale bench 'a().' | beamscale compare --launches 2` and `--rate` alone."],
    ?assertEqual(["T.md:1: beamscale run takes no option --rate (beamscale_cmd_run:info/0): "
                  "correct the flag or the command",
                  "T.md:3: beamscale load takes no option --nope (beamscale_cmd_load:info/0): "
                  "correct the flag or the command",
                  "T.md:6: beamscale compare takes no option --launches "
                  "(beamscale_cmd_compare:info/0): correct the flag or the command"],
                 command_lines("T.md", Doc)),
    Config = ["<!-- defaults:config -->", "| key | value | default | option |", "|---|---|---|---|",
              "| `iterations` | x | `3` | `--iterations`, `--rate` |"],
    Problems = config_options(Config),
    ?assert(lists:member("docs/config.md:4: `--rate` is no option of beamscale run "
                         "(beamscale_cmd_run:info/0)", Problems)),
    ?assert(lists:member("docs/config.md: names no `--launches`, an option of beamscale run "
                         "(beamscale_cmd_run:info/0): say what it does", Problems)).

%% A row the declarations do not make (a stale default) and one they make that is not there.
planted_page_test() ->
    [Head, Rule, Row | Rows] = beamscale_cli_doc:options_table(),
    Stale = lists:droplast(Row) ++ "(stale) |",
    Page = ["# T", "<!-- options:begin -->", Head, Rule, Stale] ++ Rows
        ++ ["<!-- options:end -->"],
    ?assertEqual([lists:flatten(["docs/options.md:5: not a row the declarations make "
                                 "(beamscale_cli_doc:options_table/0), `make options-doc` "
                                 "writes them: ", Stale]),
                  "docs/options.md: lacks the row " ++ Row ++ ": `make options-doc` writes it"],
                 options_page(Page)).

%% @doc Every disagreement between the docs under `Root' and the commands' options.
-spec problems(file:filename()) -> [string()].
problems(Root) ->
    lists:append([command_lines(Rel, lines(filename:join(Root, Rel))) || Rel <- docs(Root)])
        ++ config_options(lines(filename:join(Root, "docs/config.md")))
        ++ options_page(lines(filename:join(Root, "docs/options.md"))).

docs(Root) ->
    [F || F <- ["README.md", "CONTRIBUTING.md"]
             ++ [filename:join("docs", F) || F <- wild("*.md", Root, "docs")]
             ++ [filename:join("docs", F) || F <- wild("*/*.md", Root, "docs")]].

wild(Pattern, Root, Dir) -> filelib:wildcard(Pattern, filename:join(Root, Dir)).

lines(File) ->
    {ok, Bin} = file:read_file(File),
    string:split(unicode:characters_to_list(Bin), "\n", all).

%%% Command lines

command_lines(Rel, Lines) ->
    Cmds = maps:from_list([{maps:get(name, M:info()), M} || M <- beamscale_cmd:commands()]),
    lists:append([line_flags(Rel, N, L, Cmds)
                  || {N, L} <- joined(lists:zip(lists:seq(1, length(Lines)), Lines))]).

%% A line ending in `\' goes on in the next (a shell command in a fenced block).
joined([]) -> [];
joined([{N, L} | Rest]) ->
    case {lists:suffix("\\", string:trim(L, trailing)), Rest} of
        {true, [{_, Next} | More]} -> joined([{N, L ++ " " ++ Next} | More]);
        _ -> [{N, L} | joined(Rest)]
    end.

%% `beamscale CMD ARGS': the arguments up to the end of the code span, a pipe or a `;' (not
%% `beamscale run: ...', an error line the docs quote).
line_flags(Rel, N, Line, Cmds) ->
    [lists:flatten(io_lib:format("~ts:~b: beamscale ~ts takes no option ~ts (~s:info/0): "
                                 "correct the flag or the command",
                                 [Rel, N, C, F, maps:get(C, Cmds)]))
     || [C, Args] <- matches(Line, "(?:^|[\\s`(])(?:\\./)?beamscale ([a-z]+)(?![:a-z])([^`|;&]*)"),
        is_map_key(C, Cmds),
        F <- lists:usort([F || [F] <- matches(Args, "(?<![\\w-])(--[a-z][a-z0-9-]*)")]),
        not lists:member(F, ["--help" | flags(maps:get(C, Cmds))])].

flags(Mod) -> [element(2, O) || O <- maps:get(options, Mod:info())].

matches(Text, Re) ->
    case re:run(Text, Re, [global, unicode, {capture, all_but_first, list}]) of
        {match, Ms} -> Ms;
        nomatch -> []
    end.

%%% docs/config.md and run's options

%% The table of keys (`<!-- defaults:config -->'): its `--flag's are run's; the page names each
%% of run's options somewhere, as `--flag'.
config_options(Lines) ->
    Run = flags(beamscale_cmd_run),
    Numbered = lists:zip(lists:seq(1, length(Lines)), Lines),
    Table = case lists:dropwhile(fun({_, L}) -> not lists:prefix("<!-- defaults:config -->", L)
                                 end, Numbered) of
                [_ | Rows] -> lists:takewhile(fun({_, L}) -> lists:prefix("|", L) end, Rows);
                [] -> []
            end,
    Text = lists:flatten(lists:join("\n", Lines)),
    [lists:flatten(io_lib:format("docs/config.md:~b: `~ts` is no option of beamscale run "
                                 "(beamscale_cmd_run:info/0)", [N, F]))
     || {N, Row} <- Table, F <- option_cell_flags(Row), not lists:member(F, Run)]
    ++ [lists:flatten(io_lib:format("docs/config.md: names no `~ts`, an option of beamscale run "
                                    "(beamscale_cmd_run:info/0): say what it does", [F]))
        || F <- Run, string:find(Text, "`" ++ F) =:= nomatch].

%% The flags of a table row's last cell, `option'.
option_cell_flags(Row) ->
    case lists:reverse(string:split(string:replace(Row, "\\|", "!", all), "|", all)) of
        [_, Cell | _] -> lists:usort([F || [F] <- matches(lists:flatten(Cell),
                                                          "`(--[a-z][a-z0-9-]*)")]);
        _ -> []
    end.

%%% docs/options.md

%% The table between the page's markers is the one the declarations make, row for row.
options_page(Lines) ->
    Numbered = lists:zip(lists:seq(1, length(Lines)), Lines),
    Table = lists:takewhile(fun({_, L}) -> L =/= "<!-- options:end -->" end,
                            tl(lists:dropwhile(fun({_, L}) -> L =/= "<!-- options:begin -->" end,
                                               Numbered ++ [{0, "<!-- options:begin -->"}]))),
    Made = beamscale_cli_doc:options_table(),
    [lists:flatten(io_lib:format("docs/options.md:~b: not a row the declarations make "
                                 "(beamscale_cli_doc:options_table/0), `make options-doc` "
                                 "writes them: ~ts", [N, L]))
     || {N, L} <- Table, not lists:member(L, Made)]
    ++ ["docs/options.md: lacks the row " ++ L ++ ": `make options-doc` writes it"
        || L <- Made, not lists:keymember(L, 2, Table)].
