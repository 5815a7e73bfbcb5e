-module(beamscale_cli_doc_tests).
-include_lib("eunit/include/eunit.hrl").

%% Each command's each flag is in a row naming the command; the shared `--out' is one row.
every_declaration_has_its_row_test() ->
    Rows = tl(tl(beamscale_cli_doc:options_table())),
    [?assertMatch([_ | _], [R || R <- Rows, lists:prefix("| `" ++ element(2, O) ++ "` |", R),
                                 string:find(R, "`" ++ Name ++ "`") =/= nomatch])
     || M <- beamscale_cmd:commands(), #{name := Name, options := Os} <- [M:info()], O <- Os],
    ?assertMatch(["| `--out` | `run`, `bench`, `load`, `saturate`, `study` | string | `runs` |"
                  ++ _], [R || R <- Rows, string:find(R, "`study` | string | `runs`") =/= nomatch]).

%% Five cells a row: a `|' in a help (`a|b') is escaped.
cells_test() ->
    [?assertEqual(5, length(re:split(R, "(?<!\\\\)\\|")) - 2)
     || R <- beamscale_cli_doc:options_table()].
