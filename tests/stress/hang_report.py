#!/usr/bin/env python3
"""Where a hung process waits, printed before a test kills it: one occurrence is enough.

    hang_report.py PID

For each thread: its name, state, wchan and kernel stack (/proc/PID/task/TID); with gdb
installed, every thread's user stack (gdb in batch mode); and the shim's own locks, read from
the process's memory: which thread holds each lock of shim/process/locks_table.h."""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().strip()
    except OSError as e:
        return "(%s)" % e.strerror


def threads(pid):
    print("threads of %d (%s):" % (pid, read("/proc/%d/cmdline" % pid).replace("\0", " ")))
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    except OSError as e:
        print("  cannot list: %s" % e.strerror)
        return
    for tid in tids:
        base = "/proc/%d/task/%d" % (pid, tid)
        state = re.search(r"^State:\s*(.*)$", read(base + "/status"), re.M)
        print("  %d %s: %s, wchan %s, syscall %s" % (tid, read(base + "/comm"), state.group(1) if state else "?",
                                                   read(base + "/wchan"), read(base + "/syscall").split(" ")[0]))
        for line in read(base + "/stack").splitlines():
            print("      " + line)


def user_stacks(pid):
    gdb = shutil.which("gdb")
    if not gdb:
        print("user stacks: no gdb installed")
        return
    try:
        out = subprocess.run([gdb, "-batch", "-nx", "-p", str(pid), "-ex", "set pagination off",
                              "-ex", "thread apply all bt 30"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60, text=True).stdout
    except subprocess.TimeoutExpired:
        print("user stacks: gdb did not finish in 60 s")
        return
    print("user stacks (gdb):")
    for line in out.splitlines():
        if line.startswith(("#", "Thread")):
            print("  " + line)


def lock_names():
    names = []
    with open(os.path.join(ROOT, "shim/process/locks_table.h")) as f:
        for m in re.finditer(r"^CS_LOCK\((\w+),\s*(\w+)", f.read(), re.M):
            names.append((m.group(1), m.group(2)))
    return names


def shim_locks(pid):
    """glibc x86-64 layouts: pthread_mutex_t (40 bytes, __owner at 8), pthread_rwlock_t (56 bytes,
    __readers at 0, __cur_writer at 24); the shim keeps one of each per lock (lock_objects)."""
    lib = None
    for line in read("/proc/%d/maps" % pid).splitlines():
        f = line.split()
        if len(f) >= 6 and f[5].endswith("libcudashim.so") and int(f[2], 16) == 0:
            lib, base = f[5], int(f[0].split("-")[0], 16)
            break
    if not lib:
        print("shim locks: the shim is not mapped")
        return
    nm = shutil.which("nm")
    sym = None
    if nm:
        out = subprocess.run([nm, lib], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        m = re.search(r"^([0-9a-f]+) [bBdD] lock_objects$", out, re.M)
        sym = int(m.group(1), 16) if m else None
    if sym is None:
        print("shim locks: no symbol lock_objects in %s (stripped?)" % lib)
        return
    names = lock_names()
    try:
        with open("/proc/%d/mem" % pid, "rb") as mem:
            mem.seek(base + sym)
            raw = mem.read(96 * len(names))
    except OSError as e:
        print("shim locks: cannot read the process's memory: %s" % e.strerror)
        return
    print("shim locks (locks_table.h order):")
    for i, (name, kind) in enumerate(names):
        m, rw = raw[96 * i:96 * i + 40], raw[96 * i + 40:96 * i + 96]
        if kind == "MUTEX":
            owner = int.from_bytes(m[8:12], "little", signed=True)
            print("  %-10s %s" % (name, "held by thread %d" % owner if owner else "free"))
        else:
            readers = int.from_bytes(rw[0:4], "little") >> 3
            writer = int.from_bytes(rw[24:28], "little", signed=True)
            state = ("written by thread %d" % writer if writer else
                     "read by %d thread(s)" % readers if readers else "free")
            print("  %-10s %s" % (name, state))


def main():
    pid = int(sys.argv[1])
    threads(pid)
    shim_locks(pid)
    user_stacks(pid)


if __name__ == "__main__":
    main()
