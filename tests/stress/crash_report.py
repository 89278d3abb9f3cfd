#!/usr/bin/env python3
"""Where a forked child died: the crash records of the traces in a directory, for the pids given.

  crash_report.py DIR PID...

The shim's crash handler writes a `crash` line into the child's own trace before the signal's
default action ends it; this prints its signal, the call it was inside and its frames, so one
occurrence in a soak shows the cause."""
import glob
import json
import os
import sys


def main():
    folder, pids = sys.argv[1], sys.argv[2:]
    for pid in pids:
        paths = [p for p in glob.glob(os.path.join(folder, "cudashim-*.jsonl"))
                 if p.endswith("-%s.jsonl" % pid) or "-%s." % pid in os.path.basename(p)]
        if not paths:
            print("  child %s: no trace of its own (it died before the shim wrote one)" % pid)
            continue
        for path in paths:
            crash = None
            for line in open(path, errors="replace"):
                if '"type":"crash"' in line:
                    try:
                        crash = json.loads(line)
                    except ValueError:
                        crash = {"truncated": True}
            if not crash:
                print("  child %s: %s has no crash record" % (pid, os.path.basename(path)))
                continue
            print("  child %s: %s %s at %s, inside %s" % (pid, crash.get("signal_name"), crash.get("code_name"),
                                                           crash.get("addr"), crash.get("inside_call") or "no call"))
            for f in crash.get("frames", [])[:24]:
                print("    %s %s+%s (%s+%s)" % (f.get("pc"), f.get("symbol", "?"), f.get("symbol_offset", "?"),
                                             os.path.basename(f.get("lib") or "?"), f.get("offset")))


if __name__ == "__main__":
    main()
