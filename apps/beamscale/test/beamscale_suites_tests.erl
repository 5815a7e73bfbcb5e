%% Every Common Test suite under apps/*/test has a timetrap in suite/0 (CT's default is 30
%% minutes, which one hang would spend whole) and every test case in its all/0, groups expanded,
%% a one-line doc in its arity-0 info function. The suites are found as source files, so a new
%% suite is checked as soon as it is added; their modules are the ones the test profile compiled.
-module(beamscale_suites_tests).
-include_lib("eunit/include/eunit.hrl").

%% The longest timetrap a suite or case may set: `make test' as a whole stays under 15 minutes.
-define(MAX_TIMETRAP_MS, 10 * 60 * 1000).
-define(MAX_COLUMNS, 100).

suites_test_() ->
    Root = root(),
    Files = filelib:wildcard(filename:join([Root, "apps", "*", "test", "*_SUITE.erl"])),
    [{"suites found under " ++ Root, ?_assertNotEqual([], Files)}
     | [{filename:basename(F, ".erl"), fun() -> check(Root, F) end} || F <- Files]].

%% The style's 100-column lines, in every Erlang source and test (a long line hides its end in
%% side-by-side diffs); columns are characters, not bytes.
%% About a second when quiet; beside a CPU hog per core it passed EUnit's 5 s default.
line_length_test_() -> {timeout, 60, fun line_length/0}.

line_length() ->
    Root = root(),
    Files = filelib:wildcard(filename:join([Root, "apps", "*", "{src,test}", "**", "*.erl"])),
    Long = [{filename:basename(F), N, string:length(L)}
            || F <- Files, {ok, B} <- [file:read_file(F)],
               {N, L} <- lists:enumerate(string:split(unicode:characters_to_list(B), "\n", all)),
               string:length(L) > ?MAX_COLUMNS],
    ?assertEqual([], Long).

check(Root, File) ->
    Mod = load(Root, File),
    holds({Mod, suite_0_exported}, erlang:function_exported(Mod, suite, 0)),
    Suite = Mod:suite(),
    holds({Mod, suite_0_has_timetrap}, lists:keymember(timetrap, 1, Suite)),
    bounded(Mod, suite, Suite),
    Cases = cases(Mod, Mod:all()),
    holds({Mod, has_test_cases}, Cases =/= []),
    [documented(Mod, C) || C <- lists:usort(Cases)],
    ok.

%% The suite's module, from the code path or else from the test profile's build of its app.
load(Root, File) ->
    Mod = list_to_atom(filename:basename(File, ".erl")),
    case code:ensure_loaded(Mod) of
        {module, Mod} -> Mod;
        {error, _} ->
            App = filename:basename(filename:dirname(filename:dirname(File))),
            true = code:add_patha(filename:join([Root, "_build", "test", "lib", App, "test"])),
            ?assertEqual({module, Mod}, code:ensure_loaded(Mod)),
            Mod
    end.

documented(Mod, Case) ->
    holds({Mod, Case, info_function_exported}, erlang:function_exported(Mod, Case, 0)),
    Info = Mod:Case(),
    Doc = proplists:get_value(doc, Info),
    holds({Mod, Case, doc_is_one_line}, is_list(Doc) andalso io_lib:printable_unicode_list(Doc)
                                        andalso string:trim(Doc) =/= ""
                                        andalso string:find(Doc, "\n") =:= nomatch),
    bounded(Mod, Case, Info).

%% A timetrap, where given, is a time no longer than the bound (not infinity or a fun).
bounded(Mod, Where, Info) ->
    case lists:keyfind(timetrap, 1, Info) of
        false -> ok;
        {timetrap, T} -> holds({Mod, Where, timetrap_at_most_10_minutes}, ms(T) =< ?MAX_TIMETRAP_MS)
    end.

%% A failure names the suite, the case and what does not hold.
holds(What, Bool) -> ?assertEqual({What, true}, {What, Bool}).

ms({hours, N}) when is_integer(N), N > 0 -> N * 3600000;
ms({minutes, N}) when is_integer(N), N > 0 -> N * 60000;
ms({seconds, N}) when is_integer(N), N > 0 -> N * 1000;
ms(N) when is_integer(N), N > 0 -> N;
ms(T) -> error({not_a_bounded_timetrap, T}).

%% The test cases of all/0 with the groups' members expanded.
cases(_Mod, {skip, _}) -> [];
cases(Mod, Entries) -> lists:flatmap(fun(E) -> entry(Mod, E) end, Entries).

entry(_Mod, Case) when is_atom(Case) -> [Case];
entry(_Mod, {testcase, Case, _Repeat}) -> [Case];
entry(Mod, {group, Group}) -> group(Mod, Group);
entry(Mod, {group, Group, _Props}) -> group(Mod, Group);
entry(Mod, {group, Group, _Props, _SubGroups}) -> group(Mod, Group);
entry(Mod, {_Group, _Props, Members}) when is_list(Members) -> cases(Mod, Members).

group(Mod, Group) ->
    holds({Mod, groups_0_exported}, erlang:function_exported(Mod, groups, 0)),
    {Group, _Props, Members} = lists:keyfind(Group, 1, Mod:groups()),
    cases(Mod, Members).

%% The repository: the first directory upward from this module's object code (in
%% _build/test/lib/beamscale/test) or from the working directory with a rebar.config and apps/.
root() ->
    Starts = [filename:dirname(B) || B <- [code:which(?MODULE)], is_list(B)]
        ++ [D || {ok, D} <- [file:get_cwd()]],
    case lists:filtermap(fun(D) -> up(filename:absname(D)) end, Starts) of
        [Root | _] -> Root;
        [] -> error({no_repository_above, Starts})
    end.

up(Dir) ->
    case filelib:is_regular(filename:join(Dir, "rebar.config"))
        andalso filelib:is_dir(filename:join(Dir, "apps")) of
        true -> {true, Dir};
        false ->
            case filename:dirname(Dir) of
                Dir -> false;
                Parent -> up(Parent)
            end
    end.
