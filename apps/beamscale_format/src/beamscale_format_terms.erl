%% @private Reads a file of Erlang terms (`{Key, Value}.' entries) keeping the line of every
%% entry and the means to find the line of a nested key, so that errors can name file, line and key.
-module(beamscale_format_terms).

-export([read/1, parse/1, line/2, term/1]).
-export_type([entry/0]).

%% A config or scenario file is hand-written: a few kB. 1 MB bounds what a hostile one costs.
-define(MAX_FILE_BYTES, 1024 * 1024).
%% The longest run of digits read as a number: 2^64 has 20, a float's 17 and an exponent;
%% 300 leaves room for any value a file means, and converts in microseconds.
-define(MAX_DIGITS, 300).

%% An entry: its key, its value, the line it starts on and its abstract form for `line/2'.
-type entry() :: #{key := atom(), value := term(), line := pos_integer(),
                   abs := erl_parse:abstract_expr()}.

%% @doc Read and parse a file of entries.
-spec read(file:filename()) -> {ok, [entry()]} | {error, {Line :: pos_integer(), string()}}.
read(File) ->
    case beamscale_format_file:read(File, ?MAX_FILE_BYTES) of
        {ok, Bin} ->
            case unicode:characters_to_list(Bin) of
                Text when is_list(Text) -> parse(Text);
                {_, Good, _} -> {error, {lines(Good), "not valid UTF-8 text"}}
            end;
        %% A whole-file error is said at line 1: every message names a line that exists.
        {error, Why} -> {error, {1, beamscale_format_file:format_error(Why)}}
    end.

lines(Good) -> 1 + length(binary:matches(unicode:characters_to_binary(Good), <<"\n">>)).

%% @doc Parse the text of a file of entries.
-spec parse(string()) -> {ok, [entry()]} | {error, {non_neg_integer(), string()}}.
parse(Text) ->
    case long_number(Text) of
        {Line, Digits} ->
            {error, {Line, lists:flatten(io_lib:format("a number of more than ~b digits (~b): "
                                                       "refused", [?MAX_DIGITS, Digits]))}};
        none -> scan(Text)
    end.

%% Turning N digits into a number takes time quadratic in N (a 900 000-digit rate took 7 s):
%% a run of digits longer than any value a file needs is refused before it is scanned.
long_number(Text) ->
    Bin = unicode:characters_to_binary(Text),
    case re:run(Bin, "[0-9][0-9_]{" ++ integer_to_list(?MAX_DIGITS) ++ ",}") of
        {match, [{At, Len}]} ->
            {1 + length(binary:matches(binary:part(Bin, 0, At), <<"\n">>)), Len};
        nomatch -> none
    end.

scan(Text) ->
    case erl_scan:string(Text, 1) of
        {ok, Tokens, EndLine} -> forms(split(Tokens), EndLine, []);
        {error, {Line, Mod, Desc}, _} -> {error, {Line, lists:flatten(Mod:format_error(Desc))}}
    end.

%% @doc The line of the element reached by `Path' inside an entry (keys of nested `{Key, _}' or
%% map pairs), or the deepest line found on the way.
-spec line(entry(), [term()]) -> pos_integer().
line(#{abs := Abs, line := Line}, Path) ->
    descend(Abs, Path, Line).

split(Tokens) -> split(Tokens, [], []).

split([], [], Acc) -> lists:reverse(Acc);
split([], Cur, Acc) -> lists:reverse([{incomplete, lists:reverse(Cur)} | Acc]);
split([{dot, _} = Dot | Rest], Cur, Acc) -> split(Rest, [], [lists:reverse([Dot | Cur]) | Acc]);
split([T | Rest], Cur, Acc) -> split(Rest, [T | Cur], Acc).

forms([], _End, Acc) ->
    {ok, lists:reverse(Acc)};
forms([{incomplete, [First | _]} | _], _End, _Acc) ->
    {error, {erl_scan:line(First), "entry not ended by a full stop (.)"}};
forms([Form | Rest], End, Acc) ->
    case erl_parse:parse_exprs(Form) of
        {ok, [{tuple, Anno, [{atom, _, Key}, ValueAbs]} = Abs]} ->
            L = erl_anno:line(Anno),
            case literal(ValueAbs) of
                {ok, Value} ->
                    Entry = #{key => Key, value => Value, line => L, abs => Abs},
                    forms(Rest, End, [Entry | Acc]);
                error ->
                    {error, {L, io_lib:format("~p: value is not a plain term", [Key])}}
            end;
        {ok, [Other | _]} ->
            {error, {erl_anno:line(element(2, Other)), "expected an entry {Key, Value}."}};
        {error, {Line, Mod, Desc}} ->
            {error, {Line, lists:flatten(Mod:format_error(Desc))}}
    end.

literal(Abs) ->
    try {ok, erl_parse:normalise(Abs)}
    catch _:_ -> error
    end.

descend(_Abs, [], Line) -> Line;
descend({tuple, _, [_, Value]}, Path, Line) -> descend_value(Value, Path, Line);
descend(_, _, Line) -> Line.

descend_value(Abs, [Key | Rest], Line) ->
    case find(Abs, Key) of
        {found, L, Sub} -> descend_value(Sub, Rest, L);
        not_found -> Line
    end;
descend_value(_Abs, [], Line) -> Line.

find({cons, _, {tuple, L, [K, V | _]}, Tail}, Key) ->
    case literal(K) of
        {ok, Key} -> {found, erl_anno:line(L), V};
        _ -> find(Tail, Key)
    end;
find({cons, L, Elem, Tail}, Key) ->
    case literal(Elem) of
        {ok, Key} -> {found, erl_anno:line(L), Elem};
        _ -> find(Tail, Key)
    end;
find({map, _, Assocs}, Key) ->
    Hits = [{erl_anno:line(L), V}
            || {map_field_assoc, L, K, V} <- Assocs, literal(K) =:= {ok, Key}],
    case Hits of
        [{L, V} | _] -> {found, L, V};
        [] -> not_found
    end;
find(_, _) ->
    not_found.

%% @doc The one term written in `Text' (without its full stop), or `error'.
-spec term(unicode:chardata()) -> {ok, term()} | error.
term(Text) ->
    case erl_scan:string(unicode:characters_to_list([Text, "."])) of
        {ok, Tokens, _} ->
            case erl_parse:parse_term(Tokens) of
                {ok, T} -> {ok, T};
                {error, _} -> error
            end;
        _ -> error
    end.
