%% @doc The summary of `samples.csv' (docs/samples.md): per benchmark, environment and argument
%% set, the mean of every figure over the sampled intervals of all its nodes, weighted by interval
%% length — CPU %, scheduler utilisation %, busy-wait % and the microstate breakdown, as in the
%% thesis's tables 5.1 and 5.2.
%% Pure: rows in (maps of binaries, as `beamscale_store:read_rows/1' gives them), rows out.
-module(beamscale_stats_samples).

-export([summarise/1, csv/1, columns/1, group/2]).
-export_type([summary/0]).

%% One group: its key fields, counts, and the mean of each figure (`undefined' when never seen).
-type summary() :: #{benchmark := binary(), env := binary(), args := binary(),
                     samples := non_neg_integer(), nodes := non_neg_integer(),
                     down := non_neg_integer(), atom() => term()}.

%% The figures shown first, in this order; the microstate shares follow.
-define(MAIN, [os_cpu_pct, os_cpu_all_pct, host_cpu_pct, util_pct, util_dirty_cpu_pct,
               util_dirty_io_pct, sched_cpu_pct, busy_wait_pct, busy_wait_all_pct, run_queue,
               processes, ports, mem_total, io_in_bytes, io_out_bytes]).

%% @doc One summary per benchmark, environment and argument set, in the order first sampled, of
%% the nodes' rows.
-spec summarise([#{atom() => binary()}]) -> [summary()].
summarise(Rows) ->
    Figures = figures(Rows),
    KeyOf = fun(R) -> {val(benchmark, R), val(env, R), val(args, R)} end,
    [summary(Key, Group, Figures) || {Key, Group} <- group(KeyOf, [R || R <- Rows, node_row(R)])].

%% Host and OS process rows (docs/samples.md, "Host rows") are not the nodes' figures.
node_row(Row) ->
    val(pids, Row) =:= <<>> andalso binary:match(val(node, Row), <<"host:">>) =/= {0, 5}.

%% @doc `samples_summary.csv': a header and one line per summary.
-spec csv([#{atom() => binary()}]) -> iodata().
csv(Rows) ->
    Columns = columns(Rows),
    [beamscale_format_csv:line(Columns)
     | [beamscale_format_csv:line([field(maps:get(C, S, undefined)) || C <- Columns])
        || S <- summarise(Rows)]].

%% @doc The columns of the summary of these rows.
-spec columns([#{atom() => binary()}]) -> [atom()].
columns(Rows) ->
    [benchmark, env, args, samples, nodes, down | figures(Rows)].

%% @doc Items grouped by `KeyOf', groups and their items in the order they first appear.
-spec group(fun((T) -> K), [T]) -> [{K, [T]}].
group(KeyOf, Items) ->
    {Order, Groups} = lists:foldl(fun(I, {Ks, Gs}) ->
                                          K = KeyOf(I),
                                          case Gs of
                                              #{K := G} -> {Ks, Gs#{K := [I | G]}};
                                              _ -> {[K | Ks], Gs#{K => [I]}}
                                          end
                                  end, {[], #{}}, Items),
    [{K, lists:reverse(maps:get(K, Groups))} || K <- lists:reverse(Order)].

%%% Internals

figures([]) -> ?MAIN;
figures([Row | _]) ->
    ?MAIN ++ lists:sort([K || K <- maps:keys(Row), lists:prefix("msacc_", atom_to_list(K))]).

summary({B, E, A}, Group, Figures) ->
    Ok = [R || R <- Group, val(status, R) =:= <<"ok">>],
    Means = maps:from_list([{F, mean([{num(val(F, R)), weight(R)} || R <- Ok])}
                            || F <- Figures]),
    Means#{benchmark => B, env => E, args => A, samples => length(Ok),
           nodes => length(lists:usort([val(node, R) || R <- Group])),
           down => length([R || R <- Group, val(status, R) =:= <<"down">>])}.

val(Key, Row) -> maps:get(Key, Row, <<>>).

num(Bin) -> beamscale_format_csv:number(Bin).

%% Means are weighted by interval length: the short last interval of a watch counts less.
mean(Pairs) ->
    case [{V, W} || {V, W} <- Pairs, V =/= undefined] of
        [] -> undefined;
        Vs ->
            case lists:sum([W || {_, W} <- Vs]) of
                Sum when Sum > 0 -> lists:sum([V * W || {V, W} <- Vs]) / Sum;
                _ -> lists:sum([V || {V, _} <- Vs]) / length(Vs)
            end
    end.

weight(Row) ->
    case num(val(interval_s, Row)) of
        W when is_number(W), W > 0 -> W;
        _ -> 0
    end.

field(undefined) -> <<>>;
field(F) when is_float(F) -> round(F * 100) / 100;
field(V) -> V.
