#!/usr/bin/env python3
"""Runs a command as a child subreaper and samples its Erlang emulators' memory.

    bench/emulators_rss.py SAMPLES_FILE COMMAND [ARG...]

Emulators that a command starts detached (Tsung's client VMs: slave:start runs
`erl -detached`) leave its process tree; as a subreaper (prctl
PR_SET_CHILD_SUBREAPER) this process becomes their parent, so they are found by
the pids this run started, never by name. Every second it writes one line per
beam.smp descendant to SAMPLES_FILE: `UNIX_TIME PID ROLE VMRSS_KB`, ROLE `client`
for an emulator started with -master (a slave VM holding users) else
`controller`. When the command ends (or this process gets SIGTERM/SIGINT) every
beam.smp descendant left is killed by its pid; the exit status is the command's.
"""
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
# How long emulators get to stop on SIGTERM before SIGKILL.
STOP_GRACE_S = 5


def children():
    """Parent pid of every process, as {ppid: [pid]}."""
    tree = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    stat = f.read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            tree.setdefault(ppid, []).append(int(name))
    return tree


def descendants(root):
    tree, out, todo = children(), [], [root]
    while todo:
        for pid in tree.get(todo.pop(), []):
            out.append(pid)
            todo.append(pid)
    return out


def beams(root):
    """(pid, role) of every beam.smp below root."""
    found = []
    for pid in descendants(root):
        try:
            if os.path.basename(os.readlink("/proc/%d/exe" % pid)) != "beam.smp":
                continue
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        found.append((pid, "client" if b"-master" in args else "controller"))
    return found


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def stop_all(cmd):
    if cmd.poll() is None:
        cmd.terminate()
    me = os.getpid()
    left = beams(me)
    for pid, _ in left:
        os.kill(pid, signal.SIGTERM)
    deadline = time.time() + STOP_GRACE_S
    while left and time.time() < deadline:
        time.sleep(0.2)
        reap(cmd)
        left = beams(me)
    for pid, _ in left:
        os.kill(pid, signal.SIGKILL)
    if cmd.poll() is None:
        cmd.kill()
    cmd.wait()
    reap(cmd)


def reap(cmd):
    """Waits for the orphans this subreaper inherited that have ended (not for the
    command itself: Popen keeps its status)."""
    for pid in children().get(os.getpid(), []):
        if pid != cmd.pid:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def main():
    samples, argv = sys.argv[1], sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER): errno %d" % ctypes.get_errno())
    cmd = subprocess.Popen(argv)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    with open(samples, "w") as out:
        while cmd.poll() is None and not stop:
            now = time.time()
            for pid, role in beams(os.getpid()):
                kb = rss_kb(pid)
                if kb is not None:
                    out.write("%.1f %d %s %d\n" % (now, pid, role, kb))
            out.flush()
            reap(cmd)
            time.sleep(max(0.0, 1.0 - (time.time() - now)))
    stop_all(cmd)
    sys.exit(cmd.returncode if cmd.returncode >= 0 else 1)


if __name__ == "__main__":
    main()
