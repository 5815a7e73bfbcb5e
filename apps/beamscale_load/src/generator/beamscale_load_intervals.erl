%% @doc Intervals finer than a second (`beamscale load --resolution 100ms'), pure: the agents
%% report every R ms, numbered from 1 (interval K ends at K * R ms), and the controller
%% (`beamscale_load_run') folds the intervals of second N into the second's row, so every reader
%% of seconds (ctl, the live page, Prometheus, compare) sees what it saw at one report a second.
%% The fine rows go to `on_interval' (load_fine.csv), the first ?MAX_ROWS of a run.
-module(beamscale_load_intervals).

-export([resolutions/0, default_ms/0, text/1, per_second/1, key/3, complete/4, take/3, fold/2,
         end_s/2, mid_s/2, max_rows/0]).

%% An hour at 100 ms.
-define(MAX_ROWS, 36000).

%% @doc The resolutions allowed, in ms: each divides a second.
-spec resolutions() -> [pos_integer()].
resolutions() -> [100, 200, 250, 500, 1000].

%% @doc The resolution a load runs at unless told: one report a second.
-spec default_ms() -> pos_integer().
default_ms() -> 1000.

%% @doc A resolution as `--resolution' writes it: 100ms, 1s.
-spec text(pos_integer()) -> string().
text(Ms) when Ms rem 1000 =:= 0 -> integer_to_list(Ms div 1000) ++ "s";
text(Ms) -> integer_to_list(Ms) ++ "ms".

%% @doc The intervals of a second at a resolution of `Ms'.
-spec per_second(pos_integer()) -> pos_integer().
per_second(Ms) -> 1000 div Ms.

%% @doc Where a report of interval `K' waits while second `N' is collected: a late one (of a
%% second already written) counts in the first interval of `N', as a late second did.
-spec key(pos_integer(), pos_integer(), pos_integer()) -> pos_integer().
key(K, N, Per) -> max(K, (N - 1) * Per + 1).

%% @doc Second `N' is complete when each live agent has reported its last interval (`Seen':
%% each agent's highest interval reported; agents report in order).
-spec complete(pos_integer(), pos_integer(), [term()], #{term() => non_neg_integer()}) ->
    boolean().
complete(N, Per, Live, Seen) -> lists:all(fun(A) -> maps:get(A, Seen, 0) >= N * Per end, Live).

%% @doc Second `N''s intervals out of `Pending' (interval => reports), in order, each with its
%% reports (none: `[]'); and what is left pending (later intervals).
-spec take(pos_integer(), pos_integer(), #{pos_integer() => [R]}) ->
    {[{pos_integer(), [R]}], #{pos_integer() => [R]}}.
take(N, Per, Pending) ->
    lists:mapfoldl(fun(K, P) ->
                           case maps:take(K, P) of
                               error -> {{K, []}, P};
                               {Reports, P1} -> {{K, Reports}, P1}
                           end
                   end, Pending, lists:seq((N - 1) * Per + 1, N * Per)).

%% @doc Figures merged into `Empty', in turn (`beamscale_load_metrics:merge/2').
-spec fold([beamscale_load_metrics:interval()], beamscale_load_metrics:interval()) ->
    beamscale_load_metrics:interval().
fold(Intervals, Empty) ->
    lists:foldl(fun(I, Acc) -> beamscale_load_metrics:merge(Acc, I) end, Empty, Intervals).

%% @doc When interval `K' ends, in seconds into the load.
-spec end_s(pos_integer(), pos_integer()) -> float().
end_s(K, Ms) -> K * Ms / 1000.

%% @doc The middle of interval `K', in seconds (its phase and offered rate are those there).
-spec mid_s(pos_integer(), pos_integer()) -> float().
mid_s(K, Ms) -> (K - 0.5) * Ms / 1000.

%% @doc How many fine rows a run writes at most.
-spec max_rows() -> pos_integer().
max_rows() -> ?MAX_ROWS.
