#!/usr/bin/env bash
# NVIDIA's real driver (535, CUDA 12.2, no GPU) under real CUDA 11.8 and 13.0 libraries, loaded
# the way frameworks load them: every program behaves the same with and without the shim (stdout
# and exit status, default and ALL mode, no hang), and the findings name the real cause.
# The stack comes from tests/realstack/fetch.sh (make check-real fetches it).
. "$(dirname "$0")/lib.sh"
need_python
RS_ROOT="${CUDASHIM_REALSTACK:-$HOME/.cache/cudashim-realstack}/root"
RS="$RS_ROOT/usr/lib/x86_64-linux-gnu"
[ -e "$RS/nvidia/current/libcuda.so.1" ] && [ -e "$RS/libcudart.so.11.0" ] ||
    skip "no real NVIDIA stack in ${RS_ROOT%/root} (tests/realstack/fetch.sh, or make check-real, fetches it)"
DRIVER_DIR="$RS/nvidia/current"
C13="$CUDA/lib64"
have13=0; [ -e "$C13/libcudart.so.13" ] && [ -e "$C13/libcublas.so.13" ] && have13=1
compile realstack tests/programs/realstack.c -ldl -pthread
export LD_LIBRARY_PATH="$DRIVER_DIR:$RS"

parent_trace() {  # DIR: the trace of the process that was not forked
    grep -L '"forked_from"' "$1"/cudashim-*.jsonl | head -n 1
}
# same behaviour, in default and ALL mode, each bounded (a hang is a failure, not a stuck CI).
both_modes() {
    local name=$1; shift
    local a b ra rb mode
    set +e
    a=$(timeout 60 "$@" 2>/dev/null); ra=$?
    set -e
    [ $ra -ne 124 ] || fail "$name: hangs without the shim"
    for mode in 0 1; do
        mkdir -p "$TMP/$name.$mode"
        set +e
        b=$(CUDASHIM_TRACE_ALL=$mode CUDASHIM_TRACE_DIR="$TMP/$name.$mode" timeout 60 env LD_PRELOAD="$PRELOAD" "$@" 2>"$TMP/$name.$mode.err"); rb=$?
        set -e
        [ $rb -ne 124 ] || fail "$name: hangs under the shim (ALL=$mode)"
        [ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b") || true; fail "$name: stdout differs under the shim (ALL=$mode)"; }
        [ $ra = $rb ] || fail "$name: exit status $ra without the shim, $rb under it (ALL=$mode)"
    done
    trace=$(parent_trace "$TMP/$name.0")
    all_trace=$(parent_trace "$TMP/$name.1")
    out=$a
}

# 1. CUDA 11.8 (PyTorch +cu118): runtime, 8 threads, cuBLAS 11, fork, a fork storm while another
#    thread calls the runtime. cudart 11 calls cuGetProcAddress inside its own pthread_once.
storm=(fork forkstorm:20); under_tsan && storm=()  # ThreadSanitizer cannot fork a threaded process
both_modes cu118 ./realstack rt:"$RS/libcudart.so.11.0" threads:8 cublas:"$RS/libcublas.so.11" "${storm[@]}"
grep -q "cudaGetDeviceCount=100" <<<"$out" || fail "cu118: the real runtime should say no device: $out"
has_finding "$trace" no-gpu-visible "kernel module is not loaded" "535.261.03"
# The runtime's own API is traced: torch.cuda.is_available()'s question and its answer by name.
[ "$(q count "$trace" api=cudaGetDeviceCount result_name=cudaErrorNoDevice)" -ge 1 ] ||
    fail "cu118: cudaGetDeviceCount -> cudaErrorNoDevice (100) is not in the trace"
# cuInit's 100 from the runtime, and again from cuBLAS's own runtime inside cublasCreate.
[ "$(q count "$trace" api=cuInit result=100)" -ge 2 ] || fail "cu118: cuInit's 100 (runtime and cuBLAS) is not in the trace"
# cublasCreate's NOT_INITIALIZED is explained by the driver call that failed inside it.
has_finding "$trace" cublas-not-initialized "cublasCreate_v2" "the CUDA call that failed inside cuBLAS is cuInit -> CUDA_ERROR_NO_DEVICE (100)" \
    "the driver sees no GPU"
python3 - "$trace" <<'PY' || fail "cu118: the runtime's inventory"
import json, sys
libs = {l["kind"]: l for l in map(json.loads, open(sys.argv[1])) if l["type"] == "library"}
assert libs["cudart"]["version"] == "11.8" and libs["cudart"]["found_via"].startswith("a full path given to dlopen"), libs["cudart"]
assert libs["driver"]["file_version"] == "535.261.03" and libs["driver"]["found_via"].startswith("LD_LIBRARY_PATH entry"), libs["driver"]
assert libs["cublas"]["version"].startswith("11."), libs["cublas"]
PY

# Coverage is exact: every call the real driver receives without the shim (counted with gdb
# breakpoints on the driver's own entry points) is in the ALL-mode trace, no more, no less.
driver_hits() {  # FUNCTION PROGRAM ARGS...: how often the real driver's FUNCTION runs, without the shim
    local fn=$1; shift
    timeout 120 gdb -q -batch -ex "set breakpoint pending on" -ex "set env LD_LIBRARY_PATH=$LD_LIBRARY_PATH" \
        -ex "break $fn" -ex "ignore 1 100000000" -ex run -ex "info breakpoints" --args "$@" 2>/dev/null |
        sed -n 's/.*already hit \([0-9]*\) time.*/\1/p' | head -n 1
}
exact_coverage() {  # NAME FUNCTION... : compares the last both_modes run (its ALL-mode trace)
    local name=$1; shift
    command -v gdb >/dev/null || { echo "no gdb: skipped the exact-coverage check of $name"; return 0; }
    local fn hits traced
    for fn in "$@"; do
        hits=$(driver_hits "$fn" "${coverage_cmd[@]}")
        traced=$(python3 - "$all_trace" "$fn" <<'PY'
import json, sys
s = [e for e in map(json.loads, open(sys.argv[1])) if e["type"] == "summary"][-1]
print(s["calls"].get(sys.argv[2], 0) + s.get("own_calls", {}).get(sys.argv[2], 0))
PY
)
        [ -n "$hits" ] && [ "$hits" -gt 0 ] || fail "$name: gdb counted no $fn"
        assert_eq "$traced" "$hits" "$name: $fn calls traced (ALL mode) vs received by the real driver"
        echo "$name: $fn $hits calls, all traced"
    done
}
coverage_cmd=(./realstack rt:"$RS/libcudart.so.11.0" cublas:"$RS/libcublas.so.11")
both_modes cov118 "${coverage_cmd[@]}"
exact_coverage cov118 cuGetProcAddress cuInit cuDriverGetVersion

if ! under_tsan; then
# 2. Python ctypes in PyTorch cu118's load order (runtime, cuBLASLt, cuBLAS, then calls).
cat >"$TMP/cu118.py" <<PY
import ctypes, os
g = os.RTLD_GLOBAL
rt = ctypes.CDLL("$RS/libcudart.so.11.0", mode=g)
ctypes.CDLL("$RS/libcublasLt.so.11", mode=g)
cb = ctypes.CDLL("$RS/libcublas.so.11", mode=g)
n = ctypes.c_int(-1)
print("count", rt.cudaGetDeviceCount(ctypes.byref(n)))
h = ctypes.c_void_p()
print("cublas", cb.cublasCreate_v2(ctypes.byref(h)))
PY
both_modes py118 python3 "$TMP/cu118.py"
has_finding "$trace" no-gpu-visible

# 3. Python multiprocessing fork workers while another thread keeps failing runtime calls (each
#    one written to the trace): a child forked while a hook held the loader lock would hang.
cat >"$TMP/mpfork.py" <<PY
import ctypes, multiprocessing as mp, os, threading
rt = ctypes.CDLL("$RS/libcudart.so.11.0", mode=os.RTLD_GLOBAL)
stop = False
def busy():
    n = ctypes.c_int()
    while not stop:
        rt.cudaGetDeviceCount(ctypes.byref(n))
        ctypes.CDLL("$RS/libcublas.so.11").cublasCreate_v2(ctypes.byref(ctypes.c_void_p()))
def work(i):
    ctypes.CDLL("libm.so.6")  # the loader lock, in the child
    return i * i
t = threading.Thread(target=busy); t.start()
with mp.get_context("fork").Pool(4) as pool:
    print(sum(pool.map(work, range(200))))
stop = True; t.join()
PY
for run in 1 2 3; do both_modes mpfork$run python3 "$TMP/mpfork.py"; done
fi

if [ $have13 = 1 ]; then
    # 3. CUDA 13 (PyTorch +cu130) on the 535 driver: the runtime and the private runtimes inside
    #    cuBLAS, cuDNN and NCCL all need a CUDA 13 driver.
    args=(rt:"$C13/libcudart.so.13" threads:8 cublas:"$C13/libcublas.so.13")
    [ -e "$C13/libcudnn.so.9" ] && args+=(cudnn:"$C13/libcudnn.so.9")
    [ -e "$C13/libnccl.so.2" ] && args+=(nccl:"$C13/libnccl.so.2")
    both_modes cu13 ./realstack "${args[@]}" "${storm[@]}"
    grep -q "cudaGetDeviceCount=35" <<<"$out" || fail "cu13: the real runtime should say insufficient driver: $out"
    has_finding "$trace" driver-too-old libcudart.so.13 "CUDA 13" "535.261.03" "CUDA 12.2"
    [ "$(q count "$trace" api=cudaGetDeviceCount result_name=cudaErrorInsufficientDriver)" -ge 1 ] ||
        fail "cu13: cudaGetDeviceCount -> cudaErrorInsufficientDriver (35) is not in the trace"
    has_finding "$trace" driver-too-old libcublas.so.13 "CUDA 13" "535.261.03"
    # cuDNN and NCCL carry their own runtimes too: each is named with the CUDA it was built for.
    [ -e "$C13/libcudnn.so.9" ] && has_finding "$trace" driver-too-old libcudnn.so.9 "CUDA 13" "535.261.03"
    [ -e "$C13/libnccl.so.2" ] && has_finding "$trace" driver-too-old libnccl.so.2 "CUDA 13" "535.261.03"
    # cuBLAS's own runtime fails at cuGetExportTable on this driver: the driver is older than it.
    has_finding "$trace" cublas-not-initialized "cuGetExportTable -> CUDA_ERROR_INVALID_VALUE" \
        "older than the CUDA cuBLAS was built for"
    # NCCL's own runtime fails at cuGetExportTable on this driver; NCCL's words say why.
    [ -e "$C13/libnccl.so.2" ] && has_finding "$trace" nccl-cuda-failure "cuGetExportTable -> CUDA_ERROR_INVALID_VALUE" \
        "CUDA driver version is insufficient" "older than the CUDA that NCCL was built for"
    # The driver calls cuBLAS's own runtime makes inside cublasCreate are recorded, and say so.
    python3 - "$all_trace" <<'PY' || fail "cu13: cuBLAS's driver lookups are not in the ALL-mode trace"
import json, sys
calls = [e for e in map(json.loads, open(sys.argv[1])) if e["type"] == "call"]
inner = [c for c in calls if c.get("inside") == "cublasCreate_v2" and c["api"].startswith("cuGetProcAddress")]
assert len(inner) > 100, len(inner)
assert all(c["caller"] == "libcublas.so.13" for c in inner), inner[0]
PY

    coverage_cmd=(./realstack rt:"$C13/libcudart.so.13" cublas:"$C13/libcublas.so.13")
    both_modes cov13 "${coverage_cmd[@]}"
    exact_coverage cov13 cuGetProcAddress_v2 cuDriverGetVersion

    # 4. Both runtimes in one process, 13 first (a CUDA 13 framework and a CUDA 11 extension).
    both_modes two ./realstack rt:"$C13/libcudart.so.13" rt:"$RS/libcudart.so.11.0" first threads:8
    grep -q "first runtime: cudaGetDeviceCount=35" <<<"$out" || fail "two runtimes: the first runtime's pointer: $out"

    if ! under_tsan; then
    # 5. Python in cu13's load order, with cuDNN and NCCL.
    cat >"$TMP/cu13.py" <<PY
import ctypes, os
g = os.RTLD_GLOBAL
rt = ctypes.CDLL("$C13/libcudart.so.13", mode=g)
for lib in ("libcublasLt.so.13", "libcublas.so.13", "libcudnn.so.9", "libnccl.so.2"):
    if os.path.exists("$C13/" + lib): ctypes.CDLL("$C13/" + lib, mode=g)
n = ctypes.c_int(-1)
print("count", rt.cudaGetDeviceCount(ctypes.byref(n)))
h = ctypes.c_void_p()
print("cublas", ctypes.CDLL(None).cublasCreate_v2(ctypes.byref(h)))
PY
    both_modes py13 python3 "$TMP/cu13.py"
    has_finding "$trace" driver-too-old libcudart.so.13
    fi

    # 6. A stale cuBLASLt on LD_LIBRARY_PATH: the loader's "version `libcublasLt.so.13' not found"
    #    is a finding that names the copy and the library that needed it.
    mkdir -p "$TMP/stale"
    ln -s "$RS/libcublasLt.so.11" "$TMP/stale/libcublasLt.so.13"
    LD_LIBRARY_PATH="$DRIVER_DIR:$TMP/stale" both_modes stale ./realstack cublas:"$C13/libcublas.so.13"
    grep -q "version \`libcublasLt.so.13' not found" <<<"$out" || fail "stale: the loader's own message: $out"
    has_finding "$trace" missing-symbol libcublasLt.so.13 libcublas.so.13
else
    echo "skipped the CUDA 13 cases: no $C13/libcudart.so.13 and libcublas.so.13"
fi
echo ok
