%% @doc The one place that puts code onto other nodes: beamscale's own modules as object code
%% taken from this node (the escript), and handlers compiled on the node itself by its own
%% compiler, so that they are built by the erl under test.
-module(beamscale_code).

-export([apps/1, modules/1, load/2, compile_load/2, compile_load/3, ensure/2, expand_path/1,
         format_error/1]).
-export_type([code/0]).

%% Object code to send: module, file name it was built from, beam binary.
-type code() :: [{module(), file:filename(), binary()}].

%% A node just started can be slow to answer while the host is busy with the nodes beside it
%% (a loaded CI machine); a module load is one small message, so this only bounds a dead node.
-define(LOAD_TIMEOUT, 30000).
%% Compiling a handler on the node under test may take seconds for a large one.
-define(COMPILE_TIMEOUT, 60000).

%% The most entries one `code_path' glob may match.
-define(MAX_MATCHES, 1000).

%% @doc The object code of the modules of these applications.
-spec apps([atom()]) -> code().
apps(Apps) -> lists:append([app(A) || A <- Apps]).

app(App) -> [{M, F, B} || M <- modules([App]), {F, B} <- [object_code(M)]].

%% From the file the module was loaded from: `code:get_object_code/1' looks the module up in
%% each directory of the path, in the escript's archive a dozen system calls a directory.
object_code(M) ->
    case code:which(M) of
        File when is_list(File) ->
            case erl_prim_loader:get_file(File) of
                {ok, B, _} -> {File, B};
                error -> from_path(M)
            end;
        _ -> from_path(M)
    end.

from_path(M) ->
    {M, B, F} = code:get_object_code(M),
    {F, B}.

%% @doc The modules of these applications, by name (no object code read).
-spec modules([atom()]) -> [module()].
modules(Apps) ->
    lists:append([begin
                      _ = application:load(App),
                      {ok, Mods} = application:get_key(App, modules),
                      Mods
                  end || App <- Apps]).

%% @doc Load object code onto `Node'.
-spec load(node(), code()) -> ok | {error, {?MODULE, term()}}.
load(Node, Code) ->
    try lists:foreach(fun(C) -> load_one(Node, C) end, Code)
    catch throw:Why -> {error, {?MODULE, Why}}
    end.

load_one(Node, {M, F, B}) ->
    case load_binary(Node, M, F, B) of
        ok -> ok;
        {error, badfile} -> recompile(Node, M, F, B);
        {error, Reason} -> throw({load, Node, M, Reason})
    end.

load_binary(Node, M, F, B) ->
    try erpc:call(Node, code, load_binary, [M, F, B], ?LOAD_TIMEOUT) of
        {module, M} -> ok;
        {error, _} = Error -> Error
    catch error:{erpc, Reason} -> throw({load, Node, M, Reason})
    end.

%% A newer release may refuse object code of an older one (OTP 29 refuses some of OTP 25's
%% instructions: "please re-compile this module"): the node compiles the module again from the
%% abstract code the beam carries (debug_info), with its own compiler.
recompile(Node, M, F, B) ->
    Forms = case beam_lib:chunks(B, [abstract_code]) of
                {ok, {M, [{abstract_code, {raw_abstract_v1, Fs}}]}} -> Fs;
                _ -> throw({load, Node, M, {badfile, no_debug_info}})
            end,
    try erpc:call(Node, compile, forms, [Forms, [binary, return_errors]], ?COMPILE_TIMEOUT) of
        {ok, M, New} -> load_recompiled(Node, M, F, New);
        {ok, M, New, _Warnings} -> load_recompiled(Node, M, F, New);
        Error -> throw({load, Node, M, {recompile, Error}})
    catch error:{erpc, Reason} -> throw({load, Node, M, {recompile, Reason}})
    end.

load_recompiled(Node, M, F, B) ->
    case load_binary(Node, M, F, B) of
        ok -> ok;
        {error, Reason} -> throw({load, Node, M, Reason})
    end.

%% @doc Load one of this node's modules onto `Node' unless it is there already.
-spec ensure(node(), module()) -> ok | {error, {?MODULE, term()}}.
ensure(Node, Mod) ->
    try erpc:call(Node, code, is_loaded, [Mod], ?LOAD_TIMEOUT) of
        {file, _} -> ok;
        false ->
            {File, Bin} = object_code(Mod),
            load(Node, [{Mod, File, Bin}])
    catch error:{erpc, Reason} -> {error, {?MODULE, {load, Node, Mod, Reason}}}
    end.

%% @doc Compile a source file on `Node' with that node's compiler and load the result there.
-spec compile_load(node(), file:filename()) -> ok | {error, {?MODULE, term()}}.
compile_load(Node, File) -> compile_load(Node, Node, File).

%% @doc Compile a source file on `Compiler' (a node of the same release) and load it on `Node'.
-spec compile_load(node(), node(), file:filename()) -> ok | {error, {?MODULE, term()}}.
compile_load(Compiler, Node, File) ->
    Opts = [binary, return_errors, {i, filename:dirname(File)}],
    try erpc:call(Compiler, compile, file, [File, Opts], ?COMPILE_TIMEOUT) of
        {ok, Mod, Bin} -> load(Node, [{Mod, File, Bin}]);
        {ok, Mod, Bin, _Warnings} -> load(Node, [{Mod, File, Bin}]);
        {error, Errors, _} -> {error, {?MODULE, {compile, File, Errors}}};
        error -> {error, {?MODULE, {compile, File, error}}}
    catch error:{erpc, Reason} -> {error, {?MODULE, {compile, File, Reason}}}
    end.

%% @doc The directories a code path names, for `-pa': each entry a directory or a glob
%% (`_build/default/lib/*/ebin'); a directory holding no `.beam' file but applications
%% (`APP/ebin'), as `ERL_LIBS' has them, stands for their `ebin' directories. Absolute, in order.
-spec expand_path([string()]) -> {ok, [file:filename()]} | {error, {?MODULE, term()}}.
expand_path(Entries) ->
    try {ok, lists:append([expand_one(E) || E <- Entries])}
    catch throw:{code_path, Why} -> {error, {?MODULE, Why}}
    end.

expand_one(Pattern) ->
    Matches = filelib:wildcard(Pattern),
    %% Each match is looked at: a glob matching 100 000 files took 16 s to say "nothing
    %% matches". A code path is a few dozen directories; many more is a wrong glob.
    length(Matches) > ?MAX_MATCHES andalso
        throw({code_path, {too_many, Pattern, length(Matches)}}),
    case [D || D <- lists:sort(Matches), filelib:is_dir(D)] of
        [] -> throw({code_path, {no_match, Pattern}});
        Dirs -> lists:append([code_dirs(filename:absname(D)) || D <- Dirs])
    end.

code_dirs(Dir) ->
    case {filelib:wildcard("*.beam", Dir), filelib:wildcard(filename:join([Dir, "*", "ebin"]))} of
        {[_ | _], _} -> [Dir];
        {[], [_ | _] = Ebins} -> lists:sort(Ebins);
        {[], []} -> throw({code_path, {no_code, Dir}})
    end.

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({too_many, Pattern, N}) ->
    io_lib:format("~ts matches ~b entries, more than the ~b a code path may have: refused",
                  [Pattern, N, ?MAX_MATCHES]);
format_error({no_match, Pattern}) ->
    io_lib:format("nothing matches ~ts (no such directory)", [Pattern]);
format_error({no_code, Dir}) ->
    io_lib:format("~ts holds no .beam file and no APP/ebin directory (not built yet?)", [Dir]);
format_error({load, Node, Mod, Reason}) ->
    io_lib:format("could not load ~ts onto ~ts: ~0tp", [Mod, Node, Reason]);
format_error({compile, File, Errors}) when is_list(Errors) ->
    io_lib:format("~ts does not compile: ~ts", [File, compile_errors(Errors)]);
format_error({compile, File, Reason}) ->
    io_lib:format("~ts could not be compiled: ~0tp", [File, Reason]).

compile_errors(Errors) ->
    lists:join("; ", [io_lib:format("line ~0tp: ~ts", [line(Loc), M:format_error(D)])
                      || {_File, Es} <- Errors, {Loc, M, D} <- Es]).

line({L, _Col}) -> L;
line(L) -> L.
