#!/usr/bin/env bash
# The preload is harmless where CUDA is never used: no output, no file, no dependency on CUDA or libunwind.
. "$(dirname "$0")/lib.sh"
readelf -d "$SHIM" | grep NEEDED | grep -Ei 'cuda|cudnn|nccl|cublas|unwind' && fail "DT_NEEDED on a library users may lack"
out=$(with_shim sh -c 'echo hello; ls / >/dev/null; exit 5' 2>&1) && rc=0 || rc=$?
assert_eq "$out" "hello" "output of a non-CUDA program"
assert_eq "$rc" "5" "exit status of a non-CUDA program"
[ -z "$(ls "$TMP"/cudashim-* 2>/dev/null)" ] || fail "a trace was written for a program that never used CUDA"
need_python
with_shim python3 -c 'import ctypes, json; print(json.dumps({"ok": 1}))' >/dev/null
[ -z "$(ls "$TMP"/cudashim-* 2>/dev/null)" ] || fail "python without CUDA left a trace"
# Only the hooks are exported: the wrapped APIs (driver, cuDNN, NCCL with its pnccl aliases,
# cuBLAS, cuBLASLt, the CUDA runtime), the loader hooks and the signal hooks (signal_hook.c).
extra=$(nm -D --defined-only "$SHIM" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' |
        grep -v -E '^(cu[A-Z]|cuda[A-Z]|cudnn[A-Z]|cublas[A-Z]|cublasLt[A-Z]|p?nccl[A-Z]|dlsym$|dlvsym$|dlerror$|dlopen$|sigaction$|signal$)' || true)
[ -z "$extra" ] || fail "unexpected exported symbols: $extra"
echo ok
