#!/usr/bin/env python3
"""The ETS study across releases as docs/studies/ets.md shows it: from a `study ets --otp R1,R2`
run's summary.csv, the access phase at one lookup mix under the `matrix` flag set, one row per
table type and concurrency option, the median ms of each release at each scheduler count and
the ratio of the last release to the first at the highest count.
    bench/otp_ets_table.py RUN_DIR/summary.csv [MIX]      (MIX default 90)"""
import csv, sys

def main(path, mix):
    cells, otps, scheds = {}, set(), set()
    with open(path) as f:
        for row in csv.DictReader(f):
            if row['benchmark'] != 'ets_bench' or row['phase'] != 'access' \
                    or row['erl_args'] != 'matrix':
                continue
            kind, option, m = row['args'].strip('[]').split(',')[:3]
            if m != mix or option.startswith('{'):
                continue
            otp, s = row['otp'], int(row['schedulers'])
            otps.add(otp)
            scheds.add(s)
            cells[(kind, option, otp, s)] = float(row['median_s']) * 1000
    otps = sorted(otps, key=lambda o: (int(o.split('-')[0]), o))
    scheds = sorted(scheds)
    keys = sorted({(k, o) for (k, o, _, _) in cells}, key=lambda ko: (ko[0] != 'set', ko))
    head = [f'{o}, {s} sched' for o in otps for s in scheds]
    print(f'| type | option | ' + ' | '.join(head) + f' | {otps[-1]} / {otps[0]} at {scheds[-1]} |')
    print('|---' * (len(head) + 3) + '|')
    for kind, option in keys:
        vals = [cells.get((kind, option, o, s)) for o in otps for s in scheds]
        first, last = cells.get((kind, option, otps[0], scheds[-1])), \
            cells.get((kind, option, otps[-1], scheds[-1]))
        ratio = f'{last / first:.2f}' if first and last else '-'
        print(f'| {kind} | {option} | '
              + ' | '.join('-' if v is None else f'{v:.0f}' for v in vals) + f' | {ratio} |')

if __name__ == '__main__':
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else '90')
