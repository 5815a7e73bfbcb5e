%% @doc The `expect' pattern of an `rpc' call, pure: a plain term read from the scenario, never
%% code. `'_'' matches anything; a tuple or list matches one of the same length whose elements
%% match; a map matches a map that has each of its keys with a matching value (other keys
%% allowed, as in an Erlang map pattern); any other term matches itself exactly (`=:=').
%% Matching walks only as deep as the pattern, so a large result costs no more than a small one.
%% `parse/1' reads a pattern written as Erlang (Tsung's `expect' attribute) without making atoms.
-module(beamscale_load_expect).

-export([check/1, match/2, parse/1]).
-export_type([pattern/0]).

-type pattern() :: term().

%% An atom of a written pattern that the node does not know yet: kept as its name, so that no
%% input makes atoms; it matches the atom of that name (a result may bring it).
-define(UNKNOWN, '$beamscale_load_expect_atom').
%% A pattern is written by hand, a line or two; a longer one is not an expectation.
-define(MAX_CHARS, 4096).
%% Erlang's longest atom, in characters.
-define(MAX_ATOM, 255).

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
match({?UNKNOWN, Name}, T) when is_atom(T) -> atom_to_list(T) =:= Name;
match(P, T) when is_tuple(P), is_tuple(T), tuple_size(P) =:= tuple_size(T) ->
    elements(P, T, tuple_size(P));
match([P | Ps], [T | Ts]) -> match(P, T) andalso match(Ps, Ts);
match(P, T) when is_map(P), is_map(T) ->
    maps:fold(fun(K, V, Acc) ->
                      Acc andalso case maps:find(key(K), T) of
                                      {ok, X} -> match(V, X);
                                      error -> false
                                  end
              end, true, P);
match(P, T) -> P =:= T.

elements(_P, _T, 0) -> true;
elements(P, T, I) -> match(element(I, P), element(I, T)) andalso elements(P, T, I - 1).

%% A map key named by an unknown atom: the atom if a result has made it since.
key({?UNKNOWN, Name} = K) ->
    try list_to_existing_atom(Name) catch error:badarg -> K end;
key(K) -> K.

%% @doc A pattern written as an Erlang pattern without a fun (`{ok, _}', `#{k := V}', `[a | _]'):
%% every variable matches anything (one name bound twice is refused: parts are not compared),
%% map fields take `:=' or `=>'. Atoms the node does not know are kept as names, never made.
-spec parse(string()) -> {ok, pattern()} | {error, string()}.
parse(Text) when length(Text) > ?MAX_CHARS ->
    {error, io_lib:format("longer than ~b characters", [?MAX_CHARS])};
parse(Text) ->
    try tokens(Text, [], [], []) of
        Tokens ->
            case erl_parse:parse_term(Tokens ++ [{dot, 1}]) of
                {ok, P} -> {ok, P};
                {error, _} -> {error, "not an Erlang pattern (a term; _ or a variable for any "
                                      "part; no fun, no operators)"}
            end
    catch throw:{expect, Msg} -> {error, lists:flatten(Msg)}
    end.

%% The tokens of `Text': atoms and variables are read here (erl_scan would make atoms of
%% them), the rest (numbers, strings, characters, punctuation) by erl_scan, a segment at a time.
tokens([], Seg, _Vars, Acc) -> lists:append(lists:reverse([scan(Seg) | Acc]));
tokens([C | _] = T, Seg, Vars, Acc) when C =:= $"; C =:= $$; C =:= $%; C >= $0, C =< $9 ->
    {Lit, Rest} = literal(T),
    tokens(Rest, lists:reverse(Lit, Seg), Vars, Acc);
tokens([$' | T], Seg, Vars, Acc) ->
    {Quoted, Rest} = quoted(T, []),
    tokens(Rest, [], Vars, [atom(Quoted), scan(Seg) | Acc]);
tokens([C | _] = T, Seg, Vars, Acc) ->
    case {lower(C), upper(C)} of
        {false, false} -> tokens(tl(T), [C | Seg], Vars, Acc);
        {true, _} ->
            {Name, Rest} = lists:splitwith(fun name_char/1, T),
            tokens(Rest, [], Vars, [name(Name), scan(Seg) | Acc]);
        {_, true} ->
            {Name, Rest} = lists:splitwith(fun name_char/1, T),
            [throw({expect, io_lib:format("variable ~ts appears twice (a pattern's parts are "
                                          "not compared: use _)", [Name])})
             || hd(Name) =/= $_, lists:member(Name, Vars)],
            tokens(Rest, [], [Name | Vars], [[{atom, 1, '_'}], scan(Seg) | Acc])
    end.

%% A string, a character, a comment or a number, whole (no atom is read inside one).
literal([$" | T]) -> until($", T, [$"]);
literal([$% | T]) -> lists:splitwith(fun(C) -> C =/= $\n end, [$% | T]);
literal([$$, $\\, $x, ${ | T]) -> until($}, T, lists:reverse("$\\x{"));
literal([$$, $\\, $^, C | T]) -> {[$$, $\\, $^, C], T};
literal([$$, $\\, C | T]) -> {[$$, $\\, C], T};
literal([$$, C | T]) -> {[$$, C], T};
literal([$$]) -> {"$", []};
literal(T) -> lists:splitwith(fun(C) -> name_char(C) orelse C =:= $# orelse C =:= $. end, T).

%% The text up to and with the closing `End' (a backslash escapes the next character).
until(_End, [], Acc) -> {lists:reverse(Acc), []};
until(End, [$\\, C | T], Acc) -> until(End, T, [C, $\\ | Acc]);
until(End, [End | T], Acc) -> {lists:reverse([End | Acc]), T};
until(End, [C | T], Acc) -> until(End, T, [C | Acc]).

%% A quoted atom's characters, escapes read as erl_scan reads them in a string.
quoted(T, Acc) ->
    {Body, Rest} = until($', T, []),
    case lists:reverse(Body) of
        [$' | RevInner] ->
            Inner = lists:reverse(RevInner),
            Escaped = lists:append([case C of $" -> "\\\""; _ -> [C] end || C <- Inner]),
            case erl_scan:string([$" | Escaped] ++ "\"") of
                {ok, [{string, _, S}], _} -> {lists:reverse(Acc, S), Rest};
                _ -> throw({expect, "a quoted atom with a bad escape"})
            end;
        _ -> throw({expect, "a quoted atom without its closing quote"})
    end.

%% An unquoted name: a reserved word (refused by the parse, a fun by name) or an atom.
name("fun") -> throw({expect, "a fun cannot be a pattern"});
name(Name) ->
    case atom(Name) of
        [{atom, L, A}] ->
            [case erl_scan:reserved_word(A) of
                 true -> {A, L};
                 false -> {atom, L, A}
             end];
        Unknown -> Unknown
    end.

atom(Name) when length(Name) > ?MAX_ATOM ->
    throw({expect, io_lib:format("an atom longer than ~b characters", [?MAX_ATOM])});
atom(Name) ->
    try [{atom, 1, list_to_existing_atom(Name)}]
    catch error:badarg -> [{'{', 1}, {atom, 1, ?UNKNOWN}, {',', 1}, {string, 1, Name}, {'}', 1}]
    end.

%% The tokens of a segment without atoms or variables; `:=' (a map pattern's) read as `=>'.
scan([]) -> [];
scan(RevSeg) ->
    case erl_scan:string(lists:reverse(RevSeg)) of
        {ok, Tokens, _} -> [case T of {':=', L} -> {'=>', L}; _ -> T end || T <- Tokens];
        {error, {_, Mod, Desc}, _} -> throw({expect, Mod:format_error(Desc)})
    end.

%% erl_scan's classes of characters: an atom starts lower case, a variable upper case or `_'.
lower(C) -> (C >= $a andalso C =< $z) orelse (C >= $ß andalso C =< $ÿ andalso C =/= $÷).
upper(C) ->
    (C >= $A andalso C =< $Z) orelse C =:= $_ orelse (C >= $À andalso C =< $Þ andalso C =/= $×).
name_char(C) -> lower(C) orelse upper(C) orelse (C >= $0 andalso C =< $9) orelse C =:= $@.
