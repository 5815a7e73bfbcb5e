%% @doc Charts as inline SVG, drawn in Erlang (pure: data in, iodata out), for the one-file
%% reports. Two kinds:
%%
%% `line_chart(Series, Options)': one polyline per series, with optional error bars.
%% ```
%% Series = [#{name => "otp/default", points => [{1, 0.52, 0.50, 0.55}, {2, 0.30}]}],
%% beamscale_report_svg:line_chart(Series, #{title => "big", x_label => "schedulers",
%%                                    y_label => "time (s)"})
%% '''
%% A point is `{X, Y}' or `{X, Y, Low, High}' (an interval drawn as an error bar). A series may
%% set `dashed => true' (e.g. an ideal line) and `color'.
%%
%% `bar_chart(Categories, Series, Options)': one bar per series in each category, side by side,
%% or stacked with `stacked => true'; each series has one value per category, or `none' for a
%% missing bar (nothing drawn, counted as 0 when stacked).
%% ```
%% beamscale_report_svg:bar_chart(["user", "system"], [#{name => "s1", values => [3.0, 1.0]}],
%%                         #{stacked => true, y_label => "CPU %"})
%% '''
%% Options (all optional): `title', `x_label', `y_label', `width' and `height' (pixels),
%% `y_min' (default 0; `auto' fits the data), `x_ticks' (the x values to label; default: the
%% data's x values when at most 12, else evenly spaced), `unit' (appended to hover values).
%%
%% Each series is a `<g class="series" data-name="...">' and the `<svg>' carries
%% `data-series="N"', so tests (and readers) can count series; every point and bar has a
%% `<title>' showing its values on hover. All text is HTML-escaped.
-module(beamscale_report_svg).

-export([line_chart/2, bar_chart/3, defaults/1, ticks/3, fmt/1]).
-export_type([series/0, bar_series/0, point/0, options/0]).

-type point() :: {number(), number()} | {number(), number(), number(), number()}.
-type series() :: #{name := beamscale_report_html:text(), points := [point()],
                    dashed => boolean(), color => string()}.
-type bar_series() :: #{name := beamscale_report_html:text(), values := [number() | none],
                        color => string()}.
-type options() :: #{title => beamscale_report_html:text(), x_label => beamscale_report_html:text(),
                     y_label => beamscale_report_html:text(), width => pos_integer(),
                     height => pos_integer(), y_min => number() | auto,
                     x_ticks => [number()] | auto, stacked => boolean(),
                     unit => beamscale_report_html:text()}.

-define(PALETTE, ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                  "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]).
%% Margins around the plot area: left, right, top, bottom (room for labels and the legend).
-define(ML, 64).
-define(MR, 16).
-define(MT, 28).
-define(MB, 44).
-define(LEGEND_ROW, 16).

%% @doc Options with every default filled in; the legend needs a row per series.
-spec defaults(options()) -> map().
defaults(Opts) ->
    maps:merge(#{title => "", x_label => "", y_label => "", width => 480, height => 300,
                 y_min => 0, x_ticks => auto, stacked => false, unit => ""}, Opts).

%% @doc A line chart with error bars (see the module doc).
-spec line_chart([series()], options()) -> iodata().
line_chart(Series0, Opts0) ->
    Series = colored(Series0),
    Points = lists:append([Ps || #{points := Ps} <- Series]),
    Xs = [element(1, P) || P <- Points],
    Ys = lists:append([[element(2, P) | high_low(P)] || P <- Points]),
    Opts = defaults(Opts0),
    XTicks = case maps:get(x_ticks, Opts) of
                 auto -> x_ticks(lists:usort(Xs));
                 Given -> Given
             end,
    {X0, X1} = range(Xs ++ XTicks),
    {Y0, Y1} = y_range(Ys, Opts),
    Frame = frame(Series, Opts),
    Sx = scale(X0, X1, ?ML, ?ML + plot_w(Frame)),
    Sy = scale(Y0, Y1, ?MT + plot_h(Frame), ?MT),
    Axes = axes(Frame, Opts, [{Sx(X), fmt(X)} || X <- XTicks],
                [{Sy(Y), fmt(Y)} || Y <- ticks(Y0, Y1, 5)]),
    Body = [line_series(S, Sx, Sy, Opts) || S <- Series],
    svg(Frame, Opts, length(Series), [Axes, Body, legend(Series, Frame)]).

%% @doc A grouped (or stacked) bar chart (see the module doc).
-spec bar_chart([beamscale_report_html:text()], [bar_series()], options()) -> iodata().
bar_chart(Categories, Series0, Opts0) ->
    Series = colored(Series0),
    Opts = defaults(Opts0),
    Stacked = maps:get(stacked, Opts),
    Values = [V || #{values := Vs} <- Series, V <- Vs, V =/= none],
    Tops = case Stacked of
               true -> [lists:sum(Col) || Col <- columns([[zero(V) || V <- Vs]
                                                          || #{values := Vs} <- Series])];
               false -> Values
           end,
    {Y0, Y1} = y_range([0 | Tops], Opts),
    Frame = frame(Series, Opts),
    Sy = scale(Y0, Y1, ?MT + plot_h(Frame), ?MT),
    NC = max(1, length(Categories)),
    Slot = plot_w(Frame) / NC,
    XLabels = [{?ML + Slot * (I - 0.5), C} || {I, C} <- enumerate(Categories)],
    Axes = axes(Frame, Opts, XLabels, [{Sy(Y), fmt(Y)} || Y <- ticks(Y0, Y1, 5)]),
    Bars = bars(Series, Categories, Slot, Sy, Y0, Stacked, Opts),
    svg(Frame, Opts, length(Series), [Axes, Bars, legend(Series, Frame)]).

%% @doc About `N' round tick values covering `[Low, High]' (steps of 1, 2 or 5 times 10^k).
-spec ticks(number(), number(), pos_integer()) -> [number()].
ticks(Low, High, _N) when High =< Low -> [Low];
ticks(Low, High, N) ->
    Raw = (High - Low) / N,
    Mag = math:pow(10, math:floor(math:log10(Raw))),
    Step = hd([S * Mag || S <- [1, 2, 5, 10], S * Mag >= Raw]),
    First = math:ceil(Low / Step - 1.0e-9),
    Last = math:floor(High / Step + 1.0e-9),
    [clean(K * Step) || K <- lists:seq(trunc(First), trunc(Last))].

%% @doc A number for people: integers as they are, others with 3 significant digits.
-spec fmt(number()) -> binary().
fmt(I) when is_integer(I) -> integer_to_binary(I);
fmt(F) when F == trunc(F), abs(F) < 1.0e9 -> integer_to_binary(trunc(F));
fmt(F) ->
    A = abs(F),
    Digits = if A >= 100 -> 0; A >= 10 -> 1; A >= 1 -> 2;
                true -> min(12, 2 - trunc(math:floor(math:log10(A))))
             end,
    strip(float_to_binary(float(F), [{decimals, Digits}])).

%%% Internals

strip(B) ->
    case binary:match(B, <<".">>) of
        nomatch -> B;
        _ -> string_trim(string_trim(B, $0), $.)
    end.

string_trim(B, C) -> string:trim(B, trailing, [C]).

clean(F) -> float(round(F * 1.0e9)) / 1.0e9.

high_low({_, _, L, H}) -> [L, H];
high_low(_) -> [].

x_ticks(Xs) when length(Xs) =< 12 -> Xs;
x_ticks(Xs) -> ticks(lists:min(Xs), lists:max(Xs), 8).

range([]) -> {0, 1};
range(Vs) ->
    case {lists:min(Vs), lists:max(Vs)} of
        {Same, Same} -> {Same - 1, Same + 1};
        MinMax -> MinMax
    end.

%% The y axis starts at y_min (0 by default) and leaves 5 % headroom above the data.
y_range(Ys, Opts) ->
    {Lo, Hi} = range(Ys),
    Base = case maps:get(y_min, Opts) of
               auto -> Lo;
               Min -> min(Min, Lo)
           end,
    Top = if Hi > Base -> Hi + (Hi - Base) * 0.05; true -> Base + 1 end,
    {Base, Top}.

%% The legend has three columns, or one when a series name is too long to share a row.
frame(Series, #{width := W, height := H}) ->
    Long = [N || #{name := N} <- Series, string:length(text_of(N)) > 22],
    Cols = case Long of [] -> 3; _ -> 1 end,
    #{w => W, h => H, cols => Cols,
      legend_h => ?LEGEND_ROW * ((length(Series) + Cols - 1) div Cols)}.

plot_w(#{w := W}) -> W - ?ML - ?MR.
plot_h(#{h := H}) -> H - ?MT - ?MB.

scale(D0, D1, R0, R1) when D1 == D0 -> fun(_) -> (R0 + R1) / 2 end;
scale(D0, D1, R0, R1) -> fun(V) -> R0 + (V - D0) * (R1 - R0) / (D1 - D0) end.

svg(#{w := W, h := H, legend_h := LH}, Opts, N, Content) ->
    Total = H + LH + 8,
    Title = maps:get(title, Opts),
    [io_lib:format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"~b\" "
                   "height=\"~b\" viewBox=\"0 0 ~b ~b\" data-series=\"~b\" role=\"img\" "
                   "font-family=\"sans-serif\" font-size=\"11\">",
                   [W, Total, W, Total, N]),
     "<title>", beamscale_report_html:escape(Title), "</title>",
     "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>",
     text(W / 2, 16, "middle", [{"font-weight", "bold"}, {"font-size", "13"}], Title),
     Content, "</svg>\n"].

axes(#{w := W, h := H} = F, Opts, XLabels, YLabels) ->
    Bottom = H - ?MB,
    Right = W - ?MR,
    [[[line(?ML, Y, Right, Y, "#e4e4e4"), text(?ML - 4, Y + 4, "end", [], L)]
      || {Y, L} <- YLabels],
     [[line(X, Bottom, X, Bottom + 4, "#444"), text(X, Bottom + 16, "middle", [], L)]
      || {X, L} <- XLabels],
     line(?ML, Bottom, Right, Bottom, "#444"), line(?ML, ?MT, ?ML, Bottom, "#444"),
     text(?ML + plot_w(F) / 2, H - 8, "middle", [], maps:get(x_label, Opts)),
     text_rotated(14, ?MT + plot_h(F) / 2, maps:get(y_label, Opts))].

line_series(#{name := Name, points := Points, color := C} = S, Sx, Sy, Opts) ->
    Sorted = lists:keysort(1, Points),
    Coords = [[num(Sx(element(1, P))), $,, num(Sy(element(2, P))), $\s] || P <- Sorted],
    Dash = case maps:get(dashed, S, false) of
               true -> " stroke-dasharray=\"6 4\"";
               false -> ""
           end,
    ["<g class=\"series\" data-name=\"", beamscale_report_html:escape(Name), "\">",
     "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"", C, "\"", Dash, " points=\"",
     Coords, "\"/>", [marker(Name, P, C, Sx, Sy, Opts) || P <- Sorted], "</g>\n"].

marker(Name, P, C, Sx, Sy, Opts) ->
    X = Sx(element(1, P)),
    Y = Sy(element(2, P)),
    Bar = case P of
              {_, _, L, H} ->
                  [line(X, Sy(L), X, Sy(H), C), line(X - 4, Sy(L), X + 4, Sy(L), C),
                   line(X - 4, Sy(H), X + 4, Sy(H), C)];
              _ -> []
          end,
    ["<g>", Bar, "<circle cx=\"", num(X), "\" cy=\"", num(Y), "\" r=\"3.5\" fill=\"", C,
     "\"><title>", beamscale_report_html:escape(hover(Name, P, maps:get(unit, Opts))),
     "</title></circle></g>"].

hover(Name, {X, Y}, Unit) -> [text_of(Name), ": x=", fmt(X), ", y=", fmt(Y), text_of(Unit)];
hover(Name, {X, Y, L, H}, Unit) ->
    [hover(Name, {X, Y}, Unit), " [", fmt(L), ", ", fmt(H), "]"].

bars(Series, Categories, Slot, Sy, Y0, Stacked, Opts) ->
    NS = max(1, length(Series)),
    Width = case Stacked of true -> Slot * 0.6; false -> Slot * 0.8 / NS end,
    Bases = lists:duplicate(length(Categories), Y0),
    {Out, _} = lists:foldl(
                 fun({I, #{name := Name, values := Vs, color := C}}, {Acc, Below}) ->
                         Rects = [bar(Name, Cat, V, Base, ?ML + Slot * (J - 1), I, Slot,
                                      Width, Stacked, Sy, C, Opts)
                                  || {J, {Cat, V, Base}} <- enumerate(zip3(Categories, Vs,
                                                                           Below))],
                         Next = case Stacked of
                                    true -> [B + zero(V) || {V, B} <- lists:zip(Vs, Below)];
                                    false -> Below
                                end,
                         G = ["<g class=\"series\" data-name=\"",
                              beamscale_report_html:escape(Name), "\">", Rects, "</g>\n"],
                         {[G | Acc], Next}
                 end, {[], Bases}, enumerate(Series)),
    lists:reverse(Out).

bar(_Name, _Cat, none, _Base, _SlotX, _I, _Slot, _Width, _Stacked, _Sy, _C, _Opts) -> [];
bar(Name, Cat, V, Base, SlotX, I, Slot, Width, Stacked, Sy, C, Opts) ->
    X = case Stacked of
            true -> SlotX + (Slot - Width) / 2;
            false -> SlotX + Slot * 0.1 + Width * (I - 1)
        end,
    {Top, Bottom} = {Sy(Base + V), Sy(Base)},
    ["<rect x=\"", num(X), "\" y=\"", num(min(Top, Bottom)), "\" width=\"", num(Width),
     "\" height=\"", num(abs(Bottom - Top)), "\" fill=\"", C, "\"><title>",
     beamscale_report_html:escape([text_of(Name), " / ", text_of(Cat), ": ", fmt(V),
                            text_of(maps:get(unit, Opts))]), "</title></rect>"].

zero(none) -> 0;
zero(V) -> V.

legend(Series, #{w := W, h := H, cols := Cols}) ->
    Col = (W - ?ML) / Cols,
    [begin
         X = ?ML + Col * ((I - 1) rem Cols),
         Y = H + 10 + ?LEGEND_ROW * ((I - 1) div Cols),
         ["<g class=\"legend\">", line(X, Y - 4, X + 18, Y - 4, C),
          text(X + 22, Y, "start", [], Name), "</g>"]
     end || {I, #{name := Name, color := C}} <- enumerate(Series)].

colored(Series) ->
    [S#{color => maps:get(color, S, lists:nth((I - 1) rem length(?PALETTE) + 1, ?PALETTE))}
     || {I, S} <- enumerate(Series)].

line(X1, Y1, X2, Y2, Color) ->
    ["<line x1=\"", num(X1), "\" y1=\"", num(Y1), "\" x2=\"", num(X2), "\" y2=\"", num(Y2),
     "\" stroke=\"", Color, "\" stroke-width=\"1.5\"/>"].

text(X, Y, Anchor, Attrs, Text) ->
    ["<text x=\"", num(X), "\" y=\"", num(Y), "\" text-anchor=\"", Anchor, "\"",
     [[$\s, K, "=\"", V, $"] || {K, V} <- Attrs], ">", beamscale_report_html:escape(Text),
     "</text>"].

text_rotated(X, Y, Text) ->
    ["<text transform=\"translate(", num(X), ",", num(Y), ") rotate(-90)\" text-anchor=\"middle\">",
     beamscale_report_html:escape(Text), "</text>"].

text_of(T) when is_number(T); is_atom(T) -> beamscale_report_html:escape(T);
text_of(T) -> T.

num(V) -> float_to_binary(float(V), [{decimals, 1}]).

enumerate(L) -> lists:zip(lists:seq(1, length(L)), L).

zip3(As, Bs, Cs) ->
    N = lists:min([length(As), length(Bs), length(Cs)]),
    lists:zip3(lists:sublist(As, N), lists:sublist(Bs, N), lists:sublist(Cs, N)).

columns([]) -> [];
columns(Rows) ->
    N = lists:min([length(R) || R <- Rows]),
    [[lists:nth(I, R) || R <- Rows] || I <- lists:seq(1, N)].
