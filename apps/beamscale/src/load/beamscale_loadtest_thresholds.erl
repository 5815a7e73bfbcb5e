%% @doc A load run's thresholds (docs/thresholds.md): the scenario's and the command line's,
%% evaluated after each second on the figures so far (an `:abort' one ends the run) and at the
%% end, into the verdicts `summary.json', the console and the page show.
-module(beamscale_loadtest_thresholds).

-export([of_run/2, run_opts/1, verdicts/2, json/1, table/1, failed/1]).

-type threshold() :: beamscale_stats_threshold:threshold().
-type verdict() :: beamscale_stats_threshold:verdict().

%% @doc The scenario's thresholds, then those of the command line (its option `thresholds'):
%% `load''s; `saturate' and the studies judge their levels otherwise.
-spec of_run(beamscale_load_scenario:scenario(), map()) -> [threshold()].
of_run(Scenario, Opts) ->
    maps:get(thresholds, Scenario, []) ++ maps:get(thresholds, Opts, []).

%% @doc The load run's `check' option: each second's evaluation, when there are thresholds.
-spec run_opts([threshold()]) -> beamscale_load_run:opts().
run_opts([]) -> #{};
run_opts(Ths) ->
    #{check => fun(N, Total) ->
                       beamscale_stats_threshold:check(
                         Ths, N, beamscale_load_results:threshold_source(Total, N))
               end}.

%% @doc The verdicts on a finished run's figures.
-spec verdicts([threshold()], beamscale_load_run:result()) -> [verdict()].
verdicts(Ths, #{total := Total, duration_s := D}) ->
    beamscale_stats_threshold:verdicts(Ths, beamscale_load_results:threshold_source(Total, D)).

%% @doc The verdicts as `summary.json''s `thresholds'.
-spec json([verdict()]) -> [map()].
json(Verdicts) ->
    [V#{value := case Value of none -> null; _ -> Value end}
     || #{value := Value} = V <- Verdicts].

%% @doc The table for the console: a line a threshold, pass or FAIL, the measured value.
-spec table([verdict()]) -> iodata().
table([]) -> [];
table(Verdicts) ->
    Width = lists:max([string:length(T) || #{threshold := T} <- Verdicts]),
    ["thresholds:\n"
     | [io_lib:format("  ~ts  ~-*ts  ~ts~n", [mark(Ok), Width, T, M])
        || #{threshold := T, ok := Ok, measured := M} <- Verdicts]].

mark(true) -> "pass";
mark(false) -> "FAIL".

%% @doc The thresholds that failed, by their text.
-spec failed([verdict()]) -> [binary()].
failed(Verdicts) -> [T || #{threshold := T, ok := false} <- Verdicts].
