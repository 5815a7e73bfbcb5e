%% @doc The highest and lowest mean over fixed windows of a per-second series, pure: Tsung's
%% report gives each statistic's highest and lowest 10-second mean (its statistics are sampled
%% every 10 s), a run's peaks and troughs that the whole run's mean hides.
-module(beamscale_stats_windows).

-export([extremes/2]).
-export_type([point/0, extremes/0]).

%% A second `T' (1, 2, ...) with a weight and the weighted sum of its values: for a latency,
%% the requests and their latencies summed; for a rate, 1 and the count of the second.
-type point() :: {T :: pos_integer(), Weight :: number(), Sum :: number()}.
-type extremes() :: #{highest := float(), lowest := float()}.

%% @doc The highest and lowest weighted mean over windows of `Width' seconds (seconds 1 to
%% `Width' are the first; the last may be shorter); a window of no weight (no request) has no
%% mean and is skipped; `none' when no window has one.
-spec extremes(pos_integer(), [point()]) -> extremes() | none.
extremes(Width, Points) ->
    Windows = lists:foldl(fun({T, W, S}, Acc) ->
                                  maps:update_with((T - 1) div Width,
                                                   fun({W0, S0}) -> {W0 + W, S0 + S} end,
                                                   {W, S}, Acc)
                          end, #{}, Points),
    case [S / W || {W, S} <- maps:values(Windows), W > 0] of
        [] -> none;
        Means -> #{highest => float(lists:max(Means)), lowest => float(lists:min(Means))}
    end.
