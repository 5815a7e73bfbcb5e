#!/usr/bin/env python3
"""Instructions of one run less another's, idle work left out, per unit of work.

    bench/cg_work.py DIR NAME BASE UNITS [TOP]

Reads the cachegrind files DIR/NAME.cg.* and DIR/BASE.cg.* (of beam.smp processes only, as
bench/xmpp_vs_tsung.sh writes them), sums each function's instructions, takes BASE's from NAME's
and prints the difference over UNITS (chats), with the functions of idle schedulers left out
(waiting, thread progress, aux work, polling; the schedulers' clock reads, timer-wheel checks,
wake-ups of sleeping schedulers and delayed-deallocation checks, which a scheduler's loop makes
at each pass: they grow with wall time, not with the work; between two runs of one client they
moved by 16 000 to 26 000 instructions a chat either way), then
the TOP functions of the difference. A timed run's whole-run difference moves with how much idle
spinning fits in it; this is the figure that stays (docs/load-measurements.md, issue 54).
"""
import collections
import glob
import re
import sys

IDLE = re.compile(r'scheduler_wait|erts_thr_progress|thr_prgr_|handle_aux_work|ethr_|rwmutex|'
                  r'get_os_drift_corrected_time|erts_check_io|erts_poll|check_balance|'
                  r'erts_msacc|pthread_|clock_gettime|__lll_|epoll|futex|wake_|'
                  r'erts_get_monotonic_time|erts_sched_finish_poke|erts_check_next_timeout_time|'
                  r'erts_alcu_check_delayed_dealloc')
EMULATOR = re.compile(r'cmd: \S*/beam\.smp ')


def counts(pattern):
    total = collections.Counter()
    for name in glob.glob(pattern):
        with open(name, errors='replace') as f:
            head = [next(f, '') for _ in range(4)]
            if not any(EMULATOR.match(line) for line in head):
                continue
            fn = None
            for line in f:
                if line.startswith('fn='):
                    fn = line[3:].strip()
                elif line[:1].isdigit():
                    parts = line.split()
                    if len(parts) > 1:
                        total[fn] += int(parts[1])
    return total


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    d, name, base, units = argv[1], argv[2], argv[3], float(argv[4])
    top = int(argv[5]) if len(argv) > 5 else 0
    a, b = counts(f'{d}/{name}.cg.*'), counts(f'{d}/{base}.cg.*')
    diff = {k: a.get(k, 0) - b.get(k, 0) for k in set(a) | set(b)}
    work = {k: v for k, v in diff.items() if not IDLE.search(k or '')}
    idle = sum(diff.values()) - sum(work.values())
    total = sum(work.values())
    if units <= 0:
        print(f'{name}: no units')
        return
    print(f'{name}: {total / units:.0f} instructions per chat less idle work '
          f'(idle difference {idle / 1e6:.1f} M)')
    for k, v in sorted(work.items(), key=lambda kv: -abs(kv[1]))[:top]:
        print(f'  {v / units:9.0f} {100 * v / total:5.1f} % {k}')


if __name__ == '__main__':
    main(sys.argv)
