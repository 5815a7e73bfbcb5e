%% @doc Pure translation of a parsed Tsung XML tree (xmerl) into the entries of a scenario file
%% (`{Key, Value}' terms, see docs/scenario.md), which `beamscale_load_scenario:check/2' then
%% validates as it does a terms file. Settings that do not change the load sent are returned as
%% warnings; anything that would change it and is not supported is an error `{Line, Message}'.
-module(beamscale_load_tsung_xml).

-export([translate/3, ignored/2]).
-export_type([lines/0, terms/0]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, attr/3, req/3, number/3,
                                   integer/3, positive/3, non_negative/3, bool/4, line/2,
                                   fail/4]).

%% The line of each element (and processing instruction), keyed by its path in the tree.
-type lines() :: #{[{atom(), pos_integer()}] => pos_integer()}.
%% Scenario entries by key, each with the line it comes from, the targets to sample, and the
%% monitors that name none.
-type terms() :: #{entries := [{atom(), term(), pos_integer()}], sample := [atom()],
                   warnings := [string()], seed := integer() | none}.

-define(UNITS, [{"second", 1}, {"minute", 60}, {"hour", 3600}, {"millisecond", 0.001}]).
%% Phase numbers name phases `phase1'...: a closed set of atoms, not one per number a file holds.
-define(MAX_PHASE, 1000).
%% `<load loop>' copies the phases: bounded, so that a file cannot make the reader build an
%% unbounded list.
-define(MAX_LOAD_LOOP, 1000).
-define(OPTS, beamscale_load_tsung_options).
-define(CLIENTS, beamscale_load_tsung_clients).
-define(MID, beamscale_load_tsung_mid).

%% @doc Translate the root `<tsung>' element of `File'; `Lines' gives the line of every element.
-spec translate(#xmlElement{}, lines(), file:filename()) ->
    {ok, terms()} | {error, {pos_integer(), string()}}.
translate(#xmlElement{name = tsung} = Root, Lines, File) ->
    try {ok, tsung(Root, #{lines => Lines, file => File})}
    catch throw:{tsung, Line, Msg} -> {error, {Line, lists:flatten(Msg)}}
    end;
translate(#xmlElement{name = Name} = E, Lines, _File) ->
    {error, {line(E, #{lines => Lines}), io_lib:format("the root element is <~ts>, not <tsung>",
                                                        [Name])}}.

%% @doc The settings of the tree that do not change the load sent (one text per kind, sorted).
-spec ignored(#xmlElement{}, lines()) -> [string()].
ignored(Root, _Lines) -> beamscale_load_tsung_dom:ignored(Root).

%% ---- the document ----

tsung(Root, Ctx0) ->
    check_attrs(Root, Ctx0),
    %% `<information>' (name, description, username, organisation) only describes the test.
    Top = children(Root, [information, clients, servers, monitoring, load, options, sessions],
                   Ctx0),
    {Pis, Thresholds} = lists:partition(fun(P) -> tuple_size(P) =:= 2 end, pis(Root, Ctx0)),
    Opts = lists:append([children(O, [option], Ctx0) || O <- only(options, Top)]),
    Ctx = Ctx0#{think => think_option(Opts, Ctx0), pis => Pis,
                user_agents => ?OPTS:user_agents(Opts, Ctx0), options => ?OPTS:kinds(Opts, Ctx0),
                global_number => ?OPTS:global_number(Opts, Ctx0),
                timeouts => ?OPTS:timeouts(Opts, Ctx0)},
    {Ips, Hosts, Nodes, Local} = ?CLIENTS:clients(lists:append([children(C, [client], Ctx)
                                                       || C <- only(clients, Top)]), Ctx),
    Load = one(load, Top, Root, Ctx),
    Sessions = one(sessions, Top, Root, Ctx),
    {SessionTerms, Used} = sessions(Sessions, Ctx#{servers => servers(only(servers, Top), Ctx)}),
    Socket = ?OPTS:sockets(Opts, Ctx),
    Tls = ?OPTS:tls(Opts, Ctx),
    Targets = [{N, T} || {N, T} <- Pis]
        ++ [{N, case T of
                    #{address := _, tls := TT} -> maps:merge(T#{tls := maps:merge(TT, Tls)},
                                                             Socket);
                    #{address := _} -> maps:merge(T, Socket);
                    _ -> T
                end} || {N, T} <- lists:usort(Used)],
    Names = [N || {N, _} <- Targets],
    [fail(Root, Ctx, "two servers are named ~ts (<change_type>s to one port of two hosts)", [N])
     || N <- lists:usort(Names -- lists:usort(Names))],
    {Phases, Limit} = load(Load, session_names(Sessions, Ctx), Ctx),
    Files = beamscale_load_tsung_dyn:files(Opts, Ctx),
    Entries = [{targets, Targets, line(Root, Ctx)},
               {phases, Phases, line(Load, Ctx)},
               {sessions, SessionTerms, line(Sessions, Ctx)}]
              ++ [{time_limit_s, L, line(Load, Ctx)} || L <- [Limit], L =/= none]
              ++ [{files, Files, line(Root, Ctx)} || Files =/= []]
              ++ [{thresholds, [T || {threshold, T, _} <- Thresholds], L}
                  || [{threshold, _, L} | _] <- [Thresholds]]
              ++ [{source_ips, [V || {V, _} <- Ips], Line} || [{_, Line} | _] <- [Ips]]
              ++ [{load_nodes, [H || {H, _} <- Hosts], Line} || [{_, Line} | _] <- [Hosts]]
              ++ [{load_nodes, N, Line} || {N, Line} <- [Nodes]],
    {Sample, Monitors} = sample(only(monitoring, Top), Targets, Ctx),
    Unused = ["<server> (no request uses it)"
              || only(servers, Top) =/= [], not lists:keymember(server, 1, Targets)],
    #{entries => Entries ++ Monitors, sample => Sample, warnings => Unused ++ Local,
      seed => ?OPTS:seed(Opts, Ctx)}.

only(Name, Elements) -> [E || #xmlElement{name = N} = E <- Elements, N =:= Name].

one(Name, Elements, Parent, Ctx) ->
    case only(Name, Elements) of
        [E] -> E;
        [] -> fail(Parent, Ctx, "<~ts> needs a <~ts> element", [Parent#xmlElement.name, Name]);
        [_, E | _] -> fail(E, Ctx, "<~ts> is given twice", [Name])
    end.

%% `<?beamscale target {Name, Target}?>': a target in the scenario file's form, typically a node
%% beamscale starts (`#{start => ...}'), which Tsung itself ignores; `<?beamscale threshold
%% EXPR?>': a threshold of `load' (docs/thresholds.md), checked here to name its own line.
pis(#xmlElement{content = C} = Root, Ctx) ->
    [pi_target(P, Root, Ctx) || #xmlPI{name = beamscale} = P <- C].

pi_target(#xmlPI{value = V} = P, Root, Ctx) ->
    Line = maps:get([{pi, P#xmlPI.pos} | P#xmlPI.parents], maps:get(lines, Ctx), line(Root, Ctx)),
    case string:trim(V) of
        "target" ++ Rest ->
            case beamscale_format_terms:term(Rest) of
                {ok, {Name, T}} when is_atom(Name), is_map(T) -> {Name, T};
                _ -> bad_pi(Line)
            end;
        "threshold" ++ Rest ->
            case beamscale_stats_threshold:parse(string:trim(Rest)) of
                {ok, _} -> {threshold, string:trim(Rest), Line};
                {error, Msg} -> throw({tsung, Line, ["<?beamscale threshold?>: ", Msg]})
            end;
        _ -> bad_pi(Line)
    end.

-spec bad_pi(pos_integer()) -> no_return().
bad_pi(Line) ->
    throw({tsung, Line, "expected <?beamscale target {Name, Target}?> or "
                        "<?beamscale threshold EXPR?>"}).

servers([], _Ctx) -> [];
servers([E], Ctx) ->
    [begin
         check_attrs(S, Ctx),
         Port = integer(S, port, Ctx),
         {S, req(S, host, Ctx), Port, attr(S, type, "tcp")}
     end || S <- children(E, [server], Ctx)];
servers([_, E | _], Ctx) -> fail(E, Ctx, "<servers> is given twice", []).

%% ---- load ----

session_names(Sessions, Ctx) ->
    [unicode:characters_to_binary(N) || S <- children(Sessions, [session], Ctx),
                                        N <- [attr(S, name)], N =/= undefined].

load(E, Names, Ctx) ->
    check_attrs(E, Ctx),
    Unit = unit(E, Ctx),
    Limit = case attr(E, duration) of
                undefined -> none;
                _ -> number(E, duration, Ctx) * Unit
            end,
    Loop = case attr(E, loop) of
               undefined -> 0;
               _ -> integer(E, loop, Ctx)
           end,
    [fail(E, Ctx, "loop=\"~ts\": from 0 to ~b", [attr(E, loop), ?MAX_LOAD_LOOP])
     || Loop < 0 orelse Loop > ?MAX_LOAD_LOOP],
    Kids = children(E, [arrivalphase, user], Ctx),
    Phases = lists:keysort(1, [phase(P, Ctx) || #xmlElement{name = arrivalphase} = P <- Kids]),
    Users = [U || #xmlElement{name = user} = U <- Kids],
    [fail(E, Ctx, "<load> needs an <arrivalphase> or a <user>", []) || Kids =:= []],
    [fail(P, Ctx, "phase ~b is given twice", [N]) || {{N, P, _}, {N, _, _}} <- pairs(Phases)],
    All = lists:append(lists:duplicate(Loop + 1, [T || {_, _, T} <- Phases])),
    {beamscale_load_tsung_users:place(Users, All, Names, Ctx), Limit}.

pairs([A, B | Rest]) -> [{A, B} | pairs([B | Rest])];
pairs(_) -> [].

phase(E, Ctx) ->
    check_attrs(E, Ctx),
    N = integer(E, phase, Ctx),
    [fail(E, Ctx, "phase=\"~ts\": from 1 to ~b", [attr(E, phase), ?MAX_PHASE])
     || N < 1 orelse N > ?MAX_PHASE],
    Duration = number(E, duration, Ctx) * unit(E, Ctx),
    Kids = children(E, [users, session_setup], Ctx),
    [U] = case [K || #xmlElement{name = users} = K <- Kids] of
              [_] = One -> One;
              _ -> fail(E, Ctx, "<arrivalphase> needs one <users> element", [])
          end,
    check_attrs(U, Ctx),
    Unit = unit(U, Ctx),
    Arrival = case {attr(U, arrivalrate), attr(U, interarrival)} of
                  {undefined, undefined} -> fail(U, Ctx, "<users> needs arrivalrate or "
                                                         "interarrival", []);
                  {_, undefined} -> #{rate => positive(U, arrivalrate, Ctx) / Unit};
                  {undefined, _} -> #{interarrival_ms => positive(U, interarrival, Ctx) * Unit
                                                         * 1000};
                  _ -> fail(U, Ctx, "<users> has both arrivalrate and interarrival", [])
              end,
    Max = case attr(U, maxnumber) of
              undefined -> #{};
              _ -> #{max_users => integer(U, maxnumber, Ctx)}
          end,
    %% One of at most ?MAX_PHASE atoms (checked above), the same for every file.
    Name = list_to_atom("phase" ++ integer_to_list(N)),
    Mix = session_setup([K || #xmlElement{name = session_setup} = K <- Kids], E, Ctx),
    Wait = maps:from_list([{wait_sessions_end, true}
                           || bool(E, wait_all_sessions_end, false, Ctx)]),
    {N, E, {Name, maps:merge(maps:merge(Arrival#{duration_s => Duration}, Max),
                             maps:merge(Mix, Wait))}}.

%% `<session_setup name probability>': the phase's own mix of sessions, adding up to 100.
session_setup([], _E, _Ctx) -> #{};
session_setup(Setups, E, Ctx) ->
    Mix = [begin
               check_attrs(S, Ctx),
               {unicode:characters_to_binary(req(S, name, Ctx)), non_negative(S, probability, Ctx)}
           end || S <- Setups],
    Sum = lists:sum([P || {_, P} <- Mix]),
    [fail(E, Ctx, "the <session_setup> probabilities add up to ~tp, not 100", [Sum])
     || abs(Sum - 100) > 1.0e-6],
    #{sessions => Mix}.

unit(E, Ctx) ->
    case lists:keyfind(attr(E, unit, "second"), 1, ?UNITS) of
        {_, S} -> S;
        false -> fail(E, Ctx, "unit \"~ts\" (known: second, minute, hour, millisecond)",
                      [attr(E, unit)])
    end.

%% ---- sessions ----

sessions(E, Ctx) ->
    Ss = [session(S, Ctx) || S <- children(E, [session], Ctx)],
    [fail(E, Ctx, "<sessions> needs a <session>", []) || Ss =:= []],
    Kinds = lists:usort([K || {K, _, _, _, _} <- Ss]),
    [fail(E, Ctx, "give every session a probability or every one a weight, not both", [])
     || length(Kinds) > 1],
    Sum = lists:sum([W || {_, W, _, _, _} <- Ss]),
    [fail(E, Ctx, "the sessions' probabilities add up to ~tp, not 100", [Sum])
     || Kinds =:= [probability], abs(Sum - 100) > 1.0e-6],
    %% A session of probability 0 runs only in the phases whose <session_setup> names it.
    {[{Name, Bidi#{weight => W, steps => Steps}} || {_, W, Name, {Steps, Bidi}, _} <- Ss],
     lists:append([Used || {_, _, _, _, Used} <- Ss])}.

session(E, Ctx) ->
    check_attrs(E, Ctx),
    %% Names from the file stay binaries: no atom is made of input.
    Name = unicode:characters_to_binary(req(E, name, Ctx)),
    Type = case beamscale_load_kinds:by_tsung_type(req(E, type, Ctx)) of
               {ok, Mod} -> Mod;
               error -> fail(E, Ctx, "session type \"~ts\" is not supported (beamscale sends ~ts)",
                             [req(E, type, Ctx), lists:join(", ",
                                                           beamscale_load_kinds:tsung_types())])
           end,
    {Kind, W} = case {attr(E, probability), attr(E, weight)} of
                    {undefined, undefined} -> fail(E, Ctx, "<session> needs a probability", []);
                    {_, undefined} -> {probability, non_negative(E, probability, Ctx)};
                    {undefined, _} -> {weight, positive(E, weight, Ctx)};
                    _ -> fail(E, Ctx, "<session> has both probability and weight", [])
                end,
    {Steps0, Used} = steps(E, ?OPTS:agent_var(Type, Ctx#{type => Type, session => E})),
    [fail(E, Ctx, "<session> has no request", []) || Steps0 =:= []],
    Steps = beamscale_load_tsung_dyn:userid(E, Steps0),
    %% bidi="true": what the server sends while the user thinks is read (ts_jabber's chats).
    Bidi = maps:from_list([{bidi, true} || bool(E, bidi, false, Ctx)]),
    {Kind, W, Name, {?OPTS:agent_step(Type, Ctx) ++ Steps, Bidi}, Used}.

-define(STEPS, beamscale_load_tsung_dyn:step_names()).

%% The steps inside `E' and the targets they use.
steps(E, Ctx) -> steps_of(children(E, ?STEPS, Ctx), Ctx).

%% A `<change_type>' changes the context of the steps after it, to the end of its block.
steps_of(Elements, Ctx) ->
    {Pairs, _} = lists:mapfoldl(fun(#xmlElement{name = change_type} = S, C) ->
                                        ?MID:change_type(S, C);
                                   (S, C) -> {step(S, C), C}
                                end, Ctx, Elements),
    %% A request may stand for several steps (`{steps, List}': ack="global"'s rendezvous).
    {lists:append([case S of {steps, L} -> L; _ -> [S] end || {S, _} <- Pairs]),
     lists:append([U || {_, U} <- Pairs])}.

step(#xmlElement{name = thinktime} = E, Ctx) -> {{think, think(E, Ctx)}, []};
step(#xmlElement{name = transaction} = E, Ctx) ->
    check_attrs(E, Ctx),
    {Steps, Used} = steps(E, Ctx),
    {{transaction, unicode:characters_to_binary(req(E, name, Ctx)), nonempty(Steps, E, Ctx)}, Used};
step(#xmlElement{name = N} = E, Ctx) when N =:= 'for'; N =:= repeat; N =:= 'if';
                                          N =:= setdynvars; N =:= abort; N =:= foreach ->
    beamscale_load_tsung_dyn:step(E, Ctx, fun(#xmlElement{} = P) -> steps(P, Ctx);
                                             (Els) -> steps_of(Els, Ctx)
                                          end);
step(#xmlElement{name = set_option} = E, Ctx) -> ?MID:set_option(E, Ctx);
step(#xmlElement{name = interaction} = E, Ctx) -> ?MID:interaction(E, Ctx);
step(#xmlElement{name = request} = E, Ctx) -> beamscale_load_tsung_request:request(E, Ctx).

nonempty([], E, Ctx) -> fail(E, Ctx, "<~ts> is empty", [E#xmlElement.name]);
nonempty(Steps, _E, _Ctx) -> Steps.

%% Tsung's think times are in seconds: constant, exponential (random="true") or uniform
%% (min and max); `<option name="thinktime">' sets the default, is what a bare `<thinktime/>'
%% waits, and may override them all.
think(E, #{think := Opt} = Ctx) ->
    check_attrs(E, Ctx),
    case {Opt, attr(E, value), attr(E, min)} of
        {#{override := true, dist := D}, _, _} -> D;
        %% A bare `<thinktime/>' takes the option's think time (thinks2.xml has one).
        {#{dist := D}, undefined, undefined} -> D;
        _ -> think_dist(E, maps:get(random, Opt, false), Ctx)
    end.

think_option(Opts, Ctx) ->
    case [O || O <- Opts, attr(O, name) =:= "thinktime", attr(O, type) =:= undefined] of
        [] -> #{};
        [O | _] ->
            check_attrs(O, Ctx),
            Random = bool(O, random, false, Ctx),
            #{random => Random, override => bool(O, override, false, Ctx),
              dist => think_dist(O, Random, Ctx)}
    end.

think_dist(E, DefaultRandom, Ctx) ->
    case {attr(E, min), attr(E, max), attr(E, value)} of
        {undefined, undefined, undefined} -> fail(E, Ctx, "<~ts> needs value or min and max",
                                                  [E#xmlElement.name]);
        {undefined, undefined, "%%_" ++ V} when length(V) > 2, hd(V) =/= $% ->
            [fail(E, Ctx, "value=\"%%_~ts\": expected %%_name%%", [V])
             || not lists:suffix("%%", V)],
            %% A think time taken from the user's variable, in seconds.
            How = case bool(E, random, DefaultRandom, Ctx) of
                      true -> exponential;
                      false -> constant
                  end,
            {var, lists:sublist(V, length(V) - 2), 1000, How};
        {undefined, undefined, _} ->
            Ms = non_negative(E, value, Ctx) * 1000,
            case bool(E, random, DefaultRandom, Ctx) of
                true when Ms > 0 -> {exponential, Ms};
                _ -> {constant, Ms}
            end;
        {Min, Max, undefined} when Min =/= undefined, Max =/= undefined ->
            {A, B} = {non_negative(E, min, Ctx), non_negative(E, max, Ctx)},
            [fail(E, Ctx, "min is above max", []) || A > B],
            {uniform, A * 1000, B * 1000};
        _ -> fail(E, Ctx, "give value, or min and max", [])
    end.

%% ---- monitoring ----

%% Erlang monitors name the targets to sample: a node by its full name, its name or its host,
%% a node beamscale starts by its name (alone or with a host), 127.0.0.1 or localhost. A monitor
%% of another host is a host sampled (the scenario's `monitors', docs/samples.md).
sample([], _Targets, _Ctx) -> {[], []};
sample([M], Targets, Ctx) ->
    Hosts = [req(E, host, Ctx) || E <- children(M, [monitor], Ctx),
                                  check_attrs(E, Ctx) =:= ok,
                                  attr(E, type, "erlang") =:= "erlang"],
    Found = [{H, [Name || {Name, T} <- Targets, matches(H, Name, T)]} || H <- Hosts],
    Net = [net(E, Ctx) || E <- children(M, [monitor], Ctx),
                          lists:member(attr(E, type), ["munin", "snmp"])],
    {lists:usort(lists:append([Ns || {_, Ns} <- Found])),
     [{monitors, Ms, line(M, Ctx)}
      || Ms <- [[#{host => H} || H <- lists:usort([H || {H, []} <- Found])] ++ Net],
         Ms =/= []]};
sample([_, M | _], _Targets, Ctx) -> fail(M, Ctx, "<monitoring> is given twice", []).

%% `<monitor type="munin">' (its port in `<munin port>') or `type="snmp"' (`<snmp port
%% community>'); defaults: munin-node's port, SNMP's and "public".
net(E, Ctx) ->
    Type = list_to_existing_atom(attr(E, type)),
    Opts = case children(E, [Type], Ctx) of
               [P | _] -> [{port, positive(P, port, Ctx)} || attr(P, port) =/= undefined]
                              ++ [{community, C} || C <- [attr(P, community)], C =/= undefined];
               [] -> []
           end,
    maps:from_list([{host, req(E, host, Ctx)}, {type, Type} | Opts]).

matches(Host, Name, #{start := _}) ->
    lists:member(Host, ["127.0.0.1", "localhost"]) orelse
        beamscale_load_tsung_request:node_name(Host) =:= atom_to_list(Name);
matches(Host, _Name, #{node := Node}) ->
    Text = atom_to_list(Node),
    lists:member(Host, [Text | string:split(Text, "@")]);
matches(_Host, _Name, _) -> false.
