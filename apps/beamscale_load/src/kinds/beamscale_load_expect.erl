%% @doc The `expect' pattern of an `rpc' call, pure: a plain term read from the scenario, never
%% code. `'_'' matches anything; a tuple or list matches one of the same length whose elements
%% match; a map matches a map that has each of its keys with a matching value (other keys
%% allowed, as in an Erlang map pattern); any other term matches itself exactly (`=:=').
%% Matching walks only as deep as the pattern, so a large result costs no more than a small one.
-module(beamscale_load_expect).

-export([check/1, match/2]).
-export_type([pattern/0]).

-type pattern() :: term().

%% @doc Whether a term can be a pattern: anything a terms file can hold except a fun.
-spec check(term()) -> ok | {error, string()}.
check(F) when is_function(F) -> {error, "a fun cannot be a pattern: give a term, '_' for any"};
check(T) when is_tuple(T) -> check_all(tuple_to_list(T));
check([H | T]) -> check_all([H, T]);
check(M) when is_map(M) -> check_all(maps:keys(M) ++ maps:values(M));
check(_) -> ok.

check_all([]) -> ok;
check_all([X | Rest]) ->
    case check(X) of
        ok -> check_all(Rest);
        Error -> Error
    end.

%% @doc Whether `Term' matches `Pattern'.
-spec match(pattern(), term()) -> boolean().
match('_', _) -> true;
match(P, T) when is_tuple(P), is_tuple(T), tuple_size(P) =:= tuple_size(T) ->
    elements(P, T, tuple_size(P));
match([P | Ps], [T | Ts]) -> match(P, T) andalso match(Ps, Ts);
match(P, T) when is_map(P), is_map(T) ->
    maps:fold(fun(K, V, Acc) -> Acc andalso is_map_key(K, T) andalso match(V, maps:get(K, T)) end,
              true, P);
match(P, T) -> P =:= T.

elements(_P, _T, 0) -> true;
elements(P, T, I) -> match(element(I, P), element(I, T)) andalso elements(P, T, I - 1).
