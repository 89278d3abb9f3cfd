#!/usr/bin/env bash
# Where the shim writes, and for whom. A setuid program, preloaded the way /etc/ld.so.preload
# does it in a scratch root and started by an unprivileged user: its caller's CUDASHIM_* settings
# are ignored, it writes no file unless a root-owned /etc/cudashim.conf names the directory, and
# its output and exit status are those without the shim. Then, for every process: no file in a
# directory every user may write that is not sticky, none of root's in another user's
# directory, no link followed at the metrics file's temporary name, no rank that moves a file.
# And `cudashim check` in a root without /bin/sh (a distroless image) still reads nvcc's version.
. "$(dirname "$0")/lib.sh"
compile privileged tests/programs/privileged.c -ldl
compile nvcc tests/programs/fake_nvcc.c
compile path_linked tests/programs/path_linked.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"

# --- every process: the directories it writes into
mkdir "$TMP/open"; chmod 0777 "$TMP/open"
set +e
CUDASHIM_TRACE_DIR="$TMP/open" with_shim ./path_linked >/dev/null 2>"$TMP/open.err"
set -e
[ -z "$(ls "$TMP/open")" ] || fail "a trace written into a world-writable directory that is not sticky"
grep -q "writable by every user and not sticky" "$TMP/open.err" || { cat "$TMP/open.err"; fail "no reason given for the trace not written"; }
chmod 1777 "$TMP/open"
CUDASHIM_TRACE_DIR="$TMP/open" with_shim ./path_linked >/dev/null 2>&1 || true
[ -n "$(ls "$TMP"/open/cudashim-*.jsonl 2>/dev/null)" ] || fail "no trace in a sticky world-writable directory (/tmp's kind)"
rm -rf "$TMP/open"
# a rank from the environment never moves the file
mkdir -p "$TMP/ranked/sub"
RANK="../../escaped" CUDASHIM_TRACE_DIR="$TMP/ranked/sub" CUDASHIM_TRACE_FILE="cudashim-%r.jsonl" \
    with_shim ./path_linked >/dev/null 2>&1 || true
[ -z "$(ls "$TMP"/ranked/*.jsonl "$TMP"/*.jsonl 2>/dev/null)" ] || fail "RANK=../../escaped moved the trace"
t=$(ls "$TMP"/ranked/sub/cudashim-*.jsonl 2>/dev/null | head -n 1)
[ -n "$t" ] || fail "no trace for a rank with slashes"
case "$(basename "$t")" in *escaped*) ;; *) fail "the rank's name lost: $t" ;; esac
# the metrics file: mode 0600 (0640 with CUDASHIM_GROUP_READABLE=1); a link planted at every
# temporary name the next processes could use is removed, not written through
mkdir "$TMP/prom"
host=$(cat /proc/sys/kernel/hostname | tr -c 'A-Za-z0-9._\n-' '_')
last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo 0)
if [ "$last" -gt 0 ]; then
    for pid in $(seq $((last + 1)) $((last + 400))); do
        ln -s "$TMP/victim" "$TMP/prom/cudashim-$host-p$pid.prom.tmp.$pid"
    done
fi
CUDASHIM_PROMETHEUS_DIR="$TMP/prom" with_shim ./path_linked >/dev/null 2>&1 || true
[ ! -e "$TMP/victim" ] || fail "the metrics file was written through a planted link"
prom=$(ls "$TMP"/prom/*.prom 2>/dev/null | head -n 1)
[ -n "$prom" ] || fail "no metrics file"
assert_eq "$(stat -c %a "$prom")" 600 "metrics file mode"
rm -rf "$TMP/prom"; mkdir "$TMP/prom"
CUDASHIM_GROUP_READABLE=1 CUDASHIM_PROMETHEUS_DIR="$TMP/prom" CUDASHIM_TRACE_DIR="$TMP/prom" \
    with_shim ./path_linked >/dev/null 2>&1 || true
assert_eq "$(stat -c %a "$(ls "$TMP"/prom/*.prom | head -n 1)")" 640 "metrics file mode, group-readable"
assert_eq "$(stat -c %a "$(ls "$TMP"/prom/*.jsonl | head -n 1)")" 640 "trace file mode, group-readable"

# --- privileged processes: root, chroot and an unprivileged user are needed from here on
[ "$(id -u)" = 0 ] || { echo "skipped: not root: the setuid program, the scratch root and other users' directories need root"; exit 0; }
CHROOT=$(command -v chroot) || skip "no chroot"
under_tsan && { echo "skipped under ThreadSanitizer: the scratch root has no sanitizer runtime"; exit 0; }
[ "${CS_SANITIZER:-0}" = 0 ] || { echo "skipped under the sanitizer: the scratch root has no sanitizer runtime"; exit 0; }
nobody=65534
# root's process never writes into another user's directory
mkdir "$TMP/theirs"; chown "$nobody" "$TMP/theirs"
set +e
CUDASHIM_TRACE_DIR="$TMP/theirs" with_shim ./path_linked >/dev/null 2>"$TMP/theirs.err"
set -e
[ -z "$(ls "$TMP/theirs")" ] || fail "root's process wrote into a directory another user owns"
grep -q "owned by root or by itself" "$TMP/theirs.err" || { cat "$TMP/theirs.err"; fail "no reason given"; }

# The scratch root: the loader, libc, the shim from /etc/ld.so.preload, the fake driver, the
# program setuid root, a directory of the caller's, root's log directory.
R="$TMP/root"
copy_in() { local f; for f in "$@"; do mkdir -p "$R$(dirname "$f")"; cp -L "$f" "$R$f"; done; }
libs() { ldd "$1" | awk '/=>/ && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}'; }
copy_in $(libs "$SHIM") $(libs "$FAKES/libcuda.so.1") $(libs "$TMP/privileged")
mkdir -p "$R/opt/cudashim" "$R/usr/lib" "$R/bin" "$R/etc" "$R/caller" "$R/var/log/cudashim"
cp "$SHIM" "$R/opt/cudashim/libcudashim.so"
cp "$FAKES/libcuda.so.1" "$R/usr/lib/libcuda.so.1"
cp "$TMP/privileged" "$R/bin/privileged"; chown 0:0 "$R/bin/privileged"; chmod 4755 "$R/bin/privileged"
cp "$TMP/privileged" "$R/bin/unprivileged"; chmod 0755 "$R/bin/unprivileged"
chown "$nobody" "$R/caller"; chmod 0755 "$R" "$R/bin" "$R/etc" "$R/caller"; chmod 0700 "$R/var/log/cudashim"
preload() { if [ "$1" = on ]; then echo /opt/cudashim/libcudashim.so >"$R/etc/ld.so.preload"; else : >"$R/etc/ld.so.preload"; fi; }
caller_env=(CUDASHIM_TRACE_DIR=/caller CUDASHIM_TRACE_FILE=/caller/chosen-%p.jsonl CUDASHIM_TRACE_ALL=1
            CUDASHIM_SUMMARY=1 CUDASHIM_EXPECT_GPU=1 CUDASHIM_PROMETHEUS_DIR=/caller RANK=../../etc/x)
# as_caller NAME USERSPEC PROG ARGS...: run in the scratch root; stdout+status in $TMP/NAME.out, stderr in .err
as_caller() {
    local name=$1 user=$2; shift 2
    set +e
    env -i PATH=/bin "${caller_env[@]}" "$CHROOT" --userspec="$user" "$R" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    echo "status=$?" >>"$TMP/$name.out"
    set -e
}
new_files() { find "$R" -newer "$TMP/marker" -type f | sed "s|^$R||"; }

# the preload works in the scratch root: an ordinary process there traces where its caller says
preload on; touch "$TMP/marker"; sleep 0.01
as_caller ordinary "$nobody:$nobody" /bin/unprivileged cuda /usr/lib/libcuda.so.1
grep -q "secure=0" "$TMP/ordinary.out" || { cat "$TMP/ordinary.out" "$TMP/ordinary.err"; fail "the program did not run in the scratch root"; }
[ -n "$(ls "$R"/caller/chosen-*.jsonl 2>/dev/null)" ] || { cat "$TMP/ordinary.err"; fail "the preload from /etc/ld.so.preload traced nothing in the scratch root"; }
rm -f "$R"/caller/*

# the setuid program as an unprivileged caller: without the shim, then with it
preload off
as_caller plain-without "$nobody:$nobody" /bin/privileged plain
as_caller cuda-without "$nobody:$nobody" /bin/privileged cuda /usr/lib/libcuda.so.1
grep -q "secure=1" "$TMP/plain-without.out" ||
    { echo "skipped: the setuid bit gives no AT_SECURE here (a nosuid mount?)"; cat "$TMP/plain-without.out"; exit 0; }
preload on; touch "$TMP/marker"; sleep 0.01
as_caller plain-with "$nobody:$nobody" /bin/privileged plain
as_caller cuda-with "$nobody:$nobody" /bin/privileged cuda /usr/lib/libcuda.so.1
diff "$TMP/plain-without.out" "$TMP/plain-with.out" || fail "the setuid program's output or status changed under the shim (no CUDA)"
diff "$TMP/cuda-without.out" "$TMP/cuda-with.out" || fail "the setuid program's output or status changed under the shim (CUDA)"
[ -z "$(new_files)" ] || fail "a privileged process wrote files its caller chose or none were asked for: $(new_files)"
grep -q "privileged" "$TMP/cuda-with.err" || { cat "$TMP/cuda-with.err"; fail "no line says why a privileged process writes no trace"; }

# a configuration file anyone may write is ignored
printf 'CUDASHIM_TRACE_DIR=/var/log/cudashim\n' >"$R/etc/cudashim.conf"; chmod 0666 "$R/etc/cudashim.conf"
touch "$TMP/marker"; sleep 0.01
as_caller conf-open "$nobody:$nobody" /bin/privileged cuda /usr/lib/libcuda.so.1
grep -q "ignoring /etc/cudashim.conf" "$TMP/conf-open.err" || { cat "$TMP/conf-open.err"; fail "a writable configuration file not refused"; }
[ -z "$(new_files | grep -v '^/etc/cudashim.conf$')" ] || fail "a writable configuration file was obeyed: $(new_files)"

# root's configuration file names root's directory: the trace goes there, in default mode (the
# caller's CUDASHIM_TRACE_ALL=1 ignored), 0600, root's
printf '# traces of privileged programs\nCUDASHIM_TRACE_DIR=/var/log/cudashim\n' >"$R/etc/cudashim.conf"
chmod 0644 "$R/etc/cudashim.conf"
touch "$TMP/marker"; sleep 0.01
as_caller conf "$nobody:$nobody" /bin/privileged cuda /usr/lib/libcuda.so.1
diff "$TMP/cuda-without.out" "$TMP/conf.out" || fail "the setuid program's output or status changed under the shim (traced)"
assert_eq "$(new_files | grep -vc '^/var/log/cudashim/cudashim-[^/]*\.jsonl$' || true)" 0 "files outside root's directory"
t=$(ls "$R"/var/log/cudashim/cudashim-*.jsonl 2>/dev/null | head -n 1)
[ -n "$t" ] || { cat "$TMP/conf.err"; fail "no trace where root's configuration file says"; }
assert_eq "$(stat -c '%a %u' "$t")" "600 0" "the privileged trace's mode and owner"
assert_eq "$(q field "$t" header mode)" default "the caller's CUDASHIM_TRACE_ALL=1 was obeyed"
# a relative directory in the file is not a place either
printf 'CUDASHIM_TRACE_DIR=.\n' >"$R/etc/cudashim.conf"
touch "$TMP/marker"; sleep 0.01
as_caller conf-relative "$nobody:$nobody" /bin/privileged cuda /usr/lib/libcuda.so.1
[ -z "$(new_files)" ] || fail "a relative CUDASHIM_TRACE_DIR was obeyed in a privileged process: $(new_files)"

# no shell: cudashim check starts its probes by argument vector
copy_in $(libs "$BUILD/cudashim") $(libs "$TMP/nvcc")
cp "$BUILD/cudashim" "$R/bin/cudashim"
mkdir -p "$R/opt/cuda/bin"; cp "$TMP/nvcc" "$R/opt/cuda/bin/nvcc"
[ ! -e "$R/bin/sh" ] && [ ! -e "$R/usr/bin/sh" ] || fail "the scratch root has a shell"
preload off
caller_env=(CUDA_HOME=/opt/cuda FAKE_CUDA_DRIVER_VERSION=12020)
as_caller check 0:0 /bin/cudashim check --json
python3 - "$TMP/check.out" <<'PY' || { cat "$TMP/check.out" "$TMP/check.err"; fail "cudashim check without a shell"; }
import json, sys
text = open(sys.argv[1]).read()
c = json.loads(text[:text.rindex("status=")])
assert c["cuda_home"] == {"path": "/opt/cuda", "nvcc": "12.4"}, c.get("cuda_home")
assert c["driver"]["cuda"] == "12.2", c["driver"]
PY
echo ok
