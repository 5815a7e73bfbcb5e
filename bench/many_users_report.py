#!/usr/bin/env python3
"""Side by side, beamscale's and Tsung's runs of bench/many_users.sh's scenario.

    bench/many_users_report.py SUMMARY_JSON TSUNG_LOG RSS_SAMPLES USERS RATE

SUMMARY_JSON is beamscale's summary.json; TSUNG_LOG Tsung's tsung.log (statistics dumped every
second); RSS_SAMPLES the lines `UNIX_TIME PID ROLE VMRSS_KB` of bench/emulators_rss.py around
Tsung. Memory is counted the same way on both sides: the resident memory of the emulators that
hold users (beamscale's load nodes, Tsung's client VMs; not the controlling node) when the users
in flight first reach their peak, over those users; and that RSS less the same emulators' RSS
before the load. The arrival rate is the mean of the per-second user starts over the whole
seconds before the one in which the last user started.
"""
import json
import sys


def steady_rate(counts):
    """Mean of per-second starts, the last second (USERS reached or the phase's end) left out."""
    full = counts[:-1]
    return (sum(full) / len(full), len(full)) if full else (float("nan"), 0)


def beamscale(path):
    s = json.load(open(path))
    m = s["memory"]
    rows = sorted((r for r in s["per_second"] if r["phase"] == "ramp"), key=lambda r: r["t_s"])
    counts = [r["sessions_started"] for r in rows]
    while counts and counts[-1] == 0:
        counts.pop()
    return {"users": m["users_in_flight"], "rss": m["rss_bytes"] / 1024,
            "start": m["rss_start_bytes"] / 1024, "procs": m["processes"],
            "rate": steady_rate(counts), "requests": s["requests"], "errors": s["errors"],
            "reasons": s["errors_by_reason"]}


def tsung_dumps(path):
    """[(dump time, {stat name: [values]})] of tsung.log, in order."""
    dumps = []
    for line in open(path):
        f = line.split()
        if line.startswith("# stats: dump at"):
            dumps.append((int(f[4]), {}))
        elif line.startswith("stats: ") and dumps:
            dumps[-1][1][f[1]] = [float(v) for v in f[2:]]
    return dumps


def samples_by_time(path):
    """{time: {pid: (role, kb)}} of the RSS samples, times in order."""
    by = {}
    for line in open(path):
        t, pid, role, kb = line.split()
        by.setdefault(float(t), {})[int(pid)] = (role, int(kb))
    return dict(sorted(by.items()))


def tsung(log, samples_path):
    dumps = tsung_dumps(log)
    users = [d.get("users", [0])[0] for _, d in dumps]
    peak = max(users)
    t_peak = dumps[users.index(peak)][0]
    starts = [d.get("users_count", [0])[0] for _, d in dumps]
    first = next(i for i, n in enumerate(starts) if n > 0)
    counts = starts[first + 1:]  # the first interval is partial: the load starts within it
    while counts and counts[-1] == 0:
        counts.pop()
    # The load starts within the second before the first dump that counts a user.
    t_load = dumps[first][0] - 1
    samples = samples_by_time(samples_path)
    at_peak = min(samples, key=lambda t: abs(t - t_peak))
    clients = {p: kb for p, (role, kb) in samples[at_peak].items() if role == "client"}
    before = {}
    for t, procs in samples.items():
        if t < t_load:
            before.update({p: kb for p, (role, kb) in procs.items() if role == "client"})
    ctrl = sum(kb for role, kb in samples[at_peak].values() if role == "controller")
    errors = {k: v[-1] for k, v in dumps[-1][1].items() if k.startswith("error_")}
    requests = sum(d.get("request", [0])[0] for _, d in dumps)
    return {"users": int(peak), "rss": sum(clients.values()),
            "start": sum(before.get(p, 0) for p in clients), "procs": len(clients),
            "missing_start": [p for p in clients if p not in before], "controller": ctrl,
            "rate": steady_rate(counts), "requests": int(requests),
            "errors": int(sum(errors.values())), "reasons": errors, "lag": at_peak - t_peak}


def main():
    bs = beamscale(sys.argv[1])
    ts = tsung(sys.argv[2], sys.argv[3])
    users, rate = int(sys.argv[4]), float(sys.argv[5])
    per = {k: r["rss"] / r["users"] if r["users"] else float("nan") for k, r in
           (("bs", bs), ("ts", ts))}
    above = {k: (r["rss"] - r["start"]) / r["users"] if r["users"] else float("nan") for k, r in
             (("bs", bs), ("ts", ts))}
    print("%-44s %14s %14s" % ("", "beamscale", "tsung"))
    row = "%-44s %14s %14s"
    print(row % ("users in flight at the peak (of %d)" % users, bs["users"], ts["users"]))
    print(row % ("emulators holding users", bs["procs"], ts["procs"]))
    print(row % ("their RSS at the peak (MiB)", "%.1f" % (bs["rss"] / 1024),
                 "%.1f" % (ts["rss"] / 1024)))
    print(row % ("their RSS before the load (MiB)", "%.1f" % (bs["start"] / 1024),
                 "%.1f" % (ts["start"] / 1024)))
    print(row % ("memory per user (KB, RSS / users)", "%.1f" % per["bs"], "%.1f" % per["ts"]))
    print(row % ("above the RSS before the load (KB/user)", "%.1f" % above["bs"],
                 "%.1f" % above["ts"]))
    print(row % ("arrival rate (/s, offered %.0f/s)" % rate,
                 "%.1f over %d s" % bs["rate"], "%.1f over %d s" % ts["rate"]))
    print(row % ("requests", bs["requests"], ts["requests"]))
    print(row % ("errors", bs["errors"], ts["errors"]))
    for name, r in (("beamscale", bs), ("tsung", ts)):
        if r["errors"]:
            print("%s errors by reason: %s" % (name, r["reasons"]))
    print("tsung's controller (holds no users) RSS at the peak: %.1f MiB; RSS sampled %+.1f s "
          "from the peak's dump" % (ts["controller"] / 1024, ts["lag"]))
    if ts["missing_start"]:
        print("tsung client VMs started during the load (no RSS before it): %s"
              % ts["missing_start"])
    print("memory per user beamscale/tsung: %.2f (goal <= 0.5); above the start: %.2f"
          % (per["bs"] / per["ts"], above["bs"] / above["ts"]))


if __name__ == "__main__":
    main()
