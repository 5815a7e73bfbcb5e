%% @doc Load nodes: peers (`beamscale_node') on this host, or on each host of a list reached by
%% `ssh' (as many as it asks for), that run a share of a load run's users, with the load
%% generator's code (apps beamscale_load and beamscale_stats) loaded as binaries.
-module(beamscale_loadtest_nodes).

-export([start/2, stop/1, weights/1, sources/1, user_code/1]).

%% Load nodes share the host with the target: their idle schedulers must not spin.
-define(FLAGS, "+sbwt none +sbwtdcpu none +sbwtdio none").
%% Load nodes need this node and the targets, not each other (nodes on other hosts get the same,
%% `beamscale_node'): no full mesh by `global', whose report of failing to reach a load node
%% that died reached the user's terminal from the others.
-define(NO_MESH, " -connect_all false").
%% The applications whose code a load node gets.
-define(APPS, [beamscale_format, beamscale_stats, beamscale_load]).

%% @doc Start `N' load nodes here with this node's emulator, or those of each host through `ssh'
%% (with that host's `erl', default on its PATH), with beamscale's code and `Extra' (the user's
%% modules, `user_code/1'); on an error, those started are stopped.
-spec start(non_neg_integer() | [beamscale_load_scenario:ssh_host()], beamscale_code:code()) ->
    {ok, [beamscale_node:handle()]} | {error, term()}.
start(N, Extra) when is_integer(N) ->
    Here = #{erl => filename:join([code:root_dir(), "bin", "erl"]),
             flags => ?FLAGS ++ ?NO_MESH ++ here(),
             schedulers => erlang:system_info(logical_processors)},
    start_all(lists:duplicate(N, Here), Extra);
start(Hosts, Extra) ->
    start_all([#{erl => maps:get(erl, H, "erl"), flags => ?FLAGS,
                 ssh => maps:with([host, args, user], H)}
               || H <- Hosts, _ <- lists:seq(1, maps:get(nodes, H, 1))], Extra).

%% No object code read for no node (a local load): `code/0' reads ~100 modules.
start_all([], _Extra) -> {ok, []};
start_all(Specs, Extra) -> start(Specs, code() ++ Extra, []).

%% @doc The object code of the user's modules a scenario calls (Tsung's `%%module:function%%',
%% `setvars' `{erlang, Module, Function}'), read here where the scenario was checked: the load
%% nodes run them as Tsung's clients do the modules put in their path. OTP's and beamscale's
%% own are there already.
-spec user_code(beamscale_load_scenario:scenario()) -> beamscale_code:code().
user_code(Scenario) ->
    Ours = beamscale_code:modules(?APPS),
    [{M, F, B} || M <- lists:usort(called(maps:get(sessions, Scenario))),
                  not lists:member(M, Ours), not otp(code:which(M)),
                  {_, B, F} <- [code:get_object_code(M)]].

called({call, {M, F}}) when is_atom(M), is_atom(F) -> [M];
called({erlang, M, F}) when is_atom(M), is_atom(F) -> [M];
called(T) when is_tuple(T) -> called(tuple_to_list(T));
called(T) when is_map(T) -> called(maps:to_list(T));
called([H | T]) -> called(H) ++ called(T);
called(_) -> [].

otp(Path) when is_list(Path) -> lists:prefix(code:lib_dir(), Path);
otp(_) -> true.

%% A node here has the port limit of this one (the file limit or more): a user with a socket
%% takes a port, so twice as many processes are room enough for them and the node's own. The
%% default (262 144) takes 2.3 MiB more of every load node (measured, base RSS 39 MiB); one dirty
%% I/O scheduler per scheduler rather than 10 takes 1.2 MiB less (users do no file I/O).
here() ->
    lists:flatten(io_lib:format(" +P ~b +SDio ~b", [2 * erlang:system_info(port_limit),
                                                    erlang:system_info(schedulers)])).

%% @doc The share of the arrivals of each load node `start/2' starts, in its order: a host's
%% weight split evenly over its nodes.
-spec weights(non_neg_integer() | [beamscale_load_scenario:ssh_host()]) -> [number()].
weights(N) when is_integer(N) -> lists:duplicate(N, 1);
weights(Hosts) ->
    [W / Nodes || #{weight := W, nodes := Nodes} <- Hosts, _ <- lists:seq(1, Nodes)].

%% @doc The source addresses of each load node `start/2' starts, in its order: its host's own
%% (`<ip>'s of a Tsung client on that host), else `default' (the scenario's).
-spec sources(non_neg_integer() | [beamscale_load_scenario:ssh_host()]) ->
    [default | [beamscale_load_source:source()]].
sources(N) when is_integer(N) -> lists:duplicate(N, default);
sources(Hosts) ->
    [maps:get(source_ips, H, default) || #{nodes := Nodes} = H <- Hosts, _ <- lists:seq(1, Nodes)].

start([], _Code, Acc) -> {ok, lists:reverse(Acc)};
start([Spec | More], Code, Acc) ->
    case beamscale_node:start("load" ++ integer_to_list(length(More) + 1), Spec) of
        {ok, #{node := Node} = H} ->
            case beamscale_code:load(Node, Code) of
                ok -> start(More, Code, [H | Acc]);
                {error, _} = Error -> stop([H | Acc]), Error
            end;
        {error, Reason} ->
            stop(Acc),
            {error, Reason}
    end.

%% @doc Stop load nodes (killed by OS pid if they do not go).
-spec stop([beamscale_node:handle()]) -> ok.
stop(Handles) -> lists:foreach(fun beamscale_node:stop/1, Handles).

code() -> beamscale_code:apps(?APPS).
