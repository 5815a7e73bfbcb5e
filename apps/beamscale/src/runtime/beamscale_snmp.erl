%% @doc Tsung's `<monitor type="snmp">': a host read through OTP's SNMP manager (`snmpm', SNMP
%% v2c, a read-only community) from the UCD-SNMP-MIB objects net-snmp's snmpd serves (numeric
%% OIDs: no MIB file needed): raw CPU ticks by mode, the load averages and memory, turned into
%% the text of the `/proc' files `beamscale_host_calc' reads, so its rows are a host's rows.
%% The manager is started in this node at the first use, its files in a fresh directory.
-module(beamscale_snmp).

-export([read/4, format_error/1]).

-define(USER, beamscale).
-define(DIR_PREFIX, "beamscale-snmpm-").
-define(UCD, [1, 3, 6, 1, 4, 1, 2021]).
%% ssCpuRaw*: user nice system idle wait, then interrupt, softirq and steal; ssCpuNumCpus.
-define(CPU, [{user, 50}, {nice, 51}, {system, 52}, {idle, 53}, {iowait, 54}, {irq, 56},
              {softirq, 61}, {steal, 64}]).
-define(NUM_CPUS, 67).

%% @doc One reading of the agent at `Host':`Port' with `Community' within `Timeout' ms.
-spec read(string(), inet:port_number(), string(), pos_integer()) ->
    {ok, #{files := #{atom() => binary()}, procs := []}} | {error, {?MODULE, term()}}.
read(Host, Port, Community, Timeout) ->
    try
        ok = manager(),
        Agent = agent(Host, Port, Community),
        case snmpm:sync_get2(?USER, Agent, oids(), [{timeout, Timeout}]) of
            {ok, {noError, 0, Vbs}, _} -> {ok, #{files => files(values(Vbs)), procs => []}};
            {ok, {Status, _, _}, _} -> {error, {?MODULE, Status}};
            {error, Failed} -> {error, {?MODULE, Failed}}
        end
    catch error:{badmatch, {error, Why}} -> {error, {?MODULE, Why}}
    end.

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({timeout, _}) -> "snmp: no answer in time";
format_error(Why) -> io_lib:format("snmp: ~0tp", [Why]).

oids() ->
    [?UCD ++ [11, N, 0] || {_, N} <- ?CPU] ++ [?UCD ++ [11, ?NUM_CPUS, 0]]
        ++ [?UCD ++ [10, 1, 3, I] || I <- [1, 2, 3]]
        ++ [?UCD ++ [4, N, 0] || N <- [5, 6, 14, 15]].

values(Vbs) ->
    maps:from_list([{lists:nthtail(length(?UCD), Oid), V}
                    || {varbind, Oid, Type, V, _} <- Vbs, is_integer(V) orelse is_list(V),
                       Type =/= 'NULL']).

files(V) ->
    Get = fun(Oid) -> maps:get(Oid, V, undefined) end,
    Cpu = [Get([11, N, 0]) || {_, N} <- ?CPU],
    Stat = case lists:member(undefined, Cpu) of
               true -> <<>>;
               false ->
                   Cores = case Get([11, ?NUM_CPUS, 0]) of
                               N when is_integer(N), N > 0 -> N;
                               _ -> 1
                           end,
                   iolist_to_binary(["cpu ", [[$\s, integer_to_list(T)] || T <- Cpu], $\n,
                                     [io_lib:format("cpu~b 0\n", [I])
                                      || I <- lists:seq(0, Cores - 1)]])
           end,
    Load = [case Get([10, 1, 3, I]) of L when is_list(L) -> L; _ -> "-" end || I <- [1, 2, 3]],
    %% memAvailReal is the free memory; buffers and cached are available too (as MemAvailable).
    Mem = [Get([4, N, 0]) || N <- [5, 6, 14, 15]],
    Meminfo = case Mem of
                  [T, F, B, C] when is_integer(T), is_integer(F), is_integer(B), is_integer(C) ->
                      io_lib:format("MemTotal: ~b kB\nMemAvailable: ~b kB\n", [T, F + B + C]);
                  _ -> ""
              end,
    #{stat => Stat, loadavg => iolist_to_binary(lists:join(" ", Load)),
      meminfo => iolist_to_binary(Meminfo), netdev => <<>>, diskstats => <<>>}.

%% The manager, once per node: its configuration in a fresh private directory, never one whose
%% name another user could guess and plant first; SNMP v2c only. Those of emulators that are
%% gone are removed first: the manager keeps its own while its node lives.
manager() ->
    case whereis(snmpm_server) of
        undefined ->
            ok = beamscale_os:remove_stale_dirs(?DIR_PREFIX),
            Dir = beamscale_os:private_dir(?DIR_PREFIX),
            ok = file:make_dir(filename:join(Dir, "db")),
            ok = file:write_file(filename:join(Dir, "manager.conf"),
                                 "{address, [127, 0, 0, 1]}.\n{port, 0}.\n"
                                 "{engine_id, \"beamscale\"}.\n{max_message_size, 65535}.\n"),
            _ = application:load(snmp),
            ok = application:set_env(snmp, manager,
                                     [{config, [{dir, Dir}, {db_dir, filename:join(Dir, "db")},
                                                {verbosity, silence}]},
                                      {versions, [v2]}]),
            {ok, _} = application:ensure_all_started(snmp),
            ok = snmpm:register_user(?USER, snmpm_user_default, undefined);
        _ -> ok
    end.

%% The agent's target name, registered once.
agent(Host, Port, Community) ->
    Name = lists:flatten(io_lib:format("~ts:~b", [Host, Port])),
    case lists:member(Name, snmpm:which_agents(?USER)) of
        true -> Name;
        false ->
            {ok, Ip} = inet:getaddr(Host, inet),
            ok = snmpm:register_agent(?USER, Name,
                                      [{engine_id, Name}, {address, Ip}, {port, Port},
                                       {version, v2}, {community, Community},
                                       {sec_model, v2c}]),
            Name
    end.
