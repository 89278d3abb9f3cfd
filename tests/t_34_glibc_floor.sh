#!/usr/bin/env bash
# The glibc floor (shim/base/glibc_floor.h): the preload, the command and the fake driver ask
# for no glibc symbol version newer than CS_GLIBC_FLOOR and need no file outside glibc's; and in
# a Debian 11 root (glibc 2.31, older than the build machine's) the preloaded library leaves
# sh, ls and python3 as they were, and traces a CUDA program that the command, built the same
# way, then reports.
. "$(dirname "$0")/lib.sh"
[ "${CS_SANITIZER:-0}" = 0 ] || skip "sanitizer builds are for this machine: their symbol versions are not pinned"
command -v objdump >/dev/null && command -v readelf >/dev/null || skip "needs objdump and readelf (binutils)"
floor=$(sed -n 's/^#define CS_GLIBC_FLOOR "\(.*\)"/\1/p' "$ROOT/shim/base/glibc_floor.h")
[ -n "$floor" ] || fail "no CS_GLIBC_FLOOR in shim/base/glibc_floor.h"
( cd "$ROOT" && make -s BUILD="$BUILD" CC="$CC" "$BUILD/cudashim-static" ) >"$TMP/make.log" 2>&1 ||
    { tail -20 "$TMP/make.log"; fail "make $BUILD/cudashim-static"; }

newer() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, "."); split(b, y, "."); exit !(x[1] > y[1] || (x[1] == y[1] && x[2] > y[2])) }'; }
for f in "$SHIM" "$BUILD/cudashim" "$BUILD/cudashim-static" "$FAKES/libcuda.so.1"; do
    # the versions it needs (undefined symbols), not the ones the preload defines for its dlopen
    objdump -T "$f" | awk '/\*UND\*/' | grep -o 'GLIBC_[0-9][0-9.]*) *[A-Za-z_0-9]*\|GLIBC_[0-9][0-9.]* *[A-Za-z_0-9]*' |
        tr -d ')' | while read -r ver sym; do
            if newer "${ver#GLIBC_}" "$floor"; then echo "$(basename "$f"): $sym@$ver"; fi
        done >>"$TMP/too-new"
done
[ -s "$TMP/too-new" ] && { cat "$TMP/too-new" >&2; fail "symbol versions newer than the floor (glibc $floor): pin them in shim/base/glibc_floor.h"; }
needed=$(readelf -d "$SHIM" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | grep -vE '^(libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux[-a-z0-9_]*\.so\.[0-9])$' || true)
[ -z "$needed" ] || fail "the preload needs files outside glibc: $needed"
for lib in libdl.so.2 libpthread.so.0; do
    readelf -d "$SHIM" | grep -q "Shared library: \[$lib\]" || fail "the preload does not name $lib, where glibc before 2.34 keeps the versions it binds to"
done
echo "floor: glibc $floor; newest needed: $(packaging_glibc() { "$ROOT/packaging/manylinux_tag.sh" --glibc "$@"; }; packaging_glibc "$SHIM" "$BUILD/cudashim-static")"

OLD=${CUDASHIM_OLDGLIBC:-$HOME/.cache/cudashim-oldglibc}/root
[ -x "$OLD/usr/bin/python3" ] && [ -f "$OLD/../.complete" ] || skip "the symbol versions pass; no Debian 11 root in $OLD (tests/oldglibc/fetch.sh fetches it) to run them on"
[ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v chroot >/dev/null ||
    skip "the symbol versions pass; running them in the Debian 11 root needs root, unshare and chroot"
old_glibc=$(ls "$OLD"/lib/x86_64-linux-gnu/libc-*.so "$OLD"/lib/*/libc-*.so 2>/dev/null | head -1 | sed 's/.*libc-\(.*\)\.so/\1/')
[ -n "$old_glibc" ] || fail "no libc in $OLD"
newer "$(ldd --version | head -1 | awk '{print $NF}')" "$old_glibc" || skip "this machine's glibc is not newer than the root's $old_glibc"
for d in proc tmp dev cs out; do mkdir -p "$OLD/$d"; done
for d in null zero random urandom; do [ -e "$OLD/dev/$d" ] || : >"$OLD/dev/$d"; done
# the wheel's layout: the command with the library beside it
mkdir -p "$TMP/cs" "$TMP/out"
cp "$SHIM" "$BUILD/cudashim-static" "$FAKES/libcuda.so.1" "$TMP/cs/"
mv "$TMP/cs/cudashim-static" "$TMP/cs/cudashim"
cat >"$TMP/cs/prog.py" <<'PY'
import ctypes, sys
cuda = ctypes.CDLL("libcuda.so.1")
v = ctypes.c_int(0)
print("cuInit", cuda.cuInit(0))
cuda.cuDriverGetVersion(ctypes.byref(v))
print("version", v.value)
d = ctypes.c_int(-1)
print("bad device", cuda.cuDeviceGet(ctypes.byref(d), 9))
sys.exit(4)
PY
in_old() {  # PRELOAD CMD...: CMD in the Debian 11 root, with LD_PRELOAD=PRELOAD when not empty
    local preload=$1; shift
    unshare -m --propagation private -- /bin/sh -c '
        r=$1; cs=$2; out=$3; preload=$4; shift 4
        mount -t proc proc "$r/proc" && mount -t tmpfs tmpfs "$r/tmp" && mount --bind "$cs" "$r/cs" &&
        mount --bind "$out" "$r/out" || exit 125
        for d in null zero random urandom; do mount --bind /dev/$d "$r/dev/$d" || exit 125; done
        exec chroot "$r" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 LD_LIBRARY_PATH=/cs \
            CUDASHIM_TRACE_DIR=/out ${preload:+LD_PRELOAD=$preload} "$@"' _ "$OLD" "$TMP/cs" "$TMP/out" "$preload" "$@"
}
same_in_old() {  # CMD...: the same stdout, stderr and status with the preload as without
    local a b ra rb ea eb
    set +e
    a=$(in_old "" "$@" 2>"$TMP/err.a"); ra=$?
    b=$(in_old /cs/libcudashim.so "$@" 2>"$TMP/err.b"); rb=$?
    set -e
    [ "$ra" != 125 ] || fail "cannot set up the Debian 11 root"
    [ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b") >&2; fail "glibc $old_glibc: stdout differs under the shim: $*"; }
    [ "$ra" = "$rb" ] || { cat "$TMP/err.b" >&2; fail "glibc $old_glibc: exit status differs under the shim ($ra vs $rb): $*"; }
    cmp -s "$TMP/err.a" "$TMP/err.b" || { diff "$TMP/err.a" "$TMP/err.b" >&2; fail "glibc $old_glibc: stderr differs under the shim: $*"; }
}
same_in_old /bin/true
same_in_old /bin/sh -c 'echo shell; exit 3'
same_in_old /bin/ls /cs
same_in_old /usr/bin/python3 -c 'import os; print(os.getpid() > 0)'
[ -z "$(ls "$TMP/out")" ] || fail "glibc $old_glibc: programs that never load CUDA left files: $(ls "$TMP/out")"
# a CUDA program: the same output and status, and a trace with its failing call and the root's glibc
set +e
plain=$(in_old "" /usr/bin/python3 /cs/prog.py 2>/dev/null); rp=$?
shimmed=$(in_old /cs/libcudashim.so env CUDASHIM_STDERR=0 /usr/bin/python3 /cs/prog.py 2>"$TMP/err.b"); rs=$?
set -e
[ "$plain" = "$shimmed" ] && [ "$rp" = "$rs" ] && [ "$rp" = 4 ] ||
    { cat "$TMP/err.b" >&2; fail "glibc $old_glibc: the CUDA program behaves differently under the shim ($rp vs $rs)"; }
trace=$(ls "$TMP"/out/cudashim-*.jsonl 2>/dev/null | head -1)
[ -n "$trace" ] || fail "glibc $old_glibc: no trace from the CUDA program"
assert_eq "$(q count "$trace" api=cuDeviceGet result_name=CUDA_ERROR_INVALID_DEVICE)" 1 "glibc $old_glibc: the failing call in the trace"
python3 - "$trace" "$old_glibc" <<'PY' || fail "glibc $old_glibc: the trace header's glibc"
import json, sys
h = json.loads(open(sys.argv[1]).readline())["system"]
assert h["glibc"] == sys.argv[2], h
PY
# the command, as the wheel has it, runs there too: report, and run with the library beside it
in_old "" /cs/cudashim report "/out/$(basename "$trace")" >"$TMP/report" 2>&1 || { cat "$TMP/report" >&2; fail "glibc $old_glibc: cudashim report"; }
grep -q cuDeviceGet "$TMP/report" || { cat "$TMP/report" >&2; fail "glibc $old_glibc: the report does not name the failing call"; }
set +e
in_old "" /cs/cudashim run -q -o /out/run -- /usr/bin/python3 /cs/prog.py >"$TMP/run" 2>&1; rr=$?
set -e
[ "$rr" = 4 ] || { cat "$TMP/run" >&2; fail "glibc $old_glibc: cudashim run's status $rr, the program's 4"; }
ls "$TMP"/out/run/cudashim-*.jsonl >/dev/null 2>&1 || fail "glibc $old_glibc: cudashim run left no trace"
echo "glibc $old_glibc: sh, ls, python3 unchanged; a CUDA program traced; the command reports it"
