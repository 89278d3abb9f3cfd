#!/usr/bin/env bash
# Path 3: dlopen("libcuda.so.1") + dlsym(handle, ...), and exact coverage in ALL mode.
. "$(dirname "$0")/lib.sh"
need_python
compile path_handle tests/programs/path_handle.c -ldl
export LD_LIBRARY_PATH="$FAKES"
same_behaviour ./path_handle >/dev/null
t=$(only_trace)
assert_eq "$(q count "$t" api=cuDeviceGet result_name=CUDA_ERROR_INVALID_DEVICE via=dlsym)" 1 "failing call via dlsym"
assert_eq "$(q count "$t" api=cuDeviceGetAttribute attribute=COMPUTE_CAPABILITY_MAJOR value=9)" 1 "compute capability"
rm -f "$TMP"/cudashim-*
FAKE_CUDA_COUNTS="$TMP/counts" CUDASHIM_TRACE_ALL=1 with_shim ./path_handle 1000 >/dev/null
t=$(only_trace)
diff <(q summary "$t") <(q counts "$TMP"/counts.*) || fail "ALL-mode counts differ from the driver's"
assert_eq "$(q count "$t" via=dlsym)" 3002 "all 3002 calls via dlsym"
echo ok
