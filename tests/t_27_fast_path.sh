#!/usr/bin/env bash
# The fast path's entry points (assembly on x86-64 and aarch64, C under the sanitizers): every
# argument reaches the library as given, stack and floating-point ones included, on each way a
# call arrives; the answer and errno come back unchanged, the first call included (it resolves
# the real function); calls are counted; a failing launch is recorded with all its arguments.
. "$(dirname "$0")/lib.sh"
need_python
compile fast_path tests/programs/fast_path.c -ldl -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
out=$(FAKE_CUDA_ECHO_LAUNCH=1 same_behaviour ./fast_path)
for base in 0x1 0x2 0x3 0x4; do
    echo "$out" | grep -q "f=${base}001 grid=7,8,9 block=4,2,3 smem=77 stream=${base}002 params=${base}003 extra=${base}004" ||
        fail "a launch's arguments did not reach the driver as given: $out"
done
[ "$(echo "$out" | grep -c 'errno=4321')" = 8 ] || fail "errno changed across a call: $out"
t=$(only_trace)
q valid "$t" >/dev/null
for c in "linked cuLaunchKernel 0x1005 0x1006" "linked cuLaunchKernel_ptsz 0x2005 0x2006" \
         "dlsym cuLaunchKernel 0x3005 0x3006" "cuGetProcAddress cuLaunchKernel 0x4005 0x4006"; do
    set -- $c
    assert_eq "$(q count "$t" api=$2 via=$1 result_name=CUDA_ERROR_INVALID_VALUE kernel=$3 stream=$4 shared_mem=4096)" 1 \
        "failing $2 ($1) recorded with its kernel, stream and shared memory"
done
assert_eq "$(q count "$t" reason="block 2048x1x1 = 2048 threads exceeds the device limit of 1024 threads per block")" 4 \
    "each failing launch's geometry explained"
q summary "$t" | grep -qx "cuLaunchKernel 6" || fail "launches not counted: $(q summary "$t" | grep Launch)"
q summary "$t" | grep -qx "cuLaunchKernel_ptsz 2" || fail "_ptsz launches not counted"

# cuLaunchKernelEx: its stream read from its configuration (none when NULL); refused, its geometry.
rm -f "$TMP"/cudashim-*
out=$(same_behaviour ./fast_path ex)
[ "$(echo "$out" | grep -c ': 0 0 0 errno=4321')" = 3 ] || fail "cuLaunchKernelEx each way: $out"
q summary "$(only_trace)" | grep -qx "cuLaunchKernelEx 9" || fail "cuLaunchKernelEx not counted"
rm -f "$TMP"/cudashim-*
out=$(FAKE_CUDA_FAIL=cuLaunchKernelEx=1 same_behaviour ./fast_path ex)
[ "$(echo "$out" | grep -c ': 1 1 1 errno=4321')" = 3 ] || fail "refused cuLaunchKernelEx each way: $out"
t=$(only_trace)
for c in "linked 0x5" "dlsym 0x6" "cuGetProcAddress 0x7"; do
    set -- $c
    assert_eq "$(q count "$t" api=cuLaunchKernelEx via=$1 kernel=${2}001 stream=${2}002 shared_mem=77)" 1 "refused cuLaunchKernelEx ($1) that fits, its stream"
    assert_eq "$(q count "$t" api=cuLaunchKernelEx via=$1 kernel=${2}005 stream=${2}006 shared_mem=4096 \
        reason="block 2048x1x1 = 2048 threads exceeds the device limit of 1024 threads per block")" 1 "refused cuLaunchKernelEx ($1) of 2048 threads"
    assert_eq "$(q count "$t" api=cuLaunchKernelEx via=$1 kernel=${2}009)" 1 "refused cuLaunchKernelEx ($1) without a configuration"
done

# A call made inside another (the runtime's cuLaunchKernel inside cudaLaunchKernel) takes the fast
# path too, on its own saved registers: the failing one is recorded inside the runtime call, with
# its own arguments.
mkdir -p "$TMP/rt"
$CC -O2 -shared -fPIC -Wl,-soname,libcudart.so.13 -o "$TMP/rt/libcudart.so.13" "$ROOT/tests/programs/libs/fake_runtime.c" \
    -L"$FAKES" -lcuda || fail "cannot build the fake runtime"
compile runtime_launch tests/programs/runtime_launch.c "$TMP/rt/libcudart.so.13" -L"$FAKES" -lcuda -Wl,-rpath,"$TMP/rt:$FAKES"
rm -f "$TMP"/cudashim-*
out=$(same_behaviour ./runtime_launch check)
[ "$out" = "$(printf 'cudaLaunchKernel=0\ncudaLaunchKernel=98\n__cudaLaunchKernel=0\n__cudaLaunchKernel=98')" ] || fail "runtime launches: $out"
t=$(only_trace)
assert_eq "$(q count "$t" api=cuLaunchKernel via=cuGetProcAddress inside=cudaLaunchKernel kernel=0x78 stream=0x20 shared_mem=128 \
    reason="block 2048x1x1 = 2048 threads exceeds the device limit of 1024 threads per block")" 1 \
    "the driver launch refused inside the runtime's, with its arguments"
assert_eq "$(q count "$t" api=cudaLaunchKernel result=98)" 1 "the runtime call that failed"
assert_eq "$(q count "$t" api=cuLaunchKernel inside=__cudaLaunchKernel kernel=0x88 stream=0x40 shared_mem=256)" 1 \
    "the driver launch refused inside nvcc 13's runtime entry point"
assert_eq "$(q count "$t" api=__cudaLaunchKernel result_name=cudaErrorInvalidDeviceFunction)" 1 "nvcc 13's runtime launch that failed"
q summary "$t" | grep -qx "cuLaunchKernel 4" || fail "launches inside the runtime not counted"
q summary "$t" | grep -qx "__cudaLaunchKernel 2" || fail "nvcc 13's runtime launches not counted"
# A crash in the driver under both entry points: the unwinder walks out through both to main.
rm -f "$TMP"/cudashim-*
FAKE_CUDA_CRASH=cuLaunchKernel with_shim ./runtime_launch check >/dev/null 2>&1 && fail "the crash did not happen"
q crash "$(only_trace)" >"$TMP/crash.facts" || fail "no crash record"
# (aarch64's unwinder is glibc's backtrace, which names exported functions only: main is "?".)
main_frame="frame main runtime_launch -"
[ -z "$CS_RUN" ] || main_frame="frame [^ ]* runtime_launch -"
for f in "frame cudaLaunchKernel libcudart.so.13 cuda_lib" "$main_frame"; do
    grep -qx -- "$f" "$TMP/crash.facts" || { cat "$TMP/crash.facts"; fail "crash under nested entry points: no '$f'"; }
done

# NVIDIA's cuDNN through python3 ctypes (the dlsym way in): a double argument (xmm0) on the
# first call of cudnnSetActivationDescriptor, read back; cudnnBackendExecute refused (no handle),
# its hook run with the arguments the fast path kept (it names the operation).
CUDNN=$(ls "$CUDA"/lib64/libcudnn.so.9 "$CUDA"/lib/x86_64-linux-gnu/libcudnn.so.9 2>/dev/null | head -n 1 || true)
if under_tsan; then
    echo "python3 crashes with ThreadSanitizer preloaded: the cuDNN part skipped"
elif [ -n "$CS_RUN" ]; then
    echo "skipped part: cuDNN through python3 (this machine's python3 and cuDNN, not the emulated target's)"
elif [ -n "$CUDNN" ]; then
    rm -f "$TMP"/cudashim-*
    cat >"$TMP/act.py" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
d = ctypes.c_void_p()
print("create", lib.cudnnCreateActivationDescriptor(ctypes.byref(d)))
print("set", lib.cudnnSetActivationDescriptor(d, 1, 0, ctypes.c_double(6.25)))
m, n, c = ctypes.c_int(), ctypes.c_int(), ctypes.c_double()
print("get", lib.cudnnGetActivationDescriptor(d, ctypes.byref(m), ctypes.byref(n), ctypes.byref(c)), m.value, n.value, c.value)
print("destroy", lib.cudnnDestroyActivationDescriptor(d))
print("execute", lib.cudnnBackendExecute(None, None, None))
PY
    out=$(same_behaviour python3 "$TMP/act.py" "$CUDNN")
    echo "$out" | grep -qx "get 0 1 0 6.25" || fail "cuDNN did not get the double as given: $out"
    t=$(only_trace)
    q summary "$t" | grep -qx "cudnnSetActivationDescriptor 1" || fail "the cuDNN call was not counted"
    echo "$out" | grep -qx "execute 2000" || fail "cudnnBackendExecute without a handle: $out"
    assert_eq "$(q count "$t" api=cudnnBackendExecute result_name=CUDNN_STATUS_BAD_PARAM operation=execute)" 1 \
        "refused cudnnBackendExecute with its hook's fields"
else
    echo "no cuDNN 9 under $CUDA: its part skipped"
fi
echo ok
