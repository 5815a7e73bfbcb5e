%% @doc The noise floor of a comparison, pure: what the same code measured against itself (A/A)
%% across launches (fresh emulators) varies by. A launch's median is one replicate; the floor of
%% a side is the largest ratio between two of its launch medians, less 1 (the widest A/A
%% difference it showed), and a comparison's floor is the larger of its two sides'. A
%% difference is called only beyond that floor (and when its test says so): on a shared host
%% time moves 10-40 % between emulators, more than any test over one emulator's samples sees.
%% Generic over the quantity measured (ns per call, instructions per call, seconds).
-module(beamscale_stats_floor).

-export([side/1, floor/2, beyond/2, over_launches/1, warnings/2, max_cv/0]).
-export_type([spread/0, host/0]).

%% The figures of one point over its launches: the median of the launch medians, its 95 %
%% interval (Student's t over their logarithms; with one launch, none: `low' = `high'), their
%% coefficient of variation, least and largest, and how many.
-type spread() :: #{median := float(), low := float(), high := float(), cv := float(),
                    min := float(), max := float(), launches := pos_integer()}.
%% The host when measured: load average (1 min) and logical cores.
-type host() :: #{loadavg := float(), cores := pos_integer()}.

%% A cv above this (5 %) makes a figure not to be trusted: its interval is then wider than the
%% differences users look for.
-define(MAX_CV, 0.05).

%% @doc The cv (a fraction) above which a figure is said not to be trusted.
-spec max_cv() -> float().
max_cv() -> ?MAX_CV.

%% @doc The A/A floor of one side (a fraction: 0.04 is ±4 %): its largest launch median over
%% its least, less 1; `undefined' with fewer than two launches or a median not above 0.
-spec side([number()]) -> float() | undefined.
side(Medians) when length(Medians) >= 2 ->
    case lists:min(Medians) of
        Min when Min > 0 -> lists:max(Medians) / Min - 1;
        _ -> undefined
    end;
side(_) -> undefined.

%% @doc The floor of comparing side A with side B: the larger of the sides' floors, the one
%% known if only one is; `undefined' when neither side has two launches.
-spec floor([number()], [number()]) -> float() | undefined.
floor(A, B) ->
    case [F || F <- [side(A), side(B)], F =/= undefined] of
        [] -> undefined;
        Fs -> lists:max(Fs)
    end.

%% @doc Whether ratio `R' differs from 1 by more than `Floor' (either way, on a log scale: a
%% floor of 10 % admits 1.1 and 1 / 1.1). No floor known: `true', the test alone decides (and
%% the output says the floor is unknown).
-spec beyond(float() | null, float() | undefined) -> boolean().
beyond(null, _Floor) -> false;
beyond(_R, undefined) -> true;
beyond(R, Floor) when R > 0 -> abs(math:log(R)) > math:log(1 + Floor);
beyond(_R, _Floor) -> false.

%% @doc The spread of one point's launch medians (non-empty).
-spec over_launches([number(), ...]) -> spread().
over_launches(Medians0) ->
    Medians = lists:sort([float(M) || M <- Medians0]),
    K = length(Medians),
    Median = beamscale_stats:median(Medians),
    {Mean, Sd} = mean_sd(Medians),
    Cv = case {K, Mean == 0} of
             {1, _} -> 0.0;
             {_, true} -> 0.0;
             _ -> Sd / abs(Mean)
         end,
    {Low, High} = interval(Medians, Median),
    #{median => Median, low => Low, high => High, cv => Cv, min => hd(Medians),
      max => lists:last(Medians), launches => K}.

%% t over the logs of the medians (all above 0), widened to hold the median; else min..max.
interval([M], _Median) -> {M, M};
interval([Min | _] = Ms, Median) when Min > 0 ->
    K = length(Ms),
    {Mean, Sd} = mean_sd([math:log(M) || M <- Ms]),
    Half = beamscale_stats_t:quantile(0.975, K - 1) * Sd / math:sqrt(K),
    {min(Median, math:exp(Mean - Half)), max(Median, math:exp(Mean + Half))};
interval(Ms, _Median) -> {hd(Ms), lists:last(Ms)}.

%% The mean and the sample standard deviation (n - 1) of two or more numbers; 0.0 of one.
mean_sd([X]) -> {X, 0.0};
mean_sd(Xs) ->
    K = length(Xs),
    Mean = lists:sum(Xs) / K,
    {Mean, math:sqrt(lists:sum([(X - Mean) * (X - Mean) || X <- Xs]) / (K - 1))}.

%% @doc The warnings a figure of coefficient of variation `Cv' (a fraction) measured on `Host'
%% deserves: its cv above `max_cv/0', the host's load above its cores.
-spec warnings(float(), host() | none) -> [iodata()].
warnings(Cv, Host) ->
    [io_lib:format("cv ~.1f % is above ~b %: this figure is not to be trusted",
                   [Cv * 100, round(?MAX_CV * 100)]) || Cv > ?MAX_CV]
        ++ [io_lib:format("load average ~.2f is above the host's ~b cores: figures measured "
                          "now are not to be trusted", [L, C])
            || #{loadavg := L, cores := C} <- [Host], L > C].
