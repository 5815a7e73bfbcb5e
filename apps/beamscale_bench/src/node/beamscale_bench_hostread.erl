%% @doc Reads a host's counters where they are: `/proc/stat', `/proc/meminfo', `/proc/loadavg',
%% `/proc/net/dev', `/proc/diskstats', and `/proc/PID/stat' of the OS processes asked for (by
%% pid, pid file or command name). Runs in beamscale's own node for this host, or on a node
%% started through ssh on another (nothing there but `erl': this module is sent as a binary).
%% Raw text only; `beamscale_host_calc' parses it on the command's node.
-module(beamscale_bench_hostread).

-export([read/1]).
-export_type([proc/0, reading/0]).

%% An OS process to watch: its pid, the file holding its pid, or its command name (every
%% process of that name: nginx's master and workers).
-type proc() :: {pid, pos_integer()} | {pidfile, string()} | {name, string()}.
-type reading() :: #{mono := integer(), wall := integer(), files := #{atom() => binary()},
                     procs := [{proc(), [{binary(), binary()}]}]}.

%% /proc files are small; a bigger one is cut rather than read whole.
-define(MAX_BYTES, 1048576).
-define(FILES, [{stat, "/proc/stat"}, {meminfo, "/proc/meminfo"}, {loadavg, "/proc/loadavg"},
                {netdev, "/proc/net/dev"}, {diskstats, "/proc/diskstats"}]).

%% @doc One reading: the host's files and, per process asked for, the `stat' and `status' texts
%% of each of its pids alive now (none when it is gone: its row says 0 pids).
-spec read([proc()]) -> reading().
read(Procs) ->
    Names = [N || {name, N} <- Procs],
    ByName = case Names of
                 [] -> #{};
                 _ -> by_name(Names)
             end,
    #{mono => erlang:monotonic_time(microsecond), wall => erlang:system_time(microsecond),
      files => maps:from_list([{K, file(F)} || {K, F} <- ?FILES]),
      procs => [{P, [{S, file(Dir ++ "/status")}
                     || Pid <- pids(P, ByName), Dir <- ["/proc/" ++ Pid],
                        S <- [file(Dir ++ "/stat")], S =/= <<>>]}
                || P <- Procs]}.

pids({pid, Pid}, _) -> [integer_to_list(Pid)];
pids({pidfile, File}, _) ->
    case string:to_integer(file(File)) of
        {Pid, _} when is_integer(Pid), Pid > 0 -> [integer_to_list(Pid)];
        _ -> []
    end;
pids({name, Name}, ByName) -> maps:get(Name, ByName, []).

%% Every process whose command name (`comm', cut at 15 characters by the kernel) is one of
%% `Names'.
by_name(Names) ->
    {ok, Entries} = file:list_dir("/proc"),
    lists:foldl(fun(Pid, Acc) ->
                        case [N || N <- Names, named(Pid, N)] of
                            [] -> Acc;
                            Ns -> lists:foldl(fun(N, A) -> A#{N => [Pid | maps:get(N, A, [])]}
                                              end, Acc, Ns)
                        end
                end, #{}, [E || E <- Entries, is_pid_dir(E)]).

%% `comm' alone decides for a name of 15 characters or fewer (one small read a process: a scan
%% of a few hundred processes stays within a reading's time); a longer one is checked against
%% the first argument when its first 15 characters match.
named(Pid, Name) ->
    Comm = string:trim(file("/proc/" ++ Pid ++ "/comm")),
    case Comm =:= list_to_binary(lists:sublist(Name, 15)) of
        false -> false;
        true when length(Name) =< 15 -> true;
        true ->
            [Arg0 | _] = binary:split(file("/proc/" ++ Pid ++ "/cmdline"), [<<0>>, <<" ">>]),
            filename:basename(Arg0) =:= unicode:characters_to_binary(Name)
    end.

is_pid_dir(Name) -> Name =/= [] andalso lists:all(fun(C) -> C >= $0 andalso C =< $9 end, Name).

%% The text of a file, at most ?MAX_BYTES; empty when it cannot be read (a process gone).
file(Name) ->
    case file:open(Name, [read, raw, binary]) of
        {ok, Fd} ->
            try read_all(Fd, []) after file:close(Fd) end;
        {error, _} -> <<>>
    end.

read_all(Fd, Acc) ->
    case file:read(Fd, 65536) of
        {ok, Data} ->
            Acc1 = [Acc, Data],
            case iolist_size(Acc1) >= ?MAX_BYTES of
                true -> iolist_to_binary(Acc1);
                false -> read_all(Fd, Acc1)
            end;
        _ -> iolist_to_binary(Acc)
    end.
