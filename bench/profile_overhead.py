#!/usr/bin/env python3
"""The figures of bench/profile_overhead.sh from its runs in DIR (plainN/, profN/, flags/).

    bench/profile_overhead.py DIR

Measured times: per scheduler count, the median over rounds of each profiled run's median
iteration over that of the plain runs (measurements.csv). The flag: the median over launches
of each launch's median iteration with `+JPperf true' over that without (flags/). Perf's cost:
each profiled point's median call under perf over its median call without
(profN/profiles/*/*.json). Each ratio with a bootstrap 95 % interval (resampling the runs or
launches of each side, or the points), 2000 resamples, fixed seed.
"""
import csv
import glob
import json
import random
import statistics
import sys

RESAMPLES = 2000


def interval(draw):
    """The 2.5th and 97.5th percentiles of RESAMPLES values of draw()."""
    values = sorted(draw() for _ in range(RESAMPLES))
    return values[int(0.025 * RESAMPLES)], values[int(0.975 * RESAMPLES) - 1]


def geomean(xs):
    return statistics.geometric_mean(xs)


def perf_cost(root, rng):
    ratios = []
    for f in sorted(glob.glob(f"{root}/prof*/profiles/*/*.json")):
        m = json.load(open(f))
        if "median_with_s" in m and m.get("median_without_s"):
            ratios.append(m["median_with_s"] / m["median_without_s"])
    if not ratios:
        return "  perf's cost on sampled calls: no profiled point"
    lo, hi = interval(lambda: geomean(rng.choices(ratios, k=len(ratios))))
    points = " ".join(f"{r:.3f}" for r in ratios)
    return (f"  perf's cost on sampled calls, per point: {points}\n"
            f"  perf's cost on sampled calls: ratio {geomean(ratios):.3f} "
            f"[{lo:.3f}, {hi:.3f}] over {len(ratios)} points")


def run_medians(root, kind):
    """Per scheduler count, the median iteration of each run of this kind, by round."""
    by = {}
    for f in sorted(glob.glob(f"{root}/{kind}*/measurements.csv")):
        rnd = int(f.split("/")[-2][len(kind):])
        rows = list(csv.DictReader(open(f)))
        for s in {r["schedulers"] for r in rows}:
            secs = [float(r["seconds"]) for r in rows if r["schedulers"] == s]
            by.setdefault(s, {})[rnd] = statistics.median(secs)
    return by


def ratio_line(what, a, b, rng):
    """B over A (dicts of medians by round or launch), with its interval and the pairs."""
    ratio = statistics.median(b.values()) / statistics.median(a.values())
    xs, ys = list(a.values()), list(b.values())
    lo, hi = interval(lambda: statistics.median(rng.choices(ys, k=len(ys)))
                      / statistics.median(rng.choices(xs, k=len(xs))))
    pairs = " ".join(f"{a[k]:.3f}/{b[k]:.3f}" for k in sorted(set(a) & set(b), key=int))
    return (f"  {what}: ratio {ratio:.3f} [{lo:.3f}, {hi:.3f}] over {len(xs)} and {len(ys)}"
            f"\n    pairs (s): {pairs}")


def profiled_runs(root, rng):
    """Runs share their host's moment per round: the runs are what is resampled."""
    plain, prof = run_medians(root, "plain"), run_medians(root, "prof")
    return "\n".join(ratio_line(f"measured time, profiled run / plain run, {s} sched.",
                                plain[s], prof[s], rng)
                     for s in sorted(set(plain) & set(prof), key=int))


def launch_medians(root):
    """Per scheduler count and flag set, the median iteration of each launch."""
    its = {}
    for row in csv.DictReader(open(f"{root}/flags/measurements.csv")):
        key = (row["schedulers"], row["erl_args"], row["launch"])
        its.setdefault(key, []).append(float(row["seconds"]))
    by = {}
    for (s, args, launch), secs in its.items():
        by.setdefault(s, {}).setdefault(args, {})[launch] = statistics.median(secs)
    return by


def flag(root, rng):
    """Iterations of one launch share its node and moment: launches are what is resampled."""
    return "\n".join(ratio_line(f"+JPperf true / without (measured nodes no longer have it), "
                                f"{s} sched.", sets["plain"], sets["jpperf"], rng)
                     for s, sets in sorted(launch_medians(root).items(),
                                           key=lambda kv: int(kv[0])))


def main():
    rng = random.Random(1)
    print(profiled_runs(sys.argv[1], rng))
    print(flag(sys.argv[1], rng))
    print(perf_cost(sys.argv[1], rng))


if __name__ == "__main__":
    main()
