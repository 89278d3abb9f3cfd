#!/usr/bin/env bash
# Crash capture: each crash leaves a record naming the right function and library plus the
# recent calls, and the process dies exactly as it does without the shim (same status).
. "$(dirname "$0")/lib.sh"
need_python
compile crash tests/programs/crash.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
readelf -d "$SHIM" | grep NEEDED | grep -q unwind && fail "libunwind is a DT_NEEDED of the preload"

# run_both NAME ARGS...: baseline status in $base, shim status in $got, trace in $trace
run_both() {
    local name=$1; shift
    rm -f "$TMP"/cudashim-*
    set +e
    { env LD_PRELOAD="$ASAN_LIB" timeout 60 "$@" >"$TMP/base.out" 2>"$TMP/base.err"; base=$?; } 2>/dev/null
    { with_shim timeout 60 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"; got=$?; } 2>/dev/null
    set -e
    [ "$got" != 124 ] || fail "$name: hung under the shim"
    assert_eq "$got" "$base" "$name: exit status under the shim"
    trace=$(ls "$TMP"/cudashim-*.jsonl 2>/dev/null | head -n 1)
}
# expect NAME PATTERN...: every pattern is a line of the crash record's facts
expect() {
    local name=$1; shift
    [ -n "$trace" ] || fail "$name: no trace"
    q crash "$trace" >"$TMP/$name.facts" || fail "$name: no crash record in $trace"
    for p in "$@"; do grep -qx -- "$p" "$TMP/$name.facts" || { cat "$TMP/$name.facts"; fail "$name: no line '$p'"; }; done
    grep -q "crash record" "$TMP/$name.err" || fail "$name: stderr does not point at the record"
}

FAKE_CUDA_CRASH=cuCtxSynchronize run_both sync ./crash sync
expect sync "signal SIGSEGV" "inside cuCtxSynchronize" "frame fake_enter libcuda.so.1 cuda_lib" "recent cuDeviceGet"
FAKE_CUDA_CRASH=cuLaunchKernel run_both launch ./crash launch
expect launch "inside cuLaunchKernel" "frame cuLaunchKernel libcuda.so.1 cuda_lib" "frame main crash -"
run_both callback ./crash callback
expect callback "signal SIGSEGV" "frame bad_host_callback crash -" "frame host_thread libcuda.so.1 cuda_lib" "other cuDeviceGet"
run_both own ./crash own
expect own "frame crash_in_program_code crash -" "frame main crash -" "recent cuInit" "recent cuDriverGetVersion"
run_both abort ./crash abort
expect abort "signal SIGABRT" "frame abort libc.so.6 -"
run_both fpe ./crash fpe
expect fpe "signal SIGFPE" "frame divide_by crash -"

# The kernel still writes a core dump (the wait status says so) where the limit allows one.
if [ "${CS_SANITIZER:-0}" = 0 ] && (ulimit -c unlimited) 2>/dev/null; then
    core_flag() { (ulimit -c unlimited; python3 -c '
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
st = os.wait4(p.pid, 0)[1]
print(os.WTERMSIG(st) if os.WIFSIGNALED(st) else -1, int(os.WCOREDUMP(st)))' "$@"); }
    assert_eq "$(with_shim true; core_flag env LD_PRELOAD="$PRELOAD" ./crash own)" "$(core_flag ./crash own)" "signal and core flag"
    rm -f "$TMP"/core*
fi

# The trace's first line is written from inside the handler (nothing was written before).
run_both early ./crash early
expect early "frame crash_in_program_code crash -" "recent cuDeviceGet"
[ "$(head -c 18 "$trace")" = '{"type":"header","' ] || fail "the trace opened in the handler lacks its header"

# The program's own handler, installed before CUDA was used, still runs after our record.
run_both handler ./crash handler
grep -q "own handler ran" "$TMP/handler.out" || fail "the program's own handler did not run"
expect handler "frame crash_in_program_code crash -"
# A handler that faults again (double fault in a chained handler) ends the process; no hang.
run_both handler-faults ./crash handler-faults
# A handler that recovers (as a JVM does): the record is written, the process goes on, and the
# report says the signal was survived (not a crash: exit 0).
if [ "${CS_SANITIZER:-0}" = 0 ]; then
    run_both survive ./crash survive
    grep -q recovered "$TMP/survive.out" || fail "the program did not recover"
    "$BUILD/cudashim" report "$trace" >"$TMP/survive.txt" || fail "report of a survived signal should exit 0"
    grep -q "FATAL SIGNAL, SURVIVED" "$TMP/survive.txt" || fail "report does not say the signal was survived"
    # A handler installed after the shim's (signal()) is kept: the record is written, then the
    # program's own handler takes the fault and recovers, as without the shim.
    run_both replace ./crash replace
    grep -q recovered "$TMP/replace.out" || fail "the program's own handler, installed after the shim's, did not run"
    grep -q '"type":"crash"' "$trace" || fail "no crash record although the program's handler came after the shim's"
    grep -q '"type":"signal_handlers","replaced":\[\]' "$trace" || fail "the program's kept handler reported as a replacement"
fi
# Handlers the program installs after the shim's (sigaction, as UCX and faulthandler do): kept,
# told what they would have been told (SIG_DFL before them), and run after the record with
# their own semantics: SA_SIGINFO's fault address, SA_RESETHAND's default action next, SIG_IGN.
for mode in after resethand ignore; do
    run_both "$mode" ./crash "$mode"
    cmp -s "$TMP/base.out" "$TMP/$mode.out" || { diff "$TMP/base.out" "$TMP/$mode.out"; fail "$mode: the program's output differs"; }
    grep -q '"type":"crash"' "$trace" || fail "$mode: no crash record"
done
grep -q "info handler ran, fault address seen" "$TMP/after.out" || fail "after: the program's SA_SIGINFO handler did not run"
# (a sanitizer's runtime has its own SIGSEGV handler there: the outputs compared above say the same)
[ "${CS_SANITIZER:-0}" != 0 ] || grep -q "before it: SIG_DFL" "$TMP/after.out" ||
    fail "after: sigaction did not say what was there before the program's handler"
grep -q "resethand handler ran" "$TMP/resethand.out" || fail "resethand: the program's handler did not run"
# A frame with a C++ name: the record keeps the mangled name, the report demangles it (with
# libstdc++'s demangler, looked up at run time).
run_both cxx ./crash cxx
grep -q '"symbol":"_ZN5torch8autograd6Engine7executeEv"' "$trace" || fail "cxx: the C++ frame's name is not in the record"
"$BUILD/cudashim" report "$trace" >"$TMP/cxx.report" || true
grep -q "torch::autograd::Engine::execute()+" "$TMP/cxx.report" || { cat "$TMP/cxx.report"; fail "cxx: the report does not demangle the frame"; }
# A fault inside our own handler: the process still dies with the original signal.
CUDASHIM_CRASH_SELFTEST=1 run_both selftest ./crash own
# Without libunwind: glibc's backtrace still gives the libraries.
CUDASHIM_UNWINDER=backtrace run_both fallback ./crash own
expect fallback "unwinder glibc-backtrace" "frame ? crash -"
# Both unwinders walk out of a crash inside the driver through the fast path's entry point (its
# return address is in the thread's state during the call; the unwind tables say so).
CUDASHIM_UNWINDER=backtrace FAKE_CUDA_CRASH=cuLaunchKernel run_both launch-fallback ./crash launch
expect launch-fallback "inside cuLaunchKernel" "frame ? libcuda.so.1 cuda_lib" "frame ? libcudashim.so -" "frame ? crash -"
# Switched off: no record, same death.
CUDASHIM_CRASH_HANDLER=0 run_both off ./crash own
grep -q '"type":"crash"' "$trace" && fail "CUDASHIM_CRASH_HANDLER=0 still wrote a crash record"

# Python's faulthandler, installed before us (-X faulthandler) and after us (enable() later):
# its traceback still appears and the status is unchanged.
if [ "${CS_SANITIZER:-0}" = 0 ]; then
    export LD_LIBRARY_PATH="$FAKES"
    run_both py-first python3 -X faulthandler -c 'import ctypes; l=ctypes.CDLL("libcuda.so.1"); l.cuInit(0); ctypes.string_at(0)'
    grep -q "Fatal Python error: Segmentation fault" "$TMP/py-first.err" || fail "faulthandler output lost (installed first)"
    grep -q "in string_at" "$TMP/py-first.err" || fail "Python traceback lost (installed first)"
    expect py-first "signal SIGSEGV" "recent cuInit"
    # the interpreter's own dumper: the Python line in the record and in the report
    if python3 -c 'import sys; sys.exit(sys.version_info[:2] == (3, 13))'; then
        grep '"type":"crash"' "$trace" | grep -q '\\"<string>\\", line 1 in <module>' || fail "py-first: no Python line in the record"
        "$BUILD/cudashim" report "$trace" | grep -q 'File "<string>", line 1 in <module>' || fail "py-first: no Python line in the report"
    fi
    run_both py-after python3 -c 'import ctypes,faulthandler; l=ctypes.CDLL("libcuda.so.1"); l.cuInit(0); faulthandler.enable(); ctypes.string_at(0)'
    grep -q "Fatal Python error: Segmentation fault" "$TMP/py-after.err" || fail "faulthandler output lost (installed after)"
    expect py-after "signal SIGSEGV" "recent cuInit"
fi
echo ok
