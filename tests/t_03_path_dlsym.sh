#!/usr/bin/env bash
# Path 2: dlsym(RTLD_DEFAULT / RTLD_NEXT, "cu..."). Also: no driver loaded means NULL, as without us.
. "$(dirname "$0")/lib.sh"
need_python
compile path_dlsym tests/programs/path_dlsym.c -ldl -Wl,--no-as-needed -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
compile path_dlsym_absent tests/programs/path_dlsym.c -ldl
same_behaviour ./path_dlsym >/dev/null
same_behaviour ./path_dlsym_absent absent >/dev/null
FAKE_CUDA_COUNTS="$TMP/counts" CUDASHIM_TRACE_ALL=1 with_shim ./path_dlsym >/dev/null
t=$(only_trace)
assert_eq "$(q count "$t" api=cuDriverGetVersion via=dlsym)" 1 "RTLD_DEFAULT lookup traced as dlsym"
assert_eq "$(q count "$t" api=cuDeviceGetCount)" 1 "RTLD_NEXT lookup from the program traced"
diff <(q summary "$t") <(q counts "$TMP"/counts.*) || fail "ALL-mode counts differ from the driver's"
echo ok
