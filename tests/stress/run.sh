#!/usr/bin/env bash
# make stress: long runs kept out of `make check`. 64 threads, fork storms with and without exec,
# Python multiprocessing, signals during writes, a full disk; every count exact.
set -eu
. "$(dirname "$0")/../lib.sh"
need_python
compile stress tests/programs/stress.c -pthread -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
THREADS=${STRESS_THREADS:-64} CALLS=${STRESS_CALLS:-50000}
exact() {  # TRACE MADE: the summary counts every call the program made, and every line is accounted for;
           # in ALL mode every call is a line or a binary event (cudashim export --jsonl), none dropped
    "$BUILD/cudashim" export --jsonl "$1" >"$TMP/exported.jsonl" || fail "export --jsonl $1"
    python3 - "$1" "$2" "$TMP/exported.jsonl" <<'PY' || fail "counts in $1"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
s = ev[-1]
assert s["type"] == "summary", "no summary"
assert s["total_calls"] == int(sys.argv[2]), (s["total_calls"], sys.argv[2])
written = s["lines"]["written"]
assert written == len(ev), (written, len(ev))
calls = sum(1 for l in open(sys.argv[3]) if l.startswith('{"type":"call"'))
if ev[0].get("mode") == "all":
    assert s["dropped"] == 0, s["dropped"]
    assert calls + s["suppressed"] == s["total_calls"], (calls, s["suppressed"], s["total_calls"])
print("  %d calls made and counted, %d calls in the trace, %d dropped, %d suppressed, %d unwritable" %
      (s["total_calls"], calls, s["dropped"], s["suppressed"], s["lines"]["unwritable"]))
PY
}
echo "1. $THREADS threads x $CALLS calls, default and ALL mode"
for all in 0 1; do
    rm -f "$TMP"/cudashim-*
    out=$(CUDASHIM_TRACE_ALL=$all with_shim ./stress threads:$THREADS:$CALLS)
    exact "$(only_trace)" "$(sed -n 's/calls made: //p' <<<"$out")"
done
echo "2. fork storm: 400 children, half of them exec"
rm -f "$TMP"/cudashim-*.jsonl
out=$(timeout 300 env LD_PRELOAD="$PRELOAD" ./stress forks:400) || fail "fork storm: $out"
grep -q "children failed: 0" <<<"$out" || fail "fork storm: $out"
n=$(ls "$TMP"/cudashim-*.jsonl | wc -l)
[ "$n" -eq 401 ] || fail "fork storm: $n traces, not one per process (the parent and 400 children)"
# the 200 children that exited (not exec'd) each counted their own 100 calls, and nothing of the parent's
python3 - "$TMP" <<'PY' || fail "fork storm: a child's counts"
import glob, json, sys
done = 0
for f in glob.glob(sys.argv[1] + "/cudashim-*.jsonl"):
    ev = [json.loads(l) for l in open(f)]
    if "forked_from" in ev[0] and ev[-1]["type"] == "summary":
        assert ev[-1]["calls"] == {"cuDeviceGet": 100}, (f, ev[-1]["calls"])
        done += 1
assert done == 200, done
print("  400 children: 200 summaries of exactly 100 calls each; 200 exec'd")
PY
echo "3. Python multiprocessing (fork), 8 workers x 500 tasks"
rm -f "$TMP"/cudashim-*.jsonl
cat >"$TMP/mp.py" <<PY
import ctypes, multiprocessing as mp
cuda = ctypes.CDLL("$FAKES/libcuda.so.1")
def work(i):
    d = ctypes.c_int()
    return cuda.cuDeviceGet(ctypes.byref(d), 0)
cuda.cuInit(0)
with mp.get_context("fork").Pool(8) as pool:
    print(sum(pool.map(work, range(4000))))
PY
out=$(timeout 300 env LD_PRELOAD="$PRELOAD" python3 "$TMP/mp.py") || fail "multiprocessing: $out"
assert_eq "$out" 0 "multiprocessing results"
echo "4. signals during writes"
rm -f "$TMP"/cudashim-*.jsonl
out=$(with_shim ./stress signals:20000)
exact "$(only_trace)" "$(sed -n 's/calls made: //p' <<<"$out")"
echo "5. a full disk"
if mkdir -p "$TMP/full" && mount -t tmpfs -o size=64k tmpfs "$TMP/full" 2>/dev/null; then
    out=$(CUDASHIM_TRACE_DIR="$TMP/full" CUDASHIM_TRACE_ALL=1 env LD_PRELOAD="$PRELOAD" ./stress threads:8:20000 2>"$TMP/full.err")
    grep -q "calls made: 160009" <<<"$out" || fail "full disk: $out"
    grep -q "No space left" "$TMP/full.err" || fail "full disk not said"
    python3 - "$TMP/full" <<'PY' || fail "full disk: the lost calls are not counted"
import glob, json, sys
ev = [json.loads(l) for l in open(glob.glob(sys.argv[1] + "/cudashim-*.jsonl")[0]) if l.strip().endswith("}")]
s = [e for e in ev if e["type"] == "summary"]
assert not s or s[-1]["dropped"] > 0 or s[-1]["lines"]["unwritable"] > 0, s
PY
    umount "$TMP/full"
else
    echo "  skipped: cannot mount a tmpfs here"
fi
echo "6. forked workers while threads are inside the shim, under CPU and I/O pressure: ${SOAK_FORKS:-10000} forks of each pattern, both modes"
bash "$ROOT/tests/stress/fork_soak.sh"
echo "stress: all exact"
