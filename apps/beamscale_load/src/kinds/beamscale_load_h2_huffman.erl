%% @doc HPACK's static Huffman code (RFC 7541, 5.2 and Appendix B). The code is canonical:
%% codes of one length are consecutive in symbol order and each length starts where the shorter
%% ones end, so the 257 code lengths below are the whole table; codes are derived from them
%% (a test checks the derivation against codes the appendix prints, and that the code is
%% complete). Decoding walks the canonical code against each length's first code, from the
%% shortest code's length a bit at a time: no tree, no 2^30 table.
-module(beamscale_load_h2_huffman).

-export([encode/1, decode/2, lengths/0, code/1]).

%% The appendix's code lengths, symbols 0 to 256 (EOS), 16 a line.
-define(LENGTHS,
        [13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
         28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
         6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
         5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
         13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
         7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
         15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
         6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
         20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
         24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
         22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
         21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
         26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
         19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
         20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
         26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
         30]).
-define(EOS, 256).
%% The shortest code's length (symbols 0, 1, 2, a, c, e, i, o, s, t): a symbol's first bits are
%% read this many at once (a test checks it against the lengths).
-define(MIN_BITS, 5).
-define(KEY, {?MODULE, tables}).

%% @doc The code lengths of symbols 0 to 256.
-spec lengths() -> [pos_integer()].
lengths() -> ?LENGTHS.

%% @doc `{Code, Bits}' of a symbol (0 to 256), the code right-aligned.
-spec code(0..256) -> {non_neg_integer(), pos_integer()}.
code(Sym) -> element(Sym + 1, element(1, tables())).

%% @doc A string Huffman-coded, padded to an octet with the high bits of EOS (ones).
-spec encode(binary()) -> binary().
encode(Bin) ->
    Codes = element(1, tables()),
    Bits = << <<(element(1, element(C + 1, Codes))):(element(2, element(C + 1, Codes)))>>
              || <<C>> <= Bin >>,
    Pad = (8 - bit_size(Bits) rem 8) rem 8,
    <<Bits/bits, ((1 bsl Pad) - 1):Pad>>.

%% @doc A Huffman-coded string decoded, `Max' octets at most: the padding must be fewer than 8
%% one bits and EOS must not appear (RFC 7541, 5.2).
-spec decode(binary(), non_neg_integer()) -> {ok, binary()} | {error, atom()}.
decode(Bin, Max) ->
    {_, First, Syms} = tables(),
    symbols(Bin, First, Syms, Max, []).

symbols(Bits, First, Syms, Max, Acc) ->
    case first_bits(Bits, First, Syms) of
        {ok, _, _} when Max =< 0 -> {error, huffman_too_long};
        {ok, ?EOS, _} -> {error, huffman_eos};
        {ok, Sym, Rest} -> symbols(Rest, First, Syms, Max - 1, [Sym | Acc]);
        {tail, Len, Code} when Len < 8, Code =:= (1 bsl Len) - 1 ->
            {ok, list_to_binary(lists:reverse(Acc))};
        {tail, _, _} -> {error, huffman_padding}
    end.

%% One symbol: the code read so far has `Len' bits; it is a symbol's when it falls within that
%% length's range (canonical code). No length below ?MIN_BITS has a code: those bits are taken
%% in one match, not one by one (most of a text's symbols have 5 to 8 bits).
first_bits(<<Code:?MIN_BITS, Rest/bits>>, First, Syms) -> at(Code, ?MIN_BITS, Rest, First, Syms);
first_bits(Bits, First, Syms) -> symbol(Bits, 0, 0, First, Syms).

symbol(<<B:1, Rest/bits>>, Code, Len, First, Syms) -> at(Code * 2 + B, Len + 1, Rest, First, Syms);
symbol(<<>>, Code, Len, _First, _Syms) -> {tail, Len, Code}.

at(Code, Len, Rest, First, Syms) ->
    case element(Len, First) of
        {Start, Count, Index} when Code - Start < Count, Code >= Start ->
            {ok, element(Index + Code - Start, Syms), Rest};
        _ when Len >= 30 -> {tail, 99, 0};
        _ -> symbol(Rest, Code, Len, First, Syms)
    end.

%% `{Codes, First, Syms}': each symbol's `{Code, Bits}'; per length 1..30 its first code, count
%% and where its symbols start in `Syms' (symbols ordered by length, then value). Built once a
%% node and kept in persistent_term.
tables() ->
    case persistent_term:get(?KEY, undefined) of
        undefined ->
            T = build(),
            persistent_term:put(?KEY, T),
            T;
        T -> T
    end.

build() ->
    Sorted = lists:sort([{L, S} || {S, L} <- lists:zip(lists:seq(0, 256), ?LENGTHS)]),
    {Assigned, _, _} = lists:foldl(fun assign/2, {[], 0, 0}, Sorted),
    Codes = list_to_tuple([CL || {_, CL} <- lists:sort([{S, {C, L}} || {S, C, L} <- Assigned])]),
    Ordered = lists:reverse(Assigned),
    First = list_to_tuple([first(L, Ordered) || L <- lists:seq(1, 30)]),
    {Codes, First, list_to_tuple([S || {S, _, _} <- Ordered])}.

%% The next code: the previous one plus one, shifted left by the growth in length.
assign({L, S}, {Acc, Next, PrevLen}) ->
    Code = Next bsl (L - PrevLen),
    {[{S, Code, L} | Acc], Code + 1, L}.

first(L, Ordered) ->
    {Before, From} = lists:splitwith(fun({_, _, L1}) -> L1 =/= L end, Ordered),
    case [C || {_, C, L1} <- From, L1 =:= L] of
        [] -> none;
        [Start | _] = Cs -> {Start, length(Cs), length(Before) + 1}
    end.
