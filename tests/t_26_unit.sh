#!/usr/bin/env bash
# Pure parts of the shim tested on their own (tests/unit/): each test links only the files it
# names, so a hidden dependency fails the link. "What would work": a machine and a loaded
# framework build in, the alternatives out, against the reference tables. TensorFlow's
# build_info.py in its spellings. The rules: a made-up
# snapshot of evidence in, the findings out, for every finding id and for healthy stacks.
. "$(dirname "$0")/lib.sh"
# Messages are cut to their buffers on purpose (as in the Makefile).
NOTRUNC=$($CC -Werror -Wno-format-truncation -E -x c /dev/null >/dev/null 2>&1 && echo -Wno-format-truncation || true)
unit() { local name=$1; shift
    $CC -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $NOTRUNC -o "$TMP/$name" "$ROOT/tests/unit/$name.c" "${@/#/$ROOT/}" \
        || fail "$name: does not build from the files it names"
    "$TMP/$name" || fail "$name"; }
unit alternatives_test shim/base/alternatives.c shim/base/reference.c shim/base/reference_data.c
unit build_info_test shim/base/build_info.c
# The fork handlers' lock bookkeeping when forks overlap (two threads, a signal handler).
unit locks_test shim/process/locks.c
# The shim's threads: the program's signals blocked there, the faults not.
unit thread_spawn_test shim/process/thread.c
# Every rule, every finding id: the rules and the pure helpers only (cs_finding is the test's).
unit rules_test $(cd "$ROOT" && ls shim/rules/*.c) shim/base/json.c shim/base/gemm_math.c shim/base/library_names.c shim/base/loader_message.c \
    shim/base/alternatives.c shim/base/reference.c shim/base/reference_data.c shim/base/fatbin.c shim/base/image_explain.c
# The GEMM census's enumerations against cuBLAS's own headers, where the toolkit is installed.
if [ -f "$CUDA/include/cublasLt.h" ]; then
    $CC -std=c11 -Wall -Wextra -Werror -I"$CUDA/include" -o "$TMP/gemm_enums_test" "$ROOT/tests/unit/gemm_enums_test.c" \
        || fail "gemm_enums_test: the census's enumerations differ from cuBLAS's headers"
    "$TMP/gemm_enums_test" || fail gemm_enums_test
else
    echo "gemm_enums_test: skipped (no CUDA toolkit headers at $CUDA)"
fi
# The fuzzers (tests/fuzz/, `make fuzz`) still build from their source lists: clang with libFuzzer.
if [ "${CS_SANITIZER:-0}" = 0 ] && command -v clang >/dev/null &&
   echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
   clang -fsanitize=fuzzer -x c - -o "$TMP/fz-probe" 2>/dev/null; then
    make -s -C "$ROOT" fuzz-build BUILD="$TMP/fuzz" >"$TMP/fuzz.log" 2>&1 || { cat "$TMP/fuzz.log"; fail "the fuzzers do not build (make fuzz-build)"; }
    echo "fuzzers: built"
else
    echo "fuzzers: not built (no clang with libFuzzer, or a sanitizer run)"
fi
echo ok
