%% @doc A scenario's settings as amoc declares and reads them: the `-required_variable(...)'
%% attributes of its module (maps `#{name, description, default_value, verification}' or the
%% older tuples `{Name, Description[, Default[, Verification]]}'), each variable's value from
%% `--set NAME=VALUE', else the environment variable `AMOC_NAME' (upper case), else its default,
%% else `undefined' (as amoc), then its verification (`none', a list of allowed values,
%% `{M, F, 1}', `fun M:F/1', or in the tuple form the name of a function of the scenario's
%% module). No atom is made from the input.
-module(beamscale_amoc_vars).

-export([params/1, resolve/3, env_name/1, format_error/1]).
-export_type([param/0]).

-type param() :: #{name := atom(), description := binary(), default => term(),
                   verification := fun((term()) -> term())}.

%% @doc The variables the modules declare (a scenario's, then its helpers', as amoc reads every
%% loaded module's), in their order; a name declared twice is refused.
-spec params(module() | [module()]) -> {ok, [param()]} | {error, {?MODULE, term()}}.
params(Mod) when is_atom(Mod) -> params([Mod]);
params(Mods) ->
    try
        Ps = [P#{module => M} || M <- Mods, P <- params_of(M)],
        _ = lists:foldl(fun(#{name := N, module := M}, Seen) ->
                                case Seen of
                                    #{N := M0} -> throw({declared_twice, N, M0, M});
                                    _ -> Seen#{N => M}
                                end
                        end, #{}, Ps),
        {ok, [maps:remove(module, P) || P <- Ps]}
    catch throw:Reason -> {error, {?MODULE, Reason}}
    end.

params_of(Mod) ->
    Attrs = lists:append([as_list(V) || {required_variable, V} <- Mod:module_info(attributes)]),
    [param(Mod, A) || A <- Attrs].

as_list(L) when is_list(L) -> L;
as_list(V) -> [V].

param(Mod, #{name := N, description := D} = A) when is_atom(N) ->
    Base = #{name => N, description => text(N, D),
             verification => verification(Mod, N, maps:get(verification, A, none))},
    case A of
        #{default_value := V} -> Base#{default => V};
        _ -> Base
    end;
param(Mod, {N, D}) when is_atom(N) -> param(Mod, #{name => N, description => D});
param(Mod, {N, D, V}) when is_atom(N) ->
    param(Mod, #{name => N, description => D, default_value => V});
param(Mod, {N, D, V, F}) when is_atom(N), is_atom(F), F =/= none ->
    param(Mod, #{name => N, description => D, default_value => V,
                 verification => {Mod, F, 1}});
param(Mod, {N, D, V, Ver}) when is_atom(N) ->
    param(Mod, #{name => N, description => D, default_value => V, verification => Ver});
param(_Mod, Other) -> throw({bad_attribute, Other}).

text(N, D) ->
    case unicode:characters_to_binary(D) of
        B when is_binary(B) -> B;
        _ -> throw({bad_description, N})
    end.

verification(_Mod, _N, none) -> fun(_) -> true end;
verification(_Mod, _N, [_ | _] = OneOf) -> fun(V) -> lists:member(V, OneOf) end;
verification(_Mod, N, {M, F, 1}) when is_atom(M), is_atom(F) -> exported(N, M, F);
verification(_Mod, N, Fun) when is_function(Fun, 1) ->
    case erlang:fun_info(Fun, type) of
        {type, external} ->
            {module, M} = erlang:fun_info(Fun, module),
            {name, F} = erlang:fun_info(Fun, name),
            exported(N, M, F);
        {type, local} -> Fun
    end;
verification(_Mod, N, Other) -> throw({bad_verification, N, Other}).

exported(N, M, F) ->
    _ = code:ensure_loaded(M),
    case erlang:function_exported(M, F, 1) of
        true -> fun M:F/1;
        false -> throw({not_exported, N, M, F})
    end.

%% @doc Each declared variable's value, verified: `Sets' are `--set''s texts `NAME=VALUE',
%% `GetEnv' reads an environment variable (`os:getenv/1').
-spec resolve([param()], [string()], fun((string()) -> string() | false)) ->
    {ok, #{atom() => term()}} | {error, {?MODULE, term()}}.
resolve(Params, Sets, GetEnv) ->
    try
        Given = maps:from_list([set(S, Params) || S <- Sets]),
        {ok, maps:from_list([{N, verify(P, value(P, Given, GetEnv))}
                             || #{name := N} = P <- Params])}
    catch throw:Reason -> {error, {?MODULE, Reason}}
    end.

%% `NAME=VALUE' for a declared NAME (compared as text: no atom made).
set(Text, Params) ->
    case string:split(Text, "=") of
        [Name, Value] ->
            case [N || #{name := N} <- Params, atom_to_list(N) =:= Name] of
                [N] -> {N, {"--set " ++ Text, Value}};
                [] -> throw({unknown_setting, Name, [N || #{name := N} <- Params]})
            end;
        _ -> throw({bad_set, Text})
    end.

value(#{name := N} = P, Given, GetEnv) ->
    Env = env_name(N),
    case {maps:find(N, Given), GetEnv(Env), P} of
        {{ok, {Source, Text}}, _, _} -> parsed(N, Source, Text);
        {error, Text, _} when is_list(Text), Text =/= "" -> parsed(N, Env ++ "=" ++ Text, Text);
        {error, _, #{default := V}} -> V;
        {error, _, _} -> missing
    end.

parsed(N, Source, Text) ->
    case beamscale_amoc_value:parse(Text) of
        {ok, V} -> V;
        {error, Why} -> throw({bad_value, N, Source, Why})
    end.

%% amoc's verification: `true', `{true, NewValue}', else refused. A variable given no value
%% and without a default is `undefined', refused if its verification refuses that.
verify(#{name := N, description := D} = P, missing) ->
    try verify(P, undefined)
    catch throw:{verification, _, _, _} -> throw({missing, N, D})
    end;
verify(#{name := N, verification := Fun}, V) ->
    try Fun(V) of
        true -> V;
        {true, New} -> New;
        false -> throw({verification, N, V, false});
        {false, Why} -> throw({verification, N, V, {reason, Why}});
        Other -> throw({verification, N, V, {returned, Other}})
    catch
        throw:{verification, _, _, _} = T -> throw(T);
        Class:Why -> throw({verification, N, V, {raised, Class, Why}})
    end.

%% @doc The environment variable amoc reads for `Name': `AMOC_' and the name in upper case.
-spec env_name(atom()) -> string().
env_name(Name) -> "AMOC_" ++ string:uppercase(atom_to_list(Name)).

%% @doc The text of a reason of this module (one line).
-spec format_error(term()) -> iodata().
format_error({bad_attribute, A}) ->
    io_lib:format("-required_variable: ~0P is not #{name => Atom, description => Text, ...}",
                  [A, 12]);
format_error({declared_twice, N, M0, M}) ->
    io_lib:format("-required_variable ~ts: declared by both ~ts and ~ts", [N, M0, M]);
format_error({bad_description, N}) ->
    io_lib:format("-required_variable ~ts: the description is not text", [N]);
format_error({bad_verification, N, V}) ->
    io_lib:format("-required_variable ~ts: verification ~0P is not none, a list, {M, F, 1} "
                  "or fun M:F/1", [N, V, 8]);
format_error({not_exported, N, M, F}) ->
    io_lib:format("-required_variable ~ts: verification ~ts:~ts/1 is not exported", [N, M, F]);
format_error({unknown_setting, Name, Names}) ->
    io_lib:format("--set ~ts: not a required variable of the scenario (it declares: ~ts)",
                  [Name, names(Names)]);
format_error({bad_set, Text}) -> io_lib:format("--set ~ts: expected NAME=VALUE", [Text]);
format_error({bad_value, N, Source, Why}) ->
    io_lib:format("~ts (variable ~ts): ~ts", [Source, N, beamscale_amoc_value:format_error(
                                                            element(2, Why))]);
format_error({missing, N, D}) ->
    io_lib:format("required variable ~ts (~ts) has no value and no default, and its "
                  "verification refuses undefined: give --set ~ts=VALUE or ~ts",
                  [N, D, N, env_name(N)]);
format_error({verification, N, V, Why}) ->
    io_lib:format("required variable ~ts = ~0P: ~ts", [N, V, 8, why(Why)]).

why(false) -> "its verification failed";
why({reason, R}) -> io_lib:format("its verification failed: ~0P", [R, 8]);
why({returned, R}) -> io_lib:format("its verification returned ~0P, not a boolean", [R, 8]);
why({raised, C, R}) -> io_lib:format("its verification raised ~ts:~0P", [C, R, 8]).

names([]) -> "none";
names(Names) -> lists:join(", ", [atom_to_list(N) || N <- Names]).
