%% @doc Command-line options, parsed against a spec. Pure.
%%
%% An option spec is `{Key, "--long", Type, Help}' with Type `flag' (no value), `string',
%% `integer', `number' (an integer or a decimal: 10, 2.5), `{list, string}' (repeatable;
%% commas also separate values) or `{list, text}' (repeatable, each value whole: expressions).
%% `{Key, "--long", Type, Help, Default}' declares the default too: `{value, V}', the value the
%% command uses (`get/3', `defaults/1'), or `{text, S}' when it depends on other options or on
%% the host. Help never says the default itself: `usage/1' appends it, formatted by type, so
%% the help cannot drift from the value (`beamscale_args_tests' checks).
-module(beamscale_args).

-export([parse/2, usage/1, help/1, get/3, defaults/1, format/2, format_error/1]).
-export_type([spec/0, parsed/0, default/0]).

-type type() :: flag | string | integer | number | {list, string} | {list, text}.
-type default() :: {value, term()} | {text, string()}.
-type spec() :: [{atom(), string(), type(), string()}
                 | {atom(), string(), type(), string(), default()}].
-type parsed() :: #{opts := #{atom() => term()}, args := [string()]}.

%% @doc Parse `Argv' against `Spec'.
-spec parse(spec(), [string()]) -> {ok, parsed()} | {error, {?MODULE, term()}}.
parse(Spec, Argv) ->
    parse(Spec, Argv, #{}, []).

%% @doc The options part of a help text.
-spec usage(spec()) -> iodata().
usage(Spec) ->
    [io_lib:format("  ~-24s ~s~n", [left(element(2, O), element(3, O)), help(O)]) || O <- Spec].

%% @doc An option's help line: its text, then its declared default.
-spec help(tuple()) -> string().
help({_, _, _, Help}) -> Help;
help({_, _, Type, Help, {value, V}}) -> Help ++ " (default " ++ format(Type, V) ++ ")";
help({_, _, _, Help, {text, T}}) -> Help ++ " (default: " ++ T ++ ")".

%% @doc An option's value in `Opts', else its declared default (`{value, V}').
-spec get(atom(), #{atom() => term()}, spec()) -> term().
get(Key, Opts, Spec) ->
    case Opts of
        #{Key := V} -> V;
        #{} -> maps:get(Key, defaults(Spec))
    end.

%% @doc The declared default values, by key (`{text, _}' defaults are the command's to work out).
-spec defaults(spec()) -> #{atom() => term()}.
defaults(Spec) ->
    maps:from_list([{Key, V} || {Key, _, _, _, {value, V}} <- Spec]).

%% @doc A value as the command line writes it.
-spec format(type(), term()) -> string().
format(integer, V) -> integer_to_list(V);
format(number, V) when is_integer(V) -> integer_to_list(V);
format(number, V) -> float_to_list(V, [short]);
format(string, V) -> V;
format({list, _}, Vs) -> string:join(Vs, ",").

%% @doc One line for a parse error.
-spec format_error(term()) -> string().
format_error({unknown_option, Opt}) -> "unknown option " ++ Opt;
format_error({missing_value, Opt}) -> "option " ++ Opt ++ " needs a value";
format_error({not_an_integer, Opt, V}) -> "option " ++ Opt ++ ": not an integer: " ++ V;
format_error({not_a_number, Opt, V}) -> "option " ++ Opt ++ ": not a number: " ++ V.

parse(_Spec, [], Opts, Args) ->
    {ok, #{opts => Opts, args => lists:reverse(Args)}};
parse(_Spec, ["--" | Rest], Opts, Args) ->
    {ok, #{opts => Opts, args => lists:reverse(Args, Rest)}};
%% A negative number is an argument (`ctl DIR users -5'), not an option.
parse(Spec, ["-" ++ [D | _] = Arg | Rest], Opts, Args) when D >= $0, D =< $9 ->
    parse(Spec, Rest, Opts, [Arg | Args]);
parse(Spec, ["-" ++ _ = Opt | Rest], Opts, Args) ->
    {Name, Inline} = case string:split(Opt, "=") of
                         [N, V] -> {N, [V]};
                         [N] -> {N, []}
                     end,
    case option(lists:keyfind(Name, 2, Spec)) of
        {Key, flag} when Inline =:= [] -> parse(Spec, Rest, Opts#{Key => true}, Args);
        {Key, Type} when Type =/= flag ->
            case Inline ++ Rest of
                [Value | Rest1] ->
                    case value(Type, Name, Value, maps:get(Key, Opts, [])) of
                        {ok, V1} -> parse(Spec, Rest1, Opts#{Key => V1}, Args);
                        {error, _} = E -> E
                    end;
                [] -> {error, {?MODULE, {missing_value, Name}}}
            end;
        _ -> {error, {?MODULE, {unknown_option, Opt}}}
    end;
parse(Spec, [Arg | Rest], Opts, Args) ->
    parse(Spec, Rest, Opts, [Arg | Args]).

option(false) -> false;
option(O) -> {element(1, O), element(3, O)}.

value(string, _Name, V, _Old) -> {ok, V};
value(integer, Name, V, _Old) ->
    try {ok, list_to_integer(V)}
    catch error:badarg -> {error, {?MODULE, {not_an_integer, Name, V}}}
    end;
value(number, Name, V, _Old) ->
    %% "10" and "2.5" (and "2." or ".5", which list_to_float/1 alone refuses).
    Text = case lists:member($., V) of
               true -> "0" ++ V ++ "0";
               false -> V
           end,
    try {ok, list_to_integer(Text)}
    catch error:badarg ->
        try {ok, list_to_float(Text)}
        catch error:badarg -> {error, {?MODULE, {not_a_number, Name, V}}}
        end
    end;
value({list, string}, _Name, V, Old) -> {ok, Old ++ string:lexemes(V, ",")};
value({list, text}, _Name, V, Old) -> {ok, Old ++ [V]}.

left(Long, flag) -> Long;
left(Long, integer) -> Long ++ " N";
left(Long, number) -> Long ++ " X";
left(Long, _) -> Long ++ " VALUE".
