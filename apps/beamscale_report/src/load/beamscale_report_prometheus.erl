%% @doc A running load's figures in Prometheus' text exposition format (0.0.4), pure: the
%% counters since the start, users in flight and the offered rate as gauges, and the latency
%% from the intended start (corrected) and from the send as histograms in seconds, with
%% cumulative buckets from 1 ms to 10 s. `beamscale_seconds_prom' adds each second's row to
%% the totals (`add/2') and serves `text/1' on `--metrics PORT'.
-module(beamscale_report_prometheus).

-export([new/0, add/2, text/1]).
-export_type([totals/0]).

-type totals() :: #{t_s := non_neg_integer(), offered_per_s := float(), atom() => term()}.

-define(COUNTERS, [{requests, "requests sent"}, {errors, "requests that failed"},
                   {timeouts, "requests that timed out"},
                   {sessions_started, "user sessions started"},
                   {sessions_done, "user sessions done"},
                   {sessions_stopped, "user sessions stopped by ctl users -N"},
                   {bytes_sent, "bytes sent"},
                   {bytes_received, "bytes received"}]).
-define(HISTOGRAMS, [{latency, "latency_seconds",
                      "request latency from the intended start (coordinated omission corrected)"},
                     {sent, "latency_uncorrected_seconds", "request latency from the send"}]).
%% Bucket bounds in seconds.
-define(BOUNDS, [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]).

%% @doc Nothing counted yet.
-spec new() -> totals().
new() ->
    maps:merge(#{t_s => 0, offered_per_s => 0.0},
               maps:from_list([{K, 0} || {K, _} <- ?COUNTERS]
                              ++ [{K, beamscale_stats_hist:empty()} || {K, _, _} <- ?HISTOGRAMS])).

%% @doc One more second (`beamscale_load_run''s row).
-spec add(totals(), map()) -> totals().
add(Totals, Row) ->
    T1 = lists:foldl(fun({K, _}, Acc) -> Acc#{K := maps:get(K, Acc) + maps:get(K, Row, 0)} end,
                     Totals, ?COUNTERS),
    T2 = lists:foldl(fun({K, _, _}, Acc) ->
                             Acc#{K := beamscale_stats_hist:merge(maps:get(K, Acc),
                                                                  maps:get(K, Row))}
                     end, T1, ?HISTOGRAMS),
    T2#{t_s := maps:get(t_s, Row), offered_per_s := float(maps:get(offered_per_s, Row))}.

%% @doc The exposition text.
-spec text(totals()) -> iodata().
text(T) ->
    [[metric(["beamscale_load_", atom_to_list(K), "_total"], counter, Help, maps:get(K, T))
      || {K, Help} <- ?COUNTERS],
     metric("beamscale_load_users_in_flight", gauge, "sessions started, not done nor stopped",
            maps:get(sessions_started, T) - maps:get(sessions_done, T)
            - maps:get(sessions_stopped, T)),
     metric("beamscale_load_offered_users_per_second", gauge, "the arrival rate offered",
            maps:get(offered_per_s, T)),
     metric("beamscale_load_seconds", gauge, "seconds of the load reported", maps:get(t_s, T)),
     [histogram(["beamscale_load_", Name], Help, maps:get(K, T))
      || {K, Name, Help} <- ?HISTOGRAMS]].

%%% Internals

metric(Name, Type, Help, Value) ->
    ["# HELP ", Name, " ", Help, "\n# TYPE ", Name, " ", atom_to_list(Type), "\n",
     Name, " ", num(Value), "\n"].

%% Values are microseconds; buckets and the sum are in seconds.
histogram(Name, Help, Snap) ->
    Buckets = [[Name, "_bucket{le=\"", num(B), "\"} ",
                num(beamscale_stats_hist:at_most(Snap, B * 1000000)), "\n"] || B <- ?BOUNDS],
    Count = beamscale_stats_hist:count(Snap),
    ["# HELP ", Name, " ", Help, "\n# TYPE ", Name, " histogram\n", Buckets,
     Name, "_bucket{le=\"+Inf\"} ", num(Count), "\n",
     Name, "_sum ", num(beamscale_stats_hist:sum(Snap) / 1000000), "\n",
     Name, "_count ", num(Count), "\n"].

num(V) when is_integer(V) -> integer_to_binary(V);
num(V) -> beamscale_format_float:decimal(float(V)).
