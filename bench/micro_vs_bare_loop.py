"""The table of bench/micro_vs_bare_loop.sh from its figures file.

Lines of the file: `SIDE ROUND INDEX MEDIAN P10` (SIDE bare, bench or aa: a second bare loop
in emulators of its own, the A/A control; ns/call, the median of the samples and their 10th
percentile) and `load ROUND 0 LOADAVG 0`. Two tables: the medians (bench's own figure), then
the 10th percentiles (on a shared host preemption only adds, so the low samples move less).
Per expression: the median ns/call of each side over the rounds, the ratio of medians
bench/bare and aa/bare, each with a 95 % interval (bootstrap over rounds, resampled whole: a
round's sides ran side by side), and the quartiles of the rounds' own ratios. The A/A ratio is
what one comparison of fresh emulators can tell: bench/bare is honest where it is inside the A/A
spread, and a 5 % goal is testable only where the A/A interval is within 5 %.
    python3 bench/micro_vs_bare_loop.py FIGURES EXPR...
"""
import random
import statistics
import sys

DRAWS = 2000
GOAL = 0.05


def figures(path, column):
    table, load = {}, []
    for line in open(path):
        side, rnd, i, *values = line.split()
        if side == "load":
            load.append(float(values[0]))
        elif len(values) > column:
            table[(side, rnd, int(i))] = float(values[column])
    return table, load


def ratio_of_medians(table, rounds, i, side):
    num = statistics.median(table[(side, r, i)] for r in rounds)
    den = statistics.median(table[("bare", r, i)] for r in rounds)
    return num / den if den > 0 else float("nan")


def interval(table, rounds, i, side, rng):
    """95 % bootstrap interval of the ratio of medians, rounds resampled whole."""
    draws = sorted(ratio_of_medians(table, rng.choices(rounds, k=len(rounds)), i, side)
                   for _ in range(DRAWS))
    return draws[int(0.025 * DRAWS)], draws[int(0.975 * DRAWS) - 1]


def quartiles(table, rounds, i, side):
    each = sorted(table[(side, r, i)] / table[("bare", r, i)] for r in rounds
                  if table[("bare", r, i)] > 0)
    q = statistics.quantiles(each, n=4) if len(each) > 1 else each * 3
    return q[0], q[2]


def rounds_for_goal(n, low, high):
    """Rounds for the A/A interval to narrow to +-5 %: its width shrinks as 1/sqrt(rounds)."""
    return max(n, round(n * ((high - low) / 2 / GOAL) ** 2))


def verdict(low, high):
    if 1 - GOAL <= low and high <= 1 + GOAL:
        return "within 5 %"
    if high < 1 - GOAL or low > 1 + GOAL:
        return "off"
    return "undecided"


def main(path, exprs):
    for column, title in ((0, "medians of samples (bench's figure)"),
                          (1, "10th percentiles of samples")):
        print("ns per call, %s:" % title)
        load = report(*figures(path, column), exprs)
    print("%d rounds; load average (1 min) %.1f..%.1f, median %.1f" % (
        len(load) - 1, min(load), max(load), statistics.median(load)))


def report(table, load, exprs):
    rng = random.Random(1)
    print("%-44s %8s %8s  %-21s %-21s %s" % ("expression", "bare ns", "bench ns",
                                             "bench/bare (95 %)", "A/A aa/bare (95 %)",
                                             "bench/bare verdict"))
    for i, expr in enumerate(exprs, 1):
        rounds = sorted({r for (s, r, j) in table if j == i and s == "bare"
                         and all((x, r, i) in table for x in ("bench", "aa"))}, key=int)
        if not rounds:
            print("%-44s no complete round" % expr)
            continue
        cells = []
        for side in ("bench", "aa"):
            low, high = interval(table, rounds, i, side, rng)
            cells.append((ratio_of_medians(table, rounds, i, side), low, high))
        print("%-44s %8.1f %8.1f  %5.3f (%5.3f..%5.3f)  %5.3f (%5.3f..%5.3f)  %s" % (
            expr, statistics.median(table[("bare", r, i)] for r in rounds),
            statistics.median(table[("bench", r, i)] for r in rounds),
            *cells[0], *cells[1], verdict(cells[0][1], cells[0][2])))
        print("%-44s %17s  rounds' q1..q3 %5.3f..%5.3f, A/A %5.3f..%5.3f; A/A within 5 %% "
              "in ~%d rounds" % ("", "", *quartiles(table, rounds, i, "bench"),
                                *quartiles(table, rounds, i, "aa"),
                                rounds_for_goal(len(rounds), *cells[1][1:])))
    return load


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
