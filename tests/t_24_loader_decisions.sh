#!/usr/bin/env bash
# The shim exports no API name, so it changes nothing the loader decides: a reference that the
# loaded libraries cannot satisfy fails exactly as without the shim (the same message, the same
# exit status), and the failure is diagnosed where the shim can still speak.
. "$(dirname "$0")/lib.sh"
need_python
LIBSRC="$ROOT/tests/programs/libs/fake_stack.c"
fakelib() { local dir=$1 so=$2; shift 2; mkdir -p "$dir"
    $CC -shared -fPIC -o "$dir/$so" -Wl,-soname,"$so" "$LIBSRC" "$@" || fail "cannot build $so"; }
compile load_libs tests/programs/load_libs.c -ldl
# both NAME ENV... -- PROG ARGS...: stdout, stderr (the shim's own lines aside) and exit status
# identical with and without the shim; the trace in $TMP/NAME, stdout in $out.
both() {
    local name=$1; shift
    local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    mkdir -p "$TMP/$name"
    set +e
    env "${envs[@]}" "$@" >"$TMP/$name.plain.out" 2>"$TMP/$name.plain.err"; local ra=$?
    env "${envs[@]}" CUDASHIM_TRACE_DIR="$TMP/$name" LD_PRELOAD="$PRELOAD" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"; local rb=$?
    set -e
    diff "$TMP/$name.plain.out" "$TMP/$name.out" || fail "$name: stdout differs under the shim"
    diff "$TMP/$name.plain.err" <(grep -v '^cudashim\|^  ' "$TMP/$name.err") || fail "$name: the loader's words differ under the shim"
    [ $ra = $rb ] || fail "$name: exit status $ra without the shim, $rb under it"
    out=$(cat "$TMP/$name.out")
    trace=$(ls "$TMP/$name"/cudashim-*.jsonl 2>/dev/null | head -n 1)
}
finding_has() {  # ID TEXT...: a finding with that id whose summary holds every TEXT
    python3 - "$trace" "$@" <<'PY' || fail "no finding $1 with ${*:2}"
import json, sys
path, fid, words = sys.argv[1], sys.argv[2], sys.argv[3:]
found = [json.loads(l) for l in open(path) if '"type":"finding"' in l]
if not any(f["id"] == fid and all(w in f["summary"] for w in words) for f in found):
    for f in found: print(f["id"], f["severity"], f["summary"])
    sys.exit(1)
PY
}

# 1. A framework built against NCCL 2.27 (ncclCommRegister), a stale NCCL 2.18 first on
#    LD_LIBRARY_PATH, the framework loaded with RTLD_NOW: the load fails, naming the symbol.
fakelib "$TMP/nccl-new" libnccl.so.2 -DFAKE_NCCL -DVERSION=22703 -DNEW_API
fakelib "$TMP/nccl-old" libnccl.so.2 -DFAKE_NCCL -DVERSION=21803
$CC -shared -fPIC -o "$TMP/libframework_nccl.so" -DUSE_NCCL "$ROOT/tests/programs/libs/framework_newer_api.c" \
    -L"$TMP/nccl-new" -l:libnccl.so.2 || fail "framework (NCCL)"
both nccl LD_LIBRARY_PATH="$FAKES:$TMP/nccl-old" -- ./load_libs cuda dlopen:libnccl.so.2 dlopen:"$TMP/libframework_nccl.so"
grep -q "undefined symbol: ncclCommRegister" <<<"$out" || fail "nccl: the load should fail: $out"
finding_has missing-symbol ncclCommRegister libframework_nccl.so "$TMP/nccl-old/libnccl.so.2" 2.18.3

# The framework with the NCCL it was built for: its calls are traced as linked calls, also after
# it is closed and opened again (a fresh GOT, likely at the same address).
both reopen LD_LIBRARY_PATH="$FAKES:$TMP/nccl-new" CUDASHIM_TRACE_ALL=1 -- ./load_libs cuda dlopen:libnccl.so.2 \
    dlopen:"$TMP/libframework_nccl.so" call:framework_register dlclose dlopen:"$TMP/libframework_nccl.so" call:framework_register
assert_eq "$(grep -c '^framework_register=0' <<<"$out")" 2 "both calls ran"
assert_eq "$(q count "$trace" api=ncclCommRegister via=linked)" 2 "calls from a framework, before and after it was reopened"
# Opened and closed in a loop while the shim's scanner reads the link map: every object it reads
# is whole or gone (a scan raced an unmapping before the scan ran under the loader's lock).
churn=(); for i in $(seq 1 40); do churn+=(dlopen:"$TMP/libframework_nccl.so" call:framework_register dlclose); done
both churn LD_LIBRARY_PATH="$FAKES:$TMP/nccl-new" CUDASHIM_TRACE_ALL=1 -- ./load_libs cuda dlopen:libnccl.so.2 "${churn[@]}"
assert_eq "$(grep -c '^framework_register=0' <<<"$out")" 40 "every call ran"

# 2. A program linked against cuMemAllocAsync, run on a driver that lacks it: "symbol lookup
#    error", exit 127, with and without the shim (lazily bound, and bound at start-up).
fakelib "$TMP/olddrv" libcuda.so.1 -DFAKE_DRIVER
compile newer_driver tests/programs/newer_driver.c -L"$FAKES" -lcuda
compile newer_driver_now tests/programs/newer_driver.c -L"$FAKES" -lcuda -Wl,-z,now
both lazy LD_LIBRARY_PATH="$TMP/olddrv" -- ./newer_driver
grep -q "symbol lookup error.*cuMemAllocAsync" "$TMP/lazy.err" || fail "lazy: the loader's error: $(cat "$TMP/lazy.err")"
grep -q "^cuInit=0" <<<"$out" || fail "lazy: cuInit ran before the error: $out"
set +e; LD_LIBRARY_PATH="$TMP/olddrv" LD_PRELOAD="$PRELOAD" ./newer_driver >/dev/null 2>&1; st=$?; set -e
assert_eq "$st" 127 "the exit status of a symbol lookup error"
# Said before the call that ends the process: the symbol, who needs it, the copy that lacks it.
finding_has missing-symbol cuMemAllocAsync newer_driver "$TMP/olddrv/libcuda.so.1" "symbol lookup error"
both now LD_LIBRARY_PATH="$TMP/olddrv" -- ./newer_driver_now
grep -q "cuMemAllocAsync" "$TMP/now.err" || fail "now: the loader's error: $(cat "$TMP/now.err")"
# The same program on a driver that has it: every call reaches the wrapper (nothing lost).
both fine LD_LIBRARY_PATH="$FAKES" CUDASHIM_TRACE_ALL=1 -- ./newer_driver
assert_eq "$(q count "$trace" api=cuMemAllocAsync via=linked)" 1 "a linked call is traced"

# 3. A versioned cuDNN name (cudnnBackendPopulateCudaGraph@libcudnn.so.9) that an older cuDNN 9
#    lacks: the framework's load fails the same way, and is diagnosed.
echo 'libcudnn.so.9 { global: *; };' >"$TMP/cudnn.map"
fakelib "$TMP/cudnn-new" libcudnn.so.9 -DFAKE_CUDNN -DVERSION=90500 -DCUDART=13000 -DNEW_API -Wl,--version-script="$TMP/cudnn.map"
fakelib "$TMP/cudnn-old" libcudnn.so.9 -DFAKE_CUDNN -DVERSION=90100 -DCUDART=13000 -Wl,--version-script="$TMP/cudnn.map"
$CC -shared -fPIC -o "$TMP/libframework_cudnn.so" -DUSE_CUDNN "$ROOT/tests/programs/libs/framework_newer_api.c" \
    -L"$TMP/cudnn-new" -l:libcudnn.so.9 || fail "framework (cuDNN)"
objdump -T "$TMP/libframework_cudnn.so" | grep -q "cudnnBackendPopulateCudaGraph" || fail "the framework does not reference the name"
both cudnn LD_LIBRARY_PATH="$FAKES:$TMP/cudnn-old" -- ./load_libs cuda dlopen:libcudnn.so.9 dlopen:"$TMP/libframework_cudnn.so"
grep -q "undefined symbol: cudnnBackendPopulateCudaGraph, version libcudnn.so.9" <<<"$out" ||
    fail "cudnn: the load should fail: $out"
finding_has missing-symbol cudnnBackendPopulateCudaGraph libframework_cudnn.so "$TMP/cudnn-old/libcudnn.so.9"
echo ok
