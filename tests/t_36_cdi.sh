#!/usr/bin/env bash
# Container injection: packaging/cdi/cudashim.json, the CDI spec an administrator puts in /etc/cdi,
# validated by the CDI specification's rules and applied as a runtime applies it to an image's
# bundle (a copy of the Debian 11 root, with its own LD_PRELOAD and /etc/ld.so.preload): the
# library mounted read-only, its createContainer hook (`cudashim preload-hook`) adding it to the
# image's /etc/ld.so.preload after the image's own line. ls, sh and python3 print and exit as in
# the image without the spec; the image's own preloads still load; only the CUDA program leaves
# a trace, in the mounted directory. The hook never follows a link out of the container's root.
. "$(dirname "$0")/lib.sh"
[ "${CS_SANITIZER:-0}" = 0 ] || skip "the image runs the plain build"
need_python
SPEC="$ROOT/packaging/cdi/cudashim.json"
python3 "$ROOT/tests/cdi/validate_cdi.py" "$SPEC" >"$TMP/devices" || { cat "$TMP/devices" >&2; fail "the CDI spec is invalid"; }
device=$(head -1 "$TMP/devices")
# the validator rejects what a runtime rejects
python3 - "$SPEC" >"$TMP/bad.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["kind"] = "no-class"; s["devices"][0]["containerEdits"]["mounts"][0]["hostPath"] = "relative"
json.dump(s, sys.stdout)
PY
python3 "$ROOT/tests/cdi/validate_cdi.py" "$TMP/bad.json" >"$TMP/bad.out" && fail "the validator accepts a spec with a bad kind and a relative path"
grep -q "kind 'no-class'" "$TMP/bad.out" && grep -q "relative" "$TMP/bad.out" || fail "the validator's reasons: $(cat "$TMP/bad.out")"

# the hook on its own: once, after the image's lines; never through a link out of the root
mkdir -p "$TMP/r1/etc" "$TMP/outside"
printf '/usr/lib/image-preload.so' >"$TMP/r1/etc/ld.so.preload"    # no final newline, as images have
"$CS_CLI" preload-hook /opt/cudashim/libcudashim.so --root "$TMP/r1" || fail "preload-hook --root"
"$CS_CLI" preload-hook /opt/cudashim/libcudashim.so --root "$TMP/r1" || fail "preload-hook --root, twice"
assert_eq "$(cat "$TMP/r1/etc/ld.so.preload")" "$(printf '/usr/lib/image-preload.so\n/opt/cudashim/libcudashim.so')" "the image's line kept, the shim's added once"
mkdir -p "$TMP/r2" && ln -s "$TMP/outside" "$TMP/r2/etc"
"$CS_CLI" preload-hook /opt/cudashim/libcudashim.so --root "$TMP/r2" 2>"$TMP/r2.err" && fail "preload-hook followed etc, a link out of the root"
mkdir -p "$TMP/r3/etc" && ln -s "$TMP/outside/preload" "$TMP/r3/etc/ld.so.preload"
"$CS_CLI" preload-hook /opt/cudashim/libcudashim.so --root "$TMP/r3" 2>>"$TMP/r2.err" && fail "preload-hook followed ld.so.preload, a link"
[ -z "$(ls -A "$TMP/outside")" ] || fail "preload-hook wrote outside the root: $(ls -A "$TMP/outside")"
grep -q "not followed" "$TMP/r2.err" || fail "preload-hook does not say why it refused: $(cat "$TMP/r2.err")"
# as a hook (the state on stdin) a refusal does not fail the container
mkdir -p "$TMP/b2" && printf '{"ociVersion":"1.0.2","root":{"path":"%s"}}' "$TMP/r2" >"$TMP/b2/config.json"
printf '{"ociVersion":"1.0.2","id":"x","status":"creating","pid":1,"bundle":"%s"}' "$TMP/b2" |
    "$CS_CLI" preload-hook /opt/cudashim/libcudashim.so 2>/dev/null || fail "preload-hook as a hook failed the container for a root it refused"

OLD=${CUDASHIM_OLDGLIBC:-$HOME/.cache/cudashim-oldglibc}/root
[ -x "$OLD/usr/bin/python3" ] && [ -f "$OLD/../.complete" ] || skip "the spec and the hook pass; no Debian 11 root in $OLD to apply it to (tests/oldglibc/fetch.sh fetches it)"
[ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v chroot >/dev/null ||
    skip "the spec and the hook pass; applying it to a bundle needs root, unshare and chroot"

# the node, as the administrator installed it: the library and the command, the trace directory
host="$TMP/host"
mkdir -p "$host/opt/cudashim" "$host/log"
cp "$SHIM" "$host/opt/cudashim/libcudashim.so"; cp "$CS_CLI" "$host/opt/cudashim/cudashim"
sed -e "s|\"hostPath\": \"/opt/cudashim/|\"hostPath\": \"$host/opt/cudashim/|" -e "s|\"path\": \"/opt/cudashim/|\"path\": \"$host/opt/cudashim/|" \
    -e "s|\"hostPath\": \"/var/log/cudashim\"|\"hostPath\": \"$host/log\"|" "$SPEC" >"$TMP/node-spec.json"
# the image: a copy of the root, with a preload of its own in both places
$CC -shared -fPIC -O1 -o "$TMP/image-preload.so" -x c - <<'C' || fail "cannot build the image's preload"
int image_preload_marker = 1;
C
$CC -shared -fPIC -O1 -o "$TMP/image-env.so" -x c - <<'C' || fail "cannot build the image's LD_PRELOAD library"
int image_env_marker = 1;
C
bundle() {  # NAME: a fresh bundle of the image in $TMP/NAME
    local b="$TMP/$1"
    rm -rf "$b"; mkdir -p "$b"
    cp -a "$OLD" "$b/rootfs"
    for d in proc tmp dev; do mkdir -p "$b/rootfs/$d"; done
    for d in null zero random urandom; do : >"$b/rootfs/dev/$d"; done
    cp "$TMP/image-preload.so" "$TMP/image-env.so" "$b/rootfs/usr/lib/"
    cp "$FAKES/libcuda.so.1" "$b/rootfs/usr/lib/"
    mkdir -p "$b/rootfs/usr/local/bin"
    echo /usr/lib/image-preload.so >"$b/rootfs/etc/ld.so.preload"
    cat >"$b/rootfs/usr/local/bin/cuda-prog.py" <<'PY'
import ctypes, sys
cuda = ctypes.CDLL("libcuda.so.1")
print("cuInit", cuda.cuInit(0))
d = ctypes.c_int(-1)
print("bad device", cuda.cuDeviceGet(ctypes.byref(d), 9))
sys.exit(4)
PY
    cat >"$b/rootfs/usr/local/bin/maps.py" <<'PY'
maps = open("/proc/self/maps").read()
print(" ".join(n for n in ("image-preload.so", "image-env.so", "libcudashim.so") if n in maps))
PY
    printf '{"ociVersion":"1.0.2","root":{"path":"rootfs"},"process":{"args":["/bin/sh"],"env":["PATH=/usr/local/bin:/usr/bin:/bin","HOME=/root","LD_PRELOAD=/usr/lib/image-env.so"]}}' \
        >"$b/config.json"
}
bundle plain
bundle injected
python3 "$ROOT/tests/cdi/apply_cdi.py" apply "$TMP/node-spec.json" "$device" "$TMP/injected" || fail "applying $device as a runtime does"
grep -qx /usr/lib/image-preload.so "$TMP/injected/rootfs/etc/ld.so.preload" &&
    grep -qx /opt/cudashim/libcudashim.so "$TMP/injected/rootfs/etc/ld.so.preload" || fail "the hook did not add the shim after the image's preload"
grep -q '"LD_PRELOAD=/usr/lib/image-env.so"' "$TMP/injected/config.json" || fail "the image's LD_PRELOAD was changed"
in_bundle() { python3 "$ROOT/tests/cdi/apply_cdi.py" run "$TMP/$1" "${@:2}"; }
same() {  # CMD...: the same stdout and status in the injected bundle as in the plain one
    local a b ra rb
    set +e
    a=$(in_bundle plain "$@" 2>/dev/null); ra=$?
    b=$(in_bundle injected "$@" 2>"$TMP/inj.err"); rb=$?
    set -e
    [ "$a" = "$b" ] && [ "$ra" = "$rb" ] || { cat "$TMP/inj.err" >&2; fail "in the injected image, $* prints or exits differently ($ra vs $rb): '$a' vs '$b'"; }
}
same /bin/ls /usr /etc/default
same /bin/sh -c 'echo shell; exit 3'
same /usr/bin/python3 -c 'print(2 + 2)'
[ -z "$(ls -A "$host/log")" ] || fail "processes that never load CUDA left files: $(ls -A "$host/log")"
assert_eq "$(in_bundle injected /usr/bin/python3 /usr/local/bin/maps.py)" "image-preload.so image-env.so libcudashim.so" "the image's preloads and the shim, all loaded"
assert_eq "$(in_bundle plain /usr/bin/python3 /usr/local/bin/maps.py)" "image-preload.so image-env.so" "the image without the spec"
same /usr/bin/python3 /usr/local/bin/cuda-prog.py
t=$(ls "$host"/log/cudashim-*.jsonl 2>/dev/null | head -1)
[ -n "$t" ] || fail "the CUDA program left no trace in the mounted directory"
assert_eq "$(q count "$t" api=cuDeviceGet result_name=CUDA_ERROR_INVALID_DEVICE)" 1 "the CUDA program's failing call"
[ -z "$(cat "$TMP/inj.err")" ] || fail "the shim wrote on the program's stderr despite CUDASHIM_STDERR=0: $(cat "$TMP/inj.err")"
echo "CDI $device: validated, applied to a bundle; ls, sh, python3 unchanged, the CUDA program traced"
