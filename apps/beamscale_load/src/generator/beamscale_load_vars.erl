%% @doc Per-user variables (docs/scenario.md, "Dynamic scenarios"): templates with `%%_name%%'
%% and `{var, Name}' placeholders compiled once at validation and filled per request, and the
%% conditions of `if', `repeat' and `for' (the sources of `setvars' are
%% `beamscale_load_vars_source''s). Names and values are binaries: nothing from a scenario or a
%% response becomes an atom.
-module(beamscale_load_vars).

-export([compile/1, compile_head/1, url_escape/1, render/2, fill_head/2, names/1, text_keys/1,
         parse/1, fill/2, test/2, value/1, list/3, internal/1, number/1]).
-export_type([vars/0, template/0, cond_/0]).

%% A list variable (several values found in a reply: Tsung's `<foreach in>') is kept under
%% `{list, Name}' beside `Name', its first value.
-type vars() :: #{binary() => binary(), {list, binary()} => [binary()]}.
%% A term with its dynamic parts marked: `{'$tpl', bin | str, Parts}' for a binary or string
%% holding `%%_name%%', `{'$var', Name}' for a `{var, Name}', `{'$map', Static, [{Key, T}]}'
%% for a map; `static' when there is none.
-type template() :: static | {dynamic, term()}.
-type part() :: {var, binary()} | {call, {module(), atom()}}.
%% `{url, Part}': a value put into a request line (`compile_head/1').
-type parts() :: [binary() | part() | {url, part()}].
-type cond_() :: {binary(), eq | neq | gt | gte | lt | lte, binary()}.

-define(MAX_VAR_NAME, 255).
%% `%%module:function%%' at the start of the text after `%%' (Erlang's plain atom names).
-define(CALL_RE, <<"^([a-z][a-zA-Z0-9_]{0,254}):([a-z][a-zA-Z0-9_]{0,254})%%">>).

%% ---- templates ----

%% @doc Compile a request spec: `static' when it holds no placeholder (sent as it is).
-spec compile(term()) -> template().
compile(Term) ->
    case mark(Term) of
        {false, _} -> static;
        {true, T} -> {dynamic, T}
    end.

%% @doc Compile a request head (its request line first): the values put into the request line
%% (the URL) are sent with their spaces as `%20', as Tsung's `escape_url' does after it
%% substitutes; the headers' values are sent as they are, as Tsung's.
-spec compile_head(binary()) -> template().
compile_head(Head) ->
    case compile(Head) of
        {dynamic, {'$tpl', bin, Parts}} -> {dynamic, {'$tpl', bin, url_parts(Parts)}};
        Static -> Static
    end.

url_parts([B | Parts]) when is_binary(B) ->
    case binary:match(B, <<"\r\n">>) of
        nomatch -> [B | url_parts(Parts)];
        _ -> [B | Parts]
    end;
url_parts([P | Parts]) -> [{url, P} | url_parts(Parts)];
url_parts([]) -> [].

%% @doc A URL's spaces as `%20', its other bytes as they are (a `%' already there is kept, so a
%% value the file encoded is not encoded twice): Tsung 1.7's `ts_http:escape_url/1', applied to
%% the path and the query alike.
-spec url_escape(iodata()) -> binary().
url_escape(Url) -> binary:replace(iolist_to_binary(Url), <<" ">>, <<"%20">>, [global]).

mark({var, Name}) when is_atom(Name) -> {true, {'$var', atom_to_binary(Name)}};
mark({var, Name}) when is_binary(Name) -> {true, {'$var', Name}};
mark(B) when is_binary(B) -> text(bin, B, B);
mark(L) when is_list(L) ->
    case io_lib:printable_unicode_list(L) andalso L =/= [] of
        true -> text(str, unicode:characters_to_binary(L), L);
        false -> cons(L)
    end;
mark(T) when is_tuple(T) -> marks(tuple_to_list(T), fun list_to_tuple/1);
%% A map whose keys hold no placeholder (a request spec's): its static part is kept whole and
%% only its dynamic values are filled per request, with no walk over the rest.
mark(M) when is_map(M) ->
    case lists:any(fun(K) -> element(1, mark(K)) end, maps:keys(M)) of
        false ->
            Dyn = [{K, T} || {K, V} <- maps:to_list(M), {true, T} <- [mark(V)]],
            {Dyn =/= [], {'$map', maps:without([K || {K, _} <- Dyn], M), Dyn}};
        true ->
            {Dyn, Pairs} = marks([[K, V] || {K, V} <- maps:to_list(M)], fun(X) -> X end),
            {Dyn, maps:from_list([{K, V} || [K, V] <- Pairs])}
    end;
mark(X) -> {false, X}.

%% A list walked cell by cell: an rpc's expect pattern may be improper (`[a | '_']').
cons([H | T]) ->
    {DH, MH} = mark(H),
    {DT, MT} = cons(T),
    {DH orelse DT, [MH | MT]};
cons([]) -> {false, []};
cons(Tail) -> mark(Tail).

marks(Xs, Build) ->
    Ms = [mark(X) || X <- Xs],
    {lists:any(fun({D, _}) -> D end, Ms), Build([M || {_, M} <- Ms])}.

text(Kind, Bin, Orig) ->
    case parse(Bin) of
        [Bin] -> {false, Orig};
        [] -> {false, Orig};
        Parts -> {true, {'$tpl', Kind, Parts}}
    end.

%% @doc Split a text at its `%%_name%%' and `%%module:function%%' placeholders. A `%%' not
%% starting a well-formed name
%% stays text, as in Tsung.
-spec parse(binary()) -> parts().
parse(Bin) -> parse(Bin, <<>>, []).

parse(<<>>, Acc, Parts) -> lists:reverse(add(Acc, Parts));
parse(<<"%%_", Rest/binary>>, Acc, Parts) ->
    case binary:match(Rest, <<"%%">>) of
        {At, 2} when At > 0, At =< ?MAX_VAR_NAME ->
            Name = binary:part(Rest, 0, At),
            case is_name(Name) of
                true -> parse(binary:part(Rest, At + 2, byte_size(Rest) - At - 2), <<>>,
                              [{var, Name} | add(Acc, Parts)]);
                false -> parse(Rest, <<Acc/binary, "%%_">>, Parts)
            end;
        _ -> parse(Rest, <<Acc/binary, "%%_">>, Parts)
    end;
parse(<<"%%", Rest/binary>>, Acc, Parts) ->
    case call(Rest) of
        {Call, After} -> parse(After, <<>>, [Call | add(Acc, Parts)]);
        none -> parse(Rest, <<Acc/binary, "%%">>, Parts)
    end;
parse(<<C, Rest/binary>>, Acc, Parts) -> parse(Rest, <<Acc/binary, C>>, Parts).

%% Tsung's `%%Module:function%%': `Module:function(Vars)' per request. A module that is not on
%% the code path (or lacks the function) is refused, thrown as the scenario checks throw; the
%% names become atoms only once the module is found, so no input fills the atom table.
call(Rest) ->
    case re:run(Rest, ?CALL_RE, [{capture, all_but_first, binary}]) of
        {match, [M, F]} ->
            After = binary:part(Rest, byte_size(M) + byte_size(F) + 3,
                                byte_size(Rest) - byte_size(M) - byte_size(F) - 3),
            {{call, callee(M, F)}, After};
        nomatch -> none
    end.

callee(M, F) ->
    case code:where_is_file(binary_to_list(M) ++ ".beam") of
        non_existing -> throw({bad, [], lists:flatten(io_lib:format(
                                          "%%~ts:~ts%%: no module ~ts on the code path",
                                          [M, F, M]))});
        _ ->
            {Mod, Fun} = {binary_to_atom(M), binary_to_atom(F)},
            {module, Mod} = code:ensure_loaded(Mod),
            [throw({bad, [], lists:flatten(io_lib:format("%%~ts:~ts%%: ~ts:~ts/1 is not "
                                                         "exported", [M, F, M, F]))})
             || not erlang:function_exported(Mod, Fun, 1)],
            {Mod, Fun}
    end.

add(<<>>, Parts) -> Parts;
add(Acc, Parts) -> [Acc | Parts].

is_name(Name) ->
    lists:all(fun(C) -> C >= $a andalso C =< $z orelse C >= $A andalso C =< $Z orelse
                            C >= $0 andalso C =< $9 orelse C =:= $_ orelse C =:= $- orelse
                            C =:= $. end, binary_to_list(Name)).

%% @doc The keys of a compiled map whose values hold placeholders, when these are all inside
%% texts; `terms' for a `{var, Name}' (a value of another type) or a template of another term.
-spec text_keys(template()) -> [term()] | terms.
text_keys(static) -> [];
text_keys({dynamic, {'$map', _, Dyn}}) ->
    case lists:all(fun({_, T}) -> no_var(T) end, Dyn) of
        true -> [K || {K, _} <- Dyn];
        false -> terms
    end;
text_keys({dynamic, _}) -> terms.

no_var({'$var', _}) -> false;
no_var({'$tpl', _, _}) -> true;
no_var(L) when is_list(L) -> lists:all(fun no_var/1, L);
no_var(T) when is_tuple(T) -> no_var(tuple_to_list(T));
no_var(M) when is_map(M) -> no_var(maps:to_list(M));
no_var(_) -> true.

%% @doc The variable names a template uses.
-spec names(template()) -> [binary()].
names(static) -> [];
names({dynamic, T}) -> lists:usort(used(T)).

%% @doc A variable beamscale's readers make for themselves (the User-Agent drawn for a Tsung
%% session): set by the session's first step, never a user's, so no `unset.' counter of its own.
-spec internal(binary()) -> boolean().
internal(<<"beamscale_", _/binary>>) -> true;
internal(_) -> false.

used({'$var', N}) -> [N];
used({'$tpl', _, Parts}) -> [N || P <- Parts, {var, N} <- [unurl(P)]];
used({'$map', _, Dyn}) -> lists:flatmap(fun({_, T}) -> used(T) end, Dyn);
used(L) when is_list(L) -> lists:flatmap(fun used/1, L);
used(T) when is_tuple(T) -> used(tuple_to_list(T));
used(M) when is_map(M) -> used(maps:to_list(M));
used(_) -> [].

%% @doc Fill a template with the user's variables: the term and the names that were unset
%% (filled with nothing, as Tsung sends them, and counted by the caller).
-spec render(template(), vars()) -> {term(), [binary()]}.
render({dynamic, T}, Vars) ->
    {R, Unset} = walk(T, Vars, []),
    {R, lists:usort(Unset)}.

walk({'$var', N}, Vars, U) -> get_var(N, Vars, U);
walk({'$tpl', bin, Parts}, Vars, U) -> fill(Parts, Vars, U);
walk({'$tpl', str, Parts}, Vars, U0) ->
    {B, U1} = fill(Parts, Vars, U0),
    {unicode:characters_to_list(B), U1};
walk({'$map', Static, Dyn}, Vars, U) ->
    lists:foldl(fun({K, T}, {M, A}) ->
                        {V, A1} = walk(T, Vars, A),
                        {M#{K => V}, A1}
                end, {Static, U}, Dyn);
walk(L, Vars, U) when is_list(L) -> lists:mapfoldl(fun(X, A) -> walk(X, Vars, A) end, U, L);
walk(T, Vars, U0) when is_tuple(T) ->
    {L, U1} = walk(tuple_to_list(T), Vars, U0),
    {list_to_tuple(L), U1};
walk(M, Vars, U0) when is_map(M) ->
    {L, U1} = walk(maps:to_list(M), Vars, U0),
    {maps:from_list(L), U1};
walk(X, _, U) -> {X, U}.

%% @doc A text template filled as iodata, with the names that were unset: an http head filled
%% per request is sent as it is, with no walk of a term nor binary built (docs/load-measurements.md,
%% "Client CPU").
-spec fill_head(template(), vars()) -> {iodata(), [binary()]} | {crlf, binary()}.
fill_head({dynamic, {'$tpl', bin, Parts}}, Vars) ->
    case fill_io(Parts, Vars, [], []) of
        {crlf, _} = Bad -> Bad;
        {_, []} = Filled -> Filled;
        {Io, Unset} -> {Io, lists:usort(Unset)}
    end;
fill_head(Template, Vars) -> render(Template, Vars).

%% Left-nested iodata: no list reversed. A value holding CR or LF would end the request line
%% or header it is in (what follows: a header or a second request of its choosing, as a hostile
%% server's reply put in a variable can choose): `{crlf, Name}' instead.
fill_io([B | Parts], Vars, Io, U) when is_binary(B) -> fill_io(Parts, Vars, [Io, B], U);
fill_io([{var, N} | Parts], Vars, Io, U) ->
    case Vars of
        #{N := V} -> head_value(N, V, Parts, Vars, Io, U);
        _ -> fill_io(Parts, Vars, Io, [N | U])
    end;
fill_io([{call, {M, F}} | Parts], Vars, Io, U) ->
    head_value(atom_to_binary(F), value(M:F(Vars)), Parts, Vars, Io, U);
fill_io([{url, P} | Parts], Vars, Io, U) ->
    case fill([P], Vars, U) of
        {<<>>, U1} -> fill_io(Parts, Vars, Io, U1);
        {V, U1} -> head_value(name(P), url_escape(V), Parts, Vars, Io, U1)
    end;
fill_io([], _Vars, Io, U) -> {Io, U}.

head_value(N, V, Parts, Vars, Io, U) ->
    case binary:match(V, [<<"\r">>, <<"\n">>]) of
        nomatch -> fill_io(Parts, Vars, [Io, V], U);
        _ -> {crlf, N}
    end.

%% @doc The text of parsed parts with the variables' values (unset ones empty).
-spec fill(parts(), vars()) -> binary().
fill(Parts, Vars) -> element(1, fill(Parts, Vars, [])).

fill(Parts, Vars, U0) ->
    {Io, U1} = lists:mapfoldl(fun({url, P}, A) ->
                                      {V, A1} = fill([P], Vars, A),
                                      {url_escape(V), A1};
                                 ({var, N}, A) -> get_var(N, Vars, A);
                                 ({call, {M, F}}, A) -> {value(M:F(Vars)), A};
                                 (B, A) -> {B, A}
                              end, U0, Parts),
    {iolist_to_binary(Io), U1}.

unurl({url, P}) -> P;
unurl(P) -> P.

name({var, N}) -> N;
name({call, {_, F}}) -> atom_to_binary(F).

get_var(N, Vars, U) ->
    case Vars of
        #{N := V} -> {V, U};
        _ -> {<<>>, [N | U]}
    end.

%% ---- conditions ----

%% @doc Whether `{Var, Op, Value}' holds (an unset variable equals nothing). `gt', `gte',
%% `lt' and `lte' compare the variable's value to `Value' as numbers, as Tsung's do; a value
%% that is not a number (an unset variable too) makes them false.
-spec test(cond_(), vars()) -> boolean().
test({Var, eq, Value}, Vars) -> maps:get(Var, Vars, <<>>) =:= Value;
test({Var, neq, Value}, Vars) -> maps:get(Var, Vars, <<>>) =/= Value;
test({Var, Op, Value}, Vars) ->
    case {number(maps:get(Var, Vars, <<>>)), number(Value)} of
        {{ok, X}, {ok, Y}} -> compare(Op, X, Y);
        _ -> false
    end.

compare(gt, X, Y) -> X > Y;
compare(gte, X, Y) -> X >= Y;
compare(lt, X, Y) -> X < Y;
compare(lte, X, Y) -> X =< Y.

%% @doc A value read as a number: an integer or a decimal (at most 64 bytes: a variable holds
%% what a reply gave).
-spec number(binary()) -> {ok, number()} | error.
number(B) when byte_size(B) =< 64 ->
    T = string:trim(B),
    try {ok, binary_to_integer(T)}
    catch error:badarg ->
        try {ok, binary_to_float(T)} catch error:badarg -> error end
    end;
number(_) -> error.

%% @doc The values of the list variable `Name' (its one value when it holds one), those that
%% match an `Include' expression and no `Exclude' one.
-spec list(binary(), {[beamscale_load_extract:mp()], [beamscale_load_extract:mp()]}, vars()) ->
    [binary()].
list(Name, {Include, Exclude}, Vars) ->
    All = case Vars of
              #{{list, Name} := L} -> L;
              #{Name := V} -> [V];
              _ -> []
          end,
    Hit = fun(V, MPs) -> [M || M <- MPs, beamscale_load_extract:run(V, M, []) =/= nomatch] end,
    [V || V <- All, Include =:= [] orelse Hit(V, Include) =/= [], Hit(V, Exclude) =:= []].

%% @doc A value as the binary variables hold.
-spec value(term()) -> binary().
value(B) when is_binary(B) -> B;
value(I) when is_integer(I) -> integer_to_binary(I);
value(F) when is_float(F) -> float_to_binary(F, [short]);
value(A) when is_atom(A) -> atom_to_binary(A);
value(L) when is_list(L) -> unicode:characters_to_binary(L).
