%% @doc The sampler's host watches (docs/samples.md, "Host rows"): a host, here or on another
%% machine through a node started there over ssh, read by `beamscale_bench_hostread' every
%% interval, and its rows (the host's, one per OS process asked for) made by
%% `beamscale_host_calc'. A reading that fails makes the host `down' for the sampler.
-module(beamscale_sampler_host).

-export([key/1, label/1, read/1, rows/4]).
-export_type([watched/0]).

%% `host_watch': the host as named (the rows' node column is `host:' and it); `via': where the
%% files are read, this node or a node on that host (with `beamscale_bench_hostread' loaded);
%% `procs': the OS processes to give rows of their own.
-type watched() :: #{host_watch := binary(),
                     via := here | node() | {munin, string(), inet:port_number()}
                          | {snmp, string(), inet:port_number(), string()},
                     procs := [beamscale_bench_hostread:proc()], target => atom()}.

%% A host on another machine: a late reading gets a `timeout' row. Longer than a node's (500 ms):
%% finding processes by name reads a file of each process there (a few hundred files).
-define(READ_TIMEOUT, 2000).
%% munin-node forks a plugin per fetch: 0.1 to 1 s on a loaded host; a late answer delays the
%% other rows (the sampler skips the ticks it missed).
-define(MUNIN_TIMEOUT, 4000).
-define(SNMP_TIMEOUT, 2000).

%% @doc The sampler's key of a host watch (apart from node names).
-spec key(watched()) -> {host, binary()}.
key(#{host_watch := Host}) -> {host, Host}.

%% @doc The node column of the host's rows.
-spec label(watched()) -> binary().
label(#{host_watch := Host}) -> <<"host:", Host/binary>>.

%% @doc One reading of the host, stamped with this node's clocks (as the node rows are); a
%% munin-node's stands for the same files (`beamscale_munin').
-spec read(watched()) -> {ok, map()} | {error, timeout | down}.
read(#{via := Via, procs := Procs}) ->
    try call(Via, Procs) of
        Reading -> {ok, Reading#{mono => erlang:monotonic_time(microsecond),
                                 wall => erlang:system_time(microsecond)}}
    catch
        error:{erpc, timeout} -> {error, timeout};
        _:_ -> {error, down}
    end.

call(here, Procs) -> beamscale_bench_hostread:read(Procs);
call({munin, Host, Port}, _) -> got(beamscale_munin:read(Host, Port, ?MUNIN_TIMEOUT));
call({snmp, Host, Port, Community}, _) ->
    got(beamscale_snmp:read(Host, Port, Community, ?SNMP_TIMEOUT));
call(Node, Procs) -> erpc:call(Node, beamscale_bench_hostread, read, [Procs], ?READ_TIMEOUT).

got({ok, Reading}) -> Reading;
got({error, {_, timeout}}) -> error({erpc, timeout});
got({error, {_, {timeout, _}}}) -> error({erpc, timeout});
got({error, Why}) -> error(Why).

%% @doc The rows of the interval between two readings: the host's, then each process's.
-spec rows(watched(), beamscale_sample_calc:meta(), map(), map()) -> [[term()]].
rows(H, #{ticks := Hz} = Meta, #{mono := M0} = Prev, #{mono := M1} = Cur) ->
    Dt = max(M1 - M0, 1) / 1.0e6,
    Now = maps:with([mono, wall], Cur),
    [beamscale_sample_calc:figures_row(Meta#{node := name(H, What)}, Now, Dt, Figures)
     || {What, Figures} <- beamscale_host_calc:rows(Hz, Dt, Prev, Cur)].

name(H, host) -> label(H);
name(#{host_watch := Host}, {name, Name}) -> iolist_to_binary([Name, $@, Host]);
name(#{host_watch := Host}, {pid, Pid}) ->
    iolist_to_binary(["pid ", integer_to_list(Pid), $@, Host]);
name(#{host_watch := Host}, {pidfile, File}) -> iolist_to_binary([File, $@, Host]).
