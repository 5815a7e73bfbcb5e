%% @doc What a load run records, shared by all its users without a server process: counters
%% (`counters', write_concurrency) and latency histograms (`beamscale_stats_hist'). `take/1' returns
%% and resets the interval's figures as a plain term that can be sent and merged. Errors are
%% also counted by reason (`beamscale_load_reasons': bounded text) in a public ETS table.
-module(beamscale_load_metrics).

-export([new/1, new/2, incr/2, add/3, count/2, count/3, error/2, status/2, record/3, take/1,
         merge/2, empty/1, counter_names/0, start_request/2, record_us/3,
         start_request/3, stop_request/0]).
-export_type([metrics/0, interval/0, row/0, fine_row/0, statuses/0]).

%% Histograms every run has: `connect' is the time to open a connection (TCP and TLS), `page'
%% Tsung's page (`beamscale_load_user'). A kind's own (a broker's delivery time) are
%% transactions it declares (`measures/0').
-define(HISTS, [latency, sent, session, connect, page]).
%% Status codes are counted in one slot each: three digits, 0 to 999 (a code outside is
%% counted as 0), so a hostile server cannot grow the figures.
-define(STATUSES, 1000).

-type metrics() :: #{counters := counters:counters_ref(),
                     hists := #{atom() | {tx, atom() | binary()} => term()},
                     statuses := counters:counters_ref(),
                     per_us := pos_integer() | convert, reasons := ets:tid(),
                     byname := beamscale_load_byname:tab(), named => named()}.
%% Counters named by the scenario (checks' outcomes, unset variables): known before the run, so
%% they are slots of one array too, and a name from a response can never add one.
-type named() :: {counters:counters_ref(), #{binary() => pos_integer()}}.
%% Counts and histogram snapshots (microseconds) of one interval: `latency' from the intended
%% start, `sent' from the send, `session' durations, and one per transaction `{tx, Name}';
%% `reasons': the errors by reason; `statuses': replies by status code (HTTP's).
-type interval() :: #{sessions_started := non_neg_integer(), sessions_done := non_neg_integer(),
                      sessions_stopped := non_neg_integer(),
                      requests := non_neg_integer(), errors := non_neg_integer(),
                      timeouts := non_neg_integer(), bytes_sent := non_neg_integer(),
                      bytes_received := non_neg_integer(), rows := non_neg_integer(),
                      connections_opened => non_neg_integer(),
                      connections_closed => non_neg_integer(),
                      latency := snapshot(),
                      sent := snapshot(), session := snapshot(), connect := snapshot(),
                      page => snapshot(),
                      reasons := beamscale_load_reasons:counts(),
                      {tx, atom() | binary()} => snapshot(),
                      counts => #{binary() => non_neg_integer()},
                      statuses => statuses(), by_name => by_name(), by_tag => by_name()}.
%% The figures by request name (`beamscale_load_byname'), or by tag pair (`key=value').
-type by_name() :: #{binary() => beamscale_load_byname:figures()}.
%% Replies by status code.
-type statuses() :: #{non_neg_integer() => pos_integer()}.
%% One second of a load run (the agents' intervals merged by `beamscale_load_run'), the
%% figures of a `load.csv' line: the interval's with the second, phase and offered rate.
-type row() :: #{t_s := pos_integer(), phase := atom() | binary(), offered_per_s := float(),
                 sessions_started := non_neg_integer(), sessions_done := non_neg_integer(),
                 sessions_stopped => non_neg_integer(), requests := non_neg_integer(),
                 errors := non_neg_integer(),
                 timeouts := non_neg_integer(), bytes_sent => non_neg_integer(),
                 bytes_received => non_neg_integer(), rows => non_neg_integer(),
                 latency := snapshot(),
                 sent := snapshot(), session := snapshot(), connect => snapshot(),
                 reasons := beamscale_load_reasons:counts(),
                 {tx, atom() | binary()} => snapshot(),
                 counts => #{binary() => non_neg_integer()}, statuses => statuses(),
                 by_name => by_name(), by_tag => by_name()}.
%% One interval under a second (`--resolution'): a row's figures, `t_s' when it ends (0.1...).
-type fine_row() :: #{t_s := float(), phase := atom() | binary(), offered_per_s := float(),
                      atom() | {tx, atom() | binary()} => term()}.
-type snapshot() :: beamscale_stats_hist:snapshot().

%% @doc New metrics; `latency' (from the intended start), `sent' (from the actual send) and
%% `session' histograms, `connect' times, one per transaction name.
-spec new([atom()]) -> metrics().
new(Transactions) -> new(Transactions, []).

%% @doc New metrics with counters named `Names' as well (`counts' in the intervals).
-spec new([atom()], [binary()]) -> metrics().
new(Transactions, Names) ->
    M = new_plain(Transactions),
    case lists:usort(Names) of
        [] -> M;
        Ns -> M#{named => {counters:new(length(Ns), [write_concurrency]),
                           maps:from_list(lists:zip(Ns, lists:seq(1, length(Ns))))}}
    end.

new_plain(Transactions) ->
    Hists = maps:from_list([{H, beamscale_stats_hist:new()} || H <- ?HISTS]
                           ++ [{{tx, T}, beamscale_stats_hist:new()} || T <- Transactions]),
    #{counters => counters:new(length(counter_names()), [write_concurrency]), hists => Hists,
      per_us => per_us(), statuses => counters:new(?STATUSES, [write_concurrency]),
      reasons => ets:new(?MODULE, [set, public, {write_concurrency, true}]),
      byname => beamscale_load_byname:new()}.

%% Native units per microsecond when whole (nanoseconds on Linux): a division then replaces
%% `erlang:convert_time_unit/3' (an Erlang function, measured the costliest step of recording).
per_us() ->
    case erlang:convert_time_unit(1, microsecond, native) of
        N when N >= 1 -> case erlang:convert_time_unit(1000000, microsecond, native) of
                            M when M =:= N * 1000000 -> N;
                            _ -> convert
                        end;
        _ -> convert
    end.

%% @doc The counters, in order: those of the run files' table (`beamscale_format_load'), each
%% with its slot below.
-spec counter_names() -> [atom()].
counter_names() -> beamscale_format_load:keys(beamscale_format_load:counters()).

%% @doc Count one event.
-spec incr(metrics(), atom()) -> ok.
incr(#{counters := C}, Name) -> counters:add(C, slot(Name), 1).

%% @doc Count `N' (bytes), for the calling user's request name too.
-spec add(metrics(), atom(), non_neg_integer()) -> ok.
add(#{counters := C}, Name, N) ->
    counters:add(C, slot(Name), N),
    beamscale_load_byname:add(Name, N).

%% @doc The calling user starts a request named `Name', untagged.
-spec start_request(metrics(), binary()) -> ok.
start_request(M, Name) -> start_request(M, Name, []).

%% @doc The calling user starts a request named `Name' (`beamscale_load_reqname'), tagged
%% `Tags' (`beamscale_load_tags'): what is recorded until `stop_request/0' is counted under the
%% name and each tag as well.
-spec start_request(metrics(), binary(), [binary()]) -> ok.
start_request(#{byname := T}, Name, Tags) -> beamscale_load_byname:start(T, Name, Tags).

%% @doc The calling user's named request is over.
-spec stop_request() -> ok.
stop_request() -> beamscale_load_byname:stop().

%% @doc Count one failed request (`errors', `timeouts' for a timeout) under its reason's text.
%% The number of distinct reasons is bounded here too (a racing insert may pass the bound by
%% a few; the merge bounds again).
-spec error(metrics(), term()) -> ok.
error(#{reasons := T} = M, Reason) ->
    incr(M, errors),
    beamscale_load_byname:error(),
    case Reason of
        timeout -> incr(M, timeouts);
        _ -> ok
    end,
    Text = beamscale_load_reasons:text(Reason),
    Key = case ets:member(T, Text) orelse
                  ets:info(T, size) < beamscale_load_reasons:max_reasons() of
              true -> Text;
              false -> beamscale_load_reasons:other()
          end,
    _ = ets:update_counter(T, Key, 1, {Key, 0}),
    ok.

%% @doc Count one reply of status `Code'.
-spec status(metrics(), non_neg_integer()) -> ok.
status(#{statuses := C}, Code) when Code >= 0, Code < ?STATUSES -> counters:add(C, Code + 1, 1);
status(#{statuses := C}, _Code) -> counters:add(C, 1, 1).

slot(sessions_started) -> 1;
slot(sessions_done) -> 2;
slot(requests) -> 3;
slot(errors) -> 4;
slot(timeouts) -> 5;
slot(bytes_sent) -> 6;
slot(bytes_received) -> 7;
%% Rows a database returned (the pgsql kind's DataRow messages).
slot(rows) -> 8;
slot(sessions_stopped) -> 9;
%% Users due while the launcher could not run (`beamscale_load_launcher').
slot(sessions_late) -> 10;
slot(connections_opened) -> 11;
slot(connections_closed) -> 12.

%% @doc Count one event of a named counter given to `new/2'.
-spec count(metrics(), binary()) -> ok.
count(M, Name) -> count(M, Name, 1).

%% @doc Count `N' events of a named counter at once (a gRPC call's messages).
-spec count(metrics(), binary(), non_neg_integer()) -> ok.
count(#{named := {C, Slots}}, Name, N) -> counters:add(C, maps:get(Name, Slots), N).

%% @doc Record a duration in native time units into histogram `Name'.
-spec record(metrics(), term(), integer()) -> ok.
record(#{per_us := PerUs} = M, Name, Native) ->
    record_us(M, Name, case PerUs of
                           convert -> erlang:convert_time_unit(Native, native, microsecond);
                           _ -> Native div PerUs
                       end).

%% @doc Record a duration in microseconds into histogram `Name' (a kind's own measure, taken in
%% microseconds: no round trip through native units).
-spec record_us(metrics(), term(), integer()) -> ok.
record_us(#{hists := H}, Name, Us) ->
    %% The latency from the intended start is the request name's too.
    [beamscale_load_byname:latency(Us) || Name =:= latency],
    beamscale_stats_hist:record(maps:get(Name, H), Us).

%% @doc The interval's figures, reset.
-spec take(metrics()) -> interval().
take(#{counters := C, hists := H, reasons := T, statuses := SC, byname := B} = M) ->
    Counts = [{Name, take_counter(C, slot(Name))} || Name <- counter_names()],
    Statuses = maps:from_list([{I - 1, N} || I <- lists:seq(1, ?STATUSES),
                                             N <- [take_counter(SC, I)], N > 0]),
    Hists = [{Name, beamscale_stats_hist:take(Ref)} || {Name, Ref} <- maps:to_list(H)],
    Named = case M of
                #{named := {NC, Slots}} ->
                    [{counts, maps:map(fun(_, I) -> take_counter(NC, I) end, Slots)}];
                _ -> []
            end,
    {ByName, ByTag} = beamscale_load_byname:take(B),
    maps:from_list([{reasons, take_reasons(T)}, {statuses, Statuses}, {by_name, ByName},
                    {by_tag, ByTag} | Counts ++ Hists ++ Named]).

%% As counters: what was read is subtracted, so errors counted meanwhile are kept.
take_reasons(T) ->
    maps:from_list([{K, N} || {K, N} <- ets:tab2list(T), N > 0,
                              ets:update_counter(T, K, -N) >= 0]).

%% Subtracting what was read keeps increments that land between the read and the subtraction.
%% Most of the 1000 status slots are 0: not written (ten takes a second at --resolution 100ms).
take_counter(C, I) ->
    case counters:get(C, I) of
        0 -> 0;
        N -> ok = counters:sub(C, I, N), N
    end.

%% @doc Nothing recorded, for the given transactions.
-spec empty([atom()]) -> interval().
empty(Transactions) ->
    maps:from_list([{reasons, #{}}, {statuses, #{}}, {by_name, #{}}, {by_tag, #{}}
                    | [{N, 0} || N <- counter_names()]]
                   ++ [{H, beamscale_stats_hist:empty()} || H <- ?HISTS]
                   ++ [{{tx, T}, beamscale_stats_hist:empty()} || T <- Transactions]).

%% @doc Two intervals' figures together.
-spec merge(interval(), interval()) -> interval().
merge(A, B) ->
    maps:fold(fun(K, V, Acc) when is_integer(V) -> Acc#{K => V + maps:get(K, Acc, 0)};
                 (reasons, V, Acc) ->
                      Acc#{reasons => beamscale_load_reasons:merge(maps:get(reasons, Acc, #{}),
                                                                   V)};
                 (counts, V, Acc) -> Acc#{counts => add_counts(V, maps:get(counts, Acc, #{}))};
                 (K, V, Acc) when K =:= by_name; K =:= by_tag ->
                      Acc#{K => beamscale_load_byname:merge(V, maps:get(K, Acc, #{}))};
                 (statuses, V, Acc) ->
                      Acc#{statuses => add_counts(V, maps:get(statuses, Acc, #{}))};
                 (K, V, Acc) ->
                      %% `B''s histogram (an interval's, small) into `A''s (the run's total):
                      %% the other way round rebuilt the total's map each second.
                      Acc#{K => beamscale_stats_hist:merge(
                                  maps:get(K, Acc, beamscale_stats_hist:empty()), V)}
              end, A, B).

add_counts(A, B) -> maps:fold(fun(K, V, Acc) -> Acc#{K => V + maps:get(K, Acc, 0)} end, B, A).
