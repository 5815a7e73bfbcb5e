%% @doc Memory per user of a load run: the resident memory (VmRSS of /proc/PID/status) of the
%% processes the users run in (the load nodes, or beamscale's own node) over the users in flight
%% (sessions started less sessions done), read at the busiest second. Also the same over the
%% memory they had before the load (the node's own, code and all), the marginal cost of a user.
%%
%% A process of its own: the controller's `on_second' hands it each row, and it reads /proc
%% only when the users in flight reach a new peak (a few small files, once a second at most).
-module(beamscale_loadtest_memory).

-behaviour(beamscale_seconds).

-export([start/1, second/2, stop/1, peak/1, vm_rss/1, summary/3, closing_line/1]).
-export_type([peak/0]).

%% users_in_flight: at the busiest second; rss_bytes: the processes' VmRSS summed then;
%% rss_start_bytes: before the first user; bytes_per_user: rss over users;
%% marginal_bytes_per_user: (rss - rss at start) over users; processes: how many were read.
-type peak() :: #{users_in_flight := non_neg_integer(), rss_bytes := non_neg_integer(),
                  rss_start_bytes := non_neg_integer(), bytes_per_user := number(),
                  marginal_bytes_per_user := number(), processes := non_neg_integer()}.

%% The tracker answers at once: it only holds a few numbers.
-define(CALL_TIMEOUT, 5000).

%% @doc Start tracking the processes of OS pids `OsPids' (strings, as `beamscale_node' has; with
%% the node, for one on another host: read there).
-spec start([string() | {node(), string()}]) -> pid().
start(OsPids) ->
    Start = rss(OsPids),
    spawn_link(fun() -> loop(OsPids, #{in_flight => 0, peak => 0, rss => Start, start => Start})
               end).

%% @doc One second's row of the run (`beamscale_load_metrics:row()').
-spec second(pid(), map()) -> ok.
second(Pid, #{sessions_started := S, sessions_done := D} = Row) ->
    Pid ! {second, S - D - maps:get(sessions_stopped, Row, 0)},
    ok.

%% @doc Nothing yet when the run's seconds end: the tracker ends with `peak/1'.
-spec stop(pid()) -> ok.
stop(_Pid) -> ok.

%% @doc The figures at the peak; the tracker ends.
-spec peak(pid()) -> peak().
peak(Pid) ->
    Ref = monitor(process, Pid),
    Pid ! {peak, self(), Ref},
    receive
        {Ref, Peak} -> demonitor(Ref, [flush]), Peak
    after ?CALL_TIMEOUT -> exit(Pid, kill), error(memory_tracker_timeout)
    end.

loop(OsPids, #{in_flight := F, peak := P} = St) ->
    receive
        {second, Delta} ->
            F1 = F + Delta,
            loop(OsPids, case F1 > P of
                             true -> St#{in_flight := F1, peak := F1, rss := rss(OsPids)};
                             false -> St#{in_flight := F1}
                         end);
        {peak, From, Ref} ->
            #{peak := Users, rss := Rss, start := Start} = St,
            From ! {Ref, summary(Users, Rss, Start, length(OsPids))}
    end.

summary(Users, Rss, Start, N) ->
    #{users_in_flight => Users, rss_bytes => Rss, rss_start_bytes => Start,
      bytes_per_user => Rss / max(Users, 1),
      marginal_bytes_per_user => max(Rss - Start, 0) / max(Users, 1), processes => N}.

%% @doc The same figures from their parts (tests and the bench script's arithmetic).
-spec summary(non_neg_integer(), non_neg_integer(), non_neg_integer()) -> peak().
summary(Users, Rss, Start) -> summary(Users, Rss, Start, 1).

rss(OsPids) -> lists:sum([vm_rss(P) || P <- OsPids]).

%% A remote node's /proc is read by that node: one small file.
status({Node, OsPid}) ->
    try erpc:call(Node, file, read_file, ["/proc/" ++ OsPid ++ "/status"], ?CALL_TIMEOUT)
    catch _:_ -> {error, unreachable}
    end;
status(OsPid) -> file:read_file("/proc/" ++ OsPid ++ "/status").

%% @doc VmRSS of an OS process in bytes (0 when it is gone or the line is missing).
-spec vm_rss(string() | {node(), string()}) -> non_neg_integer().
vm_rss(OsPid) ->
    case status(OsPid) of
        {ok, Text} ->
            case re:run(Text, "^VmRSS:\\s+(\\d+) kB", [multiline, {capture, [1], list}]) of
                {match, [Kb]} -> list_to_integer(Kb) * 1024;
                nomatch -> 0
            end;
        {error, _} -> 0
    end.

%% @doc The terminal's closing line on memory.
-spec closing_line(peak()) -> iodata().
closing_line(#{users_in_flight := U, rss_bytes := R, bytes_per_user := B,
               marginal_bytes_per_user := M, processes := N}) ->
    io_lib:format("memory: ~b users in flight at the peak, ~.1f MB resident in ~b process~ts: "
                  "~.1f KB per user (~.1f KB above the memory before the load)~n",
                  [U, R / 1.0e6, N, case N of 1 -> ""; _ -> "es" end, B / 1024, M / 1024]).
