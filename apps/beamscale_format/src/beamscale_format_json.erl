%% @doc A small JSON encoder and decoder (OTP 25 has none). Maps become objects, lists arrays,
%% binaries and strings given as `{string, Chars}' become strings, atoms `true', `false' and
%% `null' stay literals, other atoms become strings. `decode/1' gives objects as maps with binary
%% keys, strings as UTF-8 binaries, numbers as integers or floats, and the three literals as atoms.
-module(beamscale_format_json).

-export([encode/1, decode/1, format_error/1]).
-export_type([json/0, object/0]).

-type json() :: #{atom() | binary() | string() => json()} | [json()] | binary()
              | {string, unicode:chardata()} | number() | atom().
%% An object as `decode/1' gives it.
-type object() :: #{binary() => json()}.

%% @doc Encode a term as JSON text (UTF-8 iodata).
-spec encode(json()) -> iodata().
encode(true) -> <<"true">>;
encode(false) -> <<"false">>;
encode(null) -> <<"null">>;
encode(A) when is_atom(A) -> string(atom_to_binary(A));
encode(B) when is_binary(B) -> string(B);
encode({string, S}) -> string(unicode:characters_to_binary(S));
encode(I) when is_integer(I) -> integer_to_binary(I);
encode(F) when is_float(F) -> beamscale_format_float:decimal(F);
encode(L) when is_list(L) -> [$[, join([encode(E) || E <- L]), $]];
encode(M) when is_map(M) ->
    Pairs = [[string(key(K)), $:, encode(V)] || {K, V} <- lists:sort(maps:to_list(M))],
    [${, join(Pairs), $}].

key(K) when is_atom(K) -> atom_to_binary(K);
key(K) when is_binary(K) -> K;
key(K) when is_list(K) -> unicode:characters_to_binary(K).

join([]) -> [];
join([H | T]) -> [H | [[$,, E] || E <- T]].

string(B) -> [$", escape(B), $"].

escape(B) -> << <<(esc(C))/binary>> || <<C/utf8>> <= B >>.

esc($") -> <<"\\\"">>;
esc($\\) -> <<"\\\\">>;
esc($\n) -> <<"\\n">>;
esc($\r) -> <<"\\r">>;
esc($\t) -> <<"\\t">>;
esc(C) when C < 16#20 -> iolist_to_binary(io_lib:format("\\u~4.16.0b", [C]));
esc(C) -> <<C/utf8>>.

%% @doc Decode one JSON value (surrounding white space allowed).
-spec decode(iodata()) -> {ok, json()} | {error, {?MODULE, {syntax, non_neg_integer()}}}.
decode(IoData) ->
    Bin = iolist_to_binary(IoData),
    try value(ws(Bin)) of
        {V, Rest} ->
            case ws(Rest) of
                <<>> -> {ok, V};
                Left -> {error, {?MODULE, {syntax, byte_size(Bin) - byte_size(Left)}}}
            end
    catch throw:{syntax, Left} -> {error, {?MODULE, {syntax, byte_size(Bin) - byte_size(Left)}}}
    end.

%% @doc One line for an error of `decode/1'.
-spec format_error(term()) -> iodata().
format_error({syntax, Offset}) -> io_lib:format("not valid JSON at byte ~b", [Offset]).

ws(<<C, Rest/binary>>) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r -> ws(Rest);
ws(Bin) -> Bin.

value(<<"true", R/binary>>) -> {true, R};
value(<<"false", R/binary>>) -> {false, R};
value(<<"null", R/binary>>) -> {null, R};
value(<<$", R/binary>>) -> str(R, []);
value(<<$[, R/binary>>) -> array(ws(R), []);
value(<<${, R/binary>>) -> object(ws(R), #{});
value(<<C, _/binary>> = Bin) when C =:= $-; C >= $0, C =< $9 -> number(Bin);
value(Bin) -> throw({syntax, Bin}).

array(<<$], R/binary>>, []) -> {[], R};
array(Bin, Acc) ->
    {V, R} = value(Bin),
    case ws(R) of
        <<$,, R1/binary>> -> array(ws(R1), [V | Acc]);
        <<$], R1/binary>> -> {lists:reverse([V | Acc]), R1};
        Other -> throw({syntax, Other})
    end.

object(<<$}, R/binary>>, M) when map_size(M) =:= 0 -> {M, R};
object(<<$", R/binary>>, M) ->
    {K, R1} = str(R, []),
    case ws(R1) of
        <<$:, R2/binary>> ->
            {V, R3} = value(ws(R2)),
            case ws(R3) of
                <<$,, R4/binary>> -> object(ws(R4), M#{K => V});
                <<$}, R4/binary>> -> {M#{K => V}, R4};
                Other -> throw({syntax, Other})
            end;
        Other -> throw({syntax, Other})
    end;
object(Bin, _) -> throw({syntax, Bin}).

str(<<$", R/binary>>, Acc) -> {unicode:characters_to_binary(lists:reverse(Acc)), R};
str(<<$\\, $u, H:4/binary, R/binary>> = Bin, Acc) ->
    case {hex(H, Bin), R} of
        {Hi, <<$\\, $u, L:4/binary, R1/binary>>} when Hi >= 16#D800, Hi =< 16#DBFF ->
            Lo = hex(L, R),
            str(R1, [16#10000 + ((Hi - 16#D800) bsl 10) + (Lo - 16#DC00) | Acc]);
        {C, _} -> str(R, [C | Acc])
    end;
str(<<$\\, C, R/binary>> = Bin, Acc) -> str(R, [unescape(C, Bin) | Acc]);
str(<<C/utf8, R/binary>>, Acc) when C >= 16#20 -> str(R, [C | Acc]);
str(Bin, _) -> throw({syntax, Bin}).

unescape($", _) -> $";
unescape($\\, _) -> $\\;
unescape($/, _) -> $/;
unescape($b, _) -> $\b;
unescape($f, _) -> $\f;
unescape($n, _) -> $\n;
unescape($r, _) -> $\r;
unescape($t, _) -> $\t;
unescape(_, Bin) -> throw({syntax, Bin}).

hex(H, Bin) ->
    try binary_to_integer(H, 16)
    catch error:badarg -> throw({syntax, Bin})
    end.

%% JSON's number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?') scanned by offsets: the
%% two regular expressions it took compiled at each number (PCRE's compiler was 8 % of an xmpp
%% load run's instructions a chat, its summary read back).
number(Bin) ->
    S = case Bin of
            <<$-, _/binary>> -> 1;
            _ -> 0
        end,
    I = int_end(Bin, S),
    F = frac_end(Bin, I),
    E = exp_end(Bin, F),
    <<Num:E/binary, Rest/binary>> = Bin,
    %% A float beyond a double's range ("1e400") is not valid here: said, not a crash.
    try {to_number(Num, I, F, E), Rest}
    catch error:badarg -> throw({syntax, Bin})
    end.

int_end(Bin, S) ->
    case Bin of
        <<_:S/binary, $0, _/binary>> -> S + 1;
        <<_:S/binary, C, _/binary>> when C >= $1, C =< $9 -> digits(Bin, S + 1);
        _ -> throw({syntax, Bin})
    end.

frac_end(Bin, I) ->
    case Bin of
        <<_:I/binary, $., C, _/binary>> when C >= $0, C =< $9 -> digits(Bin, I + 2);
        _ -> I
    end.

exp_end(Bin, F) ->
    case Bin of
        <<_:F/binary, X, Sign, C, _/binary>>
          when X =:= $e orelse X =:= $E, Sign =:= $+ orelse Sign =:= $-, C >= $0, C =< $9 ->
            digits(Bin, F + 3);
        <<_:F/binary, X, C, _/binary>> when X =:= $e orelse X =:= $E, C >= $0, C =< $9 ->
            digits(Bin, F + 2);
        _ -> F
    end.

digits(Bin, At) ->
    case Bin of
        <<_:At/binary, C, _/binary>> when C >= $0, C =< $9 -> digits(Bin, At + 1);
        _ -> At
    end.

%% The integer part ends at `I', the fraction at `F', the exponent at `E'.
to_number(Num, I, I, I) -> binary_to_integer(Num);
to_number(Num, I, I, _E) ->
    %% Erlang wants a fraction before an exponent: "1e5" is read as "1.0e5".
    <<Int:I/binary, Exp/binary>> = Num,
    binary_to_float(<<Int/binary, ".0", Exp/binary>>);
to_number(Num, _I, _F, _E) -> binary_to_float(Num).
