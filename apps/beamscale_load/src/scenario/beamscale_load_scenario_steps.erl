%% @private The steps of a terms scenario's sessions, checked for `beamscale_load_scenario':
%% think times, loops, transactions, requests of a kind (with their target and timeout), waits,
%% aborts and the dynamic steps `beamscale_load_scenario_dyn' checks. Errors are thrown as
%% `{bad, Path, Message}'.
-module(beamscale_load_scenario_steps).

-export([steps/2, shown/2, forms/0]).

-define(DEFAULT_TIMEOUT_MS, 5000).
%% The longest wait (ms), as in `beamscale_load_scenario'.
-define(MAX_MS, 4294967295).
%% An exponential think time's mean: a draw is at most about 37 means (-ln of the smallest
%% uniform float), which must stay within ?MAX_MS.
-define(MAX_MEAN_MS, ?MAX_MS div 40).

%% @doc The steps `step/2' takes besides requests of a kind, by their tag, as written: the one list
%% the error for an unknown step names (a test checks `step/2' matches no tag it lacks).
-spec forms() -> [{atom(), string()}].
forms() ->
    [{think, "{think, T}"}, {loop, "{loop, N, Steps}"}, {transaction, "{transaction, Name, Steps}"},
     {setvars, "{setvars, Names, Source}"}, {'if', "{'if', Cond, Steps}"},
     {repeat, "{repeat, #{max => N, while | until => Cond}, Steps}"},
     {for, "{for, Var, #{from => I, to => J}, Steps}"},
     {foreach, "{foreach, Var, #{in => ListVar}, Steps}"},
     {rendezvous, "{rendezvous, Name, #{users => N}}"}, {wait, "{wait, #{...}}"},
     {set_option, "{set_option, #{...}}"}, {interaction, "{interaction, send | receive, Name}"},
     {disconnect, "{disconnect, Kind}"}, {request, "{request, Module, #{...}}"},
     {abort, "{abort, session | all}"}].

%% @doc The checked steps of a session (`Targets': the scenario's checked targets).
-spec steps(term(), #{atom() => map()}) -> [beamscale_load_scenario:step()].
steps([], _Targets) -> bad([steps], "expected a non-empty list of steps");
steps(L, Targets) when is_list(L) -> [step(S, Targets) || S <- L];
steps(_, _) -> bad([steps], "expected a list of steps").

step({think, D}, _) ->
    case beamscale_load_arrival:check_dist(D) of
        {ok, {exponential, M}} when M > ?MAX_MEAN_MS ->
            bad([steps, think], io_lib:format("an exponential mean of at most ~b ms (a draw can "
                                              "be 37 times the mean; waits end at 2^32-1 ms)",
                                              [?MAX_MEAN_MS]));
        {ok, {var, _, _, _} = Dist} -> {think, Dist};
        {ok, Dist} when element(tuple_size(Dist), Dist) > ?MAX_MS ->
            bad([steps, think], io_lib:format("think times of at most ~b ms (2^32-1, the longest "
                                              "wait)", [?MAX_MS]));
        {ok, Dist} -> {think, Dist};
        error -> bad([steps, think], "expected Ms, {constant, Ms}, {exponential, MeanMs}, "
                                     "{uniform, MinMs, MaxMs} or {var, \"name\"} (ms)")
    end;
step({loop, N, Steps}, T) when is_integer(N), N > 0 -> {loop, N, steps(Steps, T)};
step({loop, _, _}, _) -> bad([steps, loop], "expected {loop, N, Steps} with N > 0");
step({transaction, Name, Steps}, T) when is_atom(Name); is_binary(Name) ->
    shown([steps, transaction, Name], Name),
    {transaction, Name, steps(Steps, T)};
step(S, T) when element(1, S) =:= setvars; element(1, S) =:= 'if'; element(1, S) =:= repeat;
                element(1, S) =:= for; element(1, S) =:= foreach;
                element(1, S) =:= rendezvous ->
    try beamscale_load_scenario_dyn:step(S, fun(Steps) -> steps(Steps, T) end)
    catch throw:{bad, Path, Msg} when hd(Path) =/= steps -> bad([steps | Path], Msg)
    end;
step({wait, Spec}, Targets) when is_map(Spec) ->
    try beamscale_load_push:check(Spec, Targets)
    catch throw:{bad, Path, Msg} -> bad([steps | Path], Msg)
    end;
%% Tsung's `<set_option>': settings of the targets for the rest of the session.
step({set_option, Opts}, _) when is_map(Opts) ->
    try {set_option, set_option(Opts)}
    catch throw:{bad, Path, Msg} -> bad([steps, set_option | Path], Msg)
    end;
%% Tsung's `<interaction>': from a user's `send' to another's `receive', a transaction.
step({interaction, A, Name}, _) when (A =:= send orelse A =:= 'receive'),
                                     (is_atom(Name) orelse is_binary(Name)) ->
    shown([steps, interaction, Name], Name),
    {interaction, A, Name};
step({interaction, _, _}, _) -> bad([steps, interaction], "expected {interaction, send | "
                                                          "receive, Name}");
%% The user's connections of a kind closed (Tsung's `<change_type store="false">').
step({disconnect, Kind}, _) when is_atom(Kind) ->
    case beamscale_load_kinds:by_name(Kind) of
        {ok, Mod} -> {disconnect, Mod};
        error -> bad([steps, disconnect], "expected a request kind")
    end;
step({Kind, Spec}, Targets) when is_atom(Kind), is_map(Spec) ->
    case beamscale_load_kinds:by_name(Kind) of
        {ok, Mod} -> {Mod1, Spec1} = beamscale_load_kinds:variant(Mod, Spec),
                     request(Kind, Mod1, Spec1, Targets);
        error -> bad([steps, Kind], lists:flatten(["unknown step (request kinds: ",
                                                   lists:join(", ", kind_names()), ")"]))
    end;
step({request, Mod, Spec}, Targets) when is_atom(Mod), is_map(Spec) ->
    request_kind(Mod),
    request(Mod, Mod, Spec, Targets);
%% Tsung's `<abort type>': the session ends there; `all' stops the whole run as an interrupt.
step({abort, Type}, _) when Type =:= session; Type =:= all -> {abort, Type};
step({abort, _}, _) -> bad([steps, abort], "expected session or all");
step(_, _) ->
    bad([steps], lists:flatten(["expected {", lists:join("|", kind_names()), ", #{...}} or ",
                                lists:join(", ", [F || {_, F} <- forms()])])).

kind_names() -> [atom_to_list(N) || N <- beamscale_load_kinds:names()].

%% `connect_timeout_ms', `retry_timeout_ms' and `max_retries' as on a target; `certificate' the
%% client certificate's files added to the TLS options (`tls').
set_option(Opts) ->
    [bad([K], "unknown key (known: connect_timeout_ms, retry_timeout_ms, max_retries, "
              "certificate)")
     || K <- maps:keys(Opts), not lists:member(K, [connect_timeout_ms, retry_timeout_ms,
                                                   max_retries, certificate])],
    [bad([], "expected at least one setting") || map_size(Opts) =:= 0],
    Socket = beamscale_load_scenario_where:socket(maps:without([certificate], Opts)),
    case Opts of
        #{certificate := C} when is_map(C), map_size(C) > 0 -> Socket#{tls => certificate(C)};
        #{certificate := _} -> bad([certificate], "expected #{certfile, keyfile, password, "
                                                  "cacertfile}");
        _ -> Socket
    end.

certificate(C) ->
    [case lists:member(K, [certfile, keyfile, password, cacertfile]) of
         true when is_list(V), V =/= [] -> {K, V};
         true -> bad([certificate, K], "expected a non-empty string");
         false -> bad([certificate, K], "unknown key (known: certfile, keyfile, password, "
                                        "cacertfile)")
     end || {K, V} <- maps:to_list(C)].

request(Kind, Mod, Spec, Targets) ->
    Target = case {maps:get(target, Spec, undefined), maps:keys(Targets)} of
                 {undefined, [Only]} -> Only;
                 {undefined, _} -> bad([steps, Kind, target], "missing (there are several)");
                 {T, Names} -> [bad([steps, Kind, target], "unknown target")
                                || not lists:member(T, Names)],
                               T
             end,
    Timeout = case maps:get(timeout_ms, Spec, ?DEFAULT_TIMEOUT_MS) of
                  Ms when is_integer(Ms), Ms > 0, Ms =< ?MAX_MS -> Ms;
                  _ -> bad([steps, Kind, timeout_ms],
                           io_lib:format("expected an integer from 1 to ~b (2^32-1, the longest "
                                         "wait)", [?MAX_MS]))
              end,
    Check = fun(Rest) ->
                    case Mod:check(Rest, maps:get(Target, Targets)) of
                        {ok, Checked} -> Checked;
                        {error, Key, Msg} -> bad([steps, Kind, Key], Msg)
                    end
            end,
    Own = maps:without([target, timeout_ms, label, tags], Spec),
    Step = beamscale_load_scenario_dyn:request({request, Mod, Target, Timeout}, Own, Check,
                                               [steps, Kind]),
    Named = case maps:find(label, Spec) of
                error -> Step;
                {ok, L} -> {named, beamscale_load_reqname:label(L, [steps, Kind, label]), Step}
            end,
    case maps:find(tags, Spec) of
        error -> Named;
        {ok, Tags} -> {tagged, beamscale_load_tags:check(Tags, [steps, Kind, tags]), Named}
    end.

%% A request kind of one's own must be a module here with the behaviour's callbacks, said now
%% rather than as `undef' at the first request.
request_kind(Mod) ->
    case code:ensure_loaded(Mod) of
        {module, Mod} ->
            Missing = beamscale_load_request:missing_callbacks(Mod),
            [bad([steps, request], io_lib:format("~0tp is not a request kind: it does not export "
                                                 "~ts (behaviour beamscale_load_request)",
                                                 [Mod, lists:join(", ", Missing)]))
             || Missing =/= []],
            ok;
        {error, Why} ->
            bad([steps, request], io_lib:format("module ~0tp is missing (~0tp: not on the code "
                                                "path)", [Mod, Why]))
    end.

%% A name is shown by the status line, the page and the tables: printable Latin-1 (what every
%% one of them shows as written); control characters, right-to-left marks and the like refused.
-spec shown([term()], atom() | binary()) -> ok.
shown(Path, Name) ->
    Chars = case Name of
                _ when is_atom(Name) -> atom_to_list(Name);
                _ -> binary_to_list(Name)
            end,
    case [C || C <- Chars, not (C >= 32 andalso C =< 126 orelse C >= 160 andalso C =< 255)] of
        [] -> ok;
        _ -> bad(Path, "a name of printable Latin-1 characters (the status line and the "
                         "page show it): refused")
    end.

-spec bad([term()], iodata()) -> no_return().
bad(Path, Msg) -> throw({bad, Path, Msg}).
