%% @doc `beamscale compare LOAD_A LOAD_B --threshold EXPR': the thresholds of `load' (one parser,
%% `beamscale_stats_threshold') judged on run B's stored `summary.json', the figures it holds:
%% the corrected latency distribution's percentiles, mean and max, errors, rate, achieved and
%% checks of the run; p50, p90, p99, p99.9, mean and max of a request name or a transaction.
-module(beamscale_compare_thresholds).

-export([parse/1, verdicts/2]).

-type threshold() :: beamscale_stats_threshold:threshold().

%% Percentiles a name's or a transaction's figures hold, and their keys.
-define(NAMED, [{50.0, <<"p50_ms">>}, {90.0, <<"p90_ms">>}, {99.0, <<"p99_ms">>},
                {99.9, <<"p999_ms">>}]).

%% @doc The option's expressions, each one a summary can answer; else a message naming it.
-spec parse([string()]) -> {ok, [threshold()]} | {error, {string(), string()}}.
parse(Texts) ->
    case beamscale_stats_threshold:parse_list(Texts) of
        {error, {I, Msg}} -> {error, {lists:nth(I, Texts), Msg}};
        {ok, Ths} ->
            case [{T, Why} || {T, Th} <- lists:zip(Texts, Ths), Why <- [stored(Th)], Why =/= ok] of
                [] -> {ok, Ths};
                [First | _] -> {error, First}
            end
    end.

stored(#{metric := min}) -> "min is not in summary.json";
stored(#{metric := {pct, P}, scope := all}) ->
    case lists:member(P, distribution()) of
        true -> ok;
        false -> "summary.json holds the percentiles " ++ lists:join(", ", [fmt(X)
                                                                           || X <- distribution()])
    end;
stored(#{metric := {pct, P}}) ->
    case lists:keymember(P, 1, ?NAMED) of
        true -> ok;
        false -> "a name's or a transaction's percentiles in summary.json are p50, p90, p99, p99.9"
    end;
stored(_) -> ok.

%% The percentiles of `latency_distribution', as the thresholds' parser gives them (floats).
distribution() -> [float(P) || P <- beamscale_load_results:distribution_percentiles()].

fmt(P) -> "p" ++ beamscale_format_float:decimal(P).

%% @doc The verdicts on a decoded `summary.json'.
-spec verdicts([threshold()], map()) -> [beamscale_stats_threshold:verdict()].
verdicts(Ths, Summary) ->
    beamscale_stats_threshold:verdicts_by(Ths, fun(Th) -> value(Th, Summary) end).

value(#{metric := M, scope := all}, S) ->
    case M of
        {pct, P} -> pct(P, get([<<"latency_distribution">>, <<"corrected">>], S));
        mean -> num(get([<<"latency_corrected">>, <<"mean_ms">>], S));
        max -> num(get([<<"latency_corrected">>, <<"max_ms">>], S));
        errors -> share(get([<<"errors">>], S), get([<<"requests">>], S));
        rate -> num(get([<<"requests_per_s">>], S));
        achieved -> share(get([<<"sessions_done">>], S), get([<<"sessions_started">>], S));
        checks -> checks(get([<<"counts">>], S))
    end;
value(#{metric := M, scope := {Kind, N}}, S) ->
    Key = maps:get(Kind, #{name => <<"requests_by_name">>, tx => <<"transactions">>,
                           tag => <<"requests_by_tag">>}),
    F = get([Key, N], S),
    case M of
        {pct, P} -> num(get([element(2, lists:keyfind(P, 1, ?NAMED))], F));
        mean -> num(get([<<"mean_ms">>], F));
        max -> num(get([<<"max_ms">>], F));
        errors -> share(get([<<"errors">>], F), get([<<"requests">>], F));
        rate -> case {get([<<"requests">>], F), get([<<"duration_s">>], S)} of
                    {R, D} when is_number(R), is_number(D), D > 0 -> R / D;
                    _ -> none
                end
    end.

pct(P, Pairs) when is_list(Pairs) ->
    case [V || [Q, V] <- Pairs, is_number(Q), Q == P, is_number(V)] of
        [V | _] -> float(V);
        [] -> none
    end;
pct(_P, _) -> none.

checks(Counts) when is_map(Counts) ->
    {Hit, All} = beamscale_load_results:checks(Counts),
    share(Hit, All);
checks(_) -> none.

share(N, All) when is_number(N), is_number(All), All > 0 -> N / All;
share(_, _) -> none.

num(V) when is_number(V) -> float(V);
num(_) -> none.

%% A value of a decoded file: any shape, so each step is checked.
get([], V) -> V;
get([K | Rest], M) when is_map(M) -> get(Rest, maps:get(K, M, none));
get(_, _) -> none.
