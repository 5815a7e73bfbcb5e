%% @doc The output of `beamscale compare' of two runs measured with the instruction clock, pure:
%% the results of `beamscale_stats_instr:compare_runs/2' as text (the clock named, one line per
%% result, then a count) and as the page `compare.html'.
-module(beamscale_report_compare_instr).

-export([text/2, html/2]).

-type result() :: beamscale_stats_instr:run_result(beamscale_stats:key()).
%% The runs' directories and counters (valgrind, pmu).
%% unit: what a count is of (default: per call, less the empty loop's).
-type runs() :: #{a := unicode:chardata(), b := unicode:chardata(), counter_a := binary(),
                  counter_b := binary(), unit => binary()}.

%% @doc The clock's line, one line per result, then a count.
-spec text([result()], runs()) -> iodata().
text(Results, Runs) ->
    [clock(Runs), $\n,
     [io_lib:format("~ts  ~ts  ~ts~n", [beamscale_report_compare:label(K), ratio(R), verdict(R)])
      || #{key := K} = R <- Results],
     summary(Results), $\n].

%% @doc `compare.html': the clock, the counts and verdicts as a table.
-spec html([result()], runs()) -> iodata().
html(Results, #{a := A, b := B} = Runs) ->
    Rows = [{atom_to_list(V), [beamscale_report_compare:label(K), fmt(MA), fmt(MB), ratio(R),
                               floor_text(F), verdict(R)]}
            || #{key := K, median_a := MA, median_b := MB, verdict := V, floor := F} = R
                   <- Results],
    Table = beamscale_report_html:table(["benchmark / phase / args @ environment",
                                         "instructions/call A", "instructions/call B", "B / A",
                                         "A/A floor", "verdict"], Rows),
    beamscale_report_html:page("beamscale compare (instructions)", <<>>,
                               [beamscale_report_html:el(h1, "beamscale compare (instructions)"),
                                beamscale_report_html:el(p, ["A: ", A]),
                                beamscale_report_html:el(p, ["B: ", B]),
                                beamscale_report_html:el(p, clock(Runs)),
                                beamscale_report_html:el(p, summary(Results)),
                                Table]).

%%% Internals

clock(#{counter_a := C, counter_b := C} = Runs) ->
    ["clock: instructions retired ", unit(Runs), ", counted by ", C,
     " in both runs; a difference is called only when the two sides' counts do not overlap"];
clock(#{counter_a := CA, counter_b := CB} = Runs) ->
    ["clock: instructions retired ", unit(Runs), ", counted by ", CA, " in A and ",
     CB, " in B (other counters: a difference may be the counter's); a difference is called "
     "only when the two sides' counts do not overlap"].

unit(Runs) -> maps:get(unit, Runs, <<"per call, less the empty loop's">>).

ratio(#{ratio := undefined}) -> "ratio undefined (a count is not positive)";
ratio(#{ratio := R, median_a := MA, median_b := MB}) ->
    [io_lib:format("~.4f", [R]), "x (A ", fmt(MA), ", B ", fmt(MB), " instructions/call)"].

verdict(#{verdict := same, floor := F} = R) ->
    ["same in instructions (within the floor ", floor_text(F), ", ", over(R), ")"];
verdict(#{verdict := V, ratio := Ratio, floor := F} = R) ->
    [atom_to_list(V), " instructions by ", pct(abs(Ratio - 1) * 100), " % (ranges apart, floor ",
     floor_text(F), ", ", over(R), ")"].

floor_text(F) -> ["+/-", pct(F * 100), " %"].

over(#{over := launches, launches_a := LA, launches_b := LB}) ->
    io_lib:format("over ~b and ~b launches, each its least count", [LA, LB]);
over(#{over := samples, n_a := NA, n_b := NB}) ->
    io_lib:format("over ~b and ~b counted samples, one launch a side: no launch-to-launch floor",
                  [NA, NB]).

summary(Results) ->
    io_lib:format("~b compared in instructions, ~b with more in B, ~b with fewer in B",
                  [length(Results), count(more, Results), count(fewer, Results)]).

count(V, Results) -> length([R || #{verdict := V1} = R <- Results, V1 =:= V]).

%% Counts of a few hundred instructions and more agree to 0.1 %: shown to the instruction.
fmt(V) when abs(V) >= 100 -> integer_to_list(round(V));
fmt(V) -> io_lib:format("~.2f", [float(V)]).

pct(V) -> io_lib:format("~.2f", [float(V)]).
