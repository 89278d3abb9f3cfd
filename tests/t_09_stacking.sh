#!/usr/bin/env bash
# Another dlsym-hooking preload, before and after ours: both keep working, and so does tracing.
. "$(dirname "$0")/lib.sh"
need_python
$CC -shared -fPIC -O2 -o libother_hook.so "$ROOT/tests/programs/libs/other_hook.c" -ldl
compile path_handle tests/programs/path_handle.c -ldl
export LD_LIBRARY_PATH="$FAKES"
expected=$(./path_handle)
for order in "$ASAN_LIB $TMP/libother_hook.so $SHIM" "$PRELOAD $TMP/libother_hook.so"; do
    rm -f "$TMP"/cudashim-*
    out=$(OTHER_HOOK_REPORT=1 LD_PRELOAD="$order" ./path_handle 2>err) || fail "failed with LD_PRELOAD=$order"
    assert_eq "$out" "$expected" "output with LD_PRELOAD=$order"
    grep -q "other_hook: [1-9]" err || fail "the other hook saw no lookups ($order)"
    t=$(only_trace)
    assert_eq "$(q count "$t" api=cuDeviceGet via=dlsym result_name=CUDA_ERROR_INVALID_DEVICE)" 1 "traced with $order"
done
echo ok
