%% @doc The sources of per-user variables (docs/scenario.md, "Dynamic scenarios"): what
%% `setvars' (Tsung's `<setdynvars>') draws a value from per user, and the data files read at
%% validation and shared by the users of a load node. Values are binaries
%% (`beamscale_load_vars:value/1'); the templates they fill are `beamscale_load_vars''s.
-module(beamscale_load_vars_source).

-export([source/4, new_ctx/1, read_lines/2, format_error/1]).
-export_type([source/0, ctx/0]).

-type source() :: {random_number, integer(), integer()} | {random_string, pos_integer()}
                | {random_bytes, pos_integer()} | {erlang, module(), atom()}
                | {choice, [{number(), binary()}]}
                | {file, binary(), iter | random, binary()} | user_number | time
                | {value, binary()} | {eval, beamscale_load_eval:code()}
                | {jsonpath, binary(), beamscale_load_jsonpath:path()}.
%% What the sources need beyond the user: each file's lines and its shared position, and the
%% load node's user counter.
-type ctx() :: #{files := #{binary() => {tuple(), atomics:atomics_ref()}},
                 users := atomics:atomics_ref()}.

-define(ALPHABET, <<"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789">>).
%% A data file is read whole into every load node: bounded so a wrong path cannot fill memory.
-define(MAX_FILE_BYTES, 64 * 1024 * 1024).

%% @doc The context of the sources on one load node: the files' lines (read at validation).
-spec new_ctx(#{binary() => [binary()]}) -> ctx().
new_ctx(Files) ->
    #{files => maps:map(fun(_, Lines) -> {list_to_tuple(Lines), atomics:new(1, [])} end, Files),
      users => atomics:new(1, [])}.

%% @doc The values of a source for `Count' variables, with the user's random state. A file's
%% line gives a value per field; the others give the same value to every variable.
-spec source(source(), pos_integer(), {beamscale_load_vars:vars(), pos_integer(), ctx()},
             rand:state()) -> {[binary()], rand:state()}.
source({random_number, From, To}, N, _U, R0) ->
    {X, R1} = rand:uniform_s(To - From + 1, R0),
    {lists:duplicate(N, integer_to_binary(From + X - 1)), R1};
source({random_string, Len}, N, _U, R0) ->
    {S, R1} = random_string(Len, R0, <<>>),
    {lists:duplicate(N, S), R1};
source({random_bytes, Len}, N, _U, R0) ->
    {Ints, R1} = lists:mapfoldl(fun(_, R) -> rand:uniform_s(256, R) end, R0, lists:seq(1, Len)),
    {lists:duplicate(N, << <<(I - 1)>> || I <- Ints >>), R1};
source(user_number, N, {_, User, _}, R) -> {lists:duplicate(N, integer_to_binary(User)), R};
source(time, N, _U, R) ->
    {lists:duplicate(N, integer_to_binary(erlang:system_time(millisecond))), R};
source({value, V}, N, _U, R) -> {lists:duplicate(N, V), R};
%% Tsung's `sourcetype="jsonpath" from jsonpath': the first value the path selects in the JSON
%% text of the variable `From' (empty when there is none).
source({jsonpath, From, Path}, N, {Vars, _, _}, R) ->
    V = case beamscale_load_jsonpath:value(Path, maps:get(From, Vars, <<>>)) of
            {ok, X} -> X;
            error -> <<>>
        end,
    {lists:duplicate(N, V), R};
%% One of the values, each as likely as its weight (Tsung's weighted `<user_agent>' list).
source({choice, Weighted}, N, _U, R0) ->
    {X, R1} = rand:uniform_s(R0),
    {lists:duplicate(N, pick(X * lists:sum([W || {W, _} <- Weighted]), Weighted)), R1};
source({erlang, M, F}, N, {Vars, _, _}, R) ->
    case M:F(Vars) of
        L when is_list(L), length(L) =:= N, N > 1 -> {[beamscale_load_vars:value(X) || X <- L], R};
        X -> {lists:duplicate(N, beamscale_load_vars:value(X)), R}
    end;
source({file, Id, Order, Delim}, N, {_, _, #{files := Files}}, R0) ->
    {Lines, Pos} = maps:get(Id, Files),
    {I, R1} = case Order of
                  iter -> {(atomics:add_get(Pos, 1, 1) - 1) rem tuple_size(Lines) + 1, R0};
                  random -> rand:uniform_s(tuple_size(Lines), R0)
              end,
    Fields = binary:split(element(I, Lines), Delim, [global]),
    {[lists:nth(K, Fields ++ lists:duplicate(N, <<>>)) || K <- lists:seq(1, N)], R1}.

pick(_X, [{_, V}]) -> V;
pick(X, [{W, V} | _]) when X < W -> V;
pick(X, [{W, _} | More]) -> pick(X - W, More).

random_string(0, R, Acc) -> {Acc, R};
random_string(Len, R0, Acc) ->
    {I, R1} = rand:uniform_s(byte_size(?ALPHABET), R0),
    random_string(Len - 1, R1, <<Acc/binary, (binary:at(?ALPHABET, I - 1))>>).

%% @doc The non-empty lines of a data file (Tsung's `file_server'), at most `?MAX_FILE_BYTES'.
-spec read_lines(file:filename(), file:filename()) ->
    {ok, [binary()]} | {error, {?MODULE, term()}}.
read_lines(Path, RelativeTo) ->
    Full = filename:absname(Path, filename:dirname(filename:absname(RelativeTo))),
    case beamscale_format_file:read(Full, ?MAX_FILE_BYTES) of
        {ok, Bin} ->
            case [L || L <- binary:split(Bin, [<<"\r\n">>, <<"\n">>], [global]), L =/= <<>>] of
                [] -> {error, {?MODULE, {empty, Full}}};
                Lines -> {ok, Lines}
            end;
        {error, Why} -> {error, {?MODULE, {read, Full, Why}}}
    end.

%% @doc Text of an error.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({empty, F}) -> io_lib:format("~ts: no line", [F]);
format_error({read, F, Why}) ->
    io_lib:format("~ts: ~ts", [F, beamscale_format_file:format_error(Why)]).
