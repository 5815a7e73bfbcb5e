%% @doc Command-line options, parsed against a spec. Pure.
%%
%% An option spec is `{Key, "--long", Type, Help}' with Type `flag' (no value), `string',
%% `integer', `number' (an integer or a decimal: 10, 2.5), `{list, string}' (repeatable;
%% commas also separate values) or `{list, text}' (repeatable, each value whole: expressions).
-module(beamscale_args).

-export([parse/2, usage/1, format_error/1]).
-export_type([spec/0, parsed/0]).

-type type() :: flag | string | integer | number | {list, string} | {list, text}.
-type spec() :: [{atom(), string(), type(), string()}].
-type parsed() :: #{opts := #{atom() => term()}, args := [string()]}.

%% @doc Parse `Argv' against `Spec'.
-spec parse(spec(), [string()]) -> {ok, parsed()} | {error, {?MODULE, term()}}.
parse(Spec, Argv) ->
    parse(Spec, Argv, #{}, []).

%% @doc The options part of a help text.
-spec usage(spec()) -> iodata().
usage(Spec) ->
    [io_lib:format("  ~-24s ~s~n", [left(Long, Type), Help]) || {_, Long, Type, Help} <- Spec].

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
    case lists:keyfind(Name, 2, Spec) of
        {Key, _, flag, _} when Inline =:= [] -> parse(Spec, Rest, Opts#{Key => true}, Args);
        {Key, _, Type, _} when Type =/= flag ->
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
