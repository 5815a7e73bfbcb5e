%% @doc Elixir on a node: where its libraries are, and compiling a user's `.ex' files there.
%%
%% `bench --elixir' and bencherl-style handlers written in Elixir (`run --bench-path') both
%% need Elixir's own applications on the node's code path and its compiler started there; the
%% files are compiled on the node under test, as Erlang handlers are, by the erl being measured.
-module(beamscale_elixir).

-export([lib/1, compile_files/2, module_of/1, format_error/1]).

%% Compiling a handler's files on the node under test may take seconds on a busy host.
-define(COMPILE_TIMEOUT, 60000).
%% Where the first `defmodule' of a handler file must be: its name is read from the head only.
-define(HEAD_BYTES, 65536).

%% @doc The globs of Elixir's application directories: from `--elixir-lib DIR', or found from
%% the `elixir' on PATH.
-spec lib(none | file:filename()) -> {ok, [string()]} | {error, {?MODULE, term()}}.
lib(none) ->
    case os:find_executable("elixir") of
        false -> {error, {?MODULE, no_elixir}};
        Exe ->
            Root = filename:dirname(filename:dirname(real_path(Exe))),
            {ok, [filename:join([Root, "lib", "*", "ebin"])]}
    end;
lib(Dir) -> {ok, [filename:join([Dir, "*", "ebin"])]}.

%% The elixir script is usually a link into the installation's bin directory.
real_path(Path) ->
    case file:read_link(Path) of
        {ok, Target} -> real_path(filename:absname(Target, filename:dirname(Path)));
        {error, _} -> Path
    end.

%% @doc Compile and load `.ex' files on `Node' together (one may use another's macros), with
%% Elixir started there first; errors in Elixir's words, with file and line.
-spec compile_files(node(), [file:filename()]) -> ok | {error, {?MODULE, term()}}.
compile_files(_Node, []) -> ok;
compile_files(Node, Files) ->
    Bins = [unicode:characters_to_binary(F) || F <- Files],
    try
        {ok, _} = erpc:call(Node, application, ensure_all_started, [elixir], ?COMPILE_TIMEOUT),
        erpc:call(Node, 'Elixir.Kernel.ParallelCompiler', compile,
                  [Bins, []], ?COMPILE_TIMEOUT)
    of
        {ok, _Modules, _Warnings} -> ok;
        {error, Errors, _Warnings} -> {error, {?MODULE, {compile, Errors}}}
    catch
        error:{badmatch, {error, Why}} -> {error, {?MODULE, {start, Why}}};
        error:{exception, undef, _} -> {error, {?MODULE, {start, not_on_code_path}}};
        error:{erpc, Why} -> {error, {?MODULE, {node, Why}}}
    end.

%% @doc The module a handler file defines first: `defmodule EtsBench' is `Elixir.EtsBench',
%% `defmodule :ets_bench' is `ets_bench'; `default' when none is found in the file's head.
-spec module_of(file:filename()) -> {ok, module()} | default.
module_of(File) ->
    Head = case file:open(File, [read, binary]) of
               {ok, Fd} -> try file:read(Fd, ?HEAD_BYTES) after file:close(Fd) end;
               Error -> Error
           end,
    Re = "(?m)^\\s*defmodule\\s+(:[a-z_][A-Za-z0-9_]*|[A-Z][A-Za-z0-9_]*(\\.[A-Z][A-Za-z0-9_]*)*)"
         "\\s+do\\b",
    case Head of
        {ok, Bin} ->
            case re:run(Bin, Re, [{capture, [1], list}]) of
                {match, [[$: | Name]]} -> {ok, list_to_atom(Name)};
                {match, [Name]} -> {ok, list_to_atom("Elixir." ++ Name)};
                nomatch -> default
            end;
        _ -> default
    end.

%% @doc The text of an error of this module.
-spec format_error(term()) -> iolist().
format_error(no_elixir) -> "elixir is not installed (no elixir on PATH): give --elixir-lib DIR";
format_error({start, not_on_code_path}) ->
    "Elixir is not on the node's code path (is it installed? --elixir-lib DIR)";
format_error({start, Why}) -> io_lib:format("Elixir does not start on the node: ~0tp", [Why]);
format_error({node, Why}) -> io_lib:format("compiling Elixir on the node failed: ~0tp", [Why]);
format_error({compile, Errors}) ->
    lists:join("; ", [diagnostic(E) || E <- lists:sublist(Errors, 3)]).

%% Elixir's message ends with the compiler's own stack: its first line is the user's.
diagnostic({File, Line, Message}) ->
    [First | _] = string:split(unicode:characters_to_list(Message), "\n"),
    io_lib:format("~ts:~ts: ~ts", [File, line(Line), First]);
diagnostic(Other) -> io_lib:format("~0tp", [Other]).

line({Line, _Col}) -> integer_to_list(Line);
line(Line) when is_integer(Line) -> integer_to_list(Line);
line(_) -> "?".
