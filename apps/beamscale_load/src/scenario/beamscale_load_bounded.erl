%% @doc Reading a scenario file within bounds: a file of hostile size is refused before it is
%% read, and its parse runs in a process of its own that is killed when its heap grows beyond a
%% limit or it runs too long, so that no input can grow or hang the node that reads it
%% (docs/scenario.md, "What is refused").
-module(beamscale_load_bounded).

-export([text/1, read_file/1, run/2, call/3, load_code/1, max_file_bytes/0, format_error/1]).

%% Scenario and Tsung files are hand-written or recorded: a few kB, a recorded Tsung session a
%% few hundred kB. 1 MB leaves room and bounds what one file can make the parse build, and the
%% atoms a terms file holds (erl_scan makes them): at most about 200 000, a fifth of the table.
-define(MAX_FILE_BYTES, 1024 * 1024).
%% The parse's heap limit: well above what a 1 MB file parses into (xmerl's records take about 30
%% times the text), below the 200 MB the whole command may take.
-define(MAX_HEAP_BYTES, 128 * 1024 * 1024).
%% Parsing a 4 MB file takes well under a second; the user waits for an answer within seconds.
-define(PARSE_TIMEOUT_MS, 3000).

%% @doc The largest scenario file read, in bytes.
-spec max_file_bytes() -> pos_integer().
max_file_bytes() -> ?MAX_FILE_BYTES.

%% @doc A file's text (UTF-8), or the line and reason it cannot be read: too large, not UTF-8
%% (the line of the first byte that is not).
-spec text(file:filename()) -> {ok, string()} | {error, {pos_integer(), string()}}.
text(File) ->
    case read_file(File) of
        {ok, Bin} ->
            case unicode:characters_to_list(Bin) of
                Text when is_list(Text) -> {ok, Text};
                {_, Good, _} ->
                    Line = 1 + length([C || C <- unicode:characters_to_list(Good), C =:= $\n]),
                    {error, {Line, "not valid UTF-8 text (beamscale reads UTF-8 files)"}}
            end;
        %% A whole-file error is said at line 1: every message names a line that exists.
        {error, Msg} -> {error, {1, Msg}}
    end.

%% @doc A file's contents, or `{error, Message}' when it cannot be read, is not a regular file
%% or is too large (beamscale_format_file: a FIFO or /dev/zero is refused, not read).
-spec read_file(file:filename()) -> {ok, binary()} | {error, string()}.
read_file(File) ->
    case beamscale_format_file:read(File, ?MAX_FILE_BYTES) of
        {ok, Bin} -> {ok, Bin};
        {error, Why} -> {error, beamscale_format_file:format_error(Why)}
    end.

%% @doc `Fun()' in a process of its own, bounded in heap and time: its value, or
%% `{error, {?MODULE, memory | timeout}}'. An exception in `Fun' is an `{error, {?MODULE,
%% {crash, Class, Reason}}}' (a bug in the reader, said as such). The code of `Apps' is loaded
%% before the clock starts: loading a parser's modules takes seconds on a busy host, and the
%% bound is for the input's parse, not for them.
-spec run(fun(() -> T), [atom() | {modules, [module()]}]) -> T | {error, {?MODULE, term()}}.
run(Fun, Apps) ->
    ok = load_code(Apps),
    Parent = self(),
    Ref = make_ref(),
    %% error_logger => false: the kill is reported here, in one line, not as a crash report.
    Limit = #{size => ?MAX_HEAP_BYTES div erlang:system_info(wordsize), kill => true,
              error_logger => false},
    {Pid, Mon} = spawn_opt(fun() -> Parent ! {Ref, result(Fun)} end,
                           [monitor, {max_heap_size, Limit}]),
    receive
        {Ref, {ok, Value}} -> erlang:demonitor(Mon, [flush]), Value;
        {Ref, {crash, C, R}} -> erlang:demonitor(Mon, [flush]), {error, {?MODULE, {crash, C, R}}};
        {'DOWN', Mon, process, Pid, _} -> {error, {?MODULE, memory}}
    after ?PARSE_TIMEOUT_MS ->
        exit(Pid, kill),
        receive {'DOWN', Mon, process, Pid, _} -> ok end,
        %% A result sent just before the kill is dropped with the timeout.
        receive {Ref, _} -> ok after 0 -> ok end,
        {error, {?MODULE, timeout}}
    end.

%% @doc `Fun()' on hostile data (a response body) in a process of its own, killed past
%% `HeapWords' of heap or `TimeoutMs': `{ok, V}' when it returns `{ok, V}', else `error'.
-spec call(fun(() -> {ok, T} | term()), pos_integer(), timeout()) -> {ok, T} | error.
call(Fun, HeapWords, TimeoutMs) ->
    {Self, Tag} = {self(), make_ref()},
    {Pid, Ref} = spawn_opt(fun() -> Self ! {Tag, catch Fun()} end,
                           [monitor, {max_heap_size, #{size => HeapWords, kill => true,
                                                        error_logger => false}}]),
    receive
        {Tag, Result} ->
            demonitor(Ref, [flush]),
            case Result of
                {ok, V} -> {ok, V};
                _ -> error
            end;
        {'DOWN', Ref, process, Pid, _} -> error
    after TimeoutMs ->
            exit(Pid, kill),
            receive {'DOWN', Ref, process, Pid, _} -> ok end,
            receive {Tag, _} -> ok after 0 -> ok end,
            error
    end.

%% @doc The modules of `Apps' loaded (those already loaded are left as they are), and those
%% named by `{modules, Ms}': of a big application only what the parse uses (xmerl's other 31
%% modules took 100 ms of CPU, a tenth of a small load run's).
-spec load_code([atom() | {modules, [module()]}]) -> ok.
load_code(Apps) ->
    _ = [application:load(A) || A <- Apps, is_atom(A)],
    _ = code:ensure_modules_loaded(
           lists:append([Ms || A <- Apps, is_atom(A),
                               {ok, Ms} <- [application:get_key(A, modules)]])
           ++ lists:append([Ms || {modules, Ms} <- Apps])),
    ok.

result(Fun) ->
    try {ok, Fun()}
    catch C:R -> {crash, C, R}
    end.

%% @doc The reason, in words.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error(memory) ->
    io_lib:format("reading it takes more than ~b MB: refused", [?MAX_HEAP_BYTES div 1048576]);
format_error(timeout) ->
    io_lib:format("reading it takes more than ~b ms: refused", [?PARSE_TIMEOUT_MS]);
format_error({crash, C, R}) ->
    io_lib:format("the reader failed (~p:~0P)", [C, R, 12]).
