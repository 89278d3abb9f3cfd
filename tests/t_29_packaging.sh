#!/usr/bin/env bash
# The packages users install: the wheel (pip, into a fresh venv, offline) and the Debian package
# (unpacked into a scratch root: the machine's own system is not changed). From each, the
# command runs the demo's program and gives the demo's finding; each artifact's contents are
# listed and checked (no build path baked in: the library is found relative to the command).
. "$(dirname "$0")/lib.sh"
[ "${CS_SANITIZER:-0}" = 0 ] || skip "the packages hold the plain build"
PY=${PACKAGE_PYTHON:-/usr/bin/python3}
"$PY" -m build --version >/dev/null 2>&1 || skip "no python3-build for $PY (apt-get install python3-build python3-venv)"
"$PY" -c 'import venv, ensurepip' 2>/dev/null || skip "no python3-venv for $PY"
command -v dpkg-deb >/dev/null || skip "no dpkg-deb"
( cd "$ROOT" && make -s BUILD="$BUILD" CC="$CC" wheel deb ) >"$TMP/make.log" 2>&1 || { tail -20 "$TMP/make.log"; fail "make wheel deb"; }
version=$(sed -n 's/^#define CS_VERSION "\(.*\)"/\1/p' "$ROOT/shim/trace/trace.h")
wheel=$(ls "$BUILD"/dist/cudashim-"$version"-py3-none-manylinux_2_*_"$(uname -m)".whl) || fail "no manylinux wheel in $BUILD/dist"
deb=$(ls "$BUILD"/dist/cudashim_"$version"_*.deb) || fail "no .deb in $BUILD/dist"

# The demo's program: NVIDIA's CUDA 13 runtime on a driver for CUDA 12.2 (the fake one here)
if [ -e "$CUDA/lib64/libcudart.so.13" ] && [ -f "$CUDA/include/cuda_runtime_api.h" ]; then
    compile app tests/programs/path_cudart.c -I"$CUDA/include" -L"$CUDA/lib64" -lcudart -Wl,-rpath,"$CUDA/lib64"
    want=driver-too-old
else
    compile app tests/programs/path_linked.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
    want=""
fi
check_run() {  # NAME COMMAND...: runs the demo's program under the packaged command
    local name=$1; shift
    rm -rf "$TMP/traces.$name"
    set +e
    LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 "$@" run -q -o "$TMP/traces.$name" -- ./app >"$TMP/$name.out" 2>&1
    set -e
    local trace
    trace=$(ls "$TMP/traces.$name"/*/*.jsonl "$TMP/traces.$name"/*.jsonl 2>/dev/null | head -n 1)
    [ -n "$trace" ] || { cat "$TMP/$name.out"; fail "$name: the packaged command wrote no trace"; }
    [ -z "$want" ] || grep -q "\"id\":\"$want\"" "$trace" || { cat "$TMP/$name.out"; fail "$name: no $want finding"; }
    echo "  $name: a trace${want:+ with $want}"
}
no_build_path() {  # FILE...: nothing of this checkout in the packaged files
    local f
    for f in "$@"; do ! grep -aq -- "$ROOT" "$f" || fail "$f holds the build path $ROOT"; done
}

# The wheel: its files, its tag, and the command from a fresh venv, both ways in
unzip -Z1 "$wheel" | sort >"$TMP/wheel.list"
for f in cudashim/__init__.py cudashim/__main__.py cudashim/_bin/cudashim cudashim/_bin/libcudashim.so \
         cudashim/_share/man/man1/cudashim.1 "cudashim-$version.dist-info/entry_points.txt"; do
    grep -qx "$f" "$TMP/wheel.list" || fail "the wheel lacks $f"
done
unzip -Z "$wheel" | grep -q '^-rwx.* cudashim/_bin/cudashim$' || fail "the wheel's command is not executable"
mkdir -p "$TMP/w" && (cd "$TMP/w" && unzip -q "$wheel")
no_build_path "$TMP"/w/cudashim/_bin/*
objdump -p "$TMP/w/cudashim/_bin/cudashim" | grep NEEDED | grep -v -E 'libc\.so|libdl\.so\.2|libpthread\.so\.0|ld-linux' &&
    fail "the wheel's command needs more than glibc"
"$PY" -m venv "$TMP/venv" >/dev/null
"$TMP/venv/bin/pip" install -q --no-index "$wheel" || fail "pip install --no-index $wheel"
assert_eq "$("$TMP/venv/bin/cudashim" --version)" "cudashim $version" "cudashim --version from the wheel"
check_run wheel-entry "$TMP/venv/bin/cudashim"
check_run wheel-module "$TMP/venv/bin/python" -m cudashim

# The Debian package: its control data, its files, and the command from a scratch root
dpkg-deb -f "$deb" Depends | grep -q 'libc6 (>= 2\.[0-9]*), libjansson4' || fail "the .deb's Depends: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -c "$deb" | awk '{print $NF}' | sort >"$TMP/deb.list"
for f in ./usr/bin/cudashim ./usr/lib/x86_64-linux-gnu/libcudashim.so ./usr/share/man/man1/cudashim.1.gz; do
    grep -qx "$f" "$TMP/deb.list" || fail "the .deb lacks $f"
done
dpkg-deb -x "$deb" "$TMP/root"
no_build_path "$TMP/root/usr/bin/cudashim" "$TMP/root/usr/lib/x86_64-linux-gnu/libcudashim.so"
check_run deb "$TMP/root/usr/bin/cudashim"
echo "  $(basename "$wheel") ($(stat -c %s "$wheel") bytes), $(basename "$deb") ($(stat -c %s "$deb") bytes)"
echo ok
