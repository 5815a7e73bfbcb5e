%% @doc docs/options.md's table, rendered from the commands' option declarations (`info/0''s
%% `options', the shared ones made by `beamscale_cli_options'): each option flag, the commands
%% that take it, its type, default and help, as `beamscale_args' parses them and `help' prints
%% them. A flag declared alike by several commands is one row; declared otherwise (another help
%% or default) it has a row per declaration. `make options-doc' writes the table between the
%% page's markers; `beamscale_docs_options_tests' fails when the page holds another.
-module(beamscale_cli_doc).

-export([options_table/0, write/1]).

-define(BEGIN, "<!-- options:begin -->").
-define(END, "<!-- options:end -->").

%% @doc The table's lines: its head, then a row per flag and declaration, by flag.
-spec options_table() -> [string()].
options_table() ->
    Decls = [{declared(O), Name} || M <- beamscale_cmd:commands(),
                                    #{name := Name, options := Options} <- [M:info()],
                                    O <- Options],
    Rows = lists:usort([Key || {Key, _} <- Decls]),
    ["| option | commands | type | default | help |", "|---|---|---|---|---|"
     | [row(Key, [N || {K, N} <- Decls, K =:= Key]) || Key <- Rows]].

%% @doc Write the table into `File' between its markers (the page's other lines kept).
-spec write(file:filename()) -> ok | {error, term()}.
write(File) ->
    case file:read_file(File) of
        {ok, Bin} ->
            Lines = string:split(unicode:characters_to_list(Bin), "\n", all),
            {Before, [?BEGIN | Rest]} = lists:splitwith(fun(L) -> L =/= ?BEGIN end, Lines),
            After = lists:dropwhile(fun(L) -> L =/= ?END end, Rest),
            Page = lists:join("\n", Before ++ [?BEGIN | options_table()] ++ After),
            file:write_file(File, unicode:characters_to_binary(Page));
        {error, _} = Error -> Error
    end.

declared(O) -> {element(2, O), type(element(3, O)), default(O), element(4, O)}.

row({Flag, Type, Default, Help}, Names) ->
    lists:flatten(["| `", Flag, "` | ", lists:join(", ", ["`" ++ N ++ "`" || N <- Names]),
                   " | ", Type, " | ", cell(Default), " | ", cell(Help), " |"]).

type(flag) -> "flag";
type(integer) -> "integer";
type(number) -> "number";
type(string) -> "string";
type({list, string}) -> "strings (repeatable; commas separate)";
type({list, text}) -> "strings (repeatable, each whole)".

default({_, _, Type, _, {value, V}}) -> "`" ++ beamscale_args:format(Type, V) ++ "`";
default({_, _, _, _, {text, T}}) -> T;
default({_, _, _, _}) -> "".

%% A table cell holds no `|' of its own, nor a line break.
cell(Text) -> string:replace(string:replace(Text, "|", "\\|", all), "\n", " ", all).
