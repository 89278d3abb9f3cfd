# Helpers for the shell tests. Each test is a script that exits 0, 77 (skip) or non-zero.
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/${BUILD:-build}"
case "$BUILD" in "$ROOT//"*) BUILD="${BUILD#$ROOT/}" ;; esac
CUDA="${CUDA:-/usr/local/cuda}"
CC="${CC:-gcc}"
SHIM="$BUILD/libcudashim.so"
export CS_CLI="${CS_HOST_CLI:-$BUILD/cudashim}"  # tests/trace_query.py reads ALL-mode traces through it
# Another architecture's build under an emulator (make check-arm64: CS_RUN="qemu-aarch64 -L
# SYSROOT", CC its compiler, BUILD its build, CS_HOST_CLI this machine's command): the tests that
# run only programs through these helpers run there too; the emulator takes the preload as -E.
CS_RUN=${CS_RUN:-}
FAKES="$BUILD/fakes"
PRELOAD="$SHIM"
ASAN_LIB=""   # the sanitizer runtime must come first in LD_PRELOAD
if [ "${CS_SANITIZER:-0}" = 1 ]; then
    ASAN_LIB="$($CC -print-file-name=libasan.so)"
    PRELOAD="$ASAN_LIB $SHIM"
    export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
elif [ "${CS_SANITIZER:-0}" = tsan ]; then
    # ThreadSanitizer: any report ends the program with status 66, which every comparison sees.
    ASAN_LIB="$($CC -print-file-name=libtsan.so)"
    PRELOAD="$ASAN_LIB $SHIM"
    export TSAN_OPTIONS="halt_on_error=1:exitcode=66:report_signal_unsafe=0:die_after_fork=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0:handle_sigill=0:suppressions=$ROOT/tests/tsan.supp:${TSAN_OPTIONS:-}"
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
# Keep the caller's CUDASHIM_* settings out of the tests.
for v in $(env | sed -n 's/^\(CUDASHIM_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export CUDASHIM_TRACE_DIR="$TMP"

fail() { echo "FAIL: $*" >&2; exit 1; }  # stderr: a caller may have sent stdout away
skip() { echo "skipped: $*"; exit 77; }
need_cuda() { [ -f "$CUDA/include/cuda.h" ] && [ -e "$CUDA/lib64/libcudart.so.13" ] || skip "no CUDA toolkit at $CUDA"; }
need_python() { command -v python3 >/dev/null || skip "no python3"; }
# Python itself crashes with ThreadSanitizer's runtime preloaded (without the shim too), and
# ThreadSanitizer does not support forking a multi-threaded process: such cases cannot run there.
under_tsan() { [ "${CS_SANITIZER:-0}" = tsan ]; }
# compile NAME SRC [flags...]: build a test program into $TMP
compile() { local out=$1 src=$2; shift 2; $CC -O1 -g -o "$TMP/$out" "$ROOT/$src" "$@" || fail "cannot build $src"; }
with_shim() { if [ -n "$CS_RUN" ]; then $CS_RUN -E LD_PRELOAD="$PRELOAD" "$@"; else env LD_PRELOAD="$PRELOAD" "$@"; fi; }
q() { python3 "$ROOT/tests/trace_query.py" "$@"; }
only_trace() { local f; f=$(ls "$TMP"/cudashim-*.jsonl 2>/dev/null | head -n 1); [ -n "$f" ] || fail "no trace written"; echo "$f"; }
assert_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }
has_finding() {  # TRACE ID TEXT...: a finding with that id whose summary holds every TEXT
    local t=$1 id=$2; shift 2
    python3 - "$t" "$id" "$@" <<'PY' || fail "no finding $2 with ${*:3} in $1"
import json, sys
path, fid, words = sys.argv[1], sys.argv[2], sys.argv[3:]
found = [json.loads(l) for l in open(path) if '"type":"finding"' in l]
ok = [f for f in found if f["id"] == fid and all(w in f["summary"] for w in words)]
if not ok:
    for f in found: print(f["id"], f["severity"], f["summary"][:200])
    sys.exit(1)
PY
}
# same_behaviour CMD...: stdout and exit status must be identical with and without the shim
same_behaviour() {
    local a b ra rb
    set +e
    a=$(env LD_PRELOAD="$ASAN_LIB" $CS_RUN "$@" 2>/dev/null); ra=$?  # the sanitizer suite compares with ASan alone
    b=$(with_shim "$@" 2>/dev/null); rb=$?
    set -e
    [ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b"); fail "stdout differs under the shim: $*"; }
    [ "$ra" = "$rb" ] || fail "exit status differs under the shim ($ra vs $rb): $*"
    echo "$a"
}
# run_traced NAME PROG ENV... -- ARGS...: PROG under the shim, its traces in $TMP/NAME, its output
# in $TMP/NAME.out and .err; sets $trace to the (first) trace written.
run_traced() {
    local name=$1 prog=$2; shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    mkdir -p "$TMP/$name"
    env "${envs[@]}" CUDASHIM_TRACE_DIR="$TMP/$name" LD_PRELOAD="$PRELOAD" "$prog" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || true
    trace=$(ls "$TMP/$name"/cudashim-*.jsonl 2>/dev/null | head -n 1)
    [ -n "$trace" ] || fail "$name: no trace"
}
