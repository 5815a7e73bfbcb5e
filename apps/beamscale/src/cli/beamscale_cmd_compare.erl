%% @doc `beamscale compare RUN_A RUN_B': per benchmark, phase, args and environment measured in
%% both runs, the ratio of medians B / A with its 95 % interval and whether the difference is
%% significant, over launches (see `beamscale_stats_compare'; output by
%% `beamscale_report_compare'); writes
%% `compare.html' (into RUN_B unless `--out FILE' names another place). With
%% `--fail-if-slower PCT' (a decimal) it fails (exit 1) when a significant slowdown exceeds PCT
%% percent, so it can gate CI on performance regressions. Two runs with no result in common are
%% refused (exit 2): a gate that compares nothing passes everything, as are runs of two clocks.
%% Two load runs (a `load.csv' each) are compared by `beamscale_compare_load', two runs of the
%% instruction clock by `beamscale_compare_instr'.
-module(beamscale_cmd_compare).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "compare", summary => "compare two runs: ratio of medians and significance",
      usage => "beamscale compare RUN_A RUN_B [--fail-if-slower PCT] [--out FILE]\n"
               "       beamscale compare LOAD_A LOAD_B [--fail-if-p99-above PCT]\n"
               "                         [--fail-if-throughput-below PCT] [--threshold EXPR]...\n"
               "                         [--out FILE]",
      details => "B / A above 1 means B is slower. Significant: p < 0.05 and the 95 % interval\n"
                 "of the ratio leaves out 1, both from a bootstrap that resamples launches,\n"
                 "then iterations (Mann-Whitney p when both runs have one launch).\n"
                 "Two runs of bench --clock instructions: instructions per call over launches,\n"
                 "a difference called when the two sides' counts do not overlap.\n"
                 "compare.html goes into RUN_B unless --out names a file.\n"
                 "Two load runs: latency percentiles, throughput and errors side by side,\n"
                 "B / A of the per-second medians with a bootstrap interval over seconds.",
      options => [{fail_if_slower, "--fail-if-slower", number,
                   "exit 1 when a significant slowdown exceeds PCT percent (10, 2.5)"},
                  {fail_if_p99_above, "--fail-if-p99-above", number,
                   "load runs: exit 1 when B's p99 is significantly above A's by PCT %"},
                  {fail_if_throughput_below, "--fail-if-throughput-below", number,
                   "load runs: exit 1 when B's throughput is significantly below A's by PCT %"},
                  {threshold, "--threshold", {list, text},
                   "load runs: exit 1 when B's figures fail EXPR, as load --threshold "
                   "(p95<300ms, errors<1%; docs/thresholds.md; repeatable)"},
                  {out, "--out", string, "where to write compare.html", {text, "RUN_B"}}]}.

%% @doc Compare the two runs, print the results, write the page.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := Opts, args := [A, B]} = Parsed) ->
    case [beamscale_writer:is_load(D) || D <- [A, B]] of
        [true, true] -> only(Opts, [fail_if_slower], "load", fun() ->
                                                                beamscale_compare_load:do(Parsed)
                                                        end);
        [false, false] -> only(Opts, [fail_if_p99_above, fail_if_throughput_below, threshold],
                               "suite",
                               fun() -> suite(A, B, Opts) end);
        [LoadA, _] -> {error, {mixed, A, LoadA, B}}
    end;
do(#{args := Args}) ->
    {error, {usage, length(Args)}}.

%% An option of the other kind of run is refused: a gate that cannot apply would pass silently.
only(Opts, Others, Kind, F) ->
    case [O || O <- Others, is_map_key(O, Opts)] of
        [] -> F();
        [O | _] -> {error, {not_for, O, Kind}}
    end.

suite(A, B, Opts) ->
    case [D || D <- [A, B],
               not filelib:is_regular(beamscale_format_rundir:path(D, measurements))] of
        [D | _] -> {error, {not_a_run_directory, D}};
        [] ->
            {InfoA, InfoB} = {run_info(A), run_info(B)},
            case {clock(InfoA), clock(InfoB)} of
                {CA, CB} when CA =/= CB -> {error, {clocks_differ, A, CA, B, CB}};
                {"instructions", _} ->
                    notes(InfoA, InfoB),
                    beamscale_compare_instr:do({A, InfoA}, {B, InfoB}, Opts);
                _ ->
                    notes(InfoA, InfoB),
                    Results = beamscale_stats_compare:compare(beamscale_store:measurements(A),
                                                              beamscale_store:measurements(B)),
                    compared(A, B, Results, Opts)
            end
    end.

notes(InfoA, InfoB) ->
    _ = [io:format("note: ~s differs (A: ~ts, B: ~ts); a ratio may be the machine's, not the "
               "code's~n", [What, VA, VB])
     || {What, VA, VB} <- differences(InfoA, InfoB)],
    ok.

%% Nothing measured in both runs (a flag set or erl renamed, other benchmarks) is no comparison
%% at all: refused, or a gate would pass whatever changed.
compared(A, B, [], _Opts) -> {error, {nothing_in_common, A, B}};
compared(A, B, Results, Opts) ->
    io:put_chars(beamscale_report_compare:text(Results)),
    Out = maps:get(out, Opts, beamscale_format_rundir:path(B, compare)),
    Html = beamscale_report_compare:html(Results, #{a => A, b => B}),
    ok = beamscale_store:write_file(Out, Html),
    io:format("~ts~n", [Out]),
    gate(Results, maps:find(fail_if_slower, Opts)).

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({not_a_run_directory, D}) ->
    [D, ": not a run directory (no measurements.csv, nor a load's load.csv)"];
format_error({bad_threshold, Text, Msg}) ->
    io_lib:format("option --threshold ~0tp: ~ts", [Text, Msg]);
format_error({not_for, O, Kind}) ->
    ["--", string:replace(atom_to_list(O), "_", "-", all), " does not apply to ", Kind,
     " runs"];
format_error({mixed, A, LoadA, B}) ->
    {Load, Suite} = case LoadA of true -> {A, B}; false -> {B, A} end,
    [Load, " is a load run and ", Suite, " is not: compare two suite runs or two load runs"];
format_error({nothing_in_common, A, B}) ->
    ["no result was measured in both runs ", A, " and ", B, " (a result is a benchmark, phase, "
     "args, erl alias, flag set alias, schedulers and nodes): nothing to compare"];
format_error({clocks_differ, A, CA, B, CB}) ->
    [A, " was measured by the ", CA, " clock, ", B, " by the ", CB, " clock: their figures are "
     "not comparable (run both with the same --clock)"];
format_error({usage, N}) ->
    io_lib:format("compare needs two run directories, got ~b arguments", [N]).

gate(_Results, error) -> ok;
gate(Results, {ok, Pct}) ->
    case beamscale_stats_compare:slower(Results, Pct) of
        [] -> ok;
        Slower -> {failed, io_lib:format("~b result(s) significantly slower by more than ~s %",
                                         [length(Slower), pct(Pct)])}
    end.

pct(Pct) when is_integer(Pct) -> integer_to_list(Pct);
pct(Pct) -> beamscale_format_float:decimal(Pct).

%% What run.json says of a run; an unreadable or missing one says nothing.
run_info(Dir) ->
    case file:read_file(beamscale_format_rundir:path(Dir, run_json)) of
        {ok, Bin} ->
            case beamscale_format_json:decode(Bin) of
                {ok, Info} when is_map(Info) -> Info;
                _ -> #{}
            end;
        {error, _} -> #{}
    end.

%% Runs from before --clock were timed by the wall clock (`bench''s by its time clock); `run'
%% says its clock in its config, `bench' beside it.
clock(#{<<"config">> := #{<<"clock">> := C}}) when is_binary(C) -> name(C);
clock(#{<<"clock">> := C}) when is_binary(C) -> name(C);
clock(#{<<"kind">> := <<"micro">>}) -> "time";
clock(_) -> "wall".

name(C) -> unicode:characters_to_list(string:slice(C, 0, 40)).

%% The environment beside the code: host, CPU, cores and each erl's release.
differences(InfoA, InfoB) ->
    Facts = [{"host", [<<"host">>]}, {"CPU model", [<<"cpu_model">>]},
             {"logical cores", [<<"logical_cores">>]}],
    Erls = [{["erl ", E, " release"], [<<"erls">>, E, <<"otp_release">>]}
            || E <- lists:usort(maps:keys(maps:get(<<"erls">>, InfoA, #{})))],
    [{What, text(VA), text(VB)} || {What, Path} <- Facts ++ Erls,
                                   VA <- [get(Path, InfoA)], VB <- [get(Path, InfoB)],
                                   VA =/= none, VB =/= none, VA =/= VB].

get([], V) -> V;
get([K | Rest], #{} = M) when is_map_key(K, M) -> get(Rest, maps:get(K, M));
get(_, _) -> none.

text(V) when is_binary(V) -> V;
text(V) -> io_lib:format("~0p", [V]).
