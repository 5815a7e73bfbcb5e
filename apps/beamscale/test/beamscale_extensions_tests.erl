%% Each extension in one place: the module of a registered request kind, study or benchmark is
%% named (as an atom of the code, not in a comment or a string) only in its registry and in
%% the folders of its own extension point. Generic code that names one kind (`Mod =:=
%% beamscale_load_http') is a second place a new kind would have to change: the kind declares
%% the difference instead (a callback, its `tsung/0').
-module(beamscale_extensions_tests).
-include_lib("eunit/include/eunit.hrl").

-export([problems/2]).

%% Reading every source takes a second or two, more on a busy host: past EUnit's 5 s default.
extensions_named_in_their_folders_test_() ->
    {timeout, 60, fun() ->
                          Root = beamscale_docs_tests:root(),
                          ?assertEqual([], problems(Root, sources(Root)))
                  end}.

%% A file outside the kinds' folder that compares with a kind's module is named with its line;
%% the same words in a comment or a string are not.
planted_test() ->
    Root = beamscale_docs_tests:root(),
    File = filename:join(Root, "apps/beamscale_load/src/generator/planted.erl"),
    Text = "%% beamscale_load_http in a comment\nf(M) when M =:= beamscale_load_http -> "
           "\"beamscale_load_tcp\";\nf(_) -> beamscale_study_ets.\n",
    ?assertEqual(["apps/beamscale_load/src/generator/planted.erl:2: names beamscale_load_http, "
                  "a request kind (beamscale_load_kinds:all/0)",
                  "apps/beamscale_load/src/generator/planted.erl:3: names beamscale_study_ets, "
                  "a study (beamscale_study:studies/0)"],
                 problems(Root, [{File, Text}])).

%% @doc Each place in `Sources' ({file, text}) outside an extension's folders that names one.
-spec problems(file:filename(), [{file:filename(), string()}]) -> [string()].
problems(Root, Sources) ->
    Points = points(),
    Names = [atom_to_list(M) || {Mods, _, _} <- Points, M <- Mods],
    [lists:flatten(io_lib:format("~ts:~b: names ~s, ~ts", [rel(Root, F), Line, M, What]))
     || {F, Text} <- Sources,
        %% Only the files that hold such a name somewhere are scanned.
        lists:any(fun(N) -> string:find(Text, N) =/= nomatch end, Names),
        {M, Line} <- atoms(Text), {Mods, Folders, What} <- Points, lists:member(M, Mods),
        not lists:any(fun(D) -> lists:prefix(filename:join(Root, D) ++ "/", F) end, Folders)].

%% The extension points: their modules, the folders that may name them, what they are.
points() ->
    [{beamscale_load_kinds:all(), ["apps/beamscale_load/src/kinds"],
      "a request kind (beamscale_load_kinds:all/0)"},
     {beamscale_study:studies(), ["apps/beamscale/src/studies"],
      "a study (beamscale_study:studies/0)"},
     %% A study runs its own benchmark and draws its section from its rows.
     {[M || {_, M} <- beamscale_bench:builtin()],
      ["apps/beamscale_bench/src/benchmarks", "apps/beamscale/src/studies",
       "apps/beamscale_report/src/studies"],
      "a benchmark (modules with -behaviour(beamscale_bench))"}].

sources(Root) ->
    [{F, unicode:characters_to_list(B)}
     || F <- filelib:wildcard(filename:join(Root, "apps/*/src/**/*.erl")),
        {ok, B} <- [file:read_file(F)]].

%% The atoms of the code with their lines (erl_scan drops comments; strings are no atoms).
atoms(Text) ->
    {ok, Tokens, _} = erl_scan:string(Text),
    lists:usort([{A, erl_anno:line(Anno)} || {atom, Anno, A} <- Tokens]).

rel(Root, F) -> lists:nthtail(length(Root) + 1, F).
