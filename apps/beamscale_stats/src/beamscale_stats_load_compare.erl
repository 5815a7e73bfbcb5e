%% @doc Comparing two load runs, pure: their `summary.json' maps (binary keys, as decoded) side
%% by side. Each figure has the whole run's value in A and B, and the ratio B / A of the medians
%% of its per-second values with a bootstrap 95 % interval over seconds (a second being the unit
%% that repeats; the drain after the last phase is left out, its arrivals having stopped).
%% The CI gates read that ratio: a slowdown fails only when it is both past the threshold and
%% significant (the interval leaves out 1), so one slow second does not fail a build.
-module(beamscale_stats_load_compare).

-export([compare/2, compare/3, errors/2, gates/2]).
-export_type([row/0, gate/0]).

%% One figure: `a' and `b' the whole run's values (null: not in the summary), `ratio', `low'
%% and `high' from the per-second medians (null: no seconds, or a median of A at 0).
-type row() :: #{metric := binary(), unit := binary(), a := number() | null,
                 b := number() | null, ratio := float() | null, low := float() | null,
                 high := float() | null, n_a := non_neg_integer(), n_b := non_neg_integer()}.
-type gate() :: {p99_above | throughput_below, number()}.

-define(PERCENTILES, [{<<"p50">>, <<"p50_ms">>}, {<<"p90">>, <<"p90_ms">>},
                      {<<"p99">>, <<"p99_ms">>}, {<<"p99.9">>, <<"p999_ms">>},
                      {<<"max">>, <<"max_ms">>}]).

%% @doc The figures of two summaries, with default bootstrap options.
-spec compare(map(), map()) -> [row()].
compare(A, B) -> compare(A, B, #{}).

%% @doc The figures of two summaries: latency percentiles (corrected, then uncorrected),
%% throughput and the error rate.
-spec compare(map(), map(), beamscale_stats:options()) -> [row()].
compare(A, B, Opts) ->
    [latency(Which, Label, P, Key, A, B, Opts)
     || {Which, Label} <- [{<<"latency_corrected">>, <<"latency (corrected)">>},
                           {<<"latency_uncorrected">>, <<"latency (uncorrected)">>}],
        {P, Key} <- ?PERCENTILES]
        ++ [row(<<"throughput">>, <<"requests/s">>, fun throughput/1,
                fun(S) -> num(maps:get(<<"requests">>, S, null)) end, A, B, Opts),
            row(<<"errors">>, <<"% of requests">>, fun error_rate/1, fun error_rate/1,
                A, B, Opts)].

%% @doc Errors by reason in both runs: `{Reason, CountA, CountB}', most frequent first.
-spec errors(map(), map()) -> [{binary(), non_neg_integer(), non_neg_integer()}].
errors(A, B) ->
    EA = maps:get(<<"errors_by_reason">>, A, #{}),
    EB = maps:get(<<"errors_by_reason">>, B, #{}),
    Rows = [{R, maps:get(R, EA, 0), maps:get(R, EB, 0)}
            || R <- lists:usort(maps:keys(EA) ++ maps:keys(EB))],
    lists:sort(fun({_, A1, B1}, {_, A2, B2}) -> A1 + B1 >= A2 + B2 end, Rows).

%% @doc The gates that fail, each with the row it read: `{p99_above, Pct}' fails when the
%% corrected p99 of B is significantly above A's by more than Pct %, `{throughput_below, Pct}'
%% when B's throughput is significantly below A's by more than Pct %.
-spec gates([row()], [gate()]) -> [{gate(), row()}].
gates(Rows, Gates) ->
    [{G, Row} || G <- Gates, Row <- [gate_row(G, Rows)], fails(G, Row)].

%%% Internals

latency(Which, Label, P, Key, A, B, Opts) ->
    Whole = fun(S) -> num(maps:get(Key, maps:get(Which, S, #{}), null)) end,
    PerSecond = fun(S) ->
                        case maps:get(Which, S, #{}) of
                            #{<<"count">> := N} = L when N > 0 -> num(maps:get(Key, L, null));
                            _ -> null
                        end
                end,
    row(<<Label/binary, " ", P/binary>>, <<"ms">>, Whole, PerSecond, A, B, Opts).

row(Metric, Unit, Whole, PerSecond, A, B, Opts) ->
    SA = seconds(PerSecond, A),
    SB = seconds(PerSecond, B),
    {Ratio, Low, High} = ratio(SA, SB, Opts),
    #{metric => Metric, unit => Unit, a => Whole(A), b => Whole(B), ratio => Ratio,
      low => Low, high => High, n_a => length(SA), n_b => length(SB)}.

ratio([_ | _] = SA, [_ | _] = SB, Opts) ->
    case beamscale_stats:bootstrap_ratio(SB, SA, Opts) of
        undefined -> {null, null, null};
        Three -> Three
    end;
ratio(_, _, _) -> {null, null, null}.

%% The per-second values of the seconds of the phases (not the drain), those known.
seconds(F, Summary) ->
    [V || S <- maps:get(<<"per_second">>, Summary, []),
          maps:get(<<"phase">>, S, null) =/= <<"drain">>, V <- [F(S)], V =/= null].

throughput(#{<<"requests_per_s">> := R}) -> num(R);
throughput(_) -> null.

error_rate(#{<<"requests">> := R, <<"errors">> := E}) when R > 0 -> 100 * E / R;
error_rate(_) -> null.

num(V) when is_number(V) -> V;
num(_) -> null.

gate_row({p99_above, _}, Rows) -> find(<<"latency (corrected) p99">>, Rows);
gate_row({throughput_below, _}, Rows) -> find(<<"throughput">>, Rows).

find(Metric, Rows) -> hd([R || #{metric := M} = R <- Rows, M =:= Metric]).

fails(_, #{ratio := null}) -> false;
fails({p99_above, Pct}, #{ratio := R, low := L}) -> R > 1 + Pct / 100 andalso L > 1;
fails({throughput_below, Pct}, #{ratio := R, high := H}) -> R < 1 - Pct / 100 andalso H < 1.
