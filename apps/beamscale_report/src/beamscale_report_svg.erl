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
%% set `dashed => true' (e.g. an ideal line), `color', `line => false' (markers only, e.g. the
%% raw iterations), `r' (marker radius, 3.5) and `dx' (a pixel shift, to stand beside a line).
%%
%% `bar_chart(Categories, Series, Options)': one bar per series in each category, side by side,
%% or stacked with `stacked => true'; each series has one value per category, or `none' for a
%% missing bar (nothing drawn, counted as 0 when stacked), or `{Value, Low, High}' for a bar with
%% its interval drawn as a whisker (grouped bars; `High' may be `none' for an open interval).
%% ```
%% beamscale_report_svg:bar_chart(["user", "system"], [#{name => "s1", values => [3.0, 1.0]}],
%%                         #{stacked => true, y_label => "CPU %"})
%% '''
%% Options (all optional): `title', `x_label', `y_label', `width' and `height' (pixels),
%% `y_min' (default 0; `auto' fits the data), `x_ticks' (the x values to label, or
%% `{X, Label}'; default: the data's x values when they are at most 12 integers, else round
%% values), `unit' (appended to hover values), `x_scale' and `y_scale' (`linear', `log' or
%% `auto': log when the values span two decades; see `beamscale_report_axis'), `markers'
%% (`[{X, Label}]': vertical dashed lines, e.g. phase boundaries).
%%
%% Each series is a `<g class="series" data-name="...">' and the `<svg>' carries
%% `data-series="N"' and `data-x-scale'/`data-y-scale', so tests (and readers) can count series;
%% every point and bar has a `<title>' showing its values on hover. All text is HTML-escaped.
%% Tick labels that would overlap are left out (`beamscale_report_axis:fit/2').
-module(beamscale_report_svg).

-export([line_chart/2, bar_chart/3, defaults/1, ticks/3, fmt/1]).
-export_type([series/0, bar_series/0, point/0, options/0]).

-type point() :: {number(), number()} | {number(), number(), number(), number()}.
-type series() :: #{name := beamscale_report_html:text(), points := [point()],
                    dashed => boolean(), color => string(), line => boolean(),
                    r => number(), dx => number()}.
-type bar_series() :: #{name := beamscale_report_html:text(),
                        values := [number() | none | {number(), number(), number() | none}],
                        color => string()}.
-type options() :: #{title => beamscale_report_html:text(), x_label => beamscale_report_html:text(),
                     y_label => beamscale_report_html:text(), width => pos_integer(),
                     height => pos_integer(), y_min => number() | auto,
                     x_ticks => [number() | {number(), beamscale_report_html:text()}] | auto,
                     stacked => boolean(), unit => beamscale_report_html:text(),
                     x_scale => scale(), y_scale => scale(),
                     markers => [{number(), beamscale_report_html:text()}]}.
-type scale() :: linear | log | auto.

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
                 y_min => 0, x_ticks => auto, stacked => false, unit => "", x_scale => linear,
                 y_scale => linear, markers => []}, Opts).

%% @doc A line chart with error bars (see the module doc).
-spec line_chart([series()], options()) -> iodata().
line_chart(Series0, Opts0) ->
    Opts = defaults(Opts0),
    {XK, YK} = kinds(Series0, Opts),
    Series = colored([S#{points := lists:append([on_axes(XK, YK, P) || P <- Ps])}
                      || #{points := Ps} = S <- Series0]),
    Points = lists:append([Ps || #{points := Ps} <- Series]),
    Xs = [element(1, P) || P <- Points],
    XTicks = tick_list(maps:get(x_ticks, Opts), XK, lists:usort(Xs)),
    XDom = beamscale_report_axis:domain(XK, Xs ++ [X || {X, _} <- XTicks], none),
    YDom = beamscale_report_axis:domain(YK, ys(Points), maps:get(y_min, Opts)),
    Frame = (frame(Series, Opts))#{kinds => {XK, YK}},
    Sx = scale(XK, XDom, ?ML, ?ML + plot_w(Frame)),
    Sy = scale(YK, YDom, ?MT + plot_h(Frame), ?MT),
    Axes = axes(Frame, Opts, [{Sx(X), L} || {X, L} <- XTicks, within(X, XDom)],
                [{Sy(Y), fmt(Y)} || Y <- beamscale_report_axis:ticks(YK, YDom)]),
    Marks = [boundary(Sx(X), L, Frame) || {X, L} <- maps:get(markers, Opts), within(X, XDom)],
    Body = [line_series(S, Sx, Sy, Opts) || S <- Series],
    svg(Frame, Opts, length(Series), [Axes, Marks, Body, legend(Series, Frame)]).

%% @doc A grouped (or stacked) bar chart (see the module doc).
-spec bar_chart([beamscale_report_html:text()], [bar_series()], options()) -> iodata().
bar_chart(Categories, Series0, Opts0) ->
    Series = colored(Series0),
    Opts = defaults(Opts0),
    Stacked = maps:get(stacked, Opts),
    Values = [Y || #{values := Vs} <- Series, V <- Vs, Y <- bar_ys(V)],
    Tops = case Stacked of
               true -> [lists:sum(Col) || Col <- columns([[zero(V) || V <- Vs]
                                                          || #{values := Vs} <- Series])];
               false -> Values
           end,
    {Y0, _} = YDom = beamscale_report_axis:domain(linear, [0 | Tops], maps:get(y_min, Opts)),
    Frame = (frame(Series, Opts))#{kinds => {linear, linear}},
    Sy = scale(linear, YDom, ?MT + plot_h(Frame), ?MT),
    NC = max(1, length(Categories)),
    Slot = plot_w(Frame) / NC,
    XLabels = [{?ML + Slot * (I - 0.5), C} || {I, C} <- enumerate(Categories)],
    Axes = axes(Frame, Opts, XLabels,
                [{Sy(Y), fmt(Y)} || Y <- beamscale_report_axis:ticks(linear, YDom)]),
    Bars = bars(Series, Categories, Slot, Sy, Y0, Stacked, Opts),
    svg(Frame, Opts, length(Series), [Axes, Bars, legend(Series, Frame)]).

%% @doc About `N' round tick values covering `[Low, High]' (steps of 1, 2 or 5 times 10^k).
-spec ticks(number(), number(), pos_integer()) -> [number()].
ticks(Low, High, N) -> beamscale_report_axis:ticks(Low, High, N).

%% @doc A number for people: integers as they are, others with 3 significant digits.
-spec fmt(number()) -> binary().
fmt(V) -> beamscale_report_axis:fmt(V).

%%% Internals

%% The axes' kinds: linear unless asked for, or `auto' and the values span decades.
kinds(Series, Opts) ->
    Points = [P || #{points := Ps} <- Series, P <- Ps],
    {beamscale_report_axis:kind(maps:get(x_scale, Opts), [element(1, P) || P <- Points]),
     beamscale_report_axis:kind(maps:get(y_scale, Opts), ys(Points))}.

ys(Points) -> lists:append([[element(2, P) | high_low(P)] || P <- Points]).

%% A point as drawn on these axes: none when it cannot be (0 on a log axis), without its error
%% bar when the bar reaches 0 there.
on_axes(XK, YK, P) ->
    Ok = fun beamscale_report_axis:drawable/2,
    case {Ok(XK, element(1, P)) andalso Ok(YK, element(2, P)), P} of
        {false, _} -> [];
        {true, {X, Y, L, _}} ->
            case Ok(YK, L) of
                true -> [P];
                false -> [{X, Y}]
            end;
        {true, _} -> [P]
    end.

scale(Kind, {D0, D1}, R0, R1) -> beamscale_report_axis:scale(Kind, D0, D1, R0, R1).

tick_list(auto, Kind, Xs) -> [{X, fmt(X)} || X <- beamscale_report_axis:auto_x_ticks(Kind, Xs)];
tick_list(Given, _Kind, _Xs) -> [tick(T) || T <- Given].

tick({X, Label}) -> {X, Label};
tick(X) -> {X, fmt(X)}.

within(X, {Lo, Hi}) -> X >= Lo - 1.0e-9 andalso X =< Hi + 1.0e-9.

high_low({_, _, L, H}) -> [L, H];
high_low(_) -> [].

%% The legend has three columns, or one when a series name is too long to share a row.
frame(Series, #{width := W, height := H}) ->
    Long = [N || #{name := N} <- Series, string:length(text_of(N)) > 22],
    Cols = case Long of [] -> 3; _ -> 1 end,
    #{w => W, h => H, cols => Cols,
      legend_h => ?LEGEND_ROW * ((length(Series) + Cols - 1) div Cols)}.

plot_w(#{w := W}) -> W - ?ML - ?MR.
plot_h(#{h := H}) -> H - ?MT - ?MB.

svg(#{w := W, h := H, legend_h := LH, kinds := {XK, YK}}, Opts, N, Content) ->
    Total = H + LH + 8,
    Title = maps:get(title, Opts),
    [io_lib:format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"~b\" "
                   "height=\"~b\" viewBox=\"0 0 ~b ~b\" data-series=\"~b\" role=\"img\" "
                   "data-x-scale=\"~s\" data-y-scale=\"~s\" "
                   "font-family=\"sans-serif\" font-size=\"11\">",
                   [W, Total, W, Total, N, XK, YK]),
     "<title>", beamscale_report_html:escape(Title), "</title>",
     "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>",
     text(W / 2, 16, "middle", [{"font-weight", "bold"}, {"font-size", "13"}], Title),
     Content, "</svg>\n"].

%% Tick marks for every tick; labels only where they fit (beamscale_report_axis:fit/2).
axes(#{w := W, h := H} = F, Opts, XLabels, YLabels) ->
    Bottom = H - ?MB,
    Right = W - ?MR,
    [[line(?ML, Y, Right, Y, "#e4e4e4") || {Y, _} <- YLabels],
     [text(?ML - 4, Y + 4, "end", [], L) || {Y, L} <- beamscale_report_axis:fit(y, YLabels)],
     [line(X, Bottom, X, Bottom + 4, "#444") || {X, _} <- XLabels],
     [text(X, Bottom + 16, "middle", [], L) || {X, L} <- beamscale_report_axis:fit(x, XLabels)],
     line(?ML, Bottom, Right, Bottom, "#444"), line(?ML, ?MT, ?ML, Bottom, "#444"),
     text(?ML + plot_w(F) / 2, H - 8, "middle", [], maps:get(x_label, Opts)),
     text_rotated(14, ?MT + plot_h(F) / 2, maps:get(y_label, Opts))].

%% A vertical dashed line across the plot (a phase boundary), its label at the top: right of
%% the line, or left of it when it would run past the chart's right edge.
boundary(X, Label, #{w := W, h := H}) ->
    {From, To} = beamscale_report_axis:extent(x, 0, Label),
    {LabelX, Anchor} = case X + 3 + (To - From) > W of
                           true -> {X - 3, "end"};
                           false -> {X + 3, "start"}
                       end,
    ["<g class=\"marker\"><line x1=\"", num(X), "\" y1=\"", num(?MT), "\" x2=\"", num(X),
     "\" y2=\"", num(H - ?MB), "\" stroke=\"#888\" stroke-width=\"1\" "
     "stroke-dasharray=\"3 3\"/>",
     text(LabelX, ?MT + 10, Anchor, [{"fill", "#666"}, {"font-size", "10"}], Label), "</g>"].

line_series(#{name := Name, points := Points, color := C} = S, Sx, Sy, Opts) ->
    Sorted = lists:keysort(1, Points),
    Coords = [[num(Sx(element(1, P))), $,, num(Sy(element(2, P))), $\s] || P <- Sorted],
    Dash = case maps:get(dashed, S, false) of
               true -> " stroke-dasharray=\"6 4\"";
               false -> ""
           end,
    Line = case maps:get(line, S, true) of
               true -> ["<polyline fill=\"none\" stroke-width=\"2\" stroke=\"", C, "\"", Dash,
                        " points=\"", Coords, "\"/>"];
               false -> []
           end,
    Look = {maps:get(r, S, 3.5), maps:get(dx, S, 0)},
    ["<g class=\"series\" data-name=\"", beamscale_report_html:escape(Name), "\">", Line,
     [marker(Name, P, C, Look, Sx, Sy, Opts) || P <- Sorted], "</g>\n"].

marker(Name, P, C, {R, Dx}, Sx, Sy, Opts) ->
    X = Sx(element(1, P)) + Dx,
    Y = Sy(element(2, P)),
    Bar = case P of
              {_, _, L, H} ->
                  [line(X, Sy(L), X, Sy(H), C), line(X - 4, Sy(L), X + 4, Sy(L), C),
                   line(X - 4, Sy(H), X + 4, Sy(H), C)];
              _ -> []
          end,
    ["<g>", Bar, "<circle cx=\"", num(X), "\" cy=\"", num(Y), "\" r=\"", num(R), "\" fill=\"", C,
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
bar(Name, Cat, {V, L, H}, Base, SlotX, I, Slot, Width, Stacked, Sy, C, Opts) ->
    Rect = bar(Name, Cat, V, Base, SlotX, I, Slot, Width, Stacked, Sy, C, Opts),
    Mid = SlotX + Slot * 0.1 + Width * (I - 0.5),
    Top = case H of none -> V; _ -> H end,
    Cap = fun(Y) -> line(Mid - Width / 4, Sy(Y), Mid + Width / 4, Sy(Y), "#000") end,
    [Rect, "<g class=\"whisker\">", line(Mid, Sy(L), Mid, Sy(Top), "#000"), Cap(L),
     [Cap(H) || H =/= none], "<title>",
     beamscale_report_html:escape([text_of(Name), " / ", text_of(Cat), ": [", fmt(L), ", ",
                                   case H of none -> "-"; _ -> fmt(H) end, ")"]),
     "</title></g>"];
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
zero({V, _, _}) -> V;
zero(V) -> V.

bar_ys(none) -> [];
bar_ys({V, L, H}) -> [V, L | [H || H =/= none]];
bar_ys(V) -> [V].

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
