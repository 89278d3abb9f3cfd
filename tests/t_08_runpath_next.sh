#!/usr/bin/env bash
# glibc must keep seeing the program, not the shim, as the caller: RUNPATH-relative dlopen
# (pip wheels, cuDNN 9 sub-libraries) and dlsym(RTLD_NEXT) (LLVM OpenMP's ompt_start_tool).
. "$(dirname "$0")/lib.sh"
mkdir -p wheel/sub
$CC -shared -fPIC -o wheel/sub/libleaf.so "$ROOT/tests/programs/libs/runpath_leaf.c"
$CC -shared -fPIC -o wheel/libouter.so "$ROOT/tests/programs/libs/runpath_outer.c" -ldl -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/sub'
$CC -shared -fPIC -o libnext_b.so "$ROOT/tests/programs/libs/next_b.c"
$CC -shared -fPIC -o libnext_a.so "$ROOT/tests/programs/libs/next_a.c" -ldl
$CC -o runpath_main "$ROOT/tests/programs/runpath_main.c" -ldl -Wl,--no-as-needed -L. -lnext_a -lnext_b -Wl,-rpath,"$TMP"
readelf -d wheel/libouter.so | grep -q RUNPATH || fail "test library has no RUNPATH"
out=$(same_behaviour ./runpath_main "$TMP/wheel/libouter.so")
# ASan's own dlopen interceptor breaks RUNPATH, so the sanitizer suite only compares with ASan alone.
[ -n "$ASAN_LIB" ] || echo "$out" | grep -q "leaf=42" || fail "RUNPATH sibling did not load: $out"
echo "$out" | grep -q "next=2" || fail "RTLD_NEXT answered the caller's own symbol: $out"
# Also with the shim active (CUDA in use on another path) in ALL mode.
out=$(CUDASHIM_TRACE_ALL=1 with_shim ./runpath_main "$TMP/wheel/libouter.so")
{ [ -n "$ASAN_LIB" ] || echo "$out" | grep -q "leaf=42"; } && echo "$out" | grep -q "next=2" || fail "under ALL mode: $out"
echo ok
