#!/usr/bin/env bash
# Forked workers while other threads are inside the shim (a DataLoader, a process pool): RUNS runs
# of each pattern in default and ALL mode, no child may hang, and the output is the program's
# own, identical to a run without the shim.
#   fork_safety.sh [RUNS] [FORKS] [POOL_RUNS]
#     (t_10: 3 runs of 100; make stress's soak, fork_soak.sh: 10,000 forks per pattern and mode)
# A child that has not exited after FORK_CHILD_WAIT_S (60 s: a child needs milliseconds, a loaded
# machine can stall one for seconds) is reported before it is killed: where each of its threads
# waits and who holds the shim's locks (hang_report.py), so one occurrence shows the cause.
. "$(dirname "$0")/../lib.sh"
RUNS=${1:-20} FORKS=${2:-300} POOL_RUNS=${3:-${1:-20}}
export FORK_HANG_REPORT="$ROOT/tests/stress/hang_report.py"
limited="$ROOT/tests/stress/limit_or_report.sh"  # timeout(1) that reports the run first
# A whole run's limit allows for load: 0.2 s a fork and a child's full wait on top of the
# unloaded 15 ms a fork; only a run that makes no progress at all reaches it.
run_limit=$((120 + FORKS / 5))
compile fork_workers tests/programs/fork_workers.c -pthread -ldl -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
# the libraries another thread opens while the parent forks (copies: each one a new object)
mkdir -p "$TMP/storm"
echo 'int storm_value(void) { return 42; }' >"$TMP/storm/s.c"
$CC -shared -fPIC -o "$TMP/storm/base.so" "$TMP/storm/s.c" || fail "cannot build the storm library"
for i in $(seq 0 1499); do ln "$TMP/storm/base.so" "$TMP/storm/storm_$i.so" 2>/dev/null || cp "$TMP/storm/base.so" "$TMP/storm/storm_$i.so"; done
export STORM_DIR="$TMP/storm" FAKE_CUDA_FAIL=cuMemAlloc_v2=2
patterns="calls dlopen signal twoforks"
under_tsan && patterns=""  # ThreadSanitizer cannot fork a threaded process
# runs LABEL RUNS WANT CMD...: CMD RUNS times in each mode under the shim; its output must be WANT
runs() {
    local label=$1 n=$2 want=$3 mode run hung got; shift 3
    for mode in 0 1; do
        hung=0
        for run in $(seq 1 "$n"); do
            rm -rf "$TMP/traces"; mkdir -p "$TMP/traces"
            set +e
            got=$(CUDASHIM_TRACE_ALL=$mode CUDASHIM_STDERR=0 CUDASHIM_TRACE_DIR="$TMP/traces" "$@" 2>&1)
            set -e
            if [ "$got" != "$want" ]; then
                hung=$((hung + 1))
                echo "  $label ALL=$mode run $run: $got" >&2
                # a child ended by a signal: its crash record, from its own trace
                python3 "$ROOT/tests/stress/crash_report.py" "$TMP/traces" \
                    $(sed -n 's/^child \([0-9]*\): signal .*/\1/p' <<<"$got") >&2 || true
            fi
        done
        echo "  $label, ALL=$mode: $n runs, $hung with a child hung or failed"
        [ "$hung" = 0 ] || fail "$label (ALL=$mode): children hung or failed"
    done
}
for p in $patterns; do
    want=$("$limited" "$run_limit" ./fork_workers "$p" "$FORKS" 2>&1) || fail "$p: fails without the shim: $want"
    runs "$p pattern, $FORKS forks" "$RUNS" "$want" "$limited" "$run_limit" env LD_PRELOAD="$PRELOAD" ./fork_workers "$p" "$FORKS"
done
# DataLoader's pattern on NVIDIA's real driver, when the real stack has been fetched
RS="${CUDASHIM_REALSTACK:-$HOME/.cache/cudashim-realstack}/root/usr/lib/x86_64-linux-gnu"
runtime="$CUDA/lib64/libcudart.so.13"; [ -e "$runtime" ] || runtime="$RS/libcudart.so.11.0"
# Not under a sanitizer: its allocator has no fork handlers, so a child forked while one of the
# program's own threads allocates can deadlock without the shim too.
if [ "${CS_SANITIZER:-0}" != 0 ]; then
    echo "  python fork pool: skipped under a sanitizer (its allocator deadlocks forked children of threaded programs by itself)"
elif [ -e "$RS/nvidia/current/libcuda.so.1" ] && [ -e "$runtime" ] && command -v python3 >/dev/null; then
    pool() { LD_LIBRARY_PATH="$RS/nvidia/current" "$limited" 300 "$@" python3 "$ROOT/tests/programs/fork_pool.py" libcuda.so.1 "$runtime"; }
    want=$(pool env 2>&1) || fail "fork pool: fails without the shim: $want"
    runs "python fork pool (40 workers) on the real 535 driver" "$POOL_RUNS" "$want" pool env LD_PRELOAD="$PRELOAD"
else
    echo "  python fork pool: skipped (no real driver in the cache: tests/realstack/fetch.sh)"
fi
