%% @doc Thresholds (docs/thresholds.md): the one parser of objectives, for `load --threshold', a
%% scenario's `thresholds', `saturate --slo' (`beamscale_stats_slo') and their evaluation. Pure:
%% text in, terms out; a run's figures so far in, verdicts out.
%%
%% `METRIC[{name=N}|{tx=T}|{tag:K=V}] OP VALUE[UNIT][:abort[=DELAY]]': a latency percentile
%% (`p95',
%% `p99.9', k6's `p(95)'), `mean', `min' or `max' (us, ms (the default) or s); `errors' (the
%% failed share of the requests, %); `rate' (requests a second achieved, `/s'); `achieved' (the
%% share of started sessions done, %); `checks' (the share of response checks that matched, %).
%% `:abort' stops the run at the first evaluation (one a second) that fails, not before DELAY
%% into the run (k6's abortOnFail and delayAbortEval).
-module(beamscale_stats_threshold).

-export([parse/1, parse_list/1, check/3, verdicts/2, verdicts_by/2, value/2, format_value/2,
         is_latency/1]).
-export_type([threshold/0, source/0, verdict/0, metric/0]).

-type metric() :: {pct, float()} | mean | min | max | errors | rate | achieved | checks.
-type scope() :: all | {name, binary()} | {tx, binary()} | {tag, binary()}.
%% bound: ms for latency, a share 0..1 for errors, achieved and checks, per second for rate.
-type threshold() :: #{text := binary(), metric := metric(), scope := scope(),
                       op := '<' | '=<' | '>' | '>=', bound := float(),
                       abort := false | {true, DelayS :: float()}}.
-type snapshot() :: beamscale_stats_hist:snapshot().
%% A run's figures so far: its histograms, counts and how long it has run.
-type source() :: #{latency := snapshot(), requests := non_neg_integer(),
                    errors := non_neg_integer(), duration_s := number(),
                    sessions_started := non_neg_integer(), sessions_done := non_neg_integer(),
                    checks := {Matched :: non_neg_integer(), All :: non_neg_integer()},
                    by_name := #{binary() => #{latency := snapshot(),
                                               requests := non_neg_integer(),
                                               errors := non_neg_integer(), atom() => term()}},
                    tx := #{binary() => snapshot()}, by_tag => #{binary() => map()}}.
-type verdict() :: #{threshold := binary(), ok := boolean(), value := float() | none,
                     measured := binary(), abort := boolean()}.

%% An expression read from a file or a command line is bounded before any pattern sees it.
-define(MAX_CHARS, 300).
-define(RE, "^(p\\(?[0-9]+(?:\\.[0-9]+)?\\)?|mean|avg|min|max|errors|rate|achieved|checks)"
            "\\s*(?:\\{\\s*(name|tx|scenario|tag\\s*:\\s*[a-zA-Z_][a-zA-Z0-9_]*)"
            "\\s*=\\s*([^}]+?)\\s*\\})?"
            "\\s*(<=|>=|<|>)\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(us|ms|s|%|/s)?"
            "\\s*(?::\\s*abort(?:\\s*=\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(ms|s))?)?$").

%% @doc Parse one threshold; the error is a message naming what is wrong in it.
-spec parse(term()) -> {ok, threshold()} | {error, string()}.
parse(Text) when is_binary(Text) -> parse(unicode:characters_to_list(Text));
parse(Text) ->
    case is_list(Text) andalso io_lib:printable_unicode_list(Text) of
        false -> {error, "expected a string such as \"p95<300ms\""};
        true when length(Text) > ?MAX_CHARS ->
            {error, io_lib:format("more than ~b characters", [?MAX_CHARS])};
        true -> parse_text(string:trim(Text))
    end.

%% @doc Parse several, each its own; the first error is named by its place (1, 2...).
-spec parse_list([term()]) -> {ok, [threshold()]} | {error, {pos_integer(), string()}}.
parse_list(Texts) ->
    parse_list(Texts, 1, []).

parse_list([], _I, Acc) -> {ok, lists:reverse(Acc)};
parse_list([T | Rest], I, Acc) ->
    case parse(T) of
        {ok, Th} -> parse_list(Rest, I + 1, [Th | Acc]);
        {error, Msg} -> {error, {I, lists:flatten(Msg)}}
    end.

parse_text(Text) ->
    case re:run(Text, ?RE, [{capture, all_but_first, list}, unicode]) of
        {match, [M, Sk, Sv, Op, V | Rest]} ->
            {Unit, Abort} = case Rest of
                                [] -> {"", false};
                                [U] -> {U, false};
                                [U, D, DU] -> {U, {true, number(D) * seconds(DU)}}
                            end,
            Abort1 = case Abort of
                         false -> abort_flag(Text);
                         _ -> Abort
                     end,
            build(Text, metric(M), scope(Sk, Sv), op(Op), number(V), Unit, Abort1);
        nomatch ->
            {error, "expected METRIC[{name=N}|{tag:K=V}] OP VALUE[UNIT][:abort[=DELAY]] "
                    "with METRIC one of pNN, mean, min, max, errors, rate, achieved, checks (e.g. "
                    "\"p95<300ms\", \"errors<1%:abort=10s\")"}
    end.

%% `:abort' alone leaves no capture of its own: seen in the text.
abort_flag(Text) ->
    case re:run(Text, ":\\s*abort\\s*$") of
        {match, _} -> {true, 0.0};
        nomatch -> false
    end.

build(Text, Metric, Scope, Op, V, Unit, Abort) ->
    case {bound(Metric, V, Unit), scoped(Metric, Scope), Metric} of
        {{error, _} = E, _, _} -> E;
        {_, {error, _} = E, _} -> E;
        {_, _, {pct, P}} when P =< 0; P > 100 ->
            {error, "a percentile is above 0 and at most 100"};
        {{ok, B}, ok, _} ->
            {ok, #{text => unicode:characters_to_binary(Text), metric => Metric, scope => Scope,
                   op => Op, bound => B, abort => Abort}}
    end.

metric("avg") -> mean;
metric("p999") -> {pct, 99.9};
metric([$p | N]) -> {pct, number(string:trim(N, both, "()"))};
metric(M) ->
    maps:get(M, #{"mean" => mean, "min" => min, "max" => max, "errors" => errors,
                  "rate" => rate, "achieved" => achieved, "checks" => checks}).

scope("", _) -> all;
scope("name", V) -> {name, unicode:characters_to_binary(V)};
scope("tx", V) -> {tx, unicode:characters_to_binary(V)};
%% One of several scenarios: its requests carry the tag `scenario=NAME'.
scope("scenario", V) -> {tag, unicode:characters_to_binary(["scenario=", V])};
%% A tag pair as `beamscale_load_tags' keeps it: `key=value'.
scope("tag" ++ K, V) ->
    Key = string:trim(string:trim(string:trim(K), leading, ":")),
    {tag, unicode:characters_to_binary([Key, "=", V])}.

op("<") -> '<';
op("<=") -> '=<';
op(">") -> '>';
op(">=") -> '>='.

latency({pct, _}) -> true;
latency(M) -> lists:member(M, [mean, min, max]).

%% @doc Whether a metric is a latency (in ms), not a share or a rate.
-spec is_latency(metric()) -> boolean().
is_latency(M) -> latency(M).

bound(M, V, U) ->
    case {latency(M), M, U} of
        {true, _, ""} -> {ok, V};
        {true, _, "us"} -> {ok, V / 1000};
        {true, _, "ms"} -> {ok, V};
        {true, _, "s"} -> {ok, V * 1000};
        {true, _, _} -> {error, "a latency is in us, ms or s"};
        {false, rate, R} when R =:= ""; R =:= "/s" -> {ok, V};
        {false, rate, _} -> {error, "rate is in requests a second (/s)"};
        {false, _, "%"} when V =< 100 -> {ok, V / 100};
        {false, _, _} -> {error, atom_to_list(M) ++ " is a share from 0 to 100 %"}
    end.

scoped(_M, all) -> ok;
scoped(M, {tx, _}) ->
    case latency(M) of
        true -> ok;
        false -> {error, "a transaction ({tx=...}) has latencies only"}
    end;
scoped(M, {Kind, _}) ->
    case latency(M) orelse M =:= errors orelse M =:= rate of
        true -> ok;
        false -> {error, io_lib:format("~ts is of the whole run, not of one {~ts...}",
                                       [M, maps:get(Kind, #{name => "name=", tag => "tag:"})])}
    end.

number(V) ->
    case string:to_float(V) of
        {F, []} -> F;
        _ -> float(list_to_integer(V))
    end.

seconds("ms") -> 0.001;
seconds("s") -> 1.0.

%% @doc One evaluation at `T' seconds into the run: `abort' (with the thresholds that stopped
%% it) when an `:abort' threshold past its delay fails on figures it has; else `continue'.
-spec check([threshold()], number(), source()) -> continue | {abort, [binary()]}.
check(Thresholds, T, Source) ->
    case [Text || #{abort := {true, Delay}, text := Text} = Th <- Thresholds, T >= Delay,
                  failing(Th, Source)] of
        [] -> continue;
        Failed -> {abort, Failed}
    end.

failing(Th, Source) ->
    case value(Th, Source) of
        none -> false;
        V -> not holds(Th, V)
    end.

%% @doc The verdict of each threshold on the run's figures: one with nothing measured (no
%% request of its name, no check) fails, as nothing showed it held.
-spec verdicts([threshold()], source()) -> [verdict()].
verdicts(Thresholds, Source) -> verdicts_by(Thresholds, fun(Th) -> value(Th, Source) end).

%% @doc The verdicts on the figures `Value' gives each threshold (`compare' reads a stored
%% summary's).
-spec verdicts_by([threshold()], fun((threshold()) -> float() | none)) -> [verdict()].
verdicts_by(Thresholds, Value) ->
    [begin
         V = Value(Th),
         #{threshold => Text, value => V, ok => V =/= none andalso holds(Th, V),
           measured => format_value(Th, V), abort => Abort =/= false}
     end || #{text := Text, abort := Abort} = Th <- Thresholds].

holds(#{op := '<', bound := B}, V) -> V < B;
holds(#{op := '=<', bound := B}, V) -> V =< B;
holds(#{op := '>', bound := B}, V) -> V > B;
holds(#{op := '>=', bound := B}, V) -> V >= B.

%% @doc The figure a threshold is about, in its bound's unit; `none' when nothing was measured.
-spec value(threshold(), source()) -> float() | none.
value(#{metric := M, scope := all}, #{latency := L} = S) when M =/= errors, M =/= rate ->
    case M of
        achieved -> share(maps:get(sessions_done, S), maps:get(sessions_started, S));
        checks -> {Hit, All} = maps:get(checks, S), share(Hit, All);
        _ -> latency(M, L)
    end;
value(#{metric := M, scope := all}, S) -> counted(M, S, S);
value(#{metric := M, scope := {Kind, N}}, S) when Kind =:= name; Kind =:= tag ->
    Figures = maps:get(maps:get(Kind, #{name => by_name, tag => by_tag}), S, #{}),
    case maps:find(N, Figures) of
        error -> none;
        {ok, #{latency := L} = F} ->
            case latency(M) of
                true -> latency(M, L);
                false -> counted(M, F, S)
            end
    end;
value(#{metric := M, scope := {tx, T}}, #{tx := Tx}) ->
    case maps:find(T, Tx) of
        error -> none;
        {ok, H} -> latency(M, H)
    end.

counted(errors, #{requests := R, errors := E}, _S) -> share(E, R);
counted(rate, #{requests := R}, #{duration_s := D}) when D > 0 -> R / D;
counted(rate, _F, _S) -> none.

share(_N, 0) -> none;
share(N, All) -> N / All.

%% Histograms are in microseconds, bounds in ms.
latency(_M, #{count := 0}) -> none;
latency({pct, P}, H) -> beamscale_stats_hist:percentile(H, P) / 1000;
latency(mean, H) -> beamscale_stats_hist:mean(H) / 1000;
latency(min, H) -> beamscale_stats_hist:min(H) / 1000;
latency(max, H) -> beamscale_stats_hist:max(H) / 1000.

%% @doc A measured figure as text in its threshold's unit.
-spec format_value(threshold(), float() | none) -> binary().
format_value(_Th, none) -> <<"no data">>;
format_value(#{metric := M}, V) ->
    iolist_to_binary(case {latency(M), M} of
                         {true, _} -> io_lib:format("~.3f ms", [V]);
                         {false, rate} -> io_lib:format("~.2f /s", [V]);
                         {false, _} -> io_lib:format("~.2f %", [V * 100])
                     end).
