#!/usr/bin/env bash
# ctypes.CDLL("libcuda.so.1").cuX: handle lookups from Python, the way many scripts call the driver.
. "$(dirname "$0")/lib.sh"
need_python
under_tsan && skip "python3 crashes with ThreadSanitizer preloaded, with or without the shim"
export LD_LIBRARY_PATH="$FAKES"
cat > prog.py <<'PY'
import ctypes, sys
cuda = ctypes.CDLL("libcuda.so.1")
v = ctypes.c_int(0)
print("cuInit", cuda.cuInit(0))
for _ in range(50):
    cuda.cuDriverGetVersion(ctypes.byref(v))
print("version", v.value)
d = ctypes.c_int(-1)
print("bad device", cuda.cuDeviceGet(ctypes.byref(d), 9))
sys.exit(4)
PY
same_behaviour python3 prog.py >/dev/null
t=$(only_trace)
assert_eq "$(q count "$t" api=cuDeviceGet via=dlsym result_name=CUDA_ERROR_INVALID_DEVICE)" 1 "ctypes failing call"
# The header says what a bug report needs of the machine, Python's version included.
python3 - "$t" <<'PY' || fail "the header's system facts"
import json, platform, sys
h = json.loads(open(sys.argv[1]).readline())["system"]
assert h["kernel"] == platform.release() and h["glibc"] == platform.libc_ver()[1], h
assert h["python"] == "%d.%d" % sys.version_info[:2], h
PY
rm -f "$TMP"/cudashim-*
FAKE_CUDA_COUNTS="$TMP/counts" CUDASHIM_TRACE_ALL=1 with_shim python3 prog.py >/dev/null || true
t=$(only_trace)
diff <(q summary "$t") <(q counts "$TMP"/counts.*) || fail "ALL-mode counts differ from the driver's"
assert_eq "$(q count "$t" api=cuDriverGetVersion via=dlsym)" 50 "ctypes calls via dlsym"
# ctypes.CDLL(None) searches the global scope: before libcuda is loaded it must not find the
# shim's exports (no CUDA function exists there without the shim), after it finds the driver's.
probe='import ctypes; print(hasattr(ctypes.CDLL(None), "cuInit"), hasattr(ctypes.CDLL(None), "ncclGetVersion"), hasattr(ctypes.CDLL(None), "cudnnCreate"))'
assert_eq "$(with_shim python3 -c "$probe")" "$(env LD_PRELOAD="$ASAN_LIB" python3 -c "$probe")" "global-scope lookups as without the shim"
assert_eq "$(with_shim python3 -c "$probe")" "False False False" "no CUDA function in the global scope"
after='import ctypes; ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL); print(ctypes.CDLL(None).cuDriverGetVersion(ctypes.byref(ctypes.c_int())))'
assert_eq "$(with_shim python3 -c "$after" 2>/dev/null)" 0 "after loading libcuda, the global scope finds it"
echo ok
