%% @doc The profile sections of a run page (docs/profiles.md): "What grew" (per benchmark, the
%% categories and functions whose share of CPU rose from the fewest to the most schedulers)
%% and the profile of every point (its categories, flame graph and top functions). Pure.
-module(beamscale_report_profile).

-export([sections/2]).
-export_type([point/0]).

%% One point's profile: benchmark, environment key, schedulers, the other environment fields
%% (the group the points of a benchmark are compared within), the folded stacks and its
%% figures (rate, window, samples, overhead) or the reason it has none. `axis' names what
%% `schedulers' counts when the points are not scheduler counts (a load level's sessions/s).
-type point() :: #{bench := binary(), env := binary(), schedulers := pos_integer(),
                   group := binary(), folded := beamscale_format_perf:folded(),
                   meta := #{binary() => term()}, axis => binary()}.

-define(TOP, 15).
-define(GREW, 10).

%% @doc `{Lead, Follow}': the "What grew" section, and the points' profiles, as page sections
%% (title and HTML); none without points. `Lcnt': the rows of lcnt.csv, which say whether the
%% nodes could count locks, or `none' where lock counting does not apply (load levels).
-spec sections([point()], [#{atom() => binary()}] | none) ->
    {[beamscale_report_run:section()], [beamscale_report_run:section()]}.
sections([], _Lcnt) -> {[], []};
sections(Points, LcntRows) ->
    Lcnt = LcntRows =:= none orelse
        lists:any(fun(R) -> maps:get(status, R, <<>>) =/= <<"not_available">> end, LcntRows),
    Sorted = lists:sort(fun(A, B) -> key(A) =< key(B) end, Points),
    What = case Points of
               [#{axis := Axis} | _] -> ["What grew with ", Axis, " (profiles)"];
               _ -> "What grew with schedulers (profiles)"
           end,
    {[{lists:flatten(io_lib:format("~ts", [What])), [beamscale_report_flame:legend(),
                                                 [grew(G) || G <- groups(Sorted)]]}],
     [{"Profiles of each point", [beamscale_report_flame:script(),
                                  [lcnt_note(Lcnt) || LcntRows =/= none],
                                  [point(P, I) || {I, P} <- lists:enumerate(Sorted)]]}]}.

key(#{bench := B, group := G, schedulers := S}) -> {B, G, S}.

groups(Points) ->
    Keys = lists:usort([{B, G} || #{bench := B, group := G} <- Points]),
    [{B, G, [P || #{bench := B1, group := G1} = P <- Points, {B1, G1} =:= {B, G},
                  ok(P)]} || {B, G} <- Keys].

ok(#{folded := F}) -> map_size(F) > 0.

grew({B, G, Ps}) when length(Ps) < 2 ->
    [el(h3, [B, " (", G, ")"]),
     el(p, "Fewer than two profiled points: nothing to compare.")];
grew({B, G, Ps}) ->
    #{schedulers := S1, folded := Small} = hd(Ps),
    #{schedulers := S2, folded := Large} = lists:last(Ps),
    #{categories := Cats, functions := Funs} = beamscale_stats_profile:grew(Small, Large, ?GREW),
    {Short, Long} = case hd(Ps) of
                        #{axis := Axis} -> {Axis, Axis};
                        _ -> {<<"sched.">>, <<"schedulers">>}
                    end,
    Head = fun(What) -> [What, [integer_to_list(S1), " ", Short, " %"],
                         [integer_to_list(S2), " ", Short, " %"], "growth (points)"] end,
    [el(h3, [B, " (", G, "): ", integer_to_list(S1), " to ", integer_to_list(S2), " ", Long]),
     beamscale_report_html:table(Head("category"),
                                 [growth_row({safe, swatch(C)}, X, Y, D)
                                  || {C, X, Y, D} <- Cats]),
     el(p, "Functions whose own share of CPU grew most:"),
     beamscale_report_html:table(Head("function"),
                                 [growth_row(F, X, Y, D) || {F, X, Y, D} <- Funs])].

growth_row(Name, X, Y, D) ->
    {case D >= 5.0 of true -> "slower"; false -> "" end, [Name, r1(X), r1(Y), r1(D)]}.

point(#{bench := B, env := Env, folded := Folded, meta := Meta}, I) ->
    [el(h3, [B, " @ ", Env]),
     el(p, figures(Meta, beamscale_stats_profile:samples(Folded))),
     case map_size(Folded) of
         0 -> [];
         _ -> body(Folded, I)
     end].

body(Folded, I) ->
    Cats = [{C, S} || {C, S} <- beamscale_stats_profile:category_shares(Folded), S > 0],
    [beamscale_report_html:table(["category", "% of samples"],
                                 [[{safe, swatch(C)}, r1(S)] || {C, S} <- Cats]),
     beamscale_report_flame:svg(Folded, ["flame", integer_to_list(I)]),
     el(p, "Top functions (self: samples in the function itself; total: with its callees):"),
     beamscale_report_html:table(["function", "self %", "total %"],
                                 [[F, r1(S), r1(T)]
                                  || {F, S, T} <- beamscale_stats_profile:top(Folded, ?TOP)])].

figures(#{<<"error">> := Why}, _N) -> ["No profile: ", Why];
figures(Meta, N) ->
    Over = case Meta of
               #{<<"overhead_pct">> := O} when is_number(O) ->
                   io_lib:format("; overhead ~.1f % (median call ~s s profiled, ~s s not)",
                                 [float(O), num(Meta, <<"median_with_s">>),
                                  num(Meta, <<"median_without_s">>)]);
               _ -> ""
           end,
    %% The emulator's sampling instead of perf's (not at perf's rate): said where it is read.
    {Rate, By} = case Meta of
                     #{<<"note">> := Note} -> {"", [" ", Note, ": no C functions, no lock waits."]};
                     _ -> {[" at ", num(Meta, <<"rate_hz">>), " Hz"], ""}
                 end,
    [io_lib:format("~b samples~s over ~s ms~s.", [N, Rate, num(Meta, <<"window_ms">>), Over]),
     By].

num(Meta, K) ->
    case maps:get(K, Meta, null) of
        V when is_integer(V) -> integer_to_list(V);
        V when is_float(V) -> io_lib:format("~.4g", [V]);
        _ -> "?"
    end.

lcnt_note(true) ->
    el(p, "Lock counts (lcnt) of each point are in the CPU section below.");
lcnt_note(false) ->
    el(p, "No lock counting: this erl has no lcnt emulator (erl -emu_type lcnt); with one, "
          "each point's most contended locks appear in the CPU section. Lock functions above "
          "come from perf's samples.").

swatch(C) ->
    io_lib:format("<span style=\"background:~s;padding:0 .4em\">~s</span>",
                  [beamscale_report_flame:colour(C), C]).

r1(X) -> list_to_float(float_to_list(float(X), [{decimals, 1}])).

el(Tag, Content) -> beamscale_report_html:el(Tag, unicode:characters_to_binary(Content)).
