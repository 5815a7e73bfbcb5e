%% @doc gRPC messages written in protobuf text format in a terms scenario, encoded once, before
%% the scenario is checked, by `protoc --encode' (the load app runs no OS command): a map with
%% `proto => "file.proto"' (relative to the scenario's directory) and `message_type =>
%% "pkg.Type"' has each `{text, "field: 1"}' of its `messages' replaced by the bytes protoc
%% writes; `proto' and `message_type' are then removed, and the map is the grpc kind's.
-module(beamscale_proto_text).

-export([entries/2, encode/4, format_error/1]).

%% protoc reads one small .proto and one message: well under a second, seconds on a busy host.
-define(PROTOC_TIMEOUT_MS, 20000).
%% A message type is a protobuf full name (letters, digits, `_' and `.'), given to protoc as one
%% argument: nothing else reaches its command line.
%% The longest message text taken (one argument of a command: Linux takes 128 KiB).
-define(MAX_TEXT, 100 * 1024).
-define(TYPE_RE, "^[A-Za-z_][A-Za-z0-9_.]*$").

%% @doc The entries of the terms scenario `File' with every text message encoded, or the first
%% that could not be, as `{File, Line, Key, Message}'.
-spec entries(file:filename(), [beamscale_format_terms:entry()]) ->
    {ok, [beamscale_format_terms:entry()]} | {error, {?MODULE, term()}}.
entries(File, Entries) ->
    Dir = filename:dirname(File),
    try {ok, [entry(Dir, E) || E <- Entries]}
    catch throw:{bad, Line, Key, Msg} -> {error, {?MODULE, {File, Line, Key, Msg}}}
    end.

entry(Dir, #{abs := {tuple, A, [K, V]}} = E) ->
    V1 = walk(V, Dir),
    E#{abs := {tuple, A, [K, V1]}, value := erl_parse:normalise(V1)}.

walk({map, A, Assocs}, Dir) ->
    Walked = [{map_field_assoc, L, K, walk(V, Dir)} || {map_field_assoc, L, K, V} <- Assocs],
    case [X || {map_field_assoc, _, {atom, _, proto}, _} = X <- Walked] of
        [] -> {map, A, Walked};
        [_ | _] -> {map, A, encoded(Walked, Dir)}
    end;
walk({cons, A, H, T}, Dir) -> {cons, A, walk(H, Dir), walk(T, Dir)};
walk({tuple, A, Es}, Dir) -> {tuple, A, [walk(E, Dir) || E <- Es]};
walk(Other, _Dir) -> Other.

%% A map with `proto': its text messages encoded, `proto' and `message_type' gone.
encoded(Assocs, Dir) ->
    Proto = string_of(Assocs, proto, "expected the path of a .proto file"),
    Type = string_of(Assocs, message_type, "expected the message's full name (pkg.Type)"),
    [throw({bad, line(Assocs, message_type), message_type, "expected a full name (pkg.Type)"})
     || re:run(Type, ?TYPE_RE) =:= nomatch],
    %% A name protoc would take for an option.
    [throw({bad, line(Assocs, proto), proto, "expected a file name not starting with -"})
     || lists:prefix("-", filename:basename(Proto))],
    Path = filename:absname(Proto, Dir),
    [case K of
         {atom, _, messages} -> {map_field_assoc, L, K, messages(V, Path, Type)};
         _ -> X
     end || {map_field_assoc, L, K, V} = X <- Assocs,
            element(3, K) =/= proto, element(3, K) =/= message_type].

messages({cons, A, H, T}, Path, Type) ->
    L = erl_anno:line(A),
    H1 = case literal(H) of
             {ok, {text, Text}} when is_list(Text); is_binary(Text) ->
                 case encode(Path, Type, Text, ?PROTOC_TIMEOUT_MS) of
                     {ok, Bin} -> erl_parse:abstract(Bin, L);
                     {error, {?MODULE, Why}} -> throw({bad, L, messages, why(Why)})
                 end;
             _ -> H
         end,
    {cons, A, H1, messages(T, Path, Type)};
messages(Other, _Path, _Type) -> Other.

%% @doc `Text' (protobuf text format) as message type `Type' of the .proto `Path', encoded by
%% protoc within `TimeoutMs'. The text reaches protoc's standard input through the shell (a
%% port cannot close a command's input alone), as one argument: at most ?MAX_TEXT bytes, no NUL.
%% protoc's warnings (standard error) are kept out of the bytes; a failure is run again to read
%% them.
-spec encode(file:filename(), string(), unicode:chardata(), pos_integer()) ->
    {ok, binary()} | {error, {?MODULE, term()}}.
encode(Path, Type, Text0, TimeoutMs) ->
    Text = unicode:characters_to_binary(Text0),
    case os:find_executable("protoc") of
        false -> {error, {?MODULE, no_protoc}};
        _ when not is_binary(Text); byte_size(Text) > ?MAX_TEXT -> {error, {?MODULE, too_long}};
        Protoc ->
            case binary:match(Text, <<0>>) of
                nomatch -> protoc(Protoc, Path, Type, Text, TimeoutMs);
                _ -> {error, {?MODULE, nul}}
            end
    end.

protoc(Protoc, Path, Type, Text, TimeoutMs) ->
    Args = ["--encode=" ++ Type, "-I", filename:dirname(Path), filename:basename(Path)],
    Sh = fun(Redirect) ->
                 Script = "T=$1; shift; printf '%s' \"$T\" | \"$@\"" ++ Redirect,
                 beamscale_os:cmd("/bin/sh", ["-c", Script, "sh",
                                              unicode:characters_to_list(Text), Protoc | Args],
                                  TimeoutMs)
         end,
    case Sh(" 2>/dev/null") of
        {0, Bin} -> {ok, Bin};
        {timeout, _} -> {error, {?MODULE, {timeout, TimeoutMs}}};
        _ -> {error, {?MODULE, {protoc, first_line(element(2, Sh("")))}}}
    end.

%% @doc The text of this module's reasons.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, Reason}) -> format_error(Reason);
format_error({File, Line, Key, Msg}) ->
    io_lib:format("~ts:~b: key ~ts: ~ts", [File, Line, Key, Msg]);
format_error(Why) -> why(Why).

why(no_protoc) -> "protoc is not installed (protobuf-compiler; scripts/install-deps.sh)";
why({timeout, Ms}) -> io_lib:format("protoc did not end within ~b ms", [Ms]);
why({protoc, Line}) -> ["protoc: ", Line];
why(too_long) -> io_lib:format("a text message of more than ~b bytes", [?MAX_TEXT]);
why(nul) -> "a NUL byte in a text message".

first_line(Out) ->
    Line = hd(string:split(string:trim(Out), "\n") ++ [<<>>]),
    Printable = << <<(printable(C))>> || <<C>> <= Line >>,
    binary:part(Printable, 0, min(200, byte_size(Printable))).

printable(C) when C >= 32, C < 127 -> C;
printable(_) -> $?.

string_of(Assocs, Key, Msg) ->
    case [V || {map_field_assoc, _, {atom, _, K}, V} <- Assocs, K =:= Key] of
        [V | _] ->
            case literal(V) of
                {ok, S} when is_list(S), S =/= [] ->
                    case io_lib:printable_unicode_list(S) of
                        true -> S;
                        false -> throw({bad, line(Assocs, Key), Key, Msg})
                    end;
                _ -> throw({bad, line(Assocs, Key), Key, Msg})
            end;
        [] -> throw({bad, line(Assocs, proto), Key, "missing (with proto)"})
    end.

line(Assocs, Key) ->
    hd([erl_anno:line(L) || {map_field_assoc, L, {atom, _, K}, _} <- Assocs, K =:= Key]).

literal(Abs) ->
    try {ok, erl_parse:normalise(Abs)}
    catch _:_ -> error
    end.
