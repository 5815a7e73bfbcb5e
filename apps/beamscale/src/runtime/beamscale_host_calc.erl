%% @doc Turns two readings of a host (`beamscale_bench_hostread:read/1') into rows of
%% `samples.csv' (docs/samples.md, "Host rows"): one for the host (CPU by mode, memory, load,
%% network and disk bytes) and one per OS process asked for (CPU and resident memory of all its
%% pids). Pure: the text of `/proc' in, figures out, keyed by the columns
%% `beamscale_sample_calc:columns/0' lists.
-module(beamscale_host_calc).

-export([rows/4, cpu_modes/1, meminfo/1, loadavg/1, netdev/1, diskstats/1,
         pid_stat/1, rss/1]).

-define(MODES, [user, nice, system, idle, iowait, irq, softirq, steal]).
%% /proc/diskstats counts 512-byte sectors whatever the device's own sector size.
-define(SECTOR, 512).

%% @doc The figures of the interval between two readings: `{host, Map}' and one
%% `{Proc, Map}' per process asked for, keyed by the columns of `samples.csv'.
-spec rows(pos_integer(), float(), beamscale_bench_hostread:reading(),
           beamscale_bench_hostread:reading()) -> [{host | term(), map()}].
rows(Hz, Dt, #{files := F0, procs := P0}, #{files := F1, procs := P1}) ->
    {Cores, Cpu0} = cpu_modes(maps:get(stat, F0)),
    {_, Cpu1} = cpu_modes(maps:get(stat, F1)),
    Host = maps:merge(cpu(cpu_shares(Cpu0, Cpu1), Cores), host(F0, F1)),
    HostPct = maps:get(host_cpu_pct, Host, <<>>),
    [{host, Host}
     | [{P, proc(Hz, Dt, Cores, HostPct, proplists:get_value(P, P0, []), Texts)}
        || {P, Texts} <- P1]].

%% No CPU ticks counted (no reading of them: a munin-node without its cpu plugin): no figures.
cpu(Shares, _Cores) when map_size(Shares) =:= 0 -> #{};
cpu(Shares, Cores) ->
    Pct = fun(M) -> 100 * maps:get(M, Shares, 0.0) end,
    User = Pct(user) + Pct(nice),
    Sys = Pct(system),
    maps:merge(
      maps:from_list([{mode_column(M), r2(Pct(M))} || M <- ?MODES]),
      #{os_cpu_user_pct => r2(User * Cores), os_cpu_sys_pct => r2(Sys * Cores),
        os_cpu_pct => r2((User + Sys) * Cores), os_cpu_all_pct => r2(User + Sys),
        host_cpu_pct => r2(100 - Pct(idle) - Pct(iowait))}).

host(F0, F1) ->
    %% Bytes during the interval (not per second), as the node rows' io_*_bytes.
    {Rx, Tx} = delta(netdev, F0, F1),
    {Rd, Wr} = delta(diskstats, F0, F1),
    Mem = meminfo(maps:get(meminfo, F1)),
    {L1, L5, L15} = loadavg(maps:get(loadavg, F1)),
    #{host_mem_total => maps:get(total, Mem, <<>>),
      host_mem_available => maps:get(available, Mem, <<>>),
      host_mem_used => used(Mem), load1 => L1, load5 => L5, load15 => L15,
      net_rx_bytes => Rx, net_tx_bytes => Tx, disk_read_bytes => Rd, disk_write_bytes => Wr}.

%% No file (munin-node's reading has none): no figures rather than 0.
delta(Key, F0, F1) ->
    case maps:get(Key, F1) of
        <<>> -> {<<>>, <<>>};
        Text ->
            {A0, B0} = ?MODULE:Key(maps:get(Key, F0)),
            {A1, B1} = ?MODULE:Key(Text),
            %% A counter that went back (an interface or disk gone) counts nothing.
            {max(0, A1 - A0), max(0, B1 - B0)}
    end.

used(#{total := T, available := A}) -> T - A;
used(_) -> <<>>.

%% A process's pids now against before: a pid seen before counts its ticks since; a new one all
%% its ticks (it started within the interval).
proc(Hz, Dt, Cores, HostPct, Before, Texts) ->
    Prev = maps:from_list([{Pid, T} || {S, _} <- Before, {ok, Pid, T} <- [pid_stat(S)]]),
    Now = [{Pid, T, rss(Status)} || {S, Status} <- Texts, {ok, Pid, T} <- [pid_stat(S)]],
    {U, S} = lists:foldl(fun({Pid, {U1, S1}, _}, {UA, SA}) ->
                                 {U0, S0} = maps:get(Pid, Prev, {0, 0}),
                                 {UA + max(0, U1 - U0), SA + max(0, S1 - S0)}
                         end, {0, 0}, Now),
    UserPct = 100 * U / Hz / Dt,
    SysPct = 100 * S / Hz / Dt,
    #{os_cpu_user_pct => r2(UserPct), os_cpu_sys_pct => r2(SysPct),
      os_cpu_pct => r2(UserPct + SysPct), os_cpu_all_pct => r2((UserPct + SysPct) / Cores),
      host_cpu_pct => HostPct, pids => length(Now),
      rss_bytes => lists:sum([R || {_, _, R} <- Now])}.

%% @doc The logical cores (`cpuN' lines) and the ticks of each mode of the `cpu' line of
%% `/proc/stat'.
-spec cpu_modes(binary()) -> {pos_integer(), #{atom() => non_neg_integer()}}.
cpu_modes(Text) ->
    Lines = binary:split(Text, <<"\n">>, [global]),
    Cores = length([L || <<"cpu", D, _/binary>> = L <- Lines, D >= $0, D =< $9]),
    Ticks = case [L || <<"cpu ", L/binary>> <- Lines] of
                [L | _] -> ints(string:lexemes(L, " "));
                [] -> []
            end,
    {max(1, Cores), maps:from_list(lists:zip(lists:sublist(?MODES, length(Ticks)),
                                             lists:sublist(Ticks, length(?MODES))))}.

cpu_shares(C0, C1) ->
    D = maps:map(fun(M, V) -> max(0, V - maps:get(M, C0, 0)) end, C1),
    case lists:sum(maps:values(D)) of
        0 -> #{};
        Total -> maps:map(fun(_, V) -> V / Total end, D)
    end.

%% @doc `MemTotal' and `MemAvailable' of `/proc/meminfo', in bytes.
-spec meminfo(binary()) -> #{total => non_neg_integer(), available => non_neg_integer()}.
meminfo(Text) ->
    Keys = #{<<"MemTotal">> => total, <<"MemAvailable">> => available},
    maps:from_list([{maps:get(K, Keys), 1024 * N}
                    || Line <- binary:split(Text, <<"\n">>, [global]),
                       [K, Rest] <- [binary:split(Line, <<":">>)], is_map_key(K, Keys),
                       [N] <- [ints(lists:sublist(string:lexemes(Rest, " "), 1))]]).

%% @doc The three load averages of `/proc/loadavg'; one that is not a number (munin-node
%% gives one of them, `beamscale_munin') is empty.
-spec loadavg(binary()) -> {number() | <<>>, number() | <<>>, number() | <<>>}.
loadavg(Text) ->
    Words = lists:sublist(string:lexemes(Text, " \n") ++ [<<>>, <<>>, <<>>], 3),
    list_to_tuple([case beamscale_format_csv:number(W) of
                       N when is_number(N) -> N;
                       _ -> <<>>
                   end || W <- Words]).

%% @doc Bytes received and sent, summed over the interfaces of `/proc/net/dev' (loopback
%% included: a server on this host is loaded through it).
-spec netdev(binary()) -> {non_neg_integer(), non_neg_integer()}.
netdev(Text) ->
    Pairs = [{lists:nth(1, F), lists:nth(9, F)}
             || Line <- binary:split(Text, <<"\n">>, [global]),
                [_, Rest] <- [binary:split(Line, <<":">>)],
                F <- [ints(string:lexemes(Rest, " "))], length(F) >= 16],
    {lists:sum([R || {R, _} <- Pairs]), lists:sum([T || {_, T} <- Pairs])}.

%% @doc Bytes read and written, summed over the whole disks of `/proc/diskstats': partitions
%% (a name that extends a listed disk's), device-mapper, loop and RAM devices are left out, as
%% their bytes are a disk's already.
-spec diskstats(binary()) -> {non_neg_integer(), non_neg_integer()}.
diskstats(Text) ->
    Devs = [{Name, ints(Rest)}
            || Line <- binary:split(Text, <<"\n">>, [global]),
               [_Major, _Minor, Name | Rest] <- [string:lexemes(Line, " ")], length(Rest) >= 7],
    Names = [N || {N, _} <- Devs],
    Disks = [F || {N, F} <- Devs, not virtual(N), length(F) >= 7,
                  not lists:any(fun(D) -> D =/= N andalso prefix(D, N) end, Names)],
    {?SECTOR * lists:sum([lists:nth(3, F) || F <- Disks]),
     ?SECTOR * lists:sum([lists:nth(7, F) || F <- Disks])}.

virtual(<<"loop", _/binary>>) -> true;
virtual(<<"ram", _/binary>>) -> true;
virtual(<<"dm-", _/binary>>) -> true;
virtual(<<"zram", _/binary>>) -> true;
virtual(_) -> false.

prefix(D, N) -> binary:longest_common_prefix([D, N]) =:= byte_size(D).

%% @doc The pid and the user and system CPU ticks of `/proc/PID/stat'.
-spec pid_stat(binary()) -> {ok, binary(), {non_neg_integer(), non_neg_integer()}} | error.
pid_stat(Text) ->
    [Pid | _] = binary:split(Text, <<" ">>),
    case beamscale_sample_calc:parse_pid_stat(Text) of
        {ok, Ticks} -> {ok, Pid, Ticks};
        error -> error
    end.

%% @doc Resident memory (`VmRSS' of `/proc/PID/status') in bytes; 0 for a zombie.
-spec rss(binary()) -> non_neg_integer().
rss(Status) ->
    case re:run(Status, "^VmRSS:\\s+(\\d+)", [multiline, {capture, [1], binary}]) of
        {match, [Kb]} -> 1024 * binary_to_integer(Kb);
        nomatch -> 0
    end.

mode_column(M) -> list_to_atom("cpu_" ++ atom_to_list(M) ++ "_pct").

ints(Words) ->
    try [binary_to_integer(W) || W <- Words]
    catch error:badarg -> []
    end.

r2(X) -> round(X * 100) / 100.
