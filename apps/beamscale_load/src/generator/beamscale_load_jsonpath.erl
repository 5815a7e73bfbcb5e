%% @doc JSONPath's common subset (docs/scenario.md, "Taken from responses"): `$' then `.name',
%% `['name']', `[N]' (from 0; negative from the end), `[*]' and `.*'; Tsung's form without
%% `$.' (`uid', `a.b[0]') too. The value of the first node selected: a string as it is, any
%% other value as JSON text. A body is decoded within bounds of size, heap and time.
-module(beamscale_load_jsonpath).

-export([parse/1, select/2, value/2, values/2, format/1]).
-export_type([path/0]).

-type step() :: {key, binary()} | {index, integer()} | all.
-type path() :: [step()].

%% An expression is written in a scenario: short.
-define(MAX_EXPR, 1000).
%% Responses read for a variable: larger ones are not decoded.
-define(MAX_BODY_BYTES, 1024 * 1024).
%% The body is hostile: it is decoded in a process of its own, killed past this heap or time.
%% 1 MB of nested arrays or of small numbers took 30 to 56 MB and up to 6 s per user; 32 MB
%% holds the decoding of 400 kB of small objects (16 MB does not), and 8 users stay in 300 MB.
-define(MAX_HEAP_WORDS, 4 * 1024 * 1024).
-define(EVAL_TIMEOUT_MS, 1000).
%% The values kept of a list variable: a reply's list is cut there.
-define(MAX_VALUES, 1000).

%% @doc The steps of an expression, or why it is not one.
-spec parse(string() | binary()) -> {ok, path()} | {error, string()}.
parse(Expr) when is_list(Expr) -> parse(unicode:characters_to_binary(Expr));
parse(Expr) when byte_size(Expr) > ?MAX_EXPR -> {error, "longer than 1000 bytes"};
parse(<<"$", Rest/binary>>) -> steps(Rest, []);
parse(<<>>) -> {error, "empty"};
parse(<<"[", _/binary>> = Rest) -> steps(Rest, []);
parse(Rest) -> steps(<<".", Rest/binary>>, []).

steps(<<>>, Acc) -> {ok, lists:reverse(Acc)};
steps(<<".*", Rest/binary>>, Acc) -> steps(Rest, [all | Acc]);
steps(<<".", Rest/binary>>, Acc) ->
    case name(Rest, <<>>) of
        {<<>>, _} -> {error, "a name is expected after ."};
        {Name, After} -> steps(After, [{key, Name} | Acc])
    end;
steps(<<"[*]", Rest/binary>>, Acc) -> steps(Rest, [all | Acc]);
steps(<<"['", Rest/binary>>, Acc) -> quoted($', Rest, Acc);
steps(<<"[\"", Rest/binary>>, Acc) -> quoted($", Rest, Acc);
steps(<<"[", Rest/binary>>, Acc) ->
    case re:run(Rest, <<"^(-?[0-9]{1,9})\\]">>, [{capture, all_but_first, binary}]) of
        {match, [N]} ->
            steps(binary:part(Rest, byte_size(N) + 1, byte_size(Rest) - byte_size(N) - 1),
                  [{index, binary_to_integer(N)} | Acc]);
        nomatch -> {error, "expected [N], [*] or ['name'] after ["}
    end;
%% A control character is shown by its code: the message is one printable line.
steps(<<C, _/binary>>, _) when C >= 32, C < 127 ->
    {error, lists:flatten(io_lib:format("unexpected ~c", [C]))};
steps(<<C, _/binary>>, _) -> {error, lists:flatten(io_lib:format("unexpected byte ~b", [C]))}.

name(<<C, Rest/binary>>, Acc) when C =/= $., C =/= $[ -> name(Rest, <<Acc/binary, C>>);
name(Rest, Acc) -> {Acc, Rest}.

quoted(Q, Rest, Acc) ->
    case binary:split(Rest, <<Q, "]">>) of
        [Name, After] -> steps(After, [{key, Name} | Acc]);
        [_] -> {error, "an unclosed [' or [\""}
    end.

%% @doc The nodes a path selects in a decoded JSON value, in document order.
-spec select(path(), term()) -> [term()].
select([], V) -> [V];
select([{key, K} | Rest], M) when is_map(M) ->
    case M of
        #{K := V} -> select(Rest, V);
        _ -> []
    end;
select([{index, I} | Rest], L) when is_list(L) ->
    N = length(L),
    At = case I < 0 of true -> N + I; false -> I end,
    case At >= 0 andalso At < N of
        true -> select(Rest, lists:nth(At + 1, L));
        false -> []
    end;
select([all | Rest], L) when is_list(L) -> lists:append([select(Rest, V) || V <- L]);
select([all | Rest], M) when is_map(M) ->
    lists:append([select(Rest, V) || {_, V} <- lists:sort(maps:to_list(M))]);
select(_, _) -> [].

%% @doc The text of the first node the path selects in a JSON text, or `error'.
-spec value(path(), binary()) -> {ok, binary()} | error.
value(_, Body) when byte_size(Body) > ?MAX_BODY_BYTES -> error;
value(Path, Body) ->
    beamscale_load_bounded:call(fun() -> first(Path, Body) end, ?MAX_HEAP_WORDS,
                                ?EVAL_TIMEOUT_MS).

%% @doc The texts of the nodes (at most ?MAX_VALUES) the path selects in a JSON text, or
%% `error' when it selects none.
-spec values(path(), binary()) -> {ok, [binary(), ...]} | error.
values(_, Body) when byte_size(Body) > ?MAX_BODY_BYTES -> error;
values(Path, Body) ->
    beamscale_load_bounded:call(fun() -> all(Path, Body) end, ?MAX_HEAP_WORDS, ?EVAL_TIMEOUT_MS).

all(Path, Body) ->
    case beamscale_format_json:decode(Body) of
        {ok, Json} ->
            case select(Path, Json) of
                [] -> error;
                Vs -> {ok, [format(V) || V <- lists:sublist(Vs, ?MAX_VALUES)]}
            end;
        {error, _} -> error
    end.

first(Path, Body) ->
    case beamscale_format_json:decode(Body) of
        {ok, Json} ->
            case select(Path, Json) of
                [V | _] -> {ok, format(V)};
                [] -> error
            end;
        {error, _} -> error
    end.

%% @doc A JSON value as a variable holds it: a string's text, a literal or number as written,
%% an object or array as JSON.
-spec format(term()) -> binary().
format(B) when is_binary(B) -> B;
format(I) when is_integer(I) -> integer_to_binary(I);
format(F) when is_float(F) -> float_to_binary(F, [short]);
format(A) when is_atom(A) -> atom_to_binary(A);
format(V) -> iolist_to_binary(beamscale_format_json:encode(V)).
