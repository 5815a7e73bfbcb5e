%% @doc mbrot: which pixels of an image of the complex plane lie in the Mandelbrot set. Every row
%% of the image is a worker process.
-module(beamscale_bench_mbrot).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).

%% Iterations before a point is taken to be in the set.
-define(MAX_ITER, 255).
%% The plane shown: real part -2.0 .. 1.0, imaginary part -1.5 .. 1.5.
-define(RE0, -2.0).
-define(IM0, -1.5).
-define(SPAN, 3.0).

%% @doc `[Width, Height]': one row per worker, rows scaled with the logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    {Width, RowsPerCore} = beamscale_bench_util:sized(Version, {{320, 64}, {1600, 512},
                                                                {4000, 2048}}),
    [[Width, RowsPerCore * beamscale_bench_util:cores(Conf)]].

%% @doc Prints how many of the `Width * Height' points are in the set.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Width, Height | _], _Peers, _Conf) ->
    Counts = beamscale_bench_util:fork_join(
               [fun() -> row(Width, Height, Y) end || Y <- lists:seq(0, Height - 1)]),
    io:format("mbrot: ~b x ~b points, ~b in the set~n", [Width, Height, lists:sum(Counts)]).

-spec description() -> string().
description() -> "Mandelbrot set, one process per image row (CPU, floating point)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

row(Width, Height, Y) ->
    Im = ?IM0 + ?SPAN * Y / Height,
    length([X || X <- lists:seq(0, Width - 1),
                 escape(?RE0 + ?SPAN * X / Width, Im, 0.0, 0.0, 0) =:= ?MAX_ITER]).

%% z := z^2 + c until |z| > 2 or the iterations are spent; the iterations done.
escape(_CRe, _CIm, _ZRe, _ZIm, ?MAX_ITER) -> ?MAX_ITER;
escape(CRe, CIm, ZRe, ZIm, N) ->
    Re2 = ZRe * ZRe,
    Im2 = ZIm * ZIm,
    case Re2 + Im2 > 4.0 of
        true -> N;
        false -> escape(CRe, CIm, Re2 - Im2 + CRe, 2.0 * ZRe * ZIm + CIm, N + 1)
    end.
