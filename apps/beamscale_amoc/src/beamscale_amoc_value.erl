%% @doc A setting's text (`--set var=VALUE', `AMOC_VAR') read as an Erlang term, as amoc reads
%% its environment variables, without making an atom: a word that is not an atom already is
%% refused (scanning the text would otherwise make one from any input).
-module(beamscale_amoc_value).

-export([parse/1, format_error/1]).

%% The longest value text read (a setting, not a data file).
-define(MAX_CHARS, 65536).

%% @doc The term `Text' writes: `{ok, Term}' or `{error, {?MODULE, Reason}}'.
-spec parse(string()) -> {ok, term()} | {error, {?MODULE, term()}}.
parse(Text) when length(Text) > ?MAX_CHARS -> {error, {?MODULE, too_long}};
parse(Text) ->
    case unknown_atom(Text) of
        {yes, Word} -> {error, {?MODULE, {unknown_atom, Word}}};
        no ->
            case erl_scan:string(Text ++ " .") of
                {ok, Tokens, _} ->
                    case erl_parse:parse_term(Tokens) of
                        {ok, Term} -> {ok, Term};
                        {error, {_, Mod, Why}} ->
                            {error, {?MODULE, {syntax, lists:flatten(Mod:format_error(Why))}}}
                    end;
                {error, {_, Mod, Why}, _} ->
                    {error, {?MODULE, {syntax, lists:flatten(Mod:format_error(Why))}}}
            end
    end.

%% The first atom of `Text' (a bare word or a quoted one, strings skipped) that does not exist.
unknown_atom([]) -> no;
unknown_atom([$" | Rest]) -> unknown_atom(skip_string(Rest, $"));
unknown_atom([$$, $\\, _ | Rest]) -> unknown_atom(Rest);
unknown_atom([$$, _ | Rest]) -> unknown_atom(Rest);
unknown_atom([$' | Rest]) -> quoted(Rest, []);
unknown_atom([C | Rest]) when C >= $a, C =< $z ->
    {Word, After} = lists:splitwith(fun word_char/1, [C | Rest]),
    existing(Word, After);
unknown_atom([C | Rest]) when C >= $0, C =< $9 ->
    %% A number (1e5, and the digits of 16#ff after its base): its word is no atom.
    case lists:splitwith(fun word_char/1, Rest) of
        {_, [$# | Digits]} -> unknown_atom(element(2, lists:splitwith(fun word_char/1, Digits)));
        {_, After} -> unknown_atom(After)
    end;
unknown_atom([C | Rest]) when C >= $A, C =< $Z; C =:= $_ ->
    %% A variable (parse_term refuses it): its word is no atom.
    unknown_atom(element(2, lists:splitwith(fun word_char/1, Rest)));
unknown_atom([_ | Rest]) -> unknown_atom(Rest).

quoted([], _Acc) -> no;
quoted([$\\, C | Rest], Acc) -> quoted(Rest, [C | Acc]);
quoted([$' | Rest], Acc) -> existing(lists:reverse(Acc), Rest);
quoted([C | Rest], Acc) -> quoted(Rest, [C | Acc]).

existing(Word, After) ->
    try _ = list_to_existing_atom(Word), unknown_atom(After)
    catch error:badarg -> {yes, Word}
    end.

skip_string([], _Q) -> [];
skip_string([$\\, _ | Rest], Q) -> skip_string(Rest, Q);
skip_string([Q | Rest], Q) -> Rest;
skip_string([_ | Rest], Q) -> skip_string(Rest, Q).

word_char(C) ->
    (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z) orelse (C >= $0 andalso C =< $9)
        orelse C =:= $_ orelse C =:= $@.

%% @doc The text of a reason of this module.
-spec format_error(term()) -> iodata().
format_error(too_long) -> io_lib:format("longer than ~b characters", [?MAX_CHARS]);
format_error({unknown_atom, Word}) ->
    io_lib:format("~ts is an atom no module uses (write it as a string or binary)", [Word]);
format_error({syntax, Text}) -> ["not an Erlang term: ", Text].
