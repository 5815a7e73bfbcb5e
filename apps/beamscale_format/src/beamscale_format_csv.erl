%% @doc CSV lines as RFC 4180 has them: a field with a comma, quote or line break is quoted, quotes
%% doubled. `parse/1' reads back only complete lines, so a file cut short by a kill loses nothing
%% but its unfinished last line.
-module(beamscale_format_csv).

-export([line/1, field/1, parse/1, number/1]).

%% @doc One CSV line, newline included.
-spec line([unicode:chardata() | number() | atom()]) -> binary().
line(Fields) ->
    iolist_to_binary([lists:join($,, [field(F) || F <- Fields]), $\n]).

%% @doc One field, quoted when it needs to be.
-spec field(unicode:chardata() | number() | atom()) -> binary().
field(I) when is_integer(I) -> integer_to_binary(I);
field(F) when is_float(F) -> beamscale_format_float:decimal(F);
field(A) when is_atom(A) -> field(atom_to_binary(A));
field(S) ->
    B = unicode:characters_to_binary(S),
    case binary:match(B, [<<",">>, <<"\"">>, <<"\n">>, <<"\r">>]) of
        nomatch -> B;
        _ -> <<$", (binary:replace(B, <<"\"">>, <<"\"\"">>, [global]))/binary, $">>
    end.

%% @doc The complete lines of a CSV text as lists of binary fields, and the byte size they take;
%% an unfinished last line (no newline yet) is left out.
-spec parse(binary()) -> {[[binary()]], non_neg_integer()}.
parse(Bin) ->
    parse(Bin, 0, [], []).

%% @doc A CSV field as a number, or `undefined' when empty or not a number.
-spec number(binary()) -> number() | undefined.
number(Bin) ->
    try binary_to_float(Bin)
    catch error:badarg ->
            try binary_to_integer(Bin)
            catch error:badarg -> undefined
            end
    end.

parse(<<>>, _Pos, _Fields, Rows) ->
    finish(Rows);
parse(Bin, Pos, Fields, Rows) ->
    case field_end(Bin) of
        {Field, Used, comma} ->
            parse(rest(Bin, Used), Pos + Used, [Field | Fields], Rows);
        {Field, Used, newline} ->
            Row = lists:reverse([Field | Fields]),
            parse(rest(Bin, Used), Pos + Used, [], [{Row, Pos + Used} | Rows]);
        incomplete ->
            finish(Rows)
    end.

finish([]) -> {[], 0};
finish([{_, End} | _] = Rows) -> {[R || {R, _} <- lists:reverse(Rows)], End}.

rest(Bin, Used) -> binary:part(Bin, Used, byte_size(Bin) - Used).

%% A field and how many bytes it and its separator take.
field_end(<<$", Rest/binary>>) -> quoted(Rest, 1, []);
field_end(Bin) ->
    case binary:match(Bin, [<<",">>, <<"\n">>]) of
        nomatch -> incomplete;
        {At, 1} ->
            Sep = case binary:at(Bin, At) of $, -> comma; $\n -> newline end,
            {strip_cr(binary:part(Bin, 0, At)), At + 1, Sep}
    end.

quoted(<<$", $", Rest/binary>>, N, Acc) -> quoted(Rest, N + 2, [$" | Acc]);
quoted(<<$", $,, _/binary>>, N, Acc) -> {done(Acc), N + 2, comma};
quoted(<<$", $\n, _/binary>>, N, Acc) -> {done(Acc), N + 2, newline};
quoted(<<$", $\r, $\n, _/binary>>, N, Acc) -> {done(Acc), N + 3, newline};
quoted(<<C, Rest/binary>>, N, Acc) when C =/= $" -> quoted(Rest, N + 1, [C | Acc]);
quoted(_, _N, _Acc) -> incomplete.

done(Acc) -> list_to_binary(lists:reverse(Acc)).

strip_cr(B) ->
    case B of
        <<Init:(byte_size(B) - 1)/binary, $\r>> -> Init;
        _ -> B
    end.
