%% @doc Tsung's eval funs (`<setdynvars sourcetype="eval" code="fun({Pid, DynVars}) -> ... end.">'
%% and the terms `{setvars, Names, {eval, Code}}'): the scenario author's own Erlang code, as
%% Tsung runs it, bounded. The code is parsed and linted once, when the scenario is read (its
%% errors name their line in the code); per user it is evaluated (`erl_eval') in a process of
%% its own, killed past ?TIMEOUT_MS or ?MAX_HEAP_WORDS of heap, and called with `{Pid,
%% DynVars}': the user's pid and its variables as Tsung's list of `{Name, Value}' (names that
%% are atoms already, values as strings, `tsung_userid' the user's number).
%%
%% Tsung's helper module `ts_dynvars' is not on our code path (a module outside our prefix): its
%% calls in the code (`lookup/2', `lookup/3', `entries/1') are served here, through `erl_eval''s
%% handler of remote calls; every other call goes where it names.
-module(beamscale_load_eval).

-export([parse/1, run/4, format_error/1]).
-export_type([code/0]).

-type code() :: [erl_parse:abstract_expr()].

-define(TIMEOUT_MS, 1000).
%% 8 MiB on a 64-bit emulator.
-define(MAX_HEAP_WORDS, 1024 * 1024).

%% @doc The code of one fun of one argument (a missing final `.' is added), or where in the
%% code its first error is ("line L, column C": an XML attribute's newlines are spaces, so the
%% column says more) and its text.
-spec parse(string() | binary()) -> {ok, code()} | {error, string(), string()}.
parse(Text) ->
    case erl_scan:string(unicode:characters_to_list(Text), {1, 1}) of
        {ok, [], _} -> {error, line({1, 1}), "no code"};
        {ok, Tokens, End} ->
            Dotted = case lists:last(Tokens) of
                         {dot, _} -> Tokens;
                         _ -> Tokens ++ [{dot, End}]
                     end,
            case erl_parse:parse_exprs(Dotted) of
                {ok, Exprs} -> check(Exprs);
                {error, {L, M, E}} -> {error, line(L), lists:flatten(M:format_error(E))}
            end;
        {error, {L, M, E}, _} -> {error, line(L), lists:flatten(M:format_error(E))}
    end.

check([{'fun', L, {clauses, Cs}}] = Exprs) ->
    case [C || {clause, _, Args, _, _} = C <- Cs, length(Args) =/= 1] of
        [] -> lint(Exprs);
        _ -> {error, line(L), "the fun must take one argument ({Pid, DynVars})"}
    end;
check([X | _]) ->
    {error, line(erl_parse:first_anno(X)), "expected one fun: fun({Pid, DynVars}) -> ... end."}.

%% Unbound variables and the like, found now rather than at every user.
lint(Exprs) ->
    case erl_lint:exprs(Exprs, []) of
        {ok, _Warnings} -> {ok, Exprs};
        {error, [{_File, [{L, M, E} | _]} | _], _} ->
            {error, line(L), lists:flatten(M:format_error(E))}
    end.

line({L, Col}) -> lists:flatten(io_lib:format("line ~b, column ~b", [L, Col]));
line(L) when is_integer(L) -> lists:flatten(io_lib:format("line ~b", [L]));
line(_) -> "line 1".

%% @doc The values of `Count' variables from the fun, for the user numbered `User' with the
%% variables `Vars': a value for each (the same one, or a list of `Count' values).
-spec run(code(), pos_integer(), #{binary() => binary()}, non_neg_integer()) ->
    {ok, [binary()]} | {error, term()}.
run(Code, Count, Vars, User) ->
    Self = self(),
    DynVars = [{A, binary_to_list(V)} || {K, V} <- maps:to_list(Vars), A <- atom(K)]
              ++ [{tsung_userid, integer_to_list(User)}],
    {Pid, Ref} = spawn_opt(fun() -> Self ! {self(), values(Code, {Self, DynVars}, Count)} end,
                           [monitor, {max_heap_size, #{size => ?MAX_HEAP_WORDS, kill => true,
                                                       error_logger => false}}]),
    _ = spawn(fun() -> watch(Self, Pid) end),
    receive
        {Pid, Result} -> erlang:demonitor(Ref, [flush]), Result;
        {'DOWN', Ref, process, Pid, killed} -> {error, heap};
        {'DOWN', Ref, process, Pid, R} -> {error, {exit, R}}
    after ?TIMEOUT_MS ->
        exit(Pid, kill),
        erlang:demonitor(Ref, [flush]),
        receive {Pid, _} -> ok after 0 -> ok end,
        {error, timeout}
    end.

%% The fun dies with its user (a run stopped while it ran): not linked, as the kills at the bounds
%% would take the user with it.
watch(User, Pid) ->
    U = monitor(process, User),
    P = monitor(process, Pid),
    receive
        {'DOWN', U, process, _, _} -> exit(Pid, kill);
        {'DOWN', P, process, _, _} -> ok
    end.

%% A variable's name that is no atom cannot be named by the code (nor made one by us).
atom(Name) ->
    try [binary_to_existing_atom(Name)]
    catch error:badarg -> []
    end.

values(Code, Arg, Count) ->
    try
        {value, Fun, _} = erl_eval:exprs(Code, erl_eval:new_bindings(), none,
                                         {value, fun remote/2}),
        case Fun(Arg) of
            L when is_list(L), Count > 1, length(L) =:= Count ->
                {ok, [beamscale_load_vars:value(X) || X <- L]};
            X -> {ok, lists:duplicate(Count, beamscale_load_vars:value(X))}
        end
    catch Class:Reason -> {error, {Class, Reason}}
    end.

remote({ts_dynvars, F}, Args) -> ts_dynvars(F, Args);
remote({M, F}, Args) -> apply(M, F, Args);
remote(Fun, Args) -> apply(Fun, Args).

%% Tsung's ts_dynvars:lookup/2,3 and entries/1 on its list of {Name, Value}.
ts_dynvars(lookup, [Key, DynVars]) when is_atom(Key), is_list(DynVars) ->
    case lists:keyfind(Key, 1, DynVars) of
        {Key, V} -> {ok, V};
        false -> false
    end;
ts_dynvars(lookup, [Key, DynVars, Default]) ->
    case ts_dynvars(lookup, [Key, DynVars]) of
        false -> {ok, Default};
        Found -> Found
    end;
ts_dynvars(entries, [DynVars]) -> DynVars;
ts_dynvars(F, Args) -> erlang:error(undef, [{ts_dynvars, F, length(Args)}]).

%% @doc The text of a run's failure: short, without the values involved where it can be.
-spec format_error(term()) -> iodata().
format_error(timeout) -> io_lib:format("eval fun still running after ~b ms: killed", [?TIMEOUT_MS]);
format_error(heap) ->
    io_lib:format("eval fun above ~b MiB of heap: killed", [?MAX_HEAP_WORDS * 8 div (1 bsl 20)]);
format_error({exit, R}) -> io_lib:format("eval fun exited: ~0tP", [R, 8]);
format_error({Class, R}) -> io_lib:format("eval fun raised ~ts: ~0tP", [Class, R, 8]).
