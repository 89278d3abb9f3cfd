#!/usr/bin/env bash
# The exit is bounded (CUDASHIM_EXIT_TIMEOUT): when the trace directory stops answering at exit (a
# hung network mount, simulated by tests/programs/libs/stuck_writes.c) or stderr is a full pipe
# nobody reads (a real one), the process still exits with its own status, after the bound and not
# long after it; what the run wrote before is in the trace.
. "$(dirname "$0")/lib.sh"
need_python
under_tsan && skip "python3 crashes with ThreadSanitizer preloaded, with or without the shim"
$CC -shared -fPIC -O1 -o "$TMP/libstuck.so" "$ROOT/tests/programs/libs/stuck_writes.c" -ldl || fail "cannot build stuck_writes.c"
cat > prog.py <<'PY'
import ctypes, os, sys
cuda = ctypes.CDLL("libcuda.so.1")
print("cuInit", cuda.cuInit(0))
d = ctypes.c_int(-1)
print("bad device", cuda.cuDeviceGet(ctypes.byref(d), 9))
sys.stdout.flush()
os.environ["STUCK_NOW"] = "1"   # from here on the trace directory hangs (stuck_writes.c)
sys.exit(3)
PY
export LD_LIBRARY_PATH="$FAKES"
want=$(env LD_PRELOAD="$ASAN_LIB" python3 prog.py 2>/dev/null || true)

# exit_within NAME LOW HIGH ENV...: python3 prog.py under the shim and the stuck directory, with
# ENV; its status must be 3, its stdout the program's own, its run from start to end in [LOW, HIGH] s
exit_within() {
    local name=$1 low=$2 high=$3; shift 3
    mkdir -p "$TMP/$name"
    python3 - "$name" "$low" "$high" "$@" <<'PY' || fail "$1: see above"
import os, subprocess, sys, time
name, low, high, envs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
tmp = os.getcwd()
env = dict(os.environ, CUDASHIM_TRACE_DIR=os.path.join(tmp, name), STUCK_DIR=os.path.join(tmp, name))
env.update(e.split("=", 1) for e in envs)
stderr = None
if env.pop("FULL_STDERR", None):
    # stderr a pipe that nobody reads and that is already full: any write to it waits for ever
    import fcntl
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)                       # F_SETPIPE_SZ: the smallest pipe
    fl = fcntl.fcntl(w, fcntl.F_GETFL)
    fcntl.fcntl(w, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    try:
        while True: os.write(w, b"x" * 4096)
    except BlockingIOError:
        pass
    fcntl.fcntl(w, fcntl.F_SETFL, fl)
    stderr = w
t0 = time.monotonic()
p = subprocess.Popen(["python3", "prog.py"], env=env, stdout=subprocess.PIPE, stderr=stderr or subprocess.DEVNULL)
try:
    out, _ = p.communicate(timeout=high + 30)
except subprocess.TimeoutExpired:
    p.kill(); p.wait()
    sys.exit(f"{name}: the exit was held past {high + 30:.0f} s: not bounded")
took = time.monotonic() - t0
print(f"{name}: exit status {p.returncode}, {took:.2f} s from start to end")
if p.returncode != 3: sys.exit(f"{name}: exit status {p.returncode}, the program's is 3")
if out.decode() != open(os.path.join(tmp, "want")).read(): sys.exit(f"{name}: stdout differs: {out!r}")
if not low <= took <= high: sys.exit(f"{name}: took {took:.2f} s, expected between {low} and {high}")
PY
}
printf '%s\n' "$want" > want
assert_eq "$(sed -n 1p want)" "cuInit 0" "the program's own output"
# nothing stuck: the exit is not held (well under the default bound of 5 s)
exit_within free 0 4 LD_PRELOAD="$PRELOAD" STUCK_DIR=/nonexistent-dir
# the trace directory hangs at exit: released at the bound, each bound
exit_within hung1 0.9 3.5 LD_PRELOAD="$PRELOAD $TMP/libstuck.so" CUDASHIM_EXIT_TIMEOUT=1
exit_within hung3 2.9 5.5 LD_PRELOAD="$PRELOAD $TMP/libstuck.so" CUDASHIM_EXIT_TIMEOUT=3
t=$(ls "$TMP"/hung1/cudashim-*.jsonl | head -1)
assert_eq "$(q count "$t" api=cuDeviceGet result_name=CUDA_ERROR_INVALID_DEVICE)" 1 "the run's failing call is in the trace of the hung exit"
# a real stuck writer: stderr a full pipe, the summary's note due on it
exit_within fullpipe 0.9 3.5 LD_PRELOAD="$PRELOAD" CUDASHIM_EXIT_TIMEOUT=1 CUDASHIM_SUMMARY=1 FULL_STDERR=1 STUCK_DIR=/nonexistent-dir
t=$(ls "$TMP"/fullpipe/cudashim-*.jsonl | head -1)
grep -q '"type":"summary"' "$t" || fail "the summary line reaches the trace before the stuck stderr"
