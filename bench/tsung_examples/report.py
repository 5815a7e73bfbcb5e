"""The table of bench/tsung_examples.sh: DIR NAME... -> per example, a beamscale row (DIR/bs-NAME:
summary.json, run.json's warnings) and a Tsung row (DIR/ts-NAME/*/tsung.log), or the reason a
tool gave instead of numbers."""
import glob
import json
import os
import re
import sys

# Tsung's counters that are not protocol counters: users, bytes, connections, the totals above.
TSUNG_PLAIN = {"users", "users_count", "finish_users_count", "connected", "size_rcv",
               "size_sent", "match", "nomatch"}


def tsung(path):
    logs = glob.glob(os.path.join(path, "*", "tsung.log"))
    if not logs:
        return None
    samples, counters = {}, {}
    for line in open(logs[0], errors="replace"):
        f = line.split()
        if len(f) < 4 or f[0] != "stats:" or f[1].startswith("{"):
            continue
        if len(f) >= 9:  # a sample: name, count, mean, stddev, max, min, ...: counts add up
            samples[f[1]] = samples.get(f[1], 0) + int(float(f[2]))
        else:  # a counter: name, this interval, total so far
            counters[f[1]] = int(float(f[3]))
    if not samples and not counters:
        return None
    errors = sum(v for k, v in counters.items() if k.startswith("error_"))
    proto = {k: v for k, v in counters.items()
             if k not in TSUNG_PLAIN and not k.startswith("error_") and v}
    return {"sessions": counters.get("finish_users_count", 0),
            "requests": samples.get("request", 0), "errors": errors,
            "match": counters.get("match", 0), "nomatch": counters.get("nomatch", 0),
            "counters": proto,
            "reasons": {k[len("error_"):]: v for k, v in counters.items()
                        if k.startswith("error_") and v}}


def tsung_said(out, name):
    """What Tsung's controller log says went wrong, in a line: a refused file, a user process's
    crash, a TLS alert, no client host; and a run that `timeout` stopped."""
    text = ""
    for log in glob.glob(os.path.join(out, "ts-" + name, "*", "tsung_controller*.log")):
        text += " ".join(open(log, errors="replace").read().split())
    said = []
    for pattern, form in [
            (r"Error while parsing XML config file: (.{0,160})", "refused the file: %s"),
            (r"Error: \{tls_alert, \{\w+, \"([^\"]*)", "TLS: %s"),
            (r"Reason for termination == \*\* \{'function not exported', \[\{(\w+),(\w+)",
             "a user crashed: %s:%s is not exported (gone from OTP 25)"),
            (r"Reason for termination == \*\* (.{0,120})", "a user crashed: %s"),
            (r"Starting tsung clients on hosts: \[\]()", "no client host%s (no batch job)")]:
        m = re.search(pattern, text)
        if m:
            said.append(form % m.groups())
            break
    try:
        if "exit 124" in open(os.path.join(out, "ts-%s.out" % name)).read():
            said.append("stopped by timeout")
    except OSError:
        pass
    return short("; ".join(s.replace("\\n", "").strip() for s in said), 200) if said else None


def beamscale(path):
    try:
        s = json.load(open(os.path.join(path, "summary.json")))
    except OSError:
        return None
    counts = s.get("counts", {})
    match = sum(v for k, v in counts.items() if k == "match" or k.startswith("match."))
    nomatch = sum(v for k, v in counts.items() if k == "nomatch" or k.startswith("nomatch."))
    proto = {k: v for k, v in counts.items()
             if v and not re.match(r"(no)?match(\.|$)", k)}
    proto.update({str(k): v for k, v in s.get("statuses", {}).items()})
    try:
        warnings = json.load(open(os.path.join(path, "run.json"))).get("warnings", [])
    except OSError:
        warnings = []
    return {"sessions": s.get("sessions_done", 0), "requests": s.get("requests", 0),
            "errors": s.get("errors", 0), "match": match, "nomatch": nomatch,
            "counters": proto, "reasons": s.get("errors_by_reason", {}), "warnings": warnings}


def beamscale_reason(out, name):
    try:
        lines = [l.strip() for l in open(os.path.join(out, "bs-%s.err" % name), errors="replace")
                 if l.strip()]
    except OSError:
        lines = []
    said = [l for l in lines if l.startswith("beamscale load:") and "ignored" not in l]
    text = (said or lines or ["no summary written"])[-1]
    return short(text.replace(out + "/", ""))


def short(text, n=150):
    return text if len(text) <= n else text[:n - 3] + "..."


def pairs(d):
    return " ".join("%s=%s" % (k, d[k]) for k in sorted(d)) or "-"


def row(name, tool, r):
    print("| %s | %s | %d | %d | %d | %d / %d | %s |" % (
        name, tool, r["sessions"], r["requests"], r["errors"], r["match"], r["nomatch"],
        pairs(r["counters"])))
    if r["reasons"]:
        print("|  |  | errors by reason: %s |" % short("; ".join(
            "%s x%d" % (k, v) for k, v in sorted(r["reasons"].items(), key=lambda x: -x[1]))))


def main(out, names):
    print("| example | tool | sessions | requests | errors | match / nomatch | counters |")
    print("|---|---|---|---|---|---|---|")
    for n in names:
        skip = os.path.join(out, n + ".skip")
        if os.path.exists(skip):
            print("| %s | both | %s |" % (n, short(open(skip).read().strip())))
            continue
        b = beamscale(os.path.join(out, "bs-" + n))
        if b:
            row(n, "beamscale", b)
            for w in b["warnings"]:
                print("|  |  | says: %s |" % short(w.replace(out + "/", ""), 400))
        else:
            print("| %s | beamscale | %s |" % (n, beamscale_reason(out, n)))
        t = tsung(os.path.join(out, "ts-" + n))
        said = tsung_said(out, n)
        if t:
            row(n, "tsung", t)
            if said:
                print("|  |  | says: %s |" % said)
        else:
            print("| %s | tsung | %s |" % (n, said or "no statistics written"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
