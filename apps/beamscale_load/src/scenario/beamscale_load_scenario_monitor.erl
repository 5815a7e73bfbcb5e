%% @doc A scenario's `monitors' key checked: the hosts whose CPU, memory, load, network and disk
%% are sampled during a load, and OS processes on them (docs/samples.md, "Host rows"). Tsung's
%% `<monitor type="erlang">' of a host that is no Erlang target is one. Part of
%% `beamscale_load_scenario''s checks: a wrong value throws `{bad, Path, Message}'.
-module(beamscale_load_scenario_monitor).

-export([check/1, host/1]).
-export_type([monitor/0, proc/0]).

%% An OS process: its command name, pid or pid file (`beamscale_bench_hostread' reads them).
-type proc() :: {pid, pos_integer()} | {pidfile, string()} | {name, string()}.
%% `ssh': `none' reads the host's /proc here (a host that is this one, named with no ssh
%% options); else a node started on it through ssh reads it, as load nodes are started.
%% `munin': read from munin-node on `port' (default 4949) of the host; `snmp': from its SNMP
%% agent on `port' (default 161) with `community' (default "public").
-type monitor() :: #{host := string(), type := erlang | munin | snmp,
                     port => inet:port_number(), community => string(),
                     processes := [proc()],
                     ssh := none | #{args := [string()], user => string()}, erl := string()}.

-define(KEYS, [host, type, processes, args, user, erl, port, community]).
-define(PORTS, #{munin => 4949, snmp => 161}).
%% More is a typing error: each process named is a row every interval.
-define(MAX_PROCS, 64).

%% @doc The list of monitors.
-spec check(term()) -> [monitor()].
check(L) when is_list(L) ->
    Ms = [monitor(M) || M <- L],
    Hosts = [H || #{host := H} <- Ms],
    [bad([], "host " ++ H ++ " is given twice") || H <- Hosts -- lists:usort(Hosts)],
    Ms;
check(_) ->
    bad([], "expected a list of #{host => \"HOST\", processes => [...]} (docs/samples.md)").

%% @doc A monitor of a host with defaults: its host only, read here or through plain ssh.
-spec host(string()) -> monitor().
host(Host) -> #{host => Host, type => erlang, processes => [], ssh => none, erl => "erl"}.

monitor(#{host := Host} = M) ->
    is_text(Host) orelse bad([host], "expected a host name or address"),
    [bad([], io_lib:format("~ts: unknown key ~0tp (known: ~s)", [Host, K, keys()]))
     || K <- maps:keys(M), not lists:member(K, ?KEYS)],
    Type = maps:get(type, M, erlang),
    lists:member(Type, [erlang, munin, snmp])
        orelse bad([type], Host ++ ": expected erlang (the host sampler), munin or snmp"),
    Port = maps:get(port, M, maps:get(Type, ?PORTS, none)),
    Type =/= erlang andalso is_integer(Port) andalso Port > 0 andalso Port < 65536
        orelse Type =:= erlang andalso not is_map_key(port, M)
        orelse bad([port], Host ++ ": expected a port number, for munin or snmp only"),
    Community = maps:get(community, M, "public"),
    Type =:= snmp andalso is_text(Community) orelse not is_map_key(community, M)
        orelse bad([community], Host ++ ": expected a community name, for snmp only"),
    Procs = maps:get(processes, M, []),
    is_list(Procs) andalso length(Procs) =< ?MAX_PROCS
        orelse bad([processes], io_lib:format("~ts: expected a list of at most ~b processes",
                                              [Host, ?MAX_PROCS])),
    Args = maps:get(args, M, []),
    is_list(Args) andalso lists:all(fun is_text/1, Args)
        orelse bad([args], Host ++ ": expected a list of strings (ssh options)"),
    [bad([K], Host ++ ": expected a string not starting with -")
     || K <- [user, erl], is_map_key(K, M),
        not is_text(maps:get(K, M)) orelse hd(maps:get(K, M)) =:= $-],
    Ssh = case maps:is_key(args, M) orelse maps:is_key(user, M) of
              false -> none;
              true -> (maps:with([user], M))#{args => Args}
          end,
    Net = case Type of
              munin -> #{port => Port};
              snmp -> #{port => Port, community => Community};
              erlang -> #{}
          end,
    maps:merge(Net, (host(Host))#{type := Type, processes := [proc(Host, P) || P <- Procs],
                                    ssh := Ssh, erl := maps:get(erl, M, "erl")});
monitor(_) -> bad([], "expected #{host => \"HOST\", ...}").

%% A command name ("nginx"), `{pid, N}' or `{pidfile, "/run/x.pid"}'.
proc(Host, P) ->
    case P of
        {pid, N} when is_integer(N), N > 0 -> P;
        {pidfile, F} -> is_text(F) orelse bad_proc(Host, P), P;
        Name -> is_text(Name) andalso not lists:member($/, Name) orelse bad_proc(Host, P),
                {name, Name}
    end.

-spec bad_proc(string(), term()) -> no_return().
bad_proc(Host, P) ->
    bad([processes], io_lib:format("~ts: ~0tp: expected a command name, {pid, N} or "
                                   "{pidfile, \"FILE\"}", [Host, P])).

keys() -> lists:join(", ", [atom_to_list(K) || K <- ?KEYS]).

is_text(S) -> io_lib:printable_unicode_list(S) andalso S =/= "".

-spec bad([term()], iodata()) -> no_return().
bad(Path, Msg) -> throw({bad, Path, Msg}).
