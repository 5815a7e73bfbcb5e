%% @doc The instruction clock's sections of a run page (`run --clock instructions'), pure:
%% instructions retired per iteration of each benchmark, phase, args and environment (its
%% launches' least counts, or its iterations with one launch) beside the median time, and,
%% with several erls, which release is faster per benchmark in instructions and by how much
%% (a difference called only when the two sides' counts do not overlap).
-module(beamscale_report_run_instr).

-export([sections/3]).

%% @doc The sections of a run's counts (`beamscale_instr_store:read/1'), its summary rows and
%% its erls' pairs (`beamscale_stats_otp:counts/1'); none when not counted.
-spec sections(beamscale_stats_instr:counts(tuple()), [beamscale_stats:row()], [map()]) ->
    [beamscale_report_run:section()].
sections(Counts, _Rows, _Pairs) when map_size(Counts) =:= 0 -> [];
sections(Counts, Rows, Pairs) ->
    [{"Instructions per iteration", counts(Counts, Rows)}
     | [{"Releases compared in instructions", [pair(P) || P <- Pairs]} || Pairs =/= []]].

counts(Counts, Rows) ->
    Time = maps:from_list([{{B, P, A, O, E, S, N}, M}
                           || #{benchmark := B, phase := P, args := A, otp := O, erl_args := E,
                                schedulers := S, nodes := N, median := M} <- Rows]),
    Head = ["benchmark", "args", "otp", "erl_args", "instructions / iteration", "min..max",
            "spread", "over", "median time (s)"],
    [el(p, "Instructions retired by each iteration's run/3 on the node under test (one "
           "scheduler), counted between two NIF calls around it: not the boot, not the "
           "harness. The figure is the median of the launches' least counts (of the "
           "iterations with one launch); time was measured in the same iterations, under the "
           "counter (Valgrind slows the node about 50 times)."),
     beamscale_report_html:table([list_to_binary(H) || H <- Head],
                                 [bins(row(K, Ls, maps:get(K, Time, null)))
                                  || {K, Ls} <- lists:sort(maps:to_list(Counts))])].

row({B, P, A, O, E, _S, _N}, Launches, Time) ->
    #{values := Xs, median := M, min := Min, max := Max, spread := Spread} =
        beamscale_stats_instr:point(Launches),
    Over = case Launches of
               [_] -> io_lib:format("~b iterations, 1 launch", [length(Xs)]);
               _ -> io_lib:format("~b launches", [length(Launches)])
           end,
    [label(B, P), A, O, E, fmt(M), [fmt(Min), "..", fmt(Max)],
     io_lib:format("~.2f %", [100 * Spread]), Over, time(Time)].

pair(#{base := Base, other := Other, results := Results}) ->
    Head = ["benchmark", "args", "erl_args", ["instructions ", Base], ["instructions ", Other],
            [Other, " / ", Base], "A/A floor", "which is faster"],
    [el(h3, [Other, " against ", Base]),
     beamscale_report_html:table([iolist_to_binary(H) || H <- Head],
                                 [bins([label(B, P), A, E, fmt(MA), fmt(MB), ratio(R),
                                        io_lib:format("+/-~.2f %", [100 * F]),
                                        verdict(Base, Other, R)])
                                  || #{key := {B, P, A, _, E, _, _}, median_a := MA,
                                       median_b := MB, floor := F} = R <- Results])].

ratio(#{ratio := undefined}) -> "-";
ratio(#{ratio := X}) -> io_lib:format("~.4f", [X]).

%% Fewer instructions is faster: by the share of the slower's count the faster saves.
verdict(_Base, _Other, #{verdict := same}) -> "no clear difference (counts overlap)";
verdict(_Base, Other, #{verdict := fewer, ratio := X}) ->
    io_lib:format("~ts faster by ~.1f % in instructions", [Other, 100 * (1 - X)]);
verdict(Base, _Other, #{verdict := more, ratio := X}) ->
    io_lib:format("~ts faster by ~.1f % in instructions", [Base, 100 * (1 - 1 / X)]).

%% Cells as text (the table takes a list of characters for a row's cell as numbers).
bins(Cells) -> [unicode:characters_to_binary(C) || C <- Cells].

label(B, B) -> B;
label(B, P) -> [B, " (", P, ")"].

time(null) -> "-";
time(M) -> beamscale_report_svg:fmt(M).

fmt(V) -> integer_to_list(round(V)).

el(Tag, Content) -> beamscale_report_html:el(Tag, unicode:characters_to_binary(Content)).
