%% @doc Axes for `beamscale_report_svg' (pure): the domain of an axis, linear or logarithmic,
%% the mapping to pixels, round tick values, and the choice of the tick labels that fit.
%%
%% A logarithmic axis is chosen (`auto') when the positive values span two decades or more: a
%% 3 ms uncorrected p99 beside a 1 000 ms corrected one must both be readable. Values at or below
%% 0 cannot be drawn on it and are left out by the chart.
%%
%% Tick labels never overlap: `fit/2' keeps a label only when its estimated extent (11-pixel
%% sans-serif, 6.5 pixels a character and a gap) clears the last label kept.
-module(beamscale_report_axis).

-export([kind/2, domain/3, scale/5, ticks/3, ticks/2, auto_x_ticks/2, fit/2, extent/3,
         drawable/2, fmt/1]).
-export_type([kind/0, label/0]).

-type kind() :: linear | log.
%% A tick: its position (pixels) and its text.
-type label() :: {number(), unicode:chardata()}.

%% Estimated width of a character of the 11-pixel labels (digits are about 6.1), and the least
%% free space between two labels.
-define(CHAR_W, 6.5).
-define(LINE_H, 12).
-define(GAP, 4).

%% @doc The kind of an axis from its option (`linear', `log' or `auto') and its values.
-spec kind(linear | log | auto, [number()]) -> kind().
kind(auto, Values) ->
    case [V || V <- Values, V > 0] of
        [] -> linear;
        Pos -> case lists:max(Pos) / lists:min(Pos) >= 100 of
                   true -> log;
                   false -> linear
               end
    end;
kind(Kind, _Values) -> Kind.

%% @doc Whether a value can be drawn on an axis of this kind.
-spec drawable(kind(), number()) -> boolean().
drawable(log, V) -> V > 0;
drawable(linear, _) -> true.

%% @doc The interval an axis covers. Linear: from `Min' (a number, or `auto' for the data's
%% least value) with 5 % headroom above; `Min' = `none' takes the data's range as it is. Log:
%% whole decades around the positive values.
-spec domain(kind(), [number()], number() | auto | none) -> {number(), number()}.
domain(log, Values, _Min) ->
    case [V || V <- Values, V > 0] of
        [] -> {1, 10};
        Pos ->
            Lo = math:pow(10, math:floor(math:log10(lists:min(Pos)) + 1.0e-9)),
            Hi = math:pow(10, math:ceil(math:log10(lists:max(Pos)) - 1.0e-9)),
            {Lo, case Hi > Lo of true -> Hi; false -> Lo * 10 end}
    end;
domain(linear, Values, none) -> range(Values);
domain(linear, Values, Min) ->
    {Lo, Hi} = range(Values),
    Base = case Min of
               auto -> Lo;
               _ -> min(Min, Lo)
           end,
    {Base, case Hi > Base of true -> Hi + (Hi - Base) * 0.05; false -> Base + 1 end}.

%% @doc The pixel of a value: `[D0, D1]' onto `[R0, R1]'.
-spec scale(kind(), number(), number(), number(), number()) -> fun((number()) -> float()).
scale(_, D0, D1, R0, R1) when D1 == D0 -> fun(_) -> (R0 + R1) / 2 end;
scale(linear, D0, D1, R0, R1) -> fun(V) -> R0 + (V - D0) * (R1 - R0) / (D1 - D0) end;
scale(log, D0, D1, R0, R1) ->
    {L0, L1} = {math:log10(D0), math:log10(D1)},
    fun(V) -> R0 + (math:log10(V) - L0) * (R1 - R0) / (L1 - L0) end.

%% @doc About `N' round linear tick values covering `[Low, High]' (1, 2 or 5 times 10^k).
-spec ticks(number(), number(), pos_integer()) -> [number()].
ticks(Low, High, _N) when High =< Low -> [Low];
ticks(Low, High, N) ->
    Raw = (High - Low) / N,
    Mag = math:pow(10, math:floor(math:log10(Raw))),
    Step = hd([S * Mag || S <- [1, 2, 5, 10], S * Mag >= Raw]),
    First = math:ceil(Low / Step - 1.0e-9),
    Last = math:floor(High / Step + 1.0e-9),
    [clean(K * Step) || K <- lists:seq(trunc(First), trunc(Last))].

%% @doc The ticks of an axis over its domain: about 5 round values when linear; the powers of
%% ten when logarithmic, with 2 and 5 times them when the axis spans at most two decades.
-spec ticks(kind(), {number(), number()}) -> [number()].
ticks(linear, {Lo, Hi}) -> ticks(Lo, Hi, 5);
ticks(log, {Lo, Hi}) ->
    {E0, E1} = {round(math:log10(Lo)), round(math:log10(Hi))},
    Steps = case E1 - E0 =< 2 of true -> [1, 2, 5]; false -> [1] end,
    [clean(S * math:pow(10, E)) || E <- lists:seq(E0, E1), S <- Steps,
                                   S * math:pow(10, E) =< Hi * (1 + 1.0e-9)].

%% @doc The x ticks drawn when none are given: the data's own x values when they are a few
%% integers (scheduler counts), else round values over their range (sample times, seconds).
-spec auto_x_ticks(kind(), [number()]) -> [number()].
auto_x_ticks(_, []) -> [];
auto_x_ticks(linear, Xs) ->
    case length(Xs) =< 12 andalso lists:all(fun(X) -> X == round(X) end, Xs) of
        true -> Xs;
        false -> ticks(lists:min(Xs), lists:max(Xs), 8)
    end;
auto_x_ticks(log, Xs) -> ticks(log, domain(log, Xs, none)).

%% @doc The labels to draw, in order of position: each kept only when it clears the last one
%% kept (`x': side by side; `y': one above the other).
-spec fit(x | y, [label()]) -> [label()].
fit(Axis, Labels) ->
    lists:reverse(lists:foldl(fun(L, []) -> [L];
                                 (L, [Last | _] = Kept) ->
                                      case clears(Axis, Last, L) of
                                          true -> [L | Kept];
                                          false -> Kept
                                      end
                              end, [], lists:keysort(1, Labels))).

%% @doc The estimated extent of a label along its axis: `{From, To}' in pixels.
-spec extent(x | y, number(), unicode:chardata()) -> {float(), float()}.
extent(x, Pos, Text) ->
    Half = ?CHAR_W * string:length(Text) / 2,
    {Pos - Half, Pos + Half};
extent(y, Pos, _Text) -> {Pos - ?LINE_H / 2, Pos + ?LINE_H / 2}.

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

clears(Axis, {P1, T1}, {P2, T2}) ->
    {_, End} = extent(Axis, P1, T1),
    {Start, _} = extent(Axis, P2, T2),
    Start - End >= ?GAP.

%% One value: a unit around it, or from 0 when all are 0 (a count that stayed at nothing is
%% not drawn in the middle of a -1..1 axis).
range([]) -> {0, 1};
range(Vs) ->
    case {lists:min(Vs), lists:max(Vs)} of
        {Zero, Zero} when Zero == 0 -> {0, 1};
        {Same, Same} -> {Same - 1, Same + 1};
        MinMax -> MinMax
    end.

strip(B) ->
    case binary:match(B, <<".">>) of
        nomatch -> B;
        _ -> string:trim(string:trim(B, trailing, "0"), trailing, ".")
    end.

clean(F) -> float(round(F * 1.0e9)) / 1.0e9.
