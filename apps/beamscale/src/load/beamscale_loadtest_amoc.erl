%% @doc `beamscale load --amoc FILE': an amoc scenario module (docs/amoc.md) as a load. The file
%% is compiled and loaded on the node the users run on (this one), its required variables
%% settled (`--set', `AMOC_*', defaults, verifications) and its `init/0' run before any user
%% starts; then a load whose users each run its `start/2' (or `start/1') once with their own
%% id, arriving one every 1/RATE s (amoc's `interarrival'), and `terminate' after the last.
-module(beamscale_loadtest_amoc).

-export([read/2, default_rate/0, format_error/1]).

%% A scenario module's source, at most.
-define(MAX_SOURCE_BYTES, 4 * 1024 * 1024).
%% amoc's default gap between two users (`AMOC_INTERARRIVAL', ms).
-define(DEFAULT_INTERARRIVAL_MS, 50).
%% How long users may go on after the last has arrived (`ctl stop' ends them sooner).
-define(DRAIN_S, 60).
%% As many users as a phase may start at fixed times (beamscale_load_scenario_mix).
-define(MAX_USERS, 100000).
-define(MAX_LOAD_NODES, 64).
%% How long a load node's init/0 may take, and its terminate.
-define(INIT_TIMEOUT_MS, 300000).
%% What the load nodes' terminate said, for the closing `Finish' (the nodes are gone by then).
-define(TERMINATED, {?MODULE, terminated}).
%% The load nodes of the run (for its figures and `ctl throttle').
-define(NODES, {?MODULE, nodes}).

%% @doc The load of the amoc scenario `File' with `--users', `--rate', `--set', `--amoc-helper'
%% and `--load-nodes' of `Opts', the function to call once it ends (the scenario's
%% `terminate'), and the load's options it needs. Without load nodes the scenario's `init/0'
%% has run here when this returns `{ok, ...}'; with them, it runs on each once they are up
%% (`on_load_nodes' of beamscale_loadtest), compiled there. On an error nothing runs.
-spec read(file:filename(), map()) ->
    {ok, beamscale_load_scenario:scenario(), fun(() -> ok | {error, term()}),
     beamscale_loadtest:opts() | #{}}
    | {error, term()}.
read(_File, #{load_nodes := N}) when not is_integer(N); N < 0; N > ?MAX_LOAD_NODES ->
    {error, {?MODULE, {bad_load_nodes, N}}};
read(File, #{load_nodes := N} = Opts) when N > 0 ->
    case [F || F <- [File | maps:get(amoc_helpers, Opts, [])], filename:extension(F) =:= ".ex"] of
        [] -> maybe_start(File, users(Opts), rate(Opts), Opts);
        [Ex | _] -> {error, {?MODULE, {elixir_on_load_nodes, Ex}}}
    end;
read(File, Opts) ->
    maybe_start(File, users(Opts), rate(Opts), Opts).

maybe_start(_File, {error, _} = E, _Rate, _Opts) -> E;
maybe_start(_File, _Users, {error, _} = E, _Opts) -> E;
maybe_start(File, {ok, Users}, {ok, Rate}, Opts) ->
    %% The helpers first: the scenario's module may call them from its attributes' funs.
    Helpers = maps:get(amoc_helpers, Opts, []),
    %% `amoc:do/3': the scenario's module is the caller's, loaded already (and left loaded).
    Compiled = case Opts of
                   #{amoc_module := Kept} -> kept(compile_all(Helpers, []), Kept);
                   #{} -> compile_all(Helpers ++ [File], [])
               end,
    case Compiled of
        {ok, Mods, Owned} ->
            Mod = lists:last(Mods),
            case scenario_module(Mod) andalso configured(Mods, maps:get(set, Opts, [])) of
                {ok, Config, Observe} ->
                    started(Helpers ++ [File], {Mod, Owned}, {Config, Observe}, {Users, Rate},
                            maps:get(load_nodes, Opts, 0));
                false ->
                    unload(Owned), {error, {?MODULE, {not_a_scenario, File, Mod}}};
                {error, R} -> unload(Owned), {error, {?MODULE, {in, File, R}}}
            end;
        {error, _} = E -> E
    end.

kept({ok, Mods, Owned}, Kept) -> {ok, Mods ++ [Kept], Owned};
kept(Error, _Kept) -> Error.

compile_all([], Mods) -> {ok, lists:reverse(Mods), Mods};
compile_all([F | Files], Mods) ->
    case compiled(F) of
        {ok, M} -> compile_all(Files, [M | Mods]);
        {error, _} = E -> unload(Mods), E
    end.

users(#{users := N}) when is_integer(N), N >= 1, N =< ?MAX_USERS -> {ok, N};
users(#{users := N}) -> {error, {?MODULE, {bad_users, N}}};
users(_) -> {error, {?MODULE, no_users}}.

%% --rate users/s, else amoc's AMOC_INTERARRIVAL (ms between two users), else 50 ms.
rate(#{rate := R}) when R > 0, R =< 1.0e6 -> {ok, R};
rate(#{rate := R}) -> {error, {?MODULE, {bad_rate, R}}};
rate(_) ->
    case os:getenv("AMOC_INTERARRIVAL") of
        Text when is_list(Text), Text =/= "" ->
            case string:to_integer(Text) of
                {Ms, ""} when Ms > 0 -> {ok, 1000 / Ms};
                {0, ""} -> {ok, 1.0e6};
                _ -> {error, {?MODULE, {bad_interarrival, Text}}}
            end;
        _ -> {ok, default_rate()}
    end.

%% @doc Users started per second without `--rate' or `AMOC_INTERARRIVAL' (amoc's default).
-spec default_rate() -> float().
default_rate() -> 1000 / ?DEFAULT_INTERARRIVAL_MS.

%% Compiled here and loaded here: this node runs the users. A module that exists already (one
%% of OTP's or beamscale's) is refused, not replaced.
compiled(File) ->
    case {beamscale_format_file:read(File, ?MAX_SOURCE_BYTES), filename:extension(File)} of
        {{ok, _}, ".ex"} -> elixir(File);
        {{ok, _}, _} ->
            case compile:file(File, [binary, return_errors, {i, filename:dirname(File)}]) of
                {ok, Mod, Bin} -> loaded(File, Mod, Bin);
                {error, Errors, _} -> {error, {beamscale_code, {compile, File, Errors}}}
            end;
        {{error, {_, Why}}, _} -> {error, {?MODULE, {read, File, Why}}}
    end.

%% An Elixir module (its `@required_variable' attributes persisted, as amoc asks) compiled here
%% by Elixir's compiler, its libraries added to this node's path. The module it defines first
%% is the one that must not exist already.
elixir(File) ->
    case beamscale_elixir:module_of(File) of
        default -> {error, {?MODULE, {no_defmodule, File}}};
        {ok, Mod} ->
            case {code:which(Mod), beamscale_elixir:lib(none)} of
                {non_existing, {ok, Globs}} ->
                    {ok, Dirs} = beamscale_code:expand_path(Globs),
                    ok = code:add_pathsz(Dirs),
                    case beamscale_elixir:compile_files(node(), [File]) of
                        ok -> {ok, Mod};
                        {error, _} = E -> E
                    end;
                {non_existing, {error, _} = E} -> E;
                _ -> {error, {?MODULE, {module_exists, File, Mod}}}
            end
    end.

loaded(File, Mod, Bin) ->
    case code:which(Mod) of
        non_existing ->
            {module, Mod} = code:load_binary(Mod, File, Bin),
            {ok, Mod};
        _ -> {error, {?MODULE, {module_exists, File, Mod}}}
    end.

%% As amoc's check: init/0, and start/2 or start/1.
scenario_module(Mod) ->
    erlang:function_exported(Mod, init, 0) andalso
        (erlang:function_exported(Mod, start, 2) orelse erlang:function_exported(Mod, start, 1)).

unload(Mods) ->
    _ = [{code:purge(M), code:delete(M)} || M <- Mods],
    ok.

%% The settings of the scenario (the last module) and its helpers, and its own timings' names.
configured(Mods, Sets) ->
    Mod = lists:last(Mods),
    Observe = lists:append([as_list(V) || {beamscale_observe, V} <- Mod:module_info(attributes)]),
    case lists:all(fun is_atom/1, Observe) of
        false -> {error, {?MODULE, {bad_observe, Mod}}};
        true ->
            case beamscale_amoc_vars:params([Mod | lists:droplast(Mods)]) of
                {ok, Params} ->
                    case beamscale_amoc_vars:resolve(Params, Sets, fun os:getenv/1) of
                        {ok, Config} -> {ok, Config, lists:usort(Observe)};
                        {error, _} = E -> E
                    end;
                {error, _} = E -> E
            end
    end.

as_list(L) when is_list(L) -> L;
as_list(V) -> [V].

started(Files, {Mod, Mods}, {Config, Observe}, {Users, Rate}, 0) ->
    File = lists:last(Files),
    case beamscale_amoc_node:start(Mod, Config, Observe) of
        ok ->
            {ok, S} = scenario(File, Mod, {Users, Rate}, 0, Observe),
            {ok, S, fun() -> try beamscale_amoc_node:stop() after unload(Mods) end end,
             #{summary_extra => fun() -> figures([node()]) end,
               throttle => fun(Name, PerS) -> throttle([node()], Name, PerS) end}};
        {error, R} -> unload(Mods), {error, {?MODULE, {in, File, R}}}
    end;
started(Files, {Mod, Mods}, Settled, {Users, Rate}, N) ->
    File = lists:last(Files),
    {ok, S} = scenario(File, Mod, {Users, Rate}, N, element(2, Settled)),
    Finish = fun() ->
                     unload(Mods),
                     Said = persistent_term:get(?TERMINATED, ok),
                     _ = persistent_term:erase(?TERMINATED),
                     Said
             end,
    {ok, S, Finish, #{on_load_nodes => fun(Nodes) -> on_nodes(Files, Mod, Settled, Nodes) end,
                      summary_extra => fun() -> figures(persistent_term:get(?NODES, [])) end,
                      throttle => fun(Name, PerS) ->
                                          throttle(persistent_term:get(?NODES, []), Name, PerS)
                                  end}}.

%% `ctl throttle NAME RATE': the throttle's rate (per second over all the nodes) on each node,
%% which takes its share as at start. A name no node has is refused (no atom made of it).
throttle(Nodes, Name, Rate) ->
    Running = lists:usort(lists:append([maps:keys(F) || F <- throttles(Nodes)])),
    case [N || N <- Running, atom_to_binary(N) =:= Name] of
        [] -> {error, io_lib:format("no throttle ~ts (the scenario's: ~ts)",
                                    [Name, lists:join(", ", [atom_to_list(N) || N <- Running])])};
        [Atom] ->
            %% amoc's rate per interval: R/s to a thousandth.
            Config = #{rate => max(1, round(Rate * 1000)), interval => 1000000},
            Said = [remote_rate(Node, Atom, Config) || Node <- Nodes],
            case [E || {error, _} = E <- Said] of
                [] -> {ok, io_lib:format("throttle ~ts: ~ts events/s from now", [Name,
                              beamscale_format_float:decimal(float(Rate))])};
                [{error, R} | _] -> {error, io_lib:format("throttle ~ts: ~0tp", [Name, R])}
            end
    end.

remote_rate(Node, Name, Config) ->
    try erpc:call(Node, amoc_throttle, change_rate, [Name, Config], 5000)
    catch _:R -> {error, R}
    end.

%% The throttles' figures of each node (one that does not answer left out) and the run's
%% coordinators' (here), for summary.json: the users are done, terminate is yet to run.
figures(Nodes) ->
    #{amoc => beamscale_amoc_figures:summary(throttles(Nodes),
                                             beamscale_amoc_coordinator:figures())}.

throttles(Nodes) ->
    [try erpc:call(Node, beamscale_amoc_throttle, figures, [], 5000)
     catch _:_ -> #{}
     end || Node <- Nodes].

%% Each load node gets the amoc app, the files compiled by its own compiler and the settings,
%% and runs init/0 as node I of N; the first that fails undoes those before it. The run's
%% coordinators are here, the one node every load node reaches: one for all their users.
on_nodes(Files, Mod, {Config, Observe}, Nodes) ->
    N = length(Nodes),
    Code = beamscale_code:apps([beamscale_amoc]),
    {ok, _} = beamscale_amoc_server:start(beamscale_amoc_coordinator),
    persistent_term:put(?NODES, Nodes),
    Up = fun({I, Node}) ->
                 ok = ok_or_throw(Node, beamscale_code:load(Node, Code)),
                 [ok = ok_or_throw(Node, beamscale_code:compile_load(Node, F)) || F <- Files],
                 ok = ok_or_throw(Node, remote(Node, start,
                                               [Mod, Config, Observe, {I, N}, node()]))
         end,
    try
        lists:foreach(Up, lists:enumerate(Nodes)),
        {ok, fun() -> persistent_term:put(?TERMINATED, stop_all(Nodes)) end}
    catch throw:{on_node, Node, R} ->
        _ = stop_all(lists:takewhile(fun(X) -> X =/= Node end, Nodes)),
        {error, {?MODULE, {in, lists:last(Files), {?MODULE, {on_node, Node, R}}}}}
    end.

%% Each node's terminate (the first error said), then the run's coordinators.
stop_all(Nodes) ->
    Said = case [E || Node <- Nodes, {error, _} = E <- [remote(Node, stop, [])]] of
               [] -> ok;
               [E | _] -> E
           end,
    ok = beamscale_amoc_server:stop(beamscale_amoc_coordinator),
    _ = persistent_term:erase(?NODES),
    Said.

ok_or_throw(_Node, ok) -> ok;
ok_or_throw(Node, {error, R}) -> throw({on_node, Node, R}).

remote(Node, F, Args) ->
    try erpc:call(Node, beamscale_amoc_node, F, Args, ?INIT_TIMEOUT_MS)
    catch error:{erpc, R} -> {error, {?MODULE, {erpc, Node, R}}};
          Class:R -> {error, {?MODULE, {erpc, Node, {Class, R}}}}
    end.

%% One session of one step, the user's code (beamscale_amoc_user), against the scenario's
%% directory (a target that needs no server: the terms reader wants one); each user at its
%% fixed time. The reader checks a think in its place.
scenario(File, Mod, {Users, Rate}, LoadNodes, Observe) ->
    At = [{I / Rate, amoc} || I <- lists:seq(0, Users - 1)],
    Text = io_lib:format(
             "{targets, [{amoc, #{dir => ~0tp}}]}.~n"
             "{phases, [{amoc, #{duration_s => ~w, users_at => ~w}}]}.~n"
             "{sessions, [{amoc, #{steps => [{think, 0}]}}]}.~n"
             "{drain_s, ~b}.~n{sample, []}.~n{load_nodes, ~b}.~n",
             [filename:absname(filename:dirname(File)), Users / Rate, At, ?DRAIN_S, LoadNodes]),
    {ok, Entries} = beamscale_format_terms:parse(lists:flatten(Text)),
    {ok, #{sessions := [Session]} = S} = beamscale_load_scenario:check(File, Entries),
    Arity = case erlang:function_exported(Mod, start, 2) of
                true -> 2;
                false -> 1
            end,
    Code = {code, beamscale_amoc_user, run, [Mod, Arity]},
    {ok, S#{sessions := [Session#{steps := [Code]}],
            transactions := lists:usort(maps:get(transactions, S) ++ Observe)}}.

%% @doc One line for an error of this module.
-spec format_error(term()) -> iodata().
format_error({in, File, R}) -> [File, ": ", beamscale_error:format(R)];
format_error({on_node, Node, R}) ->
    io_lib:format("load node ~ts: ~ts", [Node, beamscale_error:format(R)]);
format_error({erpc, Node, R}) -> io_lib:format("~ts did not answer: ~0tp", [Node, R]);
format_error({bad_load_nodes, N}) ->
    io_lib:format("option --load-nodes: ~0tp is not a number from 0 to ~b", [N, ?MAX_LOAD_NODES]);
format_error(no_users) -> "option --amoc: give --users N (how many users run the scenario)";
format_error({bad_users, N}) ->
    io_lib:format("option --users: ~0tp is not a number of users from 1 to ~b", [N, ?MAX_USERS]);
format_error({bad_rate, R}) ->
    io_lib:format("option --rate: ~0tp is not a rate of users/s above 0", [R]);
format_error({bad_interarrival, Text}) ->
    io_lib:format("AMOC_INTERARRIVAL=~ts: expected milliseconds (an integer)", [Text]);
format_error({read, File, Why}) ->
    [File, ": ", beamscale_format_file:format_error({beamscale_format_file, Why})];
format_error({not_a_scenario, File, Mod}) ->
    io_lib:format("~ts: module ~ts is no amoc scenario: it exports no init/0, or neither "
                  "start/2 nor start/1", [File, Mod]);
format_error({module_exists, File, Mod}) ->
    io_lib:format("~ts: module ~ts is a module of OTP or beamscale already: rename it",
                  [File, Mod]);
format_error({no_defmodule, File}) ->
    io_lib:format("~ts: no defmodule found (an Elixir scenario defines its module first)",
                  [File]);
format_error({elixir_on_load_nodes, File}) ->
    io_lib:format("~ts: Elixir scenarios run in beamscale's own node only, not yet with "
                  "--load-nodes", [File]);
format_error({bad_observe, Mod}) ->
    io_lib:format("~ts: -beamscale_observe: expected a list of atoms", [Mod]).
