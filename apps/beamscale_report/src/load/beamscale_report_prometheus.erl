%% @doc A running load's figures in Prometheus' text exposition format (0.0.4), pure: the
%% counters since the start, users in flight and the offered rate as gauges, and the latency
%% from the intended start (corrected) and from the send as histograms in seconds, with
%% cumulative buckets from 1 ms to 10 s. `beamscale_seconds_prom' adds each second's row to
%% the totals (`add/2') and serves `text/1' on `--metrics PORT'.
%%
%% A tagged run's figures by tag pair (`key=value', docs/scenario.md) are families of their own,
%% `beamscale_load_tag_requests_total', `_tag_errors_total' and `_tag_latency_seconds', a series
%% a declared pair with the tag's key as its label (`{flow="checkout"}'): the run's families stay
%% as they were, and the series are bounded as the pairs are (64).
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
    T3 = case maps:get(by_tag, Row, #{}) of
             Empty when map_size(Empty) =:= 0 -> T2;
             ByTag -> T2#{by_tag => maps:fold(fun add_tag/3, maps:get(by_tag, T2, #{}), ByTag)}
         end,
    T3#{t_s := maps:get(t_s, Row), offered_per_s := float(maps:get(offered_per_s, Row))}.

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
      || {K, Name, Help} <- ?HISTOGRAMS],
     tags(lists:sort(maps:to_list(maps:get(by_tag, T, #{}))))].

tags([]) -> [];
tags(ByTag) ->
    Labelled = [{label(Pair), F} || {Pair, F} <- ByTag],
    [[family(Name, counter, Help, [[Name, "{", L, "} ", num(maps:get(K, F)), "\n"]
                                   || {L, F} <- Labelled])
      || {K, Help} <- [{requests, "requests sent, by tag"},
                       {errors, "requests that failed, by tag"}],
         Name <- [["beamscale_load_tag_", atom_to_list(K), "_total"]]],
     family("beamscale_load_tag_latency_seconds", histogram,
            "request latency from the intended start, by tag",
            [series("beamscale_load_tag_latency_seconds", L, maps:get(latency, F))
             || {L, F} <- Labelled])].

%% One second's figures of a pair added to the totals': only what the families show.
add_tag(Pair, #{requests := R, errors := E, latency := L}, Acc) ->
    Acc#{Pair => case Acc of
                     #{Pair := #{requests := R0, errors := E0, latency := L0}} ->
                         #{requests => R0 + R, errors => E0 + E,
                           latency => beamscale_stats_hist:merge(L0, L)};
                     _ -> #{requests => R, errors => E, latency => L}
                 end}.

%%% Internals

metric(Name, Type, Help, Value) -> family(Name, Type, Help, [Name, " ", num(Value), "\n"]).

%% A family's header and its lines.
family(Name, Type, Help, Lines) ->
    ["# HELP ", Name, " ", Help, "\n# TYPE ", Name, " ", atom_to_list(Type), "\n", Lines].

%% `key="value"' of a pair, the value escaped as the format wants.
label(Pair) ->
    [K, V] = binary:split(Pair, <<"=">>),
    [K, "=\"", string:replace(string:replace(V, "\\", "\\\\", all), "\"", "\\\"", all), "\""].

%% Values are microseconds; buckets and the sum are in seconds.
histogram(Name, Help, Snap) ->
    family(Name, histogram, Help, series(Name, [], Snap)).

%% One histogram's lines, its labels `Label' (none: []) before `le'.
series(Name, Label, Snap) ->
    Sep = case Label of [] -> ""; _ -> "," end,
    Count = beamscale_stats_hist:count(Snap),
    Braces = case Label of [] -> ""; _ -> ["{", Label, "}"] end,
    [[[Name, "_bucket{", Label, Sep, "le=\"", num(B), "\"} ",
       num(beamscale_stats_hist:at_most(Snap, B * 1000000)), "\n"] || B <- ?BOUNDS],
     Name, "_bucket{", Label, Sep, "le=\"+Inf\"} ", num(Count), "\n",
     Name, "_sum", Braces, " ", num(beamscale_stats_hist:sum(Snap) / 1000000), "\n",
     Name, "_count", Braces, " ", num(Count), "\n"].

num(V) when is_integer(V) -> integer_to_binary(V);
num(V) -> beamscale_format_float:decimal(float(V)).
