# The PyTorch test bed: Debian's PyTorch 2.6 for CUDA 12.4 unpacked by tests/torchbed/fetch.sh,
# run as a chroot in a private mount namespace (its /proc, /dev/shm, /tmp and device nodes vanish
# with the namespace: nothing to unmount, even after a kill). Sourced by the suite after lib.sh.
#
#   tb_prepare                  once per run: links the packages' maintainer scripts would make,
#                               the toolkit's cuDNN and NCCL (hard links), this build of the shim
#   tb_run [VAR=VALUE...] -- CMD...   CMD in the root, its environment only VARs and the basics;
#                               /out in the root is "$TB_OUT" here; with TB_PRELOAD set (a file
#                               here) it is the root's /etc/ld.so.preload, with TB_CONF its
#                               /etc/cudashim.conf, with TB_LOG its /var/log/cudashim, for that run
#                               only; TB_USER: the user:group CMD runs as
CUDA="${CUDA:-/usr/local/cuda}"
TB_CACHE="${CUDASHIM_TORCHBED:-$HOME/.cache/cudashim-torchbed}"
TB_ROOT="$TB_CACHE/root"
TB_LIB="$TB_ROOT/usr/lib/x86_64-linux-gnu"
TB_OUT="$TMP/out"

tb_available() { [ -f "$TB_CACHE/.complete" ] && [ -x "$TB_ROOT/usr/bin/python3" ] && [ -d "$TB_ROOT/opt/nvidia-470" ]; }
tb_can_run() { [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v chroot >/dev/null; }

tb_prepare() {
    local l
    for l in lib lib64 bin sbin; do [ -e "$TB_ROOT/$l" ] || ln -s "usr/$l" "$TB_ROOT/$l"; done
    mkdir -p "$TB_ROOT/proc" "$TB_ROOT/dev/shm" "$TB_ROOT/tmp" "$TB_ROOT/root" "$TB_ROOT/out" "$TB_ROOT/opt/cudashim"
    for l in null zero random urandom; do [ -e "$TB_ROOT/dev/$l" ] || : >"$TB_ROOT/dev/$l"; done
    # mount points a run can put its own files on (empty: nothing preloaded, nothing configured)
    mkdir -p "$TB_ROOT/etc" "$TB_ROOT/var/log/cudashim"
    [ -e "$TB_ROOT/etc/ld.so.preload" ] || : >"$TB_ROOT/etc/ld.so.preload"
    [ -e "$TB_ROOT/etc/cudashim.conf" ] || : >"$TB_ROOT/etc/cudashim.conf"
    [ -e "$TB_ROOT/usr/bin/env" ] || cp /usr/bin/env "$TB_ROOT/usr/bin/env"
    # what update-alternatives would have linked (the driver, NVML, BLAS, LAPACK)
    ln -sfn nvidia/current/libcuda.so.1 "$TB_LIB/libcuda.so.1"
    ln -sfn nvidia/current/libnvidia-ml.so.1 "$TB_LIB/libnvidia-ml.so.1"
    [ -e "$TB_LIB/libblas.so.3" ] || ln -s blas/libblas.so.3 "$TB_LIB/libblas.so.3"
    [ -e "$TB_LIB/liblapack.so.3" ] || ln -s lapack/liblapack.so.3 "$TB_LIB/liblapack.so.3"
    # The CUDA 13 toolkit's libraries at /usr/local/cuda-13.0 in the root, as hard links (never
    # a bind mount: removing the cache must not reach outside it); cuDNN 9 from there alone in
    # /opt/cudnn (Debian's libcudnn.so.9 is a link to a file its installer package downloads).
    local tk
    tk=$(readlink -f "$CUDA/lib64" 2>/dev/null)
    if [ -n "$tk" ] && [ -e "$tk/libcudnn.so.9" ] && [ ! -e "$TB_ROOT/usr/local/cuda-13.0/lib64/libcudnn.so.9" ]; then
        mkdir -p "$TB_ROOT/usr/local/cuda-13.0/lib64" "$TB_ROOT/opt/cudnn"
        cp -al "$tk/." "$TB_ROOT/usr/local/cuda-13.0/lib64/" 2>/dev/null || cp -a "$tk"/libcudnn* "$tk"/libnccl* "$TB_ROOT/usr/local/cuda-13.0/lib64/"
        cp -al "$TB_ROOT/usr/local/cuda-13.0/lib64"/libcudnn*.so.9* "$TB_ROOT/opt/cudnn/"
    fi
    # Each file is put in place by a rename: a run of another suite in the same bed keeps the
    # copy it mapped (overwriting a loaded library in place crashes the process using it).
    install_file "$BUILD/libcudashim.so" "$TB_ROOT/opt/cudashim/libcudashim.so"
    # the command, linked with jansson statically (the root has no libjansson), for `check`
    [ ! -x "$BUILD/cudashim-static" ] || install_file "$BUILD/cudashim-static" "$TB_ROOT/opt/cudashim/cudashim"
    local py
    for py in "$ROOT"/tests/torchbed/scenarios/*.py; do install_file "$py" "$TB_ROOT/opt/cudashim/${py##*/}"; done
    mkdir -p "$TB_OUT"
}
install_file() { cp "$1" "$2.new.$$" && mv -f "$2.new.$$" "$2"; }
tb_has_toolkit() { [ -e "$TB_ROOT/opt/cudnn/libcudnn.so.9" ]; }

tb_run() {
    local vars=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    mkdir -p "$TB_OUT"
    TB_PRELOAD="${TB_PRELOAD:-}" TB_CONF="${TB_CONF:-}" TB_LOG="${TB_LOG:-}" TB_USER="${TB_USER:-}" \
    unshare -m --propagation private -- /bin/sh -c '
        r=$1; out=$2; shift 2
        mount -t proc proc "$r/proc" && mount -t tmpfs -o size=1g tmpfs "$r/dev/shm" &&
        mount -t tmpfs tmpfs "$r/tmp" && mount --bind "$out" "$r/out" || exit 125
        for d in null zero random urandom; do mount --bind /dev/$d "$r/dev/$d" || exit 125; done
        [ -z "$TB_PRELOAD" ] || mount --bind "$TB_PRELOAD" "$r/etc/ld.so.preload" || exit 125
        [ -z "$TB_CONF" ] || mount --bind "$TB_CONF" "$r/etc/cudashim.conf" || exit 125
        [ -z "$TB_LOG" ] || mount --bind "$TB_LOG" "$r/var/log/cudashim" || exit 125
        exec chroot ${TB_USER:+--userspec="$TB_USER"} "$r" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 USE_LIBUV=0 "$@"' \
        sh "$TB_ROOT" "$TB_OUT" "${vars[@]}" "$@"
}
