%% @doc The hosts a load run samples (docs/samples.md, "Host rows"): the scenario's `monitors'
%% and the host of each `host:port' target named in its `sample' list. A host that is this one
%% is read here; another through a node started on it over ssh, as load nodes are (nothing there
%% but ssh and `erl'), with `beamscale_bench_hostread' sent to it.
-module(beamscale_loadtest_hosts).

-export([start/2, stop/1, is_local/1]).

%% The reading node shares the host it watches: its idle schedulers must not spin.
-define(FLAGS, "+sbwt none +sbwtdcpu none +sbwtdio none +S 1").
-define(READER, beamscale_bench_hostread).

%% @doc The host watches for the sampler, the nodes started for them (to `stop/1' after the run)
%% and a note for each host that could not be reached.
-spec start(beamscale_load_scenario:scenario(), #{atom() => map()}) ->
    {[beamscale_sampler_host:watched()], [beamscale_node:handle()],
     [#{target := binary(), reason := binary()}]}.
start(Scenario, Targets) ->
    lists:foldr(fun(M, {Ws, Ns, Notes}) ->
                        case watch(M) of
                            {ok, W, none} -> {[W | Ws], Ns, Notes};
                            {ok, W, Node} -> {[W | Ws], [Node | Ns], Notes};
                            {error, Why} ->
                                {Ws, Ns, [#{target => text(maps:get(host, M)),
                                            reason => text(Why)} | Notes]}
                        end
                end, {[], [], []}, monitors(Scenario, Targets)).

%% @doc Stop the reading nodes (killed by OS pid, on their host, if they do not go).
-spec stop([beamscale_node:handle()]) -> ok.
stop(Nodes) -> lists:foreach(fun beamscale_node:stop/1, Nodes).

%% @doc Whether a host name or address is this host's.
-spec is_local(string()) -> boolean().
is_local(Host) ->
    {ok, Me} = inet:gethostname(),
    lists:member(Host, ["127.0.0.1", "localhost", "::1", Me, net_adm:localhost()]).

%% The monitors, then the sampled host:port targets' hosts not monitored already.
monitors(#{sample := Sample} = Scenario, Targets) ->
    Ms = maps:get(monitors, Scenario, []),
    Given = [H || #{host := H} <- Ms],
    Hosts = lists:usort([H || {Name, #{host := H}} <- maps:to_list(Targets),
                              lists:member(Name, Sample), not lists:member(H, Given)]),
    Ms ++ [beamscale_load_scenario_monitor:host(H) || H <- Hosts].

watch(#{host := Host, type := munin, port := Port}) ->
    {ok, #{host_watch => text(Host), via => {munin, Host, Port}, procs => []}, none};
watch(#{host := Host, type := snmp, port := Port, community := Community}) ->
    {ok, #{host_watch => text(Host), via => {snmp, Host, Port, Community}, procs => []}, none};
watch(#{host := Host, processes := Procs, ssh := Ssh, erl := Erl}) ->
    W = #{host_watch => text(Host), via => here, procs => Procs},
    case Ssh =:= none andalso is_local(Host) of
        true -> {ok, W, none};
        false ->
            Spec = #{erl => Erl, flags => ?FLAGS, schedulers => 1,
                     ssh => (case Ssh of none -> #{args => []}; _ -> Ssh end)#{host => Host}},
            case beamscale_node:start("watch", Spec) of
                {ok, #{node := Node} = H} ->
                    case beamscale_code:ensure(Node, ?READER) of
                        ok -> {ok, W#{via := Node}, H};
                        {error, Why} -> beamscale_node:stop(H), {error, Why}
                    end;
                {error, Why} -> {error, Why}
            end
    end.

text(T) when is_binary(T) -> T;
text(T) when is_list(T) -> unicode:characters_to_binary(T);
text(T) -> unicode:characters_to_binary(beamscale_error:format(T)).
