#!/usr/bin/env bash
# Failing launches and device code on the fake driver: 209 and 222 explained from the image and
# the device, lazy loading (at a lookup and at a launch), an oversized block, a sticky 700 with its suspects, sync-launch mode
# pinning the kernel, out of memory with sizes, a graph launch recorded.
. "$(dirname "$0")/lib.sh"
need_python
F="$ROOT/tests/fixtures/fatbin"
compile devcode tests/programs/devcode.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
case_() { local name=$1; shift; run_traced "$name" ./devcode "$@"; }
finding_has() { local s; s=$(q finding "$trace" "$1") || { q findings "$trace"; fail "no finding $1"; }
    for w in "${@:2}"; do grep -qF -- "$w" <<<"$s" || { echo "$s"; fail "finding $1 lacks '$w'"; }; done; }

# 209: an sm_80-only image on a 9.0 device and on a 12.0 device.
# A CUDA 13 PyTorch build (torch-2.9.0+cu130 beside it) on a GTX 1080 Ti (sm_61), driver for
# CUDA 13.0: CUDA 13 dropped Pascal, so the way out is a build for CUDA 12, not a newer driver.
mkdir -p "$TMP/wheel/torch/lib" "$TMP/wheel/torch-2.9.0+cu130.dist-info"
$CC -shared -fPIC -o "$TMP/wheel/torch/lib/libtorch_cuda.so" -DFAKE_FRAMEWORK "$ROOT/tests/programs/libs/fake_stack.c" || fail "fake torch"
compile devcode_torch tests/programs/devcode.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES" \
    -Wl,--no-as-needed "$TMP/wheel/torch/lib/libtorch_cuda.so" -Wl,-rpath,"$TMP/wheel/torch/lib"
run_traced pascal ./devcode_torch FAKE_CUDA_CC=6.1 FAKE_CUDA_DRIVER_VERSION=13000 FAKE_CUDA_FAIL=cuModuleLoadData=209 -- \
    "$F/tv18_sm80_only.fatbin" load
finding_has no-kernel-image "sm_61" "What would work here: keep this driver (CUDA 13.0): torch 2.9 built for CUDA 12.6 runs here" \
    "whl/cu126" "torch 2.9.0+cu130 has no code for this GPU (sm_61; its builds for CUDA 13.0 cover sm_75" "no driver makes it run here"
case_ nki90 FAKE_CUDA_CC=9.0 FAKE_CUDA_FAIL=cuModuleLoadData=209 -- "$F/tv18_sm80_only.fatbin" load
finding_has no-kernel-image "SASS for sm_80" "sm_90 (Hopper" "209" "CUDA 11.8" "image from devcode"
case_ nki120 FAKE_CUDA_CC=12.0 FAKE_CUDA_FAIL=cuModuleLoadData=209 -- "$F/tv18_sm80_only.fatbin" load
finding_has no-kernel-image "SASS for sm_80" "sm_120 (Blackwell" "CUDA 12.8"
assert_eq "$(q count "$trace" api=cuModuleLoadData image="SASS for sm_80" image_from=devcode)" 1 \
    "the load line carries the image summary and the file that holds it"
# 222: PTX newer than the driver.
case_ ptx FAKE_CUDA_CC=9.0 FAKE_CUDA_DRIVER_VERSION=13000 FAKE_CUDA_FAIL=cuModuleLoadData=222 -- "$F/tv11_ptx91.fatbin" load
finding_has ptx-too-new "PTX 9.1" "needs a driver for CUDA 13.1" "this driver is CUDA 13.0" "222"
# Lazy loading: the image loads, the kernel's first use fails.
case_ lazy FAKE_CUDA_CC=12.0 FAKE_CUDA_FAIL=cuModuleGetFunction=209 -- "$F/tv18_sm80_only.fatbin" load
finding_has no-kernel-image "kernel addk from devcode" "cuModuleGetFunction" "lazy loading" "sm_120"
# Launches that fail for their image (lazy loading): one finding for the image naming both
# kernels; each launch's line has what it was given and the explanation, each field once (what
# explains it is collected first, then written once).
case_ lazylaunch FAKE_CUDA_CC=12.0 FAKE_CUDA_FAIL=cuLaunchKernel=209 -- "$F/tv18_sm80_only.fatbin" async
finding_has no-kernel-image "kernels addk, mulk from devcode failing with 209 at launch" "sm_120"
assert_eq "$(q findings "$trace" | grep -c no-kernel-image)" 1 "two kernels from one image: one cause, said once"
python3 - "$trace" <<'PY' || fail "the failing launch's line is not written once, whole"
import sys
lines = [l for l in open(sys.argv[1]) if '"api":"cuLaunchKernel"' in l and '"result":209' in l]
assert len(lines) == 2, lines
first = lines[0]
for key in ("kernel", "grid", "block", "shared_mem", "stream", "diagnosis"):
    assert first.count('"%s":' % key) == 1, (key, first)
assert '"kernel":"addk","grid":[4,1,1],"block":[256,1,1]' in first and "sm_120" in first, first
PY
# An oversized block names the kernel and the limit.
case_ big -- "$F/tv01_basic.fatbin" bigblock
assert_eq "$(q count "$trace" api=cuLaunchKernel kernel=addk block="[2048, 1, 1]")" 1 "failing launch names its kernel"
grep -q '"reason":"block 2048x1x1 = 2048 threads exceeds the device limit of 1024 threads per block"' "$trace" ||
    fail "no reason on the failing launch"
# A C++ kernel's name is demangled with the program's own libstdc++ (found without dlsym's loader
# lock: this runs in a hook on the program's thread).
$CC -O1 -o "$TMP/devcode_cxx" "$ROOT/tests/programs/devcode.c" -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES" \
    -Wl,--no-as-needed -lstdc++ || fail "cannot build devcode with libstdc++"
run_traced cxx ./devcode_cxx DEVCODE_ADDK=_Z4addkPfPKfi -- "$F/tv01_basic.fatbin" bigblock
assert_eq "$(q count "$trace" api=cuLaunchKernel kernel="addk(float*, float const*, int)")" 1 "the failing launch's kernel, demangled"
# A sticky 700 at cuStreamSynchronize names the kernels launched on that stream since the last sync.
case_ sticky FAKE_CUDA_FAULT_KERNEL=mulk -- "$F/tv01_basic.fatbin" async
grep -q "cuStreamSynchronize=700" "$TMP/sticky.out" || fail "the fake should report 700"
finding_has async-kernel-error "CUDA_ERROR_ILLEGAL_ADDRESS (700) at cuStreamSynchronize" "mulk" "addk" "CUDASHIM_SYNC_LAUNCHES=1"
grep -q '"suspects":\["mulk","addk"\]' "$trace" || fail "the failing sync lacks its suspects"
# The same at CUDA 13's cuCtxSynchronize_v2 (what cudaDeviceSynchronize calls on a 580 driver).
case_ sticky2 FAKE_CUDA_FAULT_KERNEL=mulk -- "$F/tv01_basic.fatbin" async2
grep -q "cuCtxSynchronize_v2=700" "$TMP/sticky2.out" || fail "the fake should report 700 at cuCtxSynchronize_v2"
finding_has async-kernel-error "CUDA_ERROR_ILLEGAL_ADDRESS (700) at cuCtxSynchronize_v2" "mulk" "addk"
# 702 at the sync: the display watchdog, with the kernels in flight.
case_ timeout FAKE_CUDA_FAIL=cuStreamSynchronize=702 -- "$F/tv01_basic.fatbin" async
finding_has launch-timeout "CUDA_ERROR_LAUNCH_TIMEOUT (702) at cuStreamSynchronize" "display" "mulk"
# Sync-launch mode pins the kernel that faulted, and only that one.
case_ pinned CUDASHIM_SYNC_LAUNCHES=1 FAKE_CUDA_FAULT_KERNEL=mulk -- "$F/tv01_basic.fatbin" async
finding_has kernel-fault "kernel mulk" "700"
q finding "$trace" kernel-fault | grep -q addk && fail "sync-launch mode blamed addk"
# ... limited to a pattern: addk only, so the fault in mulk is not pinned.
case_ pattern CUDASHIM_SYNC_LAUNCHES=add* FAKE_CUDA_FAULT_KERNEL=mulk -- "$F/tv01_basic.fatbin" async
q findings "$trace" | grep -q kernel-fault && fail "a pattern that excludes mulk still pinned it"
# Out of memory: the size asked, free and total, and what the process holds.
case_ oom -- "$F/tv01_basic.fatbin" oom
python3 - "$trace" <<'PY' || fail "the OOM call lacks its sizes"
import json, sys
c = [json.loads(l) for l in open(sys.argv[1]) if '"CUDA_ERROR_OUT_OF_MEMORY"' in l][0]
assert c["requested"] == 1 << 40 and c["free"] > 0 and c["total"] >= c["free"], c
assert c["process_live_bytes"] == 1 << 20 and c["process_allocations"] == 1, c
PY
finding_has out-of-memory "1024.00 GiB" "free of 80.00 GiB" "1.0 MiB in 1 allocations"
# Out of memory at a kernel's load (lazy loading): not an architecture problem; no out-of-memory
# or no-kernel-image beside it.
case_ lazy_oom FAKE_CUDA_FAIL=cuModuleGetFunction=2 -- "$F/tv01_basic.fatbin" load
finding_has module-load-out-of-memory "cuModuleGetFunction" "not a wrong architecture" "lazy loading" "addk"
! q findings "$trace" | grep -Eq "no-kernel-image|^out-of-memory" || fail "a code load's OOM said twice or as an image problem"
# An address-space reservation refused under ulimit -v while the device has room.
# (A sanitizer's runtime cannot start under that limit; under one, the sanitizer is the cause.)
if [ "${CS_SANITIZER:-0}" = 0 ]; then
    (ulimit -v 33554432; case_ reserve FAKE_CUDA_FAIL=cuMemAddressReserve=2 -- "$F/tv01_basic.fatbin" reserve
     finding_has address-space-refused "cuMemAddressReserve" "96.00 GiB" "ulimit -v is 32.00 GiB" "address space")
    case_ reserve_nolimit FAKE_CUDA_FAIL=cuMemAddressReserve=2 -- "$F/tv01_basic.fatbin" reserve
    ! q findings "$trace" | grep -q address-space-refused || fail "address-space-refused without a limit"
else
    # under a sanitizer its runtime holds the address space: the finding's second cause
    case_ reserve_sanitizer FAKE_CUDA_FAIL=cuMemAddressReserve=2 -- "$F/tv01_basic.fatbin" reserve
    finding_has address-space-refused "cuMemAddressReserve" "sanitizer"
fi
# Pinned host memory refused: host memory, and the runtime's stale error.
case_ pinned_host FAKE_CUDA_FAIL=cuMemHostAlloc=2 -- "$F/tv01_basic.fatbin" pinned
finding_has pinned-memory-refused "cuMemHostAlloc" "6.00 GiB" "page-locked host memory" "not the GPU's"
# A graph launch is recorded (ALL mode writes every call).
case_ graph CUDASHIM_TRACE_ALL=1 -- "$F/tv01_basic.fatbin" graph
assert_eq "$(q count "$trace" api=cuGraphLaunch graph=0x99 stream=0x10)" 1 "graph launch recorded"
# Behaviour unchanged under the shim.
same_behaviour ./devcode "$F/tv01_basic.fatbin" async >/dev/null
echo ok
