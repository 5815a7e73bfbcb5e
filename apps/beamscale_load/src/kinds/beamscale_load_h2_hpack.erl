%% @doc HPACK (RFC 7541), pure: a header block decoded against a bounded dynamic table, and
%% header lists encoded. Every number and length from the peer is bounded before it is used: an
%% integer of more than 28 bits, a table size above the one we allowed, a string or a header
%% list above the decoder's limit are named errors, never a big allocation.
%%
%% The encoder sends literals without indexing (static-table names where there are some): a
%% request's header block is then the same bytes for every request, built once at validation,
%% and the client needs no encoder table (the server's decoder table stays empty).
-module(beamscale_load_h2_hpack).

-export([new/1, decode/2, encode/1, set_max/2, int/2, format_error/1]).
-export_type([ctx/0, headers/0]).

-type headers() :: [{binary(), binary()}].
%% The decoder's dynamic table (newest first), its size (RFC 7541, 4.1), the largest size the
%% peer may set (our SETTINGS_HEADER_TABLE_SIZE) and the most bytes a decoded header list may
%% take (RFC 9113's SETTINGS_MAX_HEADER_LIST_SIZE measure: name, value and 32 a field).
%% `cache': Huffman strings decoded lately (a server sends the same ones in every response;
%% decoding them bit by bit was most of a response's cost), at most ?CACHE of them.
-type ctx() :: #{table := headers(), size := non_neg_integer(), max := non_neg_integer(),
                 limit := non_neg_integer(), list_max := pos_integer(), cache := map()}.

-define(MAX_INT, (1 bsl 28)).
-define(STATIC, 61).
-define(CACHE, 128).
-define(CACHED_LEN, 64).
-define(INDEX_KEY, {?MODULE, static_index}).

%% @doc A decoder allowing a dynamic table of `TableMax' bytes and header lists of `ListMax'.
-spec new({non_neg_integer(), pos_integer()}) -> ctx().
new({TableMax, ListMax}) ->
    #{table => [], size => 0, max => TableMax, limit => TableMax, list_max => ListMax,
      cache => #{}}.

%% @doc A new upper bound for the table size (an acknowledged SETTINGS change of ours).
-spec set_max(ctx(), non_neg_integer()) -> ctx().
set_max(Ctx, Max) -> evict(Ctx#{max := Max, limit := Max}).

%% @doc A header block decoded, the table updated.
-spec decode(binary(), ctx()) -> {ok, headers(), ctx()} | {error, {?MODULE, term()}}.
decode(Block, #{list_max := ListMax} = Ctx) ->
    try fields(Block, Ctx, ListMax, [], true) of
        {Hs, Ctx1} -> {ok, Hs, Ctx1}
    catch throw:Reason -> {error, {?MODULE, Reason}}
    end.

%% `First': a table size update may only begin a block (RFC 7541, 4.2).
fields(<<>>, Ctx, _Left, Acc, _First) -> {lists:reverse(Acc), Ctx};
fields(<<1:1, _/bits>> = B, Ctx, Left, Acc, _) ->
    {I, Rest} = int(B, 7),
    I =:= 0 andalso throw(zero_index),
    add(entry(I, Ctx), Rest, Ctx, Left, Acc);
fields(<<2#01:2, _/bits>> = B, Ctx, Left, Acc, _) ->
    {{N, V} = H, Rest, Ctx1} = literal(B, 6, Ctx),
    add(H, Rest, insert(N, V, Ctx1), Left, Acc);
fields(<<2#001:3, _/bits>> = B, #{limit := Limit} = Ctx, Left, Acc, First) ->
    First orelse throw(late_size_update),
    {Size, Rest} = int(B, 5),
    Size > Limit andalso throw({table_size, Size, Limit}),
    fields(Rest, evict(Ctx#{max := Size}), Left, Acc, true);
fields(B, Ctx, Left, Acc, _) ->
    %% 0000 (without indexing) and 0001 (never indexed): the same to a decoder.
    {H, Rest, Ctx1} = literal(B, 4, Ctx),
    add(H, Rest, Ctx1, Left, Acc).

add({N, V} = H, Rest, Ctx, Left, Acc) ->
    Left1 = Left - byte_size(N) - byte_size(V) - 32,
    Left1 < 0 andalso throw(header_list_too_big),
    fields(Rest, Ctx, Left1, [H | Acc], false).

literal(B, Prefix, Ctx) ->
    {I, R1} = int(B, Prefix),
    {Name, R2, Ctx1} = case I of
                           0 -> string(R1, Ctx);
                           _ -> {element(1, entry(I, Ctx)), R1, Ctx}
                       end,
    {Value, R3, Ctx2} = string(R2, Ctx1),
    {{Name, Value}, R3, Ctx2}.

string(<<H:1, _/bits>> = B, Ctx) ->
    {Len, Rest} = int(B, 7),
    case Rest of
        <<S:Len/binary, R/binary>> when H =:= 0 -> {S, R, Ctx};
        <<S:Len/binary, R/binary>> -> huffman(S, R, Ctx);
        _ -> throw(truncated)
    end;
string(<<>>, _) -> throw(truncated).

huffman(S, R, #{cache := Cache, list_max := Max} = Ctx) ->
    case Cache of
        #{S := D} -> {D, R, Ctx};
        _ ->
            case beamscale_load_h2_huffman:decode(S, Max) of
                {ok, D} when byte_size(S) =< ?CACHED_LEN, map_size(Cache) < ?CACHE ->
                    {D, R, Ctx#{cache := Cache#{binary:copy(S) => D}}};
                {ok, D} when byte_size(S) =< ?CACHED_LEN ->
                    {D, R, Ctx#{cache := #{binary:copy(S) => D}}};
                {ok, D} -> {D, R, Ctx};
                {error, E} -> throw(E)
            end
    end.

%% @doc An integer of an `N'-bit prefix (RFC 7541, 5.1) and the bytes after it; at most 2^28.
-spec int(binary(), 1..8) -> {non_neg_integer(), binary()}.
int(B, N) ->
    Max = (1 bsl N) - 1,
    case B of
        <<_:(8 - N), I:N, Rest/binary>> when I < Max -> {I, Rest};
        <<_:(8 - N), _:N, Rest/binary>> -> more(Rest, Max, 0);
        _ -> throw(truncated)
    end.

more(<<C:1, V:7, Rest/binary>>, I, Shift) ->
    I1 = I + (V bsl Shift),
    I1 > ?MAX_INT andalso throw(integer_too_big),
    case C of
        0 -> {I1, Rest};
        1 -> more(Rest, I1, Shift + 7)
    end;
more(_, _, _) -> throw(truncated).

entry(I, _Ctx) when I =< ?STATIC -> static(I);
entry(I, #{table := T}) when I - ?STATIC =< length(T) -> lists:nth(I - ?STATIC, T);
entry(I, _) -> throw({bad_index, I}).

%% An entry larger than the table empties it (RFC 7541, 4.4).
insert(N, V, #{max := Max} = Ctx) when byte_size(N) + byte_size(V) + 32 > Max ->
    Ctx#{table := [], size := 0};
insert(N, V, #{table := T, size := S} = Ctx) ->
    %% Copies: the entry outlives the frame its bytes came in.
    evict(Ctx#{table := [{binary:copy(N), binary:copy(V)} | T],
               size := S + byte_size(N) + byte_size(V) + 32}).

evict(#{size := S, max := Max} = Ctx) when S =< Max -> Ctx;
evict(#{table := T, size := S} = Ctx) ->
    {Keep, [{N, V}]} = lists:split(length(T) - 1, T),
    evict(Ctx#{table := Keep, size := S - byte_size(N) - byte_size(V) - 32}).

%% @doc A header list as a block of literals without indexing (names lowercased by the
%% caller), a static entry's index where name and value match one, its name's index where
%% only the name does.
-spec encode(headers()) -> binary().
encode(Headers) -> iolist_to_binary([field(N, V) || {N, V} <- Headers]).

field(N, V) ->
    case index(N, V) of
        {full, I} -> enc_int(I, 7, 2#1);
        {name, I} -> [enc_int(I, 4, 0), enc_str(V)];
        none -> [0, enc_str(N), enc_str(V)]
    end.

index(N, V) ->
    {Full, Names} = static_index(),
    case Full of
        #{{N, V} := I} -> {full, I};
        #{} -> case Names of
                   #{N := I} -> {name, I};
                   #{} -> none
               end
    end.

%% The static table's lowest index of each entry and of each name: a request filled per send
%% (variables, cookies) is encoded again each time, so no scan of the 61 entries per field.
%% Built once a node and kept in persistent_term.
static_index() ->
    case persistent_term:get(?INDEX_KEY, undefined) of
        undefined ->
            %% Reversed: maps:from_list keeps the last of equal keys, here the lowest index.
            Down = lists:seq(?STATIC, 1, -1),
            Index = {maps:from_list([{static(I), I} || I <- Down]),
                     maps:from_list([{element(1, static(I)), I} || I <- Down])},
            persistent_term:put(?INDEX_KEY, Index),
            Index;
        Index -> Index
    end.

%% Strings Huffman-coded where that is shorter (RFC 7541, 5.2).
enc_str(S) ->
    H = beamscale_load_h2_huffman:encode(S),
    case byte_size(H) < byte_size(S) of
        true -> [enc_int(byte_size(H), 7, 1), H];
        false -> [enc_int(byte_size(S), 7, 0), S]
    end.

enc_int(I, N, Flags) when I < (1 bsl N) - 1 -> <<Flags:(8 - N), I:N>>;
enc_int(I, N, Flags) -> [<<Flags:(8 - N), ((1 bsl N) - 1):N>>, rest(I - (1 bsl N) + 1)].

rest(I) when I < 128 -> <<I>>;
rest(I) -> [<<1:1, (I band 127):7>>, rest(I bsr 7)].

%% @doc The text of a decoding error.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error(header_list_too_big) -> "HPACK: header list above the limit";
format_error({table_size, S, L}) ->
    io_lib:format("HPACK: table size update to ~b above the ~b allowed", [S, L]);
format_error(late_size_update) -> "HPACK: table size update after a header field";
format_error(integer_too_big) -> "HPACK: integer above 2^28";
format_error({bad_index, I}) -> io_lib:format("HPACK: index ~b not in the tables", [I]);
format_error(zero_index) -> "HPACK: index 0";
format_error(truncated) -> "HPACK: truncated header block";
format_error(huffman_eos) -> "HPACK: EOS inside a Huffman string";
format_error(huffman_padding) -> "HPACK: bad Huffman padding";
format_error(huffman_too_long) -> "HPACK: Huffman string above the limit";
format_error(R) -> io_lib:format("HPACK: ~0tp", [R]).

%% The static table (RFC 7541, Appendix A).
static(1) -> {<<":authority">>, <<>>};
static(2) -> {<<":method">>, <<"GET">>};
static(3) -> {<<":method">>, <<"POST">>};
static(4) -> {<<":path">>, <<"/">>};
static(5) -> {<<":path">>, <<"/index.html">>};
static(6) -> {<<":scheme">>, <<"http">>};
static(7) -> {<<":scheme">>, <<"https">>};
static(8) -> {<<":status">>, <<"200">>};
static(9) -> {<<":status">>, <<"204">>};
static(10) -> {<<":status">>, <<"206">>};
static(11) -> {<<":status">>, <<"304">>};
static(12) -> {<<":status">>, <<"400">>};
static(13) -> {<<":status">>, <<"404">>};
static(14) -> {<<":status">>, <<"500">>};
static(16) -> {<<"accept-encoding">>, <<"gzip, deflate">>};
static(I) -> {element(I - 14, names()), <<>>}.

names() ->
    {<<"accept-charset">>, <<"accept-encoding">>, <<"accept-language">>, <<"accept-ranges">>,
     <<"accept">>, <<"access-control-allow-origin">>, <<"age">>, <<"allow">>,
     <<"authorization">>, <<"cache-control">>, <<"content-disposition">>,
     <<"content-encoding">>, <<"content-language">>, <<"content-length">>,
     <<"content-location">>, <<"content-range">>, <<"content-type">>, <<"cookie">>, <<"date">>,
     <<"etag">>, <<"expect">>, <<"expires">>, <<"from">>, <<"host">>, <<"if-match">>,
     <<"if-modified-since">>, <<"if-none-match">>, <<"if-range">>, <<"if-unmodified-since">>,
     <<"last-modified">>, <<"link">>, <<"location">>, <<"max-forwards">>,
     <<"proxy-authenticate">>, <<"proxy-authorization">>, <<"range">>, <<"referer">>,
     <<"refresh">>, <<"retry-after">>, <<"server">>, <<"set-cookie">>,
     <<"strict-transport-security">>, <<"transfer-encoding">>, <<"user-agent">>, <<"vary">>,
     <<"via">>, <<"www-authenticate">>}.
