%% @doc Tags (docs/scenario.md), pure: a request's or a session's `tags => #{Key => Value}',
%% checked when the scenario is read and kept as `<<"key=value">>' pairs in a `{tagged, Pairs,
%% Step}' step. Keys are Prometheus label names (the `--metrics' series carry them), values
%% printable text written in the file: no reply or variable makes one, and a run has at most
%% ?MAX_PAIRS pairs, a request at most ?MAX_PER_REQUEST.
-module(beamscale_load_tags).

-export([check/2, inherit/2, bound/1, split/1]).

-define(MAX_PER_REQUEST, 8).
-define(MAX_PAIRS, 64).
-define(MAX_KEY, 32).
-define(KEY_RE, "^[a-zA-Z_][a-zA-Z0-9_]*$").

%% @doc A `tags' map checked, as its sorted `key=value' pairs; else thrown as `{bad, Path,
%% Message}' (the scenario's checks' way).
-spec check(term(), [atom()]) -> [binary()].
check(Tags, Path) when is_map(Tags), map_size(Tags) =< ?MAX_PER_REQUEST ->
    %% The path names a key as the file wrote it.
    Pairs = lists:usort([<<(key(K, Path ++ [K]))/binary, "=", (value(V, Path ++ [K]))/binary>>
                         || {K, V} <- maps:to_list(Tags)]),
    Keys = [key_of(P) || P <- Pairs],
    [bad(Path, "a key given twice (as an atom and as a string)")
     || length(lists:usort(Keys)) < length(Keys)],
    Pairs;
check(Tags, Path) when is_map(Tags) ->
    bad(Path, io_lib:format("at most ~b tags a request", [?MAX_PER_REQUEST]));
check(_, Path) -> bad(Path, "expected #{Key => \"value\"}").

%% @doc A session's pairs given to each of its requests (a request's own value of a key wins).
-spec inherit([binary()], [beamscale_load_scenario:step()]) -> [beamscale_load_scenario:step()].
inherit([], Steps) -> Steps;
inherit(Pairs, Steps) -> [inherit_step(Pairs, S) || S <- Steps].

inherit_step(Pairs, {tagged, Own, S}) ->
    Keys = [key_of(P) || P <- Own],
    case lists:usort(Own ++ [P || P <- Pairs, not lists:member(key_of(P), Keys)]) of
        All when length(All) > ?MAX_PER_REQUEST ->
            bad([tags], io_lib:format("at most ~b tags a request, the session's with its own",
                                      [?MAX_PER_REQUEST]));
        All -> {tagged, All, S}
    end;
inherit_step(Pairs, S) when element(1, S) =:= request; element(1, S) =:= dyn;
                            element(1, S) =:= named ->
    {tagged, Pairs, S};
inherit_step(Pairs, S) ->
    beamscale_load_steps:set_body(S, inherit(Pairs, beamscale_load_steps:body(S))).

%% @doc The sessions' distinct pairs, at most ?MAX_PAIRS (thrown beyond).
-spec bound([map()]) -> [binary()].
bound(Sessions) ->
    Pairs = lists:usort([P || #{steps := Steps} <- Sessions,
                              {tagged, Ps, _} <- beamscale_load_steps:all(Steps), P <- Ps]),
    case length(Pairs) > ?MAX_PAIRS of
        true -> bad([tags], io_lib:format("~b distinct tag pairs, at most ~b a run",
                                          [length(Pairs), ?MAX_PAIRS]));
        false -> Pairs
    end.

%% @doc A pair's key and value.
-spec split(binary()) -> {binary(), binary()}.
split(Pair) ->
    [K, V] = binary:split(Pair, <<"=">>),
    {K, V}.

%%% Internals

key_of(Pair) -> element(1, split(Pair)).

key(K, Path) when is_atom(K) -> key(atom_to_binary(K), Path);
key(K, Path) when is_list(K) -> key(unicode:characters_to_binary(K), Path);
key(K, Path) when is_binary(K), byte_size(K) =< ?MAX_KEY, K =/= <<"le">> ->
    case {re:run(K, ?KEY_RE), K} of
        {{match, _}, <<"__", _/binary>>} -> bad_key(Path);
        {{match, _}, _} -> K;
        _ -> bad_key(Path)
    end;
key(_, Path) -> bad_key(Path).

-spec bad_key([term()]) -> no_return().
bad_key(Path) ->
    bad(Path, io_lib:format("a tag's key is a label name: a letter or _, then letters, digits "
                            "or _, at most ~b, not le nor __...", [?MAX_KEY])).

%% A value is written as text (an atom would be a name, not a value): a label's check, and
%% Latin-1 as every table and the Prometheus text show it.
value(V, Path) when is_list(V); is_binary(V) ->
    B = beamscale_load_reqname:label(V, Path),
    case lists:all(fun(C) -> C =< 255 end, unicode:characters_to_list(B)) of
        true -> B;
        false -> bad(Path, "a tag's value is of printable Latin-1 characters")
    end;
value(_, Path) -> bad(Path, "a tag's value is a string").

-spec bad([term()], iodata()) -> no_return().
bad(Path, Msg) -> throw({bad, Path, Msg}).
