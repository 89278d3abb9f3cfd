#!/usr/bin/env python3
"""Small queries over a trace, for the shell tests (the user-facing reader is `cudashim`).

  trace_query.py count TRACE [key=value ...]   number of call events matching every key=value
  trace_query.py summary TRACE                  "api count" per line: the summary's driver calls plus own_calls
  trace_query.py field TRACE type key           the value of key in the first event of type
  trace_query.py counts FAKE_COUNTS_FILE        normalises the fake driver's counts file
  trace_query.py crash TRACE                    the crash record, a fact per line
  trace_query.py findings TRACE                 "id severity" per finding (a finding said again
                                                with the same id and key: its last line)
  trace_query.py finding TRACE ID               the summary and fix of the first finding with that id
                                                (its last line)
  trace_query.py libraries TRACE                "kind name version version_api found_via" per library
                                                (the last line written for each path)
  trace_query.py valid TRACE                    every line parses; header first, summary last
"""
import json, os, re, subprocess, sys

# The table of trace records (shim/trace/trace_records.h): every line read here must conform to it.
_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "shim", "trace", "trace_records.h")


def records():
    text = re.sub(r'"\s*"', "", open(_TABLE).read())  # join C's adjacent string literals
    return {t: set(keys.split()) | {"type"} for t, keys in re.findall(r'^CS_RECORD\((\w+),\s*"([^"]*)"\)', text, re.M)}


def conform(path, lines):
    table = records()
    for n, e in enumerate(lines, 1):
        keys = table.get(e.get("type"))
        if keys is None:
            sys.exit(f"{path}:{n}: a record of type {e.get('type')!r}, not in shim/trace/trace_records.h")
        extra = sorted(set(e) - keys)
        if extra:
            sys.exit(f"{path}:{n}: {e['type']} record with keys not in shim/trace/trace_records.h: {', '.join(extra)}")


def events(path):
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    if lines and lines[0].get("calls_file"):
        # ALL mode: the successful calls are in the binary file beside the trace; the command
        # makes them lines (and so is tested on every such trace the suite reads).
        cli = os.environ.get("CS_CLI") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "cudashim")
        out = subprocess.run([cli, "export", "--jsonl", path], capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"{path}: cudashim export --jsonl failed: {out.stderr.strip()}")
        lines = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    conform(path, lines)
    return lines


def match(e, conds):
    return all(str(e.get(k)) == v for k, v in conds)


cmd, path = sys.argv[1], sys.argv[2]
if cmd == "count":
    conds = [a.split("=", 1) for a in sys.argv[3:]]
    print(sum(1 for e in events(path) if e.get("type") == "call" and match(e, conds)))
elif cmd == "summary":
    # the program's driver calls plus the shim's own (own_calls), as the driver received them
    # (the runtime's own API, cudaX, is not the driver's: it is left out)
    s = [e for e in events(path) if e["type"] == "summary"][-1]
    calls = {k: v for k, v in s["calls"].items() if not (k.startswith("cuda") and k[4:5].isupper())}
    for k, v in s.get("own_calls", {}).items():
        calls[k] = calls.get(k, 0) + v
    for k in sorted(calls):
        print(k, calls[k])
elif cmd == "field":
    # "process" lines complete the header with what was learnt after it was written
    evs = events(path)
    e = next(e for e in evs if e["type"] == sys.argv[3])
    v = e.get(sys.argv[4])
    if v is None and sys.argv[3] == "header":
        v = next((p[sys.argv[4]] for p in evs if p["type"] == "process" and sys.argv[4] in p), None)
    print(json.dumps(v) if isinstance(v, (dict, list)) else v)
elif cmd == "counts":
    rows = sorted(l.split() for l in open(path) if l.strip())
    for name, n in rows:
        print(name, n)
elif cmd == "crash":
    c = [e for e in events(path) if e["type"] == "crash"][0]
    print("signal", c["signal_name"])
    print("inside", c.get("inside_call", "-"))
    print("unwinder", c["unwinder"])
    for f in c["frames"]:
        print("frame", f.get("symbol", "?"), f.get("lib", "?").rsplit("/", 1)[-1],
              "cuda_lib" if f.get("cuda_lib") else "-")
    for e in (c["this_thread"] or {}).get("calls", []):
        print("recent", e["api"])
    for t in c["other_threads"]:
        for e in t["calls"]:
            print("other", e["api"])
elif cmd in ("findings", "finding"):
    said = {}  # (id, key) -> its last line, in the order first said
    for e in events(path):
        if e["type"] == "finding":
            said[(e["id"], e.get("key", e["summary"]))] = e
if cmd == "findings":
    for e in said.values():
        print(e["id"], e["severity"])
elif cmd == "finding":
    e = next(e for e in said.values() if e["id"] == sys.argv[3])
    print(e["summary"])
    print(e["fix"])
    print(json.dumps(e["evidence"]))
elif cmd == "libraries":
    last = {}
    for e in events(path):
        if e["type"] == "library":
            last[e["path"]] = e  # a later line for a path supersedes the earlier (dicts keep first order)
    for e in last.values():
        print(e["kind"], e["name"], e.get("version", "-"), e.get("version_api", "-"), e["found_via"])
elif cmd == "valid":
    ev = events(path)
    assert ev[0]["type"] == "header" and ev[0]["format"] == "cudashim-trace", "header first"
    assert ev[-1]["type"] == "summary", "summary last"
    for e in ev:
        if e["type"] == "call":
            for k in ("api", "result", "result_name", "tid", "ts_ns", "dur_ns", "via"):
                assert k in e, "call event without %s: %r" % (k, e)
    print("ok", len(ev))
