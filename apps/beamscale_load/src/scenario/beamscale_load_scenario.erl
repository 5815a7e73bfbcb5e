%% @doc Load scenarios: an Erlang-terms file (docs/scenario.md) read, validated and normalised.
%% Defaults are filled in here; every wrong value is an error naming file, line and key.
-module(beamscale_load_scenario).

-export([load/1, check/2, duration_s/1, limit_s/2, phase_at/2, format_error/1, kinds/0]).
-export_type([ssh_host/0, scenario/0, target/0, phase/0, session/0, step/0]).

-type target() :: #{node := node(), cookie => atom()}
                | #{start := #{erl := string(), flags := string(), code_path := [string()],
                               init => {module(), atom(), list()}}}
                | #{dir := string(), max_reply_bytes => pos_integer()}
                | #{host := string(), port := inet:port_number(),
                    tls => [ssl:tls_client_option()], transport => tcp | udp,
                    max_reply_bytes => pos_integer(), connect_timeout_ms => pos_integer(),
                    recbuf => pos_integer(), sndbuf => pos_integer(),
                    max_retries => 0..100, retry_timeout_ms => pos_integer(),
                    ports => {1025..65535, 1025..65535}}.
-type phase() :: #{name := atom(), duration_s := number(), rate := float(),
                   max_users := pos_integer() | infinity,
                   users_at => [{number(), atom() | binary()}],
                   sessions => [{atom() | binary(), number()}],
                   wait_sessions_end => true,
                   executor => beamscale_load_scenario_exec:executor()}.
-type step() :: {request, module(), atom(), map(), timeout()}
              | {think, beamscale_load_arrival:dist()}
              | {loop, pos_integer(), [step()]}
              | {transaction, atom() | binary(), [step()]}
              | {dyn, beamscale_load_dynreq:dyn(), {request, module(), atom(), map(), timeout()}}
              | {named, binary(), step()}
              | {tagged, [binary()], step()}
              | {setvars, beamscale_load_vars_source:source(), [binary()]}
              | {'if', beamscale_load_vars:cond_(), [step()]}
              | {repeat, pos_integer(), [step()], {while | until, beamscale_load_vars:cond_()}}
              | {for, binary(), integer(), integer(), pos_integer(), [step()]}
              | {foreach, binary(), binary(), {list(), list()}, [step()]}
              | {rendezvous, binary(), pos_integer(), pos_integer()}
              | {wait, module(), atom(), pos_integer()}
              | {abort, session | all}
              | {set_option, map()}
              | {interaction, send | 'receive', atom() | binary()}
              | {disconnect, module()}
              | {code, module(), atom(), list()}.
-type session() :: #{name := atom() | binary(), weight := number(), steps := [step()],
                     bidi => boolean()}.
-type scenario() :: #{file := string(), targets := #{atom() => target()},
                      phases := [phase()], sessions := [session()], drain_s := number(),
                      time_limit_s := number(), transactions := [atom() | binary()],
                      sample := [atom()], load_nodes := non_neg_integer() | [ssh_host()],
                      files := #{binary() => [binary()]}, counts := [binary()],
                      source_ips := [beamscale_load_source:source()],
                      slo => beamscale_stats_slo:slo(), dump => non_neg_integer(),
                      thresholds => [beamscale_stats_threshold:threshold()],
                      monitors => [beamscale_load_scenario_monitor:monitor()],
                      warnings => [binary()], seed => integer(),
                      scenarios => [{atom(), [session()]}]}.
%% A load node's host, reached by `ssh' with these options before the destination, as `user'
%% (default: ours), running `erl' (default: the one on that host's PATH); `nodes' load nodes
%% there, the host's share of the arrivals `weight' over the sum of the hosts' weights, and
%% the source addresses of its users (`source_ips', else the scenario's).
-type ssh_host() :: #{host := string(), args := [string()], user => string(), erl => string(),
                      nodes := pos_integer(), weight := number(),
                      source_ips => [beamscale_load_source:source()]}.

-define(DEFAULT_DRAIN_S, 10).
%% The longest wait `receive ... after' takes (ms): durations, timeouts and think times beyond it
%% cannot be waited for, so they are refused when the file is read.
-define(MAX_MS, 4294967295).
%% Users per second in one phase: far above what one load generator starts (about 10^4/s on
%% this host); more is a typo, and would make the arrival schedule of one second unbounded.
-define(MAX_RATE, 1.0e6).
%% The fewest: one user in the longest wait. Below it a gap (-ln U / rate) overflows a float
%% (5.0e-324 made the arrival process fail with badarith).
-define(MIN_RATE, (1000 / ?MAX_MS)).
-define(STEPS, beamscale_load_scenario_steps).
-define(KEYS, [targets, phases, scenarios, sessions, drain_s, time_limit_s, sample, load_nodes, slo,
               files, source_ips, monitors, thresholds]).

%% @doc The request kinds built in: the step name and the module behind it
%% (`beamscale_load_kinds').
-spec kinds() -> #{atom() => module()}.
kinds() -> maps:from_list([{M:name(), M} || M <- beamscale_load_kinds:all()]).

%% @doc Read and validate a scenario file.
-spec load(file:filename()) -> {ok, scenario()} | {error, {?MODULE, term()}}.
load(File) ->
    case beamscale_load_bounded:text(File) of
        {ok, Text} ->
            %% Parsed and checked in a process of its own, bounded in heap and time (a term
            %% nested a million deep, a huge list): no file can grow or hang the node.
            case beamscale_load_bounded:run(fun() -> parse(File, Text) end, [beamscale_load]) of
                {error, {beamscale_load_bounded, _} = Why} ->
                    {error, {?MODULE, {File, 1, [], beamscale_load_bounded:format_error(Why)}}};
                Result -> Result
            end;
        {error, {Line, Msg}} -> {error, {?MODULE, {File, Line, [], Msg}}}
    end.

parse(File, Text) ->
    case beamscale_format_terms:parse(Text) of
        {ok, Entries} -> check(File, Entries);
        {error, {Line, Msg}} -> {error, {?MODULE, {File, Line, [], Msg}}}
    end.

%% @doc Validate parsed entries (from `beamscale_format_terms') of the file `File'.
-spec check(file:filename(), [beamscale_format_terms:entry()]) ->
    {ok, scenario()} | {error, {?MODULE, term()}}.
check(File, Entries) ->
    try
        [throw({E, [], "unknown key (known: " ++ keys_text() ++ ")"})
         || #{key := K} = E <- Entries, not lists:member(K, ?KEYS)],
        Get = fun(K) -> entry(File, Entries, K) end,
        Targets = with(Get(targets), fun targets/1),
        Sessions = with(Get(sessions), fun(S) -> sessions(S, Targets) end),
        {Shape, Phases, Many} = shape(Get(phases), Get(scenarios), Sessions),
        _ = with(Get(sessions), fun(_) -> beamscale_load_tags:bound(
                                            Sessions ++ lists:append([S || {_, S} <- Many]))
                                end),
        ok = with(Shape, fun(_) -> beamscale_load_scenario_mix:check(Phases, Sessions) end),
        Files = with_default(Get(files), #{},
                             fun(F) -> beamscale_load_scenario_dyn:files(F, File) end),
        ok = with(Get(sessions),
                  fun(_) -> beamscale_load_scenario_dyn:check_files(Sessions, Files) end),
        Drain = with_default(Get(drain_s), ?DEFAULT_DRAIN_S, fun seconds/1),
        Limit = with_default(Get(time_limit_s),
                             limit_s(#{phases => Phases, scenarios => Many}, Drain),
                             fun seconds/1),
        ok = with(Shape, fun(_) -> starts(Phases, Limit) end),
        Sample = with_default(Get(sample), default_sample(Targets),
                              fun(S) -> sample(S, Targets) end),
        LoadNodes = with_default(Get(load_nodes), 0,
                                 fun beamscale_load_scenario_where:load_nodes/1),
        Sources = with_default(Get(source_ips), [], fun beamscale_load_source:check/1),
        Monitors = with_default(Get(monitors), [], fun beamscale_load_scenario_monitor:check/1),
        %% `saturate''s objective (docs/saturate.md); `load' does not use it.
        Slo = with_default(Get(slo), #{}, fun(S) -> #{slo => slo(S)} end),
        Ths = with_default(Get(thresholds), [], fun thresholds/1),
        {ok, Slo#{thresholds => Ths, scenarios => Many,
                  file => File, targets => Targets, phases => Phases, sessions => Sessions,
                  drain_s => Drain, time_limit_s => Limit,
                  transactions => lists:usort(transactions(Sessions)
                                              ++ element(2, measures(Sessions))),
                  sample => Sample, load_nodes => LoadNodes, files => Files,
                  source_ips => Sources, monitors => Monitors,
                  counts => beamscale_load_scenario_dyn:count_keys(Sessions)
                      ++ beamscale_load_scenario_exec:count_keys(Phases)
                      ++ element(1, measures(Sessions))
                      ++ [beamscale_load_push:count_key()
                          || lists:member(true, [B || #{bidi := B} <- Sessions])]}}
    catch
        throw:{Entry, Path, Msg} -> {error, {?MODULE, where(File, Entry, Path, Msg)}}
    end.

%% @doc One line for an error: `FILE:LINE: key K.SUB: message'.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({File, Line, Path, Msg}) ->
    Key = case Path of
              [] -> "";
              _ -> ["key ", lists:join(".", [io_lib:format("~0tp", [K]) || K <- Path]), ": "]
          end,
    io_lib:format("~ts:~b: ~ts~ts", [File, Line, Key, Msg]).

%% @doc The scenario's length in seconds (phases only, without the drain); of several
%% scenarios, until the last one ends.
-spec duration_s(#{phases := [phase()], scenarios => list(), atom() => term()}) -> number().
duration_s(#{phases := Phases, scenarios := [_ | _]}) ->
    beamscale_load_scenario_many:end_s(Phases);
duration_s(#{phases := Phases}) -> lists:sum([D || #{duration_s := D} <- Phases]).

%% @doc The default hard limit: the phases, and a drain after the last one and after each
%% phase that waits for its users' end (`wait_sessions_end') before the next starts.
-spec limit_s(#{phases := [phase()], scenarios => list(), atom() => term()}, number()) ->
    number().
limit_s(#{phases := Phases} = Sc, Drain) ->
    Waits = case Phases of
                [] -> 0;
                _ -> length([W || #{wait_sessions_end := W} <- lists:droplast(Phases)])
            end,
    duration_s(Sc) + Drain * (1 + Waits).

%% @doc The phase running `T' seconds after the start, or `drain' after the last one. In a run
%% of several scenarios, there is no one phase: those running then, their names joined by `+'
%% (`none' in a gap between them), their rates summed, as one.
-spec phase_at(scenario(), number()) -> phase() | #{name := binary(), rate := float(),
                                                    scenarios := [phase()]} | drain.
phase_at(#{scenarios := [_ | _], phases := Phases} = Sc, T) ->
    case {beamscale_load_scenario_many:running(Phases, T), T >= duration_s(Sc)} of
        {[], true} -> drain;
        {Now, _} -> #{name => iolist_to_binary(lists:join("+", [atom_to_binary(N)
                                                             || #{name := N} <- Now] ++
                                                                [<<"none">> || Now =:= []])),
                      rate => lists:sum([R || #{rate := R} <- Now]) + 0.0, scenarios => Now}
    end;
phase_at(#{phases := Phases}, T) -> phase_at(Phases, T, 0).

phase_at([], _T, _From) -> drain;
phase_at([#{duration_s := D} = P | Rest], T, From) ->
    case T < From + D of
        true -> P;
        false -> phase_at(Rest, T, From + D)
    end.

keys_text() -> lists:join(", ", [atom_to_list(K) || K <- ?KEYS]).

entry(File, Entries, Key) ->
    case [E || #{key := K} = E <- Entries, K =:= Key] of
        [E] -> E;
        [] -> {missing, Key, File};
        [_, E | _] -> throw({E, [], "given twice"})
    end.

%% Run a check on an entry's value; its `{bad, Path, Msg}' throws become file:line errors.
with({missing, Key, _}, _Check) -> throw({none, [Key], "missing"});
with(#{value := V, key := K} = E, Check) ->
    try Check(V)
    catch throw:{bad, Path, Msg} -> throw({E, [K | Path], Msg})
    end.

with_default({missing, _, _}, Default, _Check) -> Default;
with_default(E, _Default, Check) -> with(E, Check).

%% A key missing from the file is said at its line 1 (no line is 0); an entry's own error names
%% its key (an unknown key, one given twice).
where(File, none, Path, Msg) -> {File, 1, Path, Msg};
where(File, Entry, [_ | Sub] = Path, Msg) ->
    {File, beamscale_format_terms:line(Entry, Sub), Path, Msg};
where(File, #{line := L, key := K}, [], Msg) -> {File, L, [K], Msg}.

-spec bad([term()], string()) -> no_return().
bad(Path, Msg) -> throw({bad, Path, Msg}).

%% Each `{Name, Value}' of a list, checked with `Fun(Name, Value)', errors under `Name'.
%% Names are atoms; a session's may also be a binary (Tsung's, kept out of the atom table).
named(List, What, Fun) -> named(List, What, Fun, fun is_atom/1).

named(List, What, Fun, IsName) when is_list(List), List =/= [] ->
    [case Item of
         {Name, V} when is_atom(Name); is_binary(Name) ->
             IsName(Name) orelse bad([], "expected a list of {Name, " ++ What ++ "}"),
             ?STEPS:shown([Name], Name),
             try Fun(Name, V)
             catch throw:{bad, Path, Msg} -> bad([Name | Path], Msg)
             end;
         _ -> bad([], "expected a list of {Name, " ++ What ++ "}")
     end || Item <- List];
named(_, What, _, _) -> bad([], "expected a non-empty list of {Name, " ++ What ++ "}").

slo(V) ->
    case beamscale_stats_slo:parse(V) of
        {ok, Slo} -> Slo;
        {error, Msg} -> bad([], Msg)
    end.

%% `load''s pass or fail (docs/thresholds.md): a list of expressions, each named by its place.
thresholds(V) when is_list(V) ->
    case lists:all(fun io_lib:printable_unicode_list/1, V)
             andalso beamscale_stats_threshold:parse_list(V) of
        {ok, Ths} -> Ths;
        false -> bad([], "expected a list of strings such as [\"p95<300ms\"]");
        {error, {I, Msg}} -> bad([], io_lib:format("threshold ~b, ~0tp: ~ts",
                                                   [I, lists:nth(I, V), Msg]))
    end;
thresholds(_) -> bad([], "expected a list of strings such as [\"p95<300ms\"]").

targets(V) ->
    maps:from_list(named(V, "Target",
                         fun(N, T) -> {N, beamscale_load_scenario_where:target(T)} end)).

only(Map, Keys) ->
    [bad([K], "unknown key (known: " ++ lists:join(", ", [atom_to_list(X) || X <- Keys]) ++ ")")
     || K <- maps:keys(Map), not lists:member(K, Keys)],
    ok.

phases(V) -> named(V, "Phase", fun phase/2).

%% `phases' (one after another) or `scenarios' (side by side), not both: the entry checks are
%% made under, the phases, and each scenario's sessions (none for phases).
shape({missing, _, _}, {missing, _, _}, _Sessions) -> throw({none, [phases], "missing"});
shape(Ph, {missing, _, _}, _Sessions) -> {Ph, with(Ph, fun phases/1), []};
shape({missing, _, _}, Many, Sessions) ->
    {Phases, Tagged} = with(Many, fun(V) -> beamscale_load_scenario_many:check(V, fun phase/2,
                                                                                Sessions)
                                  end),
    {Many, Phases, Tagged};
shape(_Ph, Many, _Sessions) -> throw({Many, [], "give phases or scenarios, not both"}).

%% A scenario that would start when the run's time limit has passed never runs.
starts(Phases, Limit) ->
    [bad([N, start_s], io_lib:format("~w s is not before the time limit, ~w s", [S, Limit]))
     || #{name := N, start_s := S} <- Phases, S >= Limit],
    ok.

%% A k6 executor's phase (docs/executors.md).
phase(Name, #{executor := _} = P) -> beamscale_load_scenario_exec:phase(Name, P);
phase(Name, #{duration_s := D} = P) when is_number(D), D > 0, D =< ?MAX_MS / 1000 ->
    only(P, [duration_s, rate, interarrival_ms, max_users, sessions, users_at,
             wait_sessions_end]),
    At = maps:from_list([{users_at, beamscale_load_scenario_mix:users_at(A, D)}
                         || A <- [maps:get(users_at, P, none)], A =/= none]),
    Rate = case P of
               #{rate := R, interarrival_ms := _} when R =/= none ->
                   bad([rate], "give rate or interarrival_ms, not both");
               #{rate := R} when is_number(R), R >= ?MIN_RATE, R =< ?MAX_RATE -> float(R);
               #{interarrival_ms := I} when is_number(I), I >= 1000 / ?MAX_RATE,
                                            I =< ?MAX_MS -> 1000 / I;
               #{rate := _} -> bad([rate], io_lib:format("expected users per second from ~g (one "
                                                         "per 2^32-1 ms) to ~b",
                                                         [?MIN_RATE, round(?MAX_RATE)]));
               #{interarrival_ms := _} ->
                   bad([interarrival_ms], io_lib:format("expected ms from ~g to ~b",
                                                        [1000 / ?MAX_RATE, ?MAX_MS]));
               %% Only users at fixed times (Tsung's `<user>').
               #{users_at := _} -> 0.0;
               _ -> bad([], "needs rate (users/s), interarrival_ms or users_at")
           end,
    Max = case maps:get(max_users, P, infinity) of
              infinity -> infinity;
              N when is_integer(N), N > 0 -> N;
              _ -> bad([max_users], "expected a positive integer or infinity")
          end,
    Mix = maps:from_list([{sessions, beamscale_load_scenario_mix:phase(M)}
                          || M <- [maps:get(sessions, P, none)], M =/= none]),
    maps:merge(maps:merge(Mix, wait_sessions_end(P)),
               At#{name => Name, duration_s => D, rate => Rate, max_users => Max});
phase(_Name, _) -> bad([duration_s], max_s_text("a positive number of seconds")).

%% Tsung's `wait_all_sessions_end': the next phase starts once this one's users are done.
wait_sessions_end(P) ->
    case maps:get(wait_sessions_end, P, false) of
        W when is_boolean(W) -> maps:from_list([{wait_sessions_end, true} || W]);
        _ -> bad([wait_sessions_end], "expected true or false")
    end.

max_s_text(What) ->
    io_lib:format("expected ~ts, at most ~b (2^32-1 ms)", [What, ?MAX_MS div 1000]).

sessions(V, Targets) ->
    named(V, "#{weight => W, steps => [...]}",
          fun(Name, S) when is_map(S) ->
                  only(S, [weight, steps, bidi, tags]),
                  Bidi = case maps:get(bidi, S, false) of
                             B when is_boolean(B) -> #{bidi => B};
                             _ -> bad([bidi], "expected true or false")
                         end,
                  W = case maps:get(weight, S, 1) of
                          X when is_number(X), X >= 0 -> X;
                          _ -> bad([weight], "expected a number, 0 or more (0: only in "
                                             "the phases that name it)")
                      end,
                  Tags = beamscale_load_tags:check(maps:get(tags, S, #{}), [tags]),
                  Steps = ?STEPS:steps(maps:get(steps, S, []), Targets),
                  Bidi#{name => Name, weight => W,
                        steps => beamscale_load_tags:inherit(Tags, Steps)};
             (_, _) -> bad([], "expected #{weight => W, steps => [...]}")
          end, fun(N) -> is_atom(N) orelse is_binary(N) end).

%% The counts and histograms of the kinds the sessions use that declare some (`measures/0').
measures(Sessions) ->
    Used = lists:usort([M || #{steps := Steps} <- Sessions, S <- beamscale_load_steps:all(Steps),
                             M <- [kind_of(S)], M =/= none,
                             {module, _} <- [code:ensure_loaded(M)],
                             erlang:function_exported(M, measures, 0)]),
    {lists:append([element(1, M:measures()) || M <- Used]),
     lists:append([element(2, M:measures()) || M <- Used])}.

kind_of({request, Mod, _, _, _}) -> Mod;
kind_of({dyn, _, {request, Mod, _, _, _}}) -> Mod;
kind_of(_) -> none.

transactions(Sessions) ->
    [N || #{steps := Steps} <- Sessions, S <- beamscale_load_steps:all(Steps),
          N <- case S of
                   {transaction, Name, _} -> [Name];
                   {interaction, _, Name} -> [Name];
                   _ -> []
               end].

%% Every node target (started or existing) is sampled unless the scenario says which.
default_sample(Targets) ->
    lists:sort([N || {N, T} <- maps:to_list(Targets), not is_map_key(host, T),
                     not is_map_key(dir, T)]).

sample(L, Targets) when is_list(L) ->
    [bad([], io_lib:format("unknown target ~0tp", [N])) || N <- L, not is_map_key(N, Targets)],
    lists:usort(L);
sample(_, _) -> bad([], "expected a list of target names").

seconds(S) when is_number(S), S >= 0, S =< ?MAX_MS / 1000 -> S;
seconds(_) -> bad([], max_s_text("a number of seconds")).
