%% @doc Turns two readings of a node under test into one row of `samples.csv' (docs/samples.md).
%% Pure: the sampler reads `/proc' and the node's counters, this module parses and subtracts.
%%
%% Units: `os_cpu_pct', `sched_cpu_pct' and `busy_wait_pct' are % of one core (a node busy on two
%% cores shows 200); the `_all_pct' columns are % of all the host's cores; `util_*_pct' are the
%% mean utilisation of the schedulers of one type (0-100); `msacc_TYPE_STATE' is the share of the
%% time of that type's threads spent in that state.
-module(beamscale_sample_calc).

-export([columns/0, id_columns/0, parse_pid_stat/1, parse_host_stat/1, row/3, status_row/3,
         figures_row/4,
         utilisation/3, msacc/2, lcnt_top/2]).
-export_type([meta/0, reading/0]).

%% What a row says about where it comes from, and what is needed to scale the counters.
-type meta() :: #{bench := binary(), env := binary(), args := binary(), node := binary(),
                  t0 := integer(), cores := pos_integer(), ticks := pos_integer(),
                  schedulers := pos_integer(), dirty_cpu := non_neg_integer()}.
%% One reading: monotonic and system time (µs), the OS process's CPU ticks, the host's busy and
%% total ticks, and the node's counters (`beamscale_bench_probe:read/0').
-type reading() :: #{mono := integer(), wall := integer(),
                     proc := {non_neg_integer(), non_neg_integer()},
                     host := {non_neg_integer(), non_neg_integer()},
                     vm := beamscale_bench_probe:reading()}.

-define(MSACC_TYPES, [{scheduler, sched}, {dirty_cpu_scheduler, dcpu},
                      {dirty_io_scheduler, dio}, {poll, poll}, {aux, aux}, {async, async}]).
-define(MSACC_STATES, [emulator, gc, port, check_io, aux, other, sleep]).
-define(MEMORY, [total, processes, system, atom, binary, code, ets]).

%% @doc The columns identifying a row.
-spec id_columns() -> [atom()].
id_columns() ->
    [benchmark, env, args, node, time, t_s, interval_s, status].

%% @doc Every column of `samples.csv', in order.
-spec columns() -> [atom()].
columns() ->
    id_columns() ++
        [os_cpu_user_pct, os_cpu_sys_pct, os_cpu_pct, os_cpu_all_pct, host_cpu_pct,
         util_pct, util_dirty_cpu_pct, util_dirty_io_pct, sched_cpu_pct, busy_wait_pct,
         busy_wait_all_pct, run_queue, run_queue_dirty_cpu, run_queue_dirty_io, processes,
         ports]
        ++ [list_to_atom("mem_" ++ atom_to_list(M)) || M <- ?MEMORY]
        ++ [io_in_bytes, io_out_bytes]
        ++ [msacc_column(Short, S) || {_, Short} <- ?MSACC_TYPES, S <- ?MSACC_STATES]
        ++ host_columns().

%% The columns of host and OS process rows (`beamscale_host_calc'), after the node rows'.
host_columns() ->
    [list_to_atom("cpu_" ++ atom_to_list(M) ++ "_pct")
     || M <- [user, nice, system, idle, iowait, irq, softirq, steal]]
        ++ [host_mem_total, host_mem_available, host_mem_used, load1, load5, load15,
            net_rx_bytes, net_tx_bytes, disk_read_bytes, disk_write_bytes, pids, rss_bytes].

%% @doc User and system CPU ticks of a process, from the text of `/proc/PID/stat'.
-spec parse_pid_stat(binary()) -> {ok, {non_neg_integer(), non_neg_integer()}} | error.
parse_pid_stat(Bin) ->
    %% The command name may hold spaces and parentheses: fields are counted after its last ')'.
    case string:split(Bin, <<")">>, trailing) of
        [_, After] ->
            case string:lexemes(After, " \n") of
                [_State | Rest] when length(Rest) >= 13 ->
                    ints(lists:sublist(Rest, 11, 2), fun([U, S]) -> {U, S} end);
                _ -> error
            end;
        _ -> error
    end.

%% @doc Busy and total CPU ticks of the whole host, from the text of `/proc/stat'.
-spec parse_host_stat(binary()) -> {ok, {non_neg_integer(), non_neg_integer()}} | error.
parse_host_stat(<<"cpu ", Rest/binary>>) ->
    [Line | _] = binary:split(Rest, <<"\n">>),
    %% user nice system idle iowait irq softirq steal; guest time is already in user.
    case string:lexemes(Line, " ") of
        Fields when length(Fields) >= 8 ->
            ints(lists:sublist(Fields, 8),
                 fun([_, _, _, Idle, IoWait | _] = T) ->
                         Total = lists:sum(T),
                         {Total - Idle - IoWait, Total}
                 end);
        _ -> error
    end;
parse_host_stat(_) -> error.

%% @doc The row for the interval between two readings of one node.
-spec row(meta(), reading(), reading()) -> [term()].
row(Meta, #{mono := M0} = Prev, #{mono := M1} = Cur) ->
    Dt = max(M1 - M0, 1) / 1.0e6,
    {User, Sys} = os_cpu(Meta, Prev, Cur, Dt),
    fields(lists:foldl(fun maps:merge/2, ids(Meta, Cur, Dt, ok),
                       [cpu(Meta, {User, Sys}, Prev, Cur), sched(Meta, User + Sys, Prev, Cur),
                        counters(Meta, maps:get(vm, Prev), maps:get(vm, Cur))])).

%% @doc A row with no figures, saying what became of the node (`down', `timeout').
-spec status_row(meta(), #{mono := integer(), wall := integer()}, atom()) -> [term()].
status_row(Meta, Now, Status) ->
    fields(ids(Meta, Now, 0.0, Status)).

%% @doc An `ok' row of figures computed elsewhere (a host's or an OS process's,
%% `beamscale_host_calc'), for the interval of `Dt' seconds ending at `Now'.
-spec figures_row(meta(), #{mono := integer(), wall := integer()}, float(), map()) -> [term()].
figures_row(Meta, Now, Dt, Figures) ->
    fields(maps:merge(Figures, ids(Meta, Now, Dt, ok))).

%% @doc Mean utilisation (%) of normal, dirty CPU and dirty IO schedulers between two
%% `scheduler_wall_time_all' readings, and the busy time of normal and dirty CPU schedulers in
%% % of one core.
-spec utilisation(list(), list(), {pos_integer(), non_neg_integer()}) ->
    {float(), float(), float(), float()}.
utilisation(Prev, Cur, {N, Dcpu}) ->
    Deltas = [{Id, A1 - A0, T1 - T0} || {Id, A1, T1} <- lists:sort(Cur),
                                        {Id0, A0, T0} <- [lists:keyfind(Id, 1, Prev)],
                                        Id0 =:= Id],
    {Normal, Rest} = lists:partition(fun({Id, _, _}) -> Id =< N end, Deltas),
    {Dirty, Io} = lists:partition(fun({Id, _, _}) -> Id =< N + Dcpu end, Rest),
    Busy = lists:sum([share(A, T) || {_, A, T} <- Normal ++ Dirty]),
    {util(Normal), util(Dirty), util(Io), 100 * Busy}.

%% @doc Share (%) of each state in the time of each thread type between two microstate
%% accounting readings, keyed by `{Type, State}'. A type that counted no time (msacc was off
%% all the interval) has no shares: its columns stay empty rather than read 0.
-spec msacc([map()], [map()]) -> #{{atom(), atom()} => float()}.
msacc(Prev, Cur) ->
    Delta = maps:fold(fun(K, V, Acc) -> Acc#{K => V - maps:get(K, sums(Prev), 0)} end,
                      #{}, sums(Cur)),
    Totals = maps:fold(fun({T, _}, V, Acc) -> maps:update_with(T, fun(X) -> X + V end, V, Acc)
                       end, #{}, Delta),
    maps:fold(fun({T, _} = K, V, Acc) ->
                      case maps:get(T, Totals) of
                          0 -> Acc;
                          Total -> Acc#{K => 100 * share(V, Total)}
                      end
              end, #{}, Delta).

%% @doc The `Top' lock classes with most collisions in `erts_debug:lcnt_collect/0' data, as
%% `{Name, Tries, Collisions, WaitMicroseconds}'.
-spec lcnt_top(term(), pos_integer()) ->
    [{binary(), non_neg_integer(), non_neg_integer(), non_neg_integer()}].
lcnt_top(Data, Top) ->
    Locks = proplists:get_value(locks, Data, []),
    Sums = lists:foldl(fun({Name, _Id, _Type, Stats}, Acc) ->
                               lists:foldl(fun(S, A) -> add_lock(Name, S, A) end, Acc, Stats)
                       end, #{}, Locks),
    Sorted = lists:sort(fun({_, _, C1, _}, {_, _, C2, _}) -> C1 >= C2 end,
                        [{to_bin(N), T, C, W} || {N, {T, C, W}} <- maps:to_list(Sums)]),
    lists:sublist(Sorted, Top).

%%% Internals

ids(#{bench := B, env := E, args := A, node := N, t0 := T0}, #{mono := M, wall := W}, Dt,
    Status) ->
    Time = calendar:system_time_to_rfc3339(W div 1000, [{unit, millisecond}, {offset, "Z"}]),
    #{benchmark => B, env => E, args => A, node => N, time => Time,
      t_s => round3((M - T0) / 1.0e6), interval_s => round3(Dt), status => Status}.

os_cpu(#{ticks := Hz}, #{proc := {U0, S0}}, #{proc := {U1, S1}}, Dt) ->
    {100 * (U1 - U0) / Hz / Dt, 100 * (S1 - S0) / Hz / Dt}.

cpu(#{cores := Cores}, {User, Sys}, #{host := {B0, T0}}, #{host := {B1, T1}}) ->
    #{os_cpu_user_pct => round2(User), os_cpu_sys_pct => round2(Sys),
      os_cpu_pct => round2(User + Sys), os_cpu_all_pct => round2((User + Sys) / Cores),
      host_cpu_pct => round2(100 * share(B1 - B0, T1 - T0))}.

%% Busy-wait: CPU the OS gave the node beyond what its schedulers spent working.
sched(#{schedulers := N, dirty_cpu := D, cores := Cores}, Os, #{vm := #{swt := S0}},
      #{vm := #{swt := S1}}) when is_list(S0), is_list(S1) ->
    {Util, UtilD, UtilIo, Busy} = utilisation(S0, S1, {N, D}),
    #{util_pct => round2(Util), util_dirty_cpu_pct => round2(UtilD),
      util_dirty_io_pct => round2(UtilIo), sched_cpu_pct => round2(Busy),
      busy_wait_pct => round2(Os - Busy), busy_wait_all_pct => round2((Os - Busy) / Cores)};
sched(_Meta, _Os, _Prev, _Cur) -> #{}.

counters(#{schedulers := N}, V0, #{run_queues := Rq, io := {In1, Out1}} = V1) ->
    {Normal, Dirty} = lists:split(N, Rq),
    {In0, Out0} = maps:get(io, V0),
    Mem = maps:get(memory, V1),
    maps:merge(
      #{run_queue => lists:sum(Normal), run_queue_dirty_cpu => nth(1, Dirty),
        run_queue_dirty_io => nth(2, Dirty), processes => maps:get(processes, V1),
        ports => maps:get(ports, V1), io_in_bytes => In1 - In0, io_out_bytes => Out1 - Out0},
      maps:merge(maps:from_list([{list_to_atom("mem_" ++ atom_to_list(K)),
                                  proplists:get_value(K, Mem, 0)} || K <- ?MEMORY]),
                 msacc_fields(maps:get(msacc, V0), maps:get(msacc, V1)))).

msacc_fields(M0, M1) when is_list(M0), is_list(M1) ->
    Shares = msacc(M0, M1),
    maps:from_list([{msacc_column(Short, S), round2(maps:get({T, S}, Shares, 0.0))}
                    || {T, Short} <- ?MSACC_TYPES, is_map_key({T, sleep}, Shares),
                       S <- ?MSACC_STATES]);
msacc_fields(_, _) -> #{}.

sums(Threads) ->
    lists:foldl(fun(#{type := T, counters := C}, Acc) ->
                        maps:fold(fun(S, V, A) ->
                                          maps:update_with({T, S}, fun(X) -> X + V end, V, A)
                                  end, Acc, C)
                end, #{}, Threads).

add_lock(Name, {_Where, {Tries, Colls, {S, Ns, _N}}, _Hist}, Acc) ->
    add_lock(Name, {_Where, {Tries, Colls, {S, Ns, _N}}}, Acc);
add_lock(Name, {_Where, {Tries, Colls, {S, Ns, _N}}}, Acc) ->
    Wait = S * 1000000 + Ns div 1000,
    maps:update_with(Name, fun({T, C, W}) -> {T + Tries, C + Colls, W + Wait} end,
                     {Tries, Colls, Wait}, Acc);
add_lock(_Name, _Other, Acc) -> Acc.

msacc_column(Short, State) ->
    list_to_atom("msacc_" ++ atom_to_list(Short) ++ "_" ++ atom_to_list(State)).

fields(Map) -> [maps:get(C, Map, <<>>) || C <- columns()].

util([]) -> 0.0;
util(Deltas) -> 100 * share(lists:sum([A || {_, A, _} <- Deltas]),
                            lists:sum([T || {_, _, T} <- Deltas])).

share(_, 0) -> 0.0;
share(Part, Whole) -> Part / Whole.

nth(I, L) when length(L) >= I -> lists:nth(I, L);
nth(_, _) -> <<>>.

ints(Texts, Make) ->
    try {ok, Make([binary_to_integer(T) || T <- Texts])}
    catch error:badarg -> error
    end.

to_bin(A) when is_atom(A) -> atom_to_binary(A);
to_bin(B) when is_binary(B) -> B;
to_bin(L) when is_list(L) -> unicode:characters_to_binary(L);
to_bin(T) -> iolist_to_binary(io_lib:format("~0p", [T])).

round2(X) -> round(X * 100) / 100.
round3(X) -> round(X * 1000) / 1000.
