%% @doc A small JSON encoder (OTP 25 has none). Maps become objects, lists arrays, binaries and
%% strings given as `{string, Chars}' become strings, atoms `true', `false' and `null' stay
%% literals, other atoms become strings.
-module(beamscale_json).

-export([encode/1]).
-export_type([json/0]).

-type json() :: #{atom() | binary() | string() => json()} | [json()] | binary()
              | {string, unicode:chardata()} | number() | atom().

%% @doc Encode a term as JSON text (UTF-8 iodata).
-spec encode(json()) -> iodata().
encode(true) -> <<"true">>;
encode(false) -> <<"false">>;
encode(null) -> <<"null">>;
encode(A) when is_atom(A) -> string(atom_to_binary(A));
encode(B) when is_binary(B) -> string(B);
encode({string, S}) -> string(unicode:characters_to_binary(S));
encode(I) when is_integer(I) -> integer_to_binary(I);
encode(F) when is_float(F) -> float_to_binary(F, [short]);
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
