%% @doc The service-level objective of `beamscale saturate' (docs/saturate.md): what "held"
%% means for one load level. Pure: text in, terms out; a level's figures in, the broken terms out.
%%
%% `"p99<50ms,errors<1%"' (each term read as a threshold, `beamscale_stats_threshold'): a
%% latency percentile (p50, p90, p99, p999; from each request's intended start, so coordinated
%% omission is corrected) below a bound (us, ms or s), errors below a share of the requests,
%% and the sessions completed per second above a share of the sessions started
%% (`achieved>90%'). The `achieved' term is added when not given: an open-model
%% level whose target completes far fewer sessions than it was offered is not held, whatever the
%% latency of those that did complete.
-module(beamscale_stats_slo).

-export([parse/1, default/0, text/1, broken/2, limited_by/3]).
-export_type([slo/0, slo_term/0, figures/0]).

-type slo_term() :: {pct, 50 | 90 | 99 | 999, float()}  % bound in ms
                  | {errors, float()}                    % largest share of requests
                  | {achieved, float()}.                 % smallest share of the offered rate
-type slo() :: [slo_term()].
%% A level's figures the terms are checked against (latency in ms, shares from 0 to 1).
-type figures() :: #{p50_ms := number(), p90_ms := number(), p99_ms := number(),
                     p999_ms := number(), error_ratio := number(), achieved_ratio := number(),
                     atom() => term()}.

-define(DEFAULT, "p99<100ms,errors<1%").
-define(DEFAULT_ACHIEVED, 0.9).

%% @doc The objective when none is given.
-spec default() -> string().
default() -> ?DEFAULT.

%% @doc Parse an objective; the error is a message naming the term at fault.
-spec parse(term()) -> {ok, slo()} | {error, string()}.
parse(Text) ->
    case io_lib:printable_unicode_list(Text) of
        true -> parse_text(Text);
        false -> {error, "expected a string such as \"p99<50ms,errors<1%\""}
    end.

parse_text(Text) ->
    Parts = [string:trim(P) || P <- string:split(Text, ",", all)],
    case lists:foldl(fun add_term/2, {ok, []}, Parts) of
        {ok, []} -> {error, "empty objective (e.g. \"p99<50ms,errors<1%\")"};
        {ok, Terms} -> with_achieved(lists:reverse(Terms));
        {error, _} = Error -> Error
    end.

add_term(_Part, {error, _} = Error) -> Error;
add_term(Part, {ok, Acc}) ->
    case slo_term(Part) of
        {ok, T} ->
            case lists:keymember(name(T), 1, [{name(X), X} || X <- Acc]) of
                true -> {error, "term " ++ name_text(T) ++ " given twice"};
                false -> {ok, [T | Acc]}
            end;
        error ->
            {error, "bad term \"" ++ Part ++ "\" (expected pNN<Nms with NN one of 50, 90, 99, "
                    "999, errors<N%, achieved>N%)"}
    end.

%% Each term is read by the thresholds' parser (`beamscale_stats_threshold'), then kept to the
%% forms an objective has: a percentile of the four a level measures, errors below, achieved
%% above, of the whole level.
slo_term(Part) ->
    case beamscale_stats_threshold:parse(Part) of
        {ok, #{scope := all, abort := false, op := Op, bound := B, metric := M}} ->
            case {M, Op} of
                {{pct, P}, '<'} -> percentile(P, B);
                {errors, '<'} -> {ok, {errors, B}};
                {achieved, '>'} -> {ok, {achieved, B}};
                _ -> error
            end;
        _ -> error
    end.

percentile(P, Ms) ->
    case [N || {N, F} <- [{50, 50.0}, {90, 90.0}, {99, 99.0}, {999, 99.9}], F == P] of
        [N] -> {ok, {pct, N, Ms}};
        [] -> error
    end.

with_achieved(Terms) ->
    case lists:keymember(achieved, 1, Terms) of
        true -> {ok, Terms};
        false -> {ok, Terms ++ [{achieved, ?DEFAULT_ACHIEVED}]}
    end.

%% @doc The objective as text, every term written (the `achieved' one included).
-spec text(slo()) -> binary().
text(Slo) ->
    iolist_to_binary(lists:join(",", [term_text(T) || T <- Slo])).

term_text({pct, N, Ms}) -> io_lib:format("p~b<~sms", [N, num(Ms)]);
term_text({errors, S}) -> io_lib:format("errors<~s%", [num(S * 100)]);
term_text({achieved, S}) -> io_lib:format("achieved>~s%", [num(S * 100)]).

num(F) when F == round(F) -> integer_to_list(round(F));
num(F) -> float_to_list(F, [{decimals, 3}, compact]).

%% @doc The terms a level's figures break, in the objective's order (empty: the level is held).
-spec broken(slo(), figures()) -> [binary()].
broken(Slo, Figures) ->
    [list_to_binary(name_text(T)) || T <- Slo, excess(T, Figures) > 1.0].

%% @doc Of the terms broken at a level, the one that limits: `achieved' when among them (the
%% target did not keep up, so the queue grew and latency followed), else the term exceeded the
%% most, relative to its bound. `none' when nothing broke.
-spec limited_by(slo(), figures(), [binary()]) -> binary() | none.
limited_by(_Slo, _Figures, []) -> none;
limited_by(Slo, Figures, Broken) ->
    case lists:member(<<"achieved">>, Broken) of
        true -> <<"achieved">>;
        false ->
            Scored = [{excess(T, Figures), list_to_binary(name_text(T))} || T <- Slo,
                      lists:member(list_to_binary(name_text(T)), Broken)],
            element(2, lists:max(Scored))
    end.

%% How far a figure is past its bound: above 1 means broken.
excess({pct, N, Bound}, F) -> ratio(maps:get(pct_key(N), F), Bound);
excess({errors, Bound}, #{error_ratio := E}) -> ratio(E, Bound);
excess({achieved, Bound}, #{achieved_ratio := A}) -> ratio(Bound, A).

ratio(V, Bound) when Bound > 0 -> V / Bound;
ratio(V, _Zero) when V > 0 -> infinity_ratio();
ratio(_, _) -> 0.0.

%% A figure above a zero bound: broken, by more than any finite excess.
infinity_ratio() -> 1.0e300.

pct_key(50) -> p50_ms;
pct_key(90) -> p90_ms;
pct_key(99) -> p99_ms;
pct_key(999) -> p999_ms.

name({pct, N, _}) -> {pct, N};
name({K, _}) -> K.

name_text({pct, N, _}) -> "p" ++ integer_to_list(N);
name_text({K, _}) -> atom_to_list(K).
