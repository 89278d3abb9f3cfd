#!/usr/bin/env bash
# The aarch64 build (make check-arm64: cross-built into $ARM64_BUILD) run under qemu-aarch64:
# the preload's dependencies and exports; inert in a program without CUDA; a crash's record;
# NVIDIA's real arm64 driver (535) and CUDA 11.8 runtime (tests/arm64/fetch.sh), reached through
# cuGetProcAddress; the planner's aarch64 tables; the arm64 wheel and .deb; fork where qemu can
# run it. The traces are read by the host's cudashim: the format is the same.
. "$(dirname "$0")/lib.sh"
need_python
XCC=${XCC:-aarch64-linux-gnu-gcc}
A="$ROOT/${ARM64_BUILD:-build-arm64}"
SYSROOT=${ARM64_SYSROOT:-/usr/aarch64-linux-gnu}
command -v "$XCC" >/dev/null || skip "no $XCC (Debian: gcc-aarch64-linux-gnu)"
command -v qemu-aarch64 >/dev/null || skip "no qemu-aarch64 (Debian: qemu-user)"
[ -f "$A/libcudashim.so" ] && [ -f "$A/fakes/libcuda.so.1" ] || skip "no aarch64 build in $A (make check-arm64 builds it)"
[ -x "$CS_CLI" ] || skip "no host cudashim to read the traces ($CS_CLI)"
ASHIM="$A/libcudashim.so" AFAKES="$A/fakes"
qrun() { qemu-aarch64 -L "$SYSROOT" "$@"; }
qshim() { qemu-aarch64 -L "$SYSROOT" -E LD_PRELOAD="$ASHIM" "$@"; }
xcompile() { local out=$1 src=$2; shift 2; "$XCC" -O1 -g -o "$TMP/$out" "$ROOT/$src" "$@" || fail "cannot build $src for aarch64"; }
# xsame CMD...: stdout and exit status the same with and without the shim, under qemu
xsame() {
    local a b ra rb
    set +e
    a=$(qrun "$@" 2>/dev/null); ra=$?
    b=$(qshim "$@" 2>/dev/null); rb=$?
    set -e
    [ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b"); fail "stdout differs under the shim on aarch64: $*"; }
    [ "$ra" = "$rb" ] || fail "exit status differs under the shim on aarch64 ($ra vs $rb): $*"
}

# The preload: an AArch64 object needing libc, libdl and libpthread only; the same exports as
# the x86-64 build (one version script), so no name binds on one platform only.
readelf -h "$ASHIM" | grep -q "Machine:.*AArch64" || fail "$ASHIM is not an AArch64 object"
bad=$(readelf -d "$ASHIM" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v -x -E 'libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-aarch64\.so\.1' || true)
[ -z "$bad" ] || fail "the aarch64 preload needs $bad"
if [ -f "$SHIM" ]; then
    exports() { nm -D --defined-only "$1" | awk '$2 ~ /^[TtWwVvDdBbRr]$/ {print $3}' | sed 's/@.*//' | sort -u; }
    diff <(exports "$SHIM") <(exports "$ASHIM") >"$TMP/exports.diff" || { head "$TMP/exports.diff"; fail "aarch64 exports differ from x86-64's"; }
fi

# What would work, with the tables of PyTorch's aarch64 wheels (the build's own platform's).
xcompile alternatives_test tests/unit/alternatives_test.c -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation \
    "$ROOT/shim/base/alternatives.c" "$ROOT/shim/base/reference.c" "$ROOT/shim/base/reference_data.c"
qrun "$TMP/alternatives_test" >"$TMP/alternatives.out" 2>&1 || { grep -v "^ok" "$TMP/alternatives.out"; fail "aarch64: what would work"; }
grep -q "^ok   t4g-cu126" "$TMP/alternatives.out" || fail "aarch64: the planner did not use the aarch64 tables"

# Inert: a program that never loads CUDA runs as without the shim and leaves no trace.
cat >"$TMP/plain.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
int main(void) { errno = 0; int r = access("/nonexistent", F_OK); printf("access %d errno %d\n", r, errno); return 3; }
EOF
"$XCC" -O1 -o "$TMP/plain" "$TMP/plain.c" || fail "cannot build the plain program"
xsame "$TMP/plain"
[ -z "$(ls "$TMP"/cudashim-* 2>/dev/null)" ] || fail "a program without CUDA left a trace on aarch64"

# The fake-driver program the packages are tried with (t_02 to t_04 and t_27, run on this build
# under qemu by make check-arm64, check its calls one by one).
xcompile path_linked tests/programs/path_linked.c -L"$AFAKES" -lcuda -Wl,-rpath,"$AFAKES"

# A crash inside the driver: the same death, and a record naming the call it was inside.
xcompile crash tests/programs/crash.c -L"$AFAKES" -lcuda -Wl,-rpath,"$AFAKES"
set +e
FAKE_CUDA_CRASH=cuCtxSynchronize qrun "$TMP/crash" sync >/dev/null 2>&1; base=$?
FAKE_CUDA_CRASH=cuCtxSynchronize qshim "$TMP/crash" sync >/dev/null 2>"$TMP/crash.err"; got=$?
set -e
assert_eq "$got" "$base" "aarch64: exit status of a crash under the shim"
t=$(only_trace)
q crash "$t" >"$TMP/crash.facts" || fail "aarch64: no crash record"
for p in "signal SIGSEGV" "inside cuCtxSynchronize" "recent cuDeviceGet"; do
    grep -qx -- "$p" "$TMP/crash.facts" || { cat "$TMP/crash.facts"; fail "aarch64 crash record: no line '$p'"; }
done
grep -q "^frame " "$TMP/crash.facts" || { cat "$TMP/crash.facts"; fail "aarch64 crash record: no backtrace"; }
rm -f "$TMP"/cudashim-*

# NVIDIA's real arm64 driver and runtime: the runtime reaches the driver through cuGetProcAddress;
# no GPU here, so every call fails the same way with and without the shim, and the diagnosis
# names the driver the process loaded.
real=$("$ROOT/tests/arm64/fetch.sh" 2>"$TMP/fetch.err") || { cat "$TMP/fetch.err" >&2; real=; }
if [ -n "$real" ]; then
    lp="$real/usr/lib/aarch64-linux-gnu/nvidia/current:$real/usr/lib/aarch64-linux-gnu:$real/lib/aarch64-linux-gnu"
    xcompile realstack tests/programs/realstack.c -ldl -lpthread
    QEMU_SET_ENV=LD_LIBRARY_PATH="$lp" xsame "$TMP/realstack" rt:libcudart.so.11.0 threads:4
    t=$(only_trace)
    assert_eq "$(q count "$t" api=cuInit result_name=CUDA_ERROR_NO_DEVICE via=cuGetProcAddress)" 1 "aarch64 real driver: cuInit through cuGetProcAddress"
    has_finding "$t" no-gpu-visible "CUDA 12.2" "535.261.03"
    "$CS_CLI" report "$t" >"$TMP/real.report" 2>/dev/null || true
    grep -q "driver  *12.2 .*libcuda.so.535.261.03" "$TMP/real.report" || { cat "$TMP/real.report"; fail "aarch64: the real driver is not listed"; }
    rm -f "$TMP"/cudashim-*
    echo "aarch64: NVIDIA's arm64 driver 535.261.03 and CUDA 11.8 runtime under the shim"
else
    echo "skipped part: the arm64 driver could not be fetched (tests/arm64/fetch.sh)"
fi

# The arm64 wheel and .deb (make check-arm64 builds them): unpacked, their library preloaded
# into the fake-driver program and their command reading its trace, both under qemu. The command
# is not run as `cudashim run` here: qemu-user cannot exec a guest program from a guest.
wheel=$(ls "$A"/dist/cudashim-*-py3-none-manylinux_2_*_aarch64.whl 2>/dev/null | head -n 1)
deb=$(ls "$A"/dist/cudashim_*_arm64.deb 2>/dev/null | head -n 1)
if [ -n "$wheel" ] && [ -n "$deb" ] && [ -n "$real" ]; then
    mkdir -p "$TMP/wheel" "$TMP/debroot"
    (cd "$TMP/wheel" && unzip -q "$wheel") || fail "unzip $wheel"
    dpkg-deb -x "$deb" "$TMP/debroot" || fail "dpkg-deb -x $deb"
    assert_eq "$(dpkg-deb -f "$deb" Architecture)" arm64 "the .deb's architecture"
    dpkg-deb -f "$deb" Depends | grep -q 'libc6 (>= 2\.17), libjansson4' || fail "the arm64 .deb's Depends: $(dpkg-deb -f "$deb" Depends)"
    check_package() {  # NAME LIB CLI: the package's library traces, its command reads
        local name=$1 lib=$2 cli=$3 out
        readelf -h "$lib" | grep -q "Machine:.*AArch64" || fail "$name: $lib is not AArch64"
        readelf -h "$cli" | grep -q "Machine:.*AArch64" || fail "$name: $cli is not AArch64"
        rm -f "$TMP"/cudashim-*
        set +e
        qrun "$TMP/path_linked" >"$TMP/$name.base" 2>/dev/null; local rb=$?
        qemu-aarch64 -L "$SYSROOT" -E LD_PRELOAD="$lib" "$TMP/path_linked" >"$TMP/$name.out" 2>/dev/null; local rs=$?
        set -e
        assert_eq "$rs" "$rb" "$name: exit status under the packaged library"
        cmp -s "$TMP/$name.base" "$TMP/$name.out" || fail "$name: stdout differs under the packaged library"
        t=$(only_trace)
        out=$(QEMU_SET_ENV=LD_LIBRARY_PATH="$real/usr/lib/aarch64-linux-gnu" qrun "$cli" --version) || fail "$name: $cli --version"
        assert_eq "$out" "cudashim $(sed -n 's/^#define CS_VERSION "\(.*\)"/\1/p' "$ROOT/shim/trace/trace.h")" "$name: the command's version"
        QEMU_SET_ENV=LD_LIBRARY_PATH="$real/usr/lib/aarch64-linux-gnu" qrun "$cli" report "$t" >"$TMP/$name.report" 2>&1 || true
        grep -q "cuMemAlloc_v2 -> CUDA_ERROR_OUT_OF_MEMORY (2) x1" "$TMP/$name.report" ||
            { cat "$TMP/$name.report"; fail "$name: the packaged command's report"; }
        grep -q "warning out-of-memory" "$TMP/$name.report" || fail "$name: no out-of-memory finding in the packaged report"
        echo "aarch64 $name: $(basename "$4") traced and reported under qemu"
    }
    check_package wheel "$TMP/wheel/cudashim/_bin/libcudashim.so" "$TMP/wheel/cudashim/_bin/cudashim" "$wheel"
    readelf -d "$TMP/wheel/cudashim/_bin/cudashim" | grep NEEDED | grep -v -E 'libc\.so|libdl\.so\.2|libpthread\.so\.0|ld-linux' &&
        fail "the arm64 wheel's command needs more than glibc"
    check_package deb "$TMP/debroot/usr/lib/aarch64-linux-gnu/libcudashim.so" "$TMP/debroot/usr/bin/cudashim" "$deb"
else
    echo "skipped part: the arm64 packages (make check-arm64 builds them with the cache's jansson)"
fi

# Fork: qemu-user 7.2 cannot start a thread in a forked child of a threaded process (its own
# assertion, with or without the shim), and the shim's child restarts its threads: probed first.
cat >"$TMP/fork_probe.c" <<'EOF'
#include <pthread.h>
#include <unistd.h>
#include <sys/wait.h>
static void *idle(void *a) { pause(); return a; }
int main(void) {
    pthread_t t; pthread_create(&t, 0, idle, 0);
    pid_t p = fork();
    if (!p) { pthread_t u; _exit(pthread_create(&u, 0, idle, 0) ? 1 : 0); }
    int st; waitpid(p, &st, 0); return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}
EOF
"$XCC" -O1 -o "$TMP/fork_probe" "$TMP/fork_probe.c" -lpthread || fail "cannot build the fork probe"
if qrun "$TMP/fork_probe" >/dev/null 2>&1; then
    xcompile threads_fork tests/programs/threads_fork.c -pthread -L"$AFAKES" -lcuda -Wl,-rpath,"$AFAKES"
    xsame "$TMP/threads_fork" 1000
    echo "aarch64: fork under the shim"
else
    echo "skipped part: fork ($(qemu-aarch64 --version | head -n 1) cannot start a thread in a forked child of a threaded process)"
fi
echo ok
