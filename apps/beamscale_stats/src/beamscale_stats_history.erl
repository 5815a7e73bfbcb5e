%% @doc A history's records (docs/history.md) as series, and their change points (pure).
%%
%% A series is one benchmark, environment and metric over commits, in the order the commits were
%% first recorded; several records of one commit are its replicates (the point is their mean, the
%% interval their lowest low and highest high). Each series' change points come from
%% `beamscale_stats_changepoint'; a change is a regression when it goes the metric's worse way
%% (`better': lower or higher). `newest/2' is what a CI gate asks: does the newest commit start a
%% regression? It is the newest point against the segment since the last change point, with a
%% segment of one point allowed there (a change point needs two a side elsewhere).
-module(beamscale_stats_history).

-export([series/2, analyse/2, newest/2, env_text/1]).
-export_type([series/0, point/0, change/0]).

-type point() :: #{commit := binary(), date := binary(), label := binary(),
                   value := float(), values := [number()], low := number() | null,
                   high := number() | null}.
-type series() :: #{benchmark := binary(), environment := binary(), metric := binary(),
                    better := binary(), primary := boolean(), clock := binary(),
                    points := [point()]}.
-type change() :: #{index := non_neg_integer(), commit := binary(), before := float(),
                    'after' := float(), ratio := float() | null, ratio_low := float() | null,
                    ratio_high := float() | null, p := float(), regression := boolean()}.
%% metrics: `primary' or a list of metric names; benchmarks: `all' or names.
-type filter() :: #{metrics => primary | all | [binary()], benchmarks => all | [binary()]}.

%% @doc The series of `Records' that pass `Filter', in a stable order.
-spec series([map()], filter()) -> [series()].
series(Records, Filter) ->
    Rows = [{series_key(R, E), R, E} || R <- Records, #{} = E <- entries(R), keep(E, Filter)],
    Order = commit_order(Records),
    %% One pass over the rows (each series' in record order), not one per series.
    ByKey = maps:groups_from_list(fun({K, _, _}) -> K end, fun({_, R, E}) -> {R, E} end, Rows),
    [series_of(K, maps:get(K, ByKey), Order) || K <- lists:sort(maps:keys(ByKey))].

%% @doc Each series with its change points.
-spec analyse([series()], beamscale_stats_changepoint:options()) ->
          [{series(), [change()]}].
analyse(Series, Opts) ->
    [{S, [change(S, C) || C <- beamscale_stats_changepoint:detect(values(S), Opts)]}
     || S <- Series].

%% @doc Whether the newest point of `S' starts a change: `none' or the change.
-spec newest(series(), beamscale_stats_changepoint:options()) -> none | change().
newest(#{points := Ps} = S, Opts) when length(Ps) >= 3 ->
    Alpha = maps:get(alpha, maps:merge(beamscale_stats_changepoint:defaults(), Opts)),
    Xs = values(S),
    N = length(Xs),
    Start = case [I || #{index := I} <- beamscale_stats_changepoint:detect(Xs, Opts), I < N - 1]
            of [] -> 0; Is -> lists:max(Is) end,
    Seg = lists:sublist(Xs, Start + 1, N - 1 - Start),
    case length(Seg) >= 2 andalso beamscale_stats_changepoint:compare(Seg, [lists:last(Xs)]) of
        #{p := P} = C when P < Alpha -> change(S, C#{index => N - 1});
        _ -> none
    end;
newest(_S, _Opts) -> none.

%% @doc An entry's environment as one text, its non-empty fields sorted:
%% `erl_args=default otp=25 schedulers=2'.
-spec env_text(term()) -> binary().
env_text(#{} = Env) ->
    Parts = [[K, "=", V] || {K, V} <- lists:sort(maps:to_list(Env)), is_binary(V), V =/= <<>>],
    iolist_to_binary(lists:join(" ", Parts));
env_text(_) -> <<>>.

%%% Internals

entries(#{<<"entries">> := Es}) when is_list(Es) -> Es;
entries(_) -> [].

keep(#{<<"metric">> := M} = E, Filter) ->
    Metrics = case maps:get(metrics, Filter, primary) of
                  primary -> maps:get(<<"primary">>, E, false) =:= true;
                  all -> true;
                  Names -> lists:member(M, Names)
              end,
    Benches = case maps:get(benchmarks, Filter, all) of
                  all -> true;
                  Bs -> lists:member(maps:get(<<"benchmark">>, E, <<>>), Bs)
              end,
    Metrics andalso Benches andalso is_number(maps:get(<<"value">>, E, null));
keep(_E, _Filter) -> false.

series_key(R, E) ->
    {maps:get(<<"benchmark">>, E, <<>>), env_text(maps:get(<<"environment">>, E, #{})),
     maps:get(<<"metric">>, E), maps:get(<<"clock">>, R, <<"wall">>)}.

%% Commits in the order of their first record.
commit_order(Records) ->
    {Order, _} = lists:foldl(fun(R, {Acc, Seen}) ->
                                     C = maps:get(<<"commit">>, R, <<>>),
                                     case maps:is_key(C, Seen) of
                                         true -> {Acc, Seen};
                                         false -> {[C | Acc], Seen#{C => map_size(Seen)}}
                                     end
                             end, {[], #{}}, Records),
    maps:from_list(lists:zip(lists:reverse(Order), lists:seq(1, length(Order)))).

series_of({Bench, Env, Metric, Clock}, Rows, Order) ->
    ByCommit = lists:foldl(fun({R, E}, M) ->
                                   C = maps:get(<<"commit">>, R, <<>>),
                                   maps:update_with(C, fun(L) -> [{R, E} | L] end, [{R, E}], M)
                           end, #{}, Rows),
    Points = [point(C, lists:reverse(RE))
              || {_, C} <- lists:sort([{maps:get(C, Order), C} || C <- maps:keys(ByCommit)]),
                 RE <- [maps:get(C, ByCommit)]],
    {_, E0} = hd(Rows),
    #{benchmark => Bench, environment => Env, metric => Metric, clock => Clock,
      better => maps:get(<<"better">>, E0, <<"lower">>),
      primary => maps:get(<<"primary">>, E0, false) =:= true, points => Points}.

point(Commit, [{R0, _} | _] = RE) ->
    Vs = [V || {_, #{<<"value">> := V}} <- RE],
    Lows = [L || {_, #{<<"low">> := L}} <- RE, is_number(L)],
    Highs = [H || {_, #{<<"high">> := H}} <- RE, is_number(H)],
    #{commit => Commit, date => text(maps:get(<<"date">>, R0, <<>>)),
      label => text(maps:get(<<"label">>, R0, <<>>)), value => lists:sum(Vs) / length(Vs),
      values => Vs, low => min_or_null(Lows), high => max_or_null(Highs)}.

min_or_null([]) -> null;
min_or_null(L) -> lists:min(L).

max_or_null([]) -> null;
max_or_null(L) -> lists:max(L).

text(B) when is_binary(B) -> B;
text(_) -> <<>>.

values(#{points := Ps}) -> [V || #{value := V} <- Ps].

change(#{points := Ps, better := Better}, #{index := I, before := B, 'after' := A} = C) ->
    #{commit := Commit} = lists:nth(I + 1, Ps),
    Worse = case Better of <<"higher">> -> A < B; _ -> A > B end,
    maps:merge(maps:with([ratio, ratio_low, ratio_high, p], C),
               #{index => I, commit => Commit, before => B, 'after' => A, regression => Worse}).
