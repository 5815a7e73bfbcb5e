#!/usr/bin/env python3
"""How noisy were the launches of bench/ci_gate.sh's runs, and how many launches a side would a
gate need at that noise? Reads each run directory's measurements.csv under DIR (a, b, s runs),
takes each launch's median time, and prints the standard deviation of their logs (median and
90th percentile over the runs). A one-sided test at 5 % false alarms that catches a slowdown of
SLOWDOWN_PCT with 95 % power needs the difference of two means of n launches to be 3.29
standard errors: n = 2 (3.29 sigma / ln(1 + slowdown))^2 (a z-test; a t-test needs a little
more).
    bench/ci_gate_noise.py DIR LAUNCHES SLOWDOWN_PCT"""
import csv, glob, math, os, statistics, sys

def launch_medians(path):
    by = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            by.setdefault(row.get("launch", "1"), []).append(float(row["seconds"]))
    return [statistics.median(v) for v in by.values()]

def main(out, launches, slowdown):
    sds = []
    for path in sorted(glob.glob(os.path.join(out, "[abs]*", "measurements.csv"))):
        meds = launch_medians(path)
        if len(meds) > 1:
            sds.append(statistics.stdev(math.log(m) for m in meds))
    if not sds:
        print("launch noise: no run with two launches or more")
        return
    sds.sort()
    sigma = statistics.median(sds)
    delta = math.log(1 + slowdown / 100)
    se = sigma * math.sqrt(2 / launches)
    power = 0.5 * (1 + math.erf((delta / se - 1.645) / math.sqrt(2)))
    need = math.ceil(2 * (3.29 * sigma / delta) ** 2)
    print(f"launch noise (log sd of launch medians, {len(sds)} runs): median {sigma:.3f}, "
          f"p90 {sds[int(0.9 * (len(sds) - 1))]:.3f}")
    print(f"at that noise, {launches} launches a side catch a {slowdown:g} % slowdown with "
          f"probability {power:.2f} at best (z-test, 5 % false alarms); 19 of 20 needs "
          f"{need} launches a side, or noise below {delta / 3.29 / math.sqrt(2 / launches):.3f}")

if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
