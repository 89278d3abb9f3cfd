#!/usr/bin/env bash
# Path 1 (linked -lcuda): transparency, the trace's required keys, and exact coverage in ALL mode.
. "$(dirname "$0")/lib.sh"
need_python
compile path_linked tests/programs/path_linked.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
same_behaviour ./path_linked >/dev/null
t=$(only_trace)
q valid "$t" >/dev/null
assert_eq "$(q count "$t" api=cuMemAlloc_v2 result_name=CUDA_ERROR_OUT_OF_MEMORY via=linked)" 1 "failing cuMemAlloc_v2"
assert_eq "$(q count "$t" api=cuLaunchKernel result=1)" 1 "failing launch written once"
assert_eq "$(q count "$t" api=cuLaunchKernel result=0)" 0 "successful launches not written by default"
assert_eq "$(q count "$t" api=cuDriverGetVersion driver_version=13000)" 1 "key call with its value"
assert_eq "$(q field "$t" header mode)" default "mode in header"
assert_eq "$(stat -c %a "$t")" 600 "trace file mode"
rm -f "$TMP"/cudashim-*
FAKE_CUDA_COUNTS="$TMP/counts" CUDASHIM_TRACE_ALL=1 with_shim ./path_linked >/dev/null || true
t=$(only_trace)
diff <(q summary "$t") <(q counts "$TMP"/counts.*) || fail "ALL-mode counts differ from the calls the driver received"
assert_eq "$(q count "$t")" 108 "every call written in ALL mode"
assert_eq "$(q count "$t" via=linked)" 108 "all via linked"
echo ok
