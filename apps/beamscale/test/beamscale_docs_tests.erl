%% The docs checked against the code: a list of kinds, commands, studies or benchmarks that a doc
%% marks (`<!-- list:kinds -->') is the registry's, and every module, app, exported function
%% and relative link a doc names exists. Each failure is one line: the doc, its line, what to
%% change. How to mark a list: docs/architecture.md, "Docs that the tests check".
-module(beamscale_docs_tests).

-include_lib("eunit/include/eunit.hrl").

-export([problems/1, root/0, kind_pages/1]).

-define(APPS, [beamscale, beamscale_amoc, beamscale_bench, beamscale_format, beamscale_load,
               beamscale_report, beamscale_stats, beamscale_targets]).

docs_agree_with_the_code_test_() ->
    {timeout, 60, fun() -> assert_none(problems(root())) end}.

%% A planted stale entry and a missing one, a module and a link that do not exist: each named
%% with its line.
planted_test() ->
    Doc = ["# T", "", "Kinds: `http`, `gopher`. <!-- list:kinds -->",
           "See beamscale_nowhere and beamscale_cmd:nothing/3, [x](../../outside.md)."],
    Problems = check_doc("T.md", Doc, context(root())),
    ?assertMatch([_, _ | _], [P || P <- Problems, string:find(P, "T.md:3: ") =/= nomatch]),
    ?assert(has(Problems, "T.md:3: the list of kinds names `gopher`")),
    ?assert(has(Problems, "T.md:3: the list of kinds lacks `rpc`")),
    ?assert(has(Problems, "T.md:4: no module beamscale_nowhere")),
    ?assert(has(Problems, "T.md:4: no function beamscale_cmd:nothing/3")),
    ?assert(has(Problems, "T.md:4: the link ../../outside.md")).

%% A table of `run''s keys marked `<!-- defaults:config -->': a stale default, a key the code
%% does not have and one missing are each named.
planted_defaults_test() ->
    Rows = [lists:flatten(io_lib:format("| `~ts` | x | `~ts` | |", [K, default_text(K)]))
            || K <- beamscale_config:keys(), K =/= iterations, K =/= warmups],
    Doc = ["<!-- defaults:config -->", "| key | value | default | option |", "|---|---|---|---|",
           "| `iterations` | x | `4` | |", "| `nokey` | x | `1` | |" | Rows],
    Problems = check_doc("T.md", Doc, context(root())),
    ?assert(has(Problems, "T.md:4: `iterations`' default is `3` (beamscale_config:defaults/0), "
                          "not `4`")),
    ?assert(has(Problems, "T.md:5: `nokey` is no key of beamscale_config:keys/0")),
    ?assert(has(Problems, "T.md:1: the table lacks `warmups`")),
    ?assertEqual(3, length(Problems)).

%% A page for a kind that is not registered, a kind without a page, a Tsung attribute read but
%% not said: each named.
planted_kind_pages_test() ->
    Root = filename:join(os:getenv("TMPDIR", "/tmp"),
                         "docs_kinds_" ++ integer_to_list(erlang:unique_integer([positive]))),
    Kinds = filename:join(Root, "docs/kinds"),
    ok = filelib:ensure_path(Kinds),
    try
        ok = file:write_file(filename:join(Kinds, "gopher.md"), "# gopher\n"),
        ok = file:write_file(filename:join(Kinds, "rpc.md"), "`<rpc>`: `type`, `module`.\n"),
        Problems = kind_pages(Root),
        ?assert(has(Problems, "docs/kinds/gopher.md: no kind gopher")),
        ?assert(has(Problems, "docs/kinds: no page http.md")),
        ?assert(has(Problems, "docs/kinds/rpc.md: the Tsung element <rpc> reads `function`")),
        ?assertNot(has(Problems, "docs/kinds: no page rpc.md"))
    after
        file:del_dir_r(Root)
    end.

%%% The checks

%% @doc Every disagreement between the docs under `Root' and the built code, a line each.
-spec problems(file:filename()) -> [string()].
problems(Root) ->
    Ctx = context(Root),
    lists:append([check_doc(Rel, lines(filename:join(Root, Rel)), Ctx) || Rel <- docs(Root)])
        ++ kind_pages(Root).

%% @doc docs/kinds/ against the registry of kinds: a page `NAME.md' for each kind and no other,
%% and each page of a kind with a Tsung element names the element and each attribute the kind's
%% `tsung/0' says it reads.
-spec kind_pages(file:filename()) -> [string()].
kind_pages(Root) ->
    Kinds = [{atom_to_list(M:name()), M} || M <- beamscale_load_kinds:all()],
    Dir = filename:join(Root, "docs/kinds"),
    Pages = [filename:basename(F, ".md") || F <- filelib:wildcard("*.md", Dir)],
    [lists:flatten(io_lib:format("docs/kinds/~ts.md: no kind ~ts in beamscale_load_kinds:all/0: "
                                 "rename or remove the page", [P, P]))
     || P <- Pages, not lists:keymember(P, 1, Kinds)]
    ++ [lists:flatten(io_lib:format("docs/kinds: no page ~ts.md for the kind ~ts "
                                    "(beamscale_load_kinds:all/0): write it", [K, K]))
        || {K, _} <- Kinds, not lists:member(K, Pages)]
    ++ lists:append([tsung_said(K, M, lists:flatten(lines(filename:join(Dir, K ++ ".md"))))
                     || {K, M} <- Kinds, lists:member(K, Pages)]).

tsung_said(K, M, Text) ->
    case beamscale_load_kinds:tsung(M) of
        #{element := E, attributes := As} ->
            [lists:flatten(io_lib:format("docs/kinds/~ts.md: no `<~s>`: name the kind's Tsung "
                                         "element (~s:tsung/0)", [K, E, M]))
             || string:find(Text, "`<" ++ atom_to_list(E)) =:= nomatch]
            ++ [lists:flatten(io_lib:format("docs/kinds/~ts.md: the Tsung element <~s> reads `~s` "
                                            "(~s:tsung/0): say it on the page", [K, E, A, M]))
                || A <- As, not said(Text, atom_to_list(A))];
        _ -> []
    end.

docs(Root) ->
    ["README.md", "CONTRIBUTING.md"]
        ++ [filename:join("docs", F) || F <- filelib:wildcard("*.md", filename:join(Root, "docs"))]
        ++ [filename:join(Sub, F) || Sub <- ["docs/studies", "docs/kinds"],
                                     F <- filelib:wildcard("*.md", filename:join(Root, Sub))].

lines(File) ->
    {ok, Bin} = file:read_file(File),
    string:split(unicode:characters_to_list(Bin), "\n", all).

check_doc(Rel, Lines, Ctx) ->
    Numbered = lists:zip(lists:seq(1, length(Lines)), Lines),
    [lists:flatten(P) || P <- lists:append([marked_lists(Rel, Numbered, Ctx),
                                            default_tables(Rel, Numbered),
                                            apps(Rel, Lines, Ctx)
                                            | [line_problems(Rel, N, L, Ctx)
                                               || {N, L} <- Numbered]])].

assert_none([]) -> ok;
assert_none(Problems) ->
    ?debugFmt("~n~ts", [lists:join("\n", Problems)]),
    erlang:error({docs_disagree_with_code, length(Problems), Problems}).

has(Problems, Prefix) -> lists:any(fun(P) -> lists:prefix(Prefix, P) end, Problems).

%%% Registries: what a marked list must hold

%% {Entries, Aliases (module names and `_suffix' forms), Where the registry is}
registry("kinds") ->
    Mods = beamscale_load_kinds:all(),
    {[atom_to_list(M:name()) || M <- Mods], Mods, "beamscale_load_kinds:all/0"};
registry("commands") ->
    Mods = beamscale_cmd:commands(),
    {[maps:get(name, M:info()) || M <- Mods], Mods, "beamscale_cmd:commands/0"};
registry("studies") ->
    Mods = beamscale_study:studies(),
    {[maps:get(name, M:info()) || M <- Mods], Mods, "beamscale_study:studies/0"};
registry("benchmarks") ->
    {[atom_to_list(N) || {N, _} <- beamscale_bench:builtin()], [],
     "beamscale_bench:builtin/0 (modules with -behaviour(beamscale_bench))"};
registry("quick") ->
    {[atom_to_list(N) || N <- beamscale_bench:tagged(quick)], [],
     "beamscale_bench:tagged(quick) (benchmarks whose tags/0 has quick)"};
registry("callbacks:" ++ Behaviour) ->
    Mod = list_to_existing_atom(Behaviour),
    {[io_lib:format("~s/~b", [F, A]) || {F, A} <- Mod:behaviour_info(callbacks)], [],
     Behaviour ++ "'s -callback declarations"};
registry(_) -> unknown.

%% An entry as a doc may write it: `rpc', `_rpc', `beamscale_load_rpc', `smp-io', `smp_io'.
normal(Token) ->
    Bare = lists:foldl(fun(P, T) -> strip(P, T) end, Token,
                       ["beamscale_load_", "beamscale_cmd_", "beamscale_study_",
                        "beamscale_bench_", "_"]),
    lists:flatten(string:replace(Bare, "-", "_", all)).

strip(Prefix, T) ->
    case lists:prefix(Prefix, T) of
        true -> lists:nthtail(length(Prefix), T);
        false -> T
    end.

%%% Marked lists

%% `<!-- list:R -->' alone on a line marks the block below (to a blank line, or a whole fenced
%% block); with text beside it, its own line. `list' wants exactly the registry's entries among
%% the region's `code' words (in a table marked from above, its first column's); `mentions'
%% only wants each entry somewhere in the region, as `NAME', `_NAME' or a module's name.
marked_lists(Rel, Numbered, _Ctx) ->
    lists:append([marked(Rel, Mode, Reg, N, region(L, N, Numbered))
                  || {N, L} <- Numbered,
                     {match, [Mode, Reg]} <- [re:run(L, "(?<!`)<!-- (list|mentions):([a-z:_]+) -->",
                                                     [{capture, all_but_first, list},
                                                      unicode])]]).

region(Line, N, Numbered) ->
    case string:trim(re:replace(Line, "<!--.*?-->", "", [global, {return, list}, unicode])) of
        "" -> block([L || {M, L} <- Numbered, M > N]);
        _ -> [{line, Line}]
    end.

block(["```" ++ _ = Fence | Rest]) ->
    {Body, _} = lists:splitwith(fun(L) -> not lists:prefix("```", L) end, Rest),
    [Fence | Body];
block(Lines) ->
    lists:takewhile(fun(L) -> string:trim(L) =/= "" end, Lines).

marked(Rel, Mode, Reg, N, Region) ->
    case registry(Reg) of
        unknown ->
            [io_lib:format("~ts:~b: no registry ~ts (kinds, commands, studies, benchmarks, "
                           "quick, callbacks:MODULE)", [Rel, N, Reg])];
        {Entries, _Modules, Where} ->
            compare(Rel, N, {Reg, Where}, Mode, Entries, Region)
    end.

compare(Rel, N, {Reg, Where}, Mode, Entries, Region) ->
    Text = lists:flatten(lists:join("\n", [text(L) || L <- Region])),
    Want = [normal(E) || E <- Entries],
    Named = [normal(T) || T <- code_words(Region)],
    Lacks = [E || E <- Want, not mentioned(E, Mode, Named, Text)],
    Extra = [T || Mode =:= "list", T <- lists:usort(Named), not lists:member(T, Want)],
    [io_lib:format("~ts:~b: the list of ~ts lacks `~ts`: add it (the registry is ~ts)",
                   [Rel, N, what(Reg), E, Where]) || E <- Lacks]
    ++ [io_lib:format("~ts:~b: the list of ~ts names `~ts`, which ~ts does not: remove it",
                      [Rel, N, what(Reg), T, Where]) || T <- Extra].

%% `<!-- defaults:config -->' above a table of `run''s configuration keys (docs/config.md): each
%% key of `beamscale_config:keys/0' has a row, whose default cell's first `code' is the default
%% as a file writes it. Written by hand (the other cells are prose), checked here.
default_tables(Rel, Numbered) ->
    lists:append([table_defaults(Rel, N, [R || {_, "|" ++ _} = R <- block_n(N, Numbered)])
                  || {N, "<!-- defaults:config -->" ++ _} <- Numbered]).

block_n(N, Numbered) ->
    lists:takewhile(fun({_, L}) -> string:trim(L) =/= "" end, [R || {M, _} = R <- Numbered, M > N]).

table_defaults(Rel, N, Rows) ->
    Keys = [atom_to_list(K) || K <- beamscale_config:keys()],
    Cells = [{M, string:trim(K, both, " `"), D}
             || {M, "|" ++ Row} <- Rows,
                %% `\|' is a `|' inside a cell.
                [K, _, D | _] <- [string:split(string:replace(Row, "\\|", "!", all), "|", all)],
                lists:prefix("`", string:trim(K))],
    [io_lib:format("~ts:~b: `~ts` is no key of beamscale_config:keys/0", [Rel, M, K])
     || {M, K, _} <- Cells, not lists:member(K, Keys)]
    ++ [io_lib:format("~ts:~b: `~ts`' default is `~ts` (beamscale_config:defaults/0), not `~ts`",
                      [Rel, M, K, Want, Got])
        || {M, K, D} <- Cells, lists:member(K, Keys), Want <- [default_text(list_to_atom(K))],
           Got <- [first_code(D)], squeezed(Got) =/= squeezed(Want)]
    ++ [io_lib:format("~ts:~b: the table lacks `~ts` (beamscale_config:keys/0)", [Rel, N, K])
        || K <- Keys, not lists:keymember(K, 2, Cells)].

%% A default as a configuration file writes it: `all' for every logical core, a list for the
%% overrides map; the name's is `run''s --name declaration.
default_text(name) ->
    {_, _, _, _, {text, T}} = lists:keyfind(name, 1, beamscale_cli_options:name("run")),
    T;
default_text(K) ->
    Cores = lists:seq(1, beamscale_os:logical_cores()),
    case maps:get(K, beamscale_config:defaults()) of
        Cores when K =:= schedulers -> "all";
        M when is_map(M) -> io_lib:format("~0p", [maps:to_list(M)]);
        %% Aliases and strings (the flags may be "", which ~p writes as []).
        Pairs when K =:= erls; K =:= erl_args ->
            ["[", lists:join(",", [io_lib:format("{~p,\"~ts\"}", [A, F]) || {A, F} <- Pairs]), "]"];
        V -> io_lib:format("~0p", [V])
    end.

first_code(Cell) ->
    case string:split(Cell, "`", all) of
        [_, Code | _] -> Code;
        _ -> ""
    end.

squeezed(Text) -> [C || C <- lists:flatten(Text), C =/= $\s].

text({line, L}) -> L;
text(L) -> L.

what("callbacks:" ++ _) -> "callbacks";
what("quick") -> "benchmarks tagged quick";
what(Reg) -> Reg.

mentioned(E, "list", Named, _Text) -> lists:member(E, Named);
mentioned(E, "mentions", Named, Text) ->
    lists:member(E, Named) orelse
        re:run(Text, "(^|[^a-z0-9_])_?" ++ E ++ "([^a-z0-9_]|$)", [multiline, unicode]) =/= nomatch.

%% The `code' words of a region that can be entries (names, `name/arity'): in a table, those of
%% its first column.
code_words(Region) ->
    lists:append([matches(first_cell(L), "`([a-z_][a-z0-9_-]*(?:/[0-9]+)?)`") || L <- Region]).

first_cell({line, Line}) -> Line;
first_cell("|" ++ Row) -> hd(string:split(Row, "|"));
first_cell(Line) -> Line.

%%% Names anywhere in a doc

context(Root) ->
    Modules = lists:append([begin _ = application:load(A),
                                  {ok, Ms} = application:get_key(A, modules), Ms end
                            || A <- ?APPS]),
    Tests = [T || F <- filelib:wildcard(filename:join(Root, "apps/*/test/*")),
                  B <- [filename:basename(F, ".erl")], T <- [B, string:replace(B, "_SUITE", "")]],
    #{root => Root, modules => [atom_to_list(M) || M <- Modules],
      tests => [lists:flatten(T) || T <- Tests], literals => literals(Root),
      apps => [atom_to_list(A) || A <- ?APPS]}.

%% Names that are not modules but the code's own strings: a database user, a lock file, a
%% session variable (`"beamscale_md5"'), as the sources write them.
literals(Root) ->
    lists:usort(lists:append(
        [matches(binary_to_list(B), "\"(beamscale_[a-z0-9_]*[a-z0-9])[\".]")
         || F <- filelib:wildcard(filename:join(Root, "apps/*/src/**/*.erl")),
            {ok, B} <- [file:read_file(F)]])).

line_problems(Rel, N, Line, Ctx) ->
    modules(Rel, N, Line, Ctx) ++ functions(Rel, N, Line) ++ links(Rel, N, Line, Ctx).

modules(Rel, N, Line, #{modules := Ms, tests := Ts, apps := As, literals := Ls}) ->
    [io_lib:format("~ts:~b: no module ~ts in the build (nor an app, a test module or a string "
                   "of the sources): correct or remove the name", [Rel, N, M])
     || M <- lists:usort(matches(Line, "\\b(beamscale_[a-z0-9_]*[a-z0-9])\\b(?![*(])")),
        not lists:member(M, Ms ++ Ts ++ As ++ Ls ++ attributes(Line)), not is_metric(M)].

%% beamscale's own attributes in a Tsung element (`beamscale_version="2"'), not modules.
attributes(Line) -> matches(Line, "\\b(beamscale_[a-z0-9_]*[a-z0-9])=\"").

%% The Prometheus names of `load --metrics' (beamscale_report_prometheus builds them).
is_metric(Name) -> re:run(Name, "^beamscale_load_[a-z_]+_(total|seconds)$") =/= nomatch.

functions(Rel, N, Line) ->
    [io_lib:format("~ts:~b: no function ~ts:~ts/~ts in the build: correct the name or arity",
                   [Rel, N, M, F, A])
     || [M, F, A] <- matches3(Line, "\\b(beamscale_[a-z0-9_]*):([a-z][a-zA-Z0-9_]*)/([0-9]+)"),
        not defined(M, F, list_to_integer(A))].

%% Exported or not: a doc may point at an internal function by name.
defined(M, F, A) ->
    Mod = list_to_atom(M),
    code:ensure_loaded(Mod) =:= {module, Mod}
        andalso lists:member({list_to_atom(F), A}, Mod:module_info(functions)).

%% "the app `beamscale_x`", "app beamscale_x" (across a line break): an app, not a module.
apps(Rel, Lines, #{apps := As}) ->
    Text = unicode:characters_to_binary(lists:join("\n", Lines)),
    Found = case re:run(Text, "\\bapps?\\s+`?(beamscale[a-z0-9_]*)",
                        [global, {capture, [1], index}]) of
                {match, Ms} -> [{P, binary_to_list(binary:part(Text, P, L))} || [{P, L}] <- Ms];
                nomatch -> []
            end,
    [io_lib:format("~ts:~b: ~ts is called an app but the apps are ~ts: name its app",
                   [Rel, 1 + length(binary:matches(binary:part(Text, 0, P), <<"\n">>)), A,
                    lists:join(", ", As)])
     || {P, A} <- Found, not lists:member(A, As)].

%% Relative links, and `../' paths of pages: a file of this repository.
links(Rel, N, Line, #{root := Root}) ->
    Dir = filename:dirname(filename:join(Root, Rel)),
    Paths = matches(Line, "\\]\\(([^)#\\s]+)")
        ++ matches(Line, "(?<![\\w./])(\\.\\./[^\\s`)]+\\.md)\\b"),
    [io_lib:format("~ts:~b: the link ~ts is not a file of this repository: link a file in it "
                   "or drop the link", [Rel, N, P])
     || P <- lists:usort(Paths), not lists:prefix("http", P), not lists:prefix("mailto:", P),
        not inside(Root, filename:join(Dir, P))].

inside(Root, Path) ->
    Abs = normalise(filename:absname(Path)),
    lists:prefix(normalise(filename:absname(Root)) ++ "/", Abs) andalso filelib:is_file(Abs).

normalise(Path) ->
    filename:join(lists:reverse(lists:foldl(fun(".", Acc) -> Acc;
                                               ("..", [_ | Acc]) -> Acc;
                                               (P, Acc) -> [P | Acc]
                                            end, [], filename:split(Path)))).

matches(Line, Re) -> [M || [M] <- matches3(Line, Re)].

matches3(Line, Re) ->
    case re:run(Line, Re, [global, {capture, all_but_first, list}, unicode]) of
        {match, Ms} -> Ms;
        nomatch -> []
    end.

%% An attribute as a page writes it: `name`, or `name="..."` (beamscale's own, which the check
%% of module names would take for a module otherwise).
said(Text, A) ->
    string:find(Text, "`" ++ A ++ "`") =/= nomatch
        orelse string:find(Text, "`" ++ A ++ "=\"") =/= nomatch.

%% The repository: the directory above `apps/' that holds README.md (also the library
%% suite's).
-spec root() -> file:filename().
root() -> up(filename:dirname(code:which(?MODULE))).

up("/") -> error(no_repository_root);
up(Dir) ->
    case filelib:is_file(filename:join(Dir, "README.md"))
        andalso filelib:is_dir(filename:join(Dir, "apps")) of
        true -> Dir;
        false -> up(filename:dirname(Dir))
    end.
