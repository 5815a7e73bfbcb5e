%% @doc `summary.csv' and `summary.json' of a run directory (DESIGN.md, "Run directory"), as pure
%% formatters of the rows `beamscale_stats:report_stats/1' gives.
%%
%% `summary.csv' has the contract columns, then extra ones at the end (so scripts that read the
%% contract columns by position keep working): `speedup_low,speedup_high' (the speedup's 95 %
%% interval), `cv' (coefficient of variation) and `noisy' (`true' when cv is above the threshold
%% of `beamscale_stats'), then the instruction clock's `instructions_median,instructions_min,
%% instructions_max,instructions_spread' (a `run --clock instructions' run's counts per
%% iteration, `beamscale_stats_instr:point/1'; empty for the time clocks). An empty speedup means
%% no base environment was measured.
-module(beamscale_report_summary).

-export([header/0, csv/1, json/2, with_sanity/2, with_instructions/2]).

-define(KEYS, [benchmark, phase, args, otp, erl_args, schedulers, nodes]).
%% CSV column, and the row key it comes from.
-define(STATS, [{n, n}, {median_s, median}, {mean_s, mean}, {stddev_s, stddev}, {min_s, min},
                {max_s, max}, {ci95_low_s, ci95_low}, {ci95_high_s, ci95_high},
                {speedup, speedup}, {efficiency, efficiency}, {sanity, sanity}]).
-define(EXTRA, [{speedup_low, speedup_low}, {speedup_high, speedup_high}, {cv, cv},
                {noisy, noisy}, {instructions_median, instructions_median},
                {instructions_min, instructions_min}, {instructions_max, instructions_max},
                {instructions_spread, instructions_spread}]).

%% @doc The column names of `summary.csv'.
-spec header() -> [atom()].
header() -> ?KEYS ++ [C || {C, _} <- ?STATS ++ ?EXTRA].

%% @doc The whole `summary.csv' of summary rows that carry a `sanity' verdict word.
-spec csv([beamscale_stats:row()]) -> iodata().
csv(Rows) ->
    Fields = ?KEYS ++ [K || {_, K} <- ?STATS ++ ?EXTRA],
    [beamscale_format_csv:line(header())
     | [beamscale_format_csv:line([field(maps:get(F, R, null)) || F <- Fields]) || R <- Rows]].

%% @doc The whole `summary.json': the run's metadata and every summary row.
-spec json(beamscale_format_json:object(), [beamscale_stats:row()]) -> iodata().
json(Meta, Rows) ->
    [beamscale_format_json:encode(#{run => Meta, results => Rows}), $\n].

%% @doc Rows with the sanity verdict of their benchmark (`unchecked' when none is known).
-spec with_sanity([beamscale_stats:row()], #{binary() => binary()}) -> [beamscale_stats:row()].
with_sanity(Rows, Verdicts) ->
    [R#{sanity => maps:get(B, Verdicts, <<"unchecked">>)} || #{benchmark := B} = R <- Rows].

%% @doc Rows with the instruction figures of their key in a run's counts
%% (`beamscale_instr_store:read/1'); a row without counts is left as it is.
-spec with_instructions([beamscale_stats:row()], beamscale_stats_instr:counts(tuple())) ->
    [beamscale_stats:row()].
with_instructions(Rows, Counts) ->
    [case maps:find({B, P, A, O, E, S, N}, Counts) of
         {ok, Launches} ->
             #{median := M, min := Min, max := Max, spread := Spread} =
                 beamscale_stats_instr:point(Launches),
             R#{instructions_median => M, instructions_min => Min, instructions_max => Max,
                instructions_spread => Spread};
         error -> R
     end || #{benchmark := B, phase := P, args := A, otp := O, erl_args := E,
              schedulers := S, nodes := N} = R <- Rows].

field(null) -> <<>>;
field(V) -> V.
