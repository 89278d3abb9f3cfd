#!/usr/bin/env bash
# Installed for every process, as a node's administrator does it: the shim in /etc/ld.so.preload of
# a Debian root (the PyTorch bed), with /etc/cudashim.conf sending traces to /var/log/cudashim and
# nothing to stderr. ls, sh, python3, Debian's setuid passwd, a setuid program of ours run by an
# unprivileged user, and torch print the same bytes and exit the same with the preload as without;
# only the processes that load CUDA leave a trace, each in root's directory.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/torchbed/bed.sh"
tb_available || skip "no PyTorch bed in $TB_CACHE (tests/torchbed/fetch.sh, or make check-torch, fetches it)"
tb_can_run || skip "the PyTorch bed runs as a chroot in a private mount namespace: needs root, unshare and chroot"
under_tsan && skip "python3 cannot run under ThreadSanitizer's runtime"
[ "${CS_SANITIZER:-0}" = 0 ] || skip "the bed's programs run the plain build only"
tb_prepare
tb_has_toolkit || skip "torch needs a cuDNN 9, taken from the CUDA 13 toolkit at $CUDA (absent)"
# programs the bed lacks, in the shim's own folder of it (no other test sees them)
compile privileged tests/programs/privileged.c -ldl
mkdir -p "$TB_ROOT/opt/cudashim/bin"
install_file "$(command -v ls)" "$TB_ROOT/opt/cudashim/bin/ls"
install_file "$(readlink -f /bin/sh)" "$TB_ROOT/opt/cudashim/bin/sh"
install_file "$TMP/privileged" "$TB_ROOT/opt/cudashim/bin/privileged"
chown 0:0 "$TB_ROOT/opt/cudashim/bin/privileged"; chmod 4755 "$TB_ROOT/opt/cudashim/bin/privileged"
B=/opt/cudashim/bin

echo /opt/cudashim/libcudashim.so >"$TMP/preload"
: >"$TMP/nothing"
printf '# the node: traces to root'"'"'s folder, nothing on the jobs'"'"' stderr\nCUDASHIM_TRACE_DIR=/var/log/cudashim\nCUDASHIM_STDERR=0\n' >"$TMP/cudashim.conf"
chmod 0644 "$TMP/cudashim.conf"
mkdir -m 0755 "$TMP/log"
bounded() { timeout 300 bash -c "$(declare -f tb_run); $(declare -p TB_ROOT TB_OUT); tb_run \"\$@\"" _ "$@"; }
# same NAME USER CMD...: CMD in the root as USER (user:group), without the preload and with it:
# stdout, stderr and exit status the same, byte for byte
same() {
    local name=$1 user=$2; shift 2
    set +e
    TB_PRELOAD="$TMP/nothing" TB_USER="$user" bounded LD_LIBRARY_PATH=/opt/cudnn -- "$@" >"$TMP/$name.a.out" 2>"$TMP/$name.a.err"
    echo "status=$?" >>"$TMP/$name.a.out"
    TB_PRELOAD="$TMP/preload" TB_CONF="$TMP/cudashim.conf" TB_LOG="$TMP/log" TB_USER="$user" \
        bounded LD_LIBRARY_PATH=/opt/cudnn -- "$@" >"$TMP/$name.b.out" 2>"$TMP/$name.b.err"
    echo "status=$?" >>"$TMP/$name.b.out"
    set -e
    grep -q "^status=125$" "$TMP/$name.a.out" && skip "the bed's mounts could not be made here"
    cmp -s "$TMP/$name.a.out" "$TMP/$name.b.out" || { diff "$TMP/$name.a.out" "$TMP/$name.b.out"; fail "$name: stdout or status differs"; }
    cmp -s "$TMP/$name.a.err" "$TMP/$name.b.err" || { diff "$TMP/$name.a.err" "$TMP/$name.b.err"; fail "$name: stderr differs"; }
    printf '  %-9s %s\n' "$name" "$(tail -n 1 "$TMP/$name.a.out"), the same with the preload"
}
traces() { ls "$TMP"/log/cudashim-*.jsonl 2>/dev/null | wc -l; }
echo "a node with the shim in /etc/ld.so.preload:"
same ls 0:0 $B/ls -l /opt/cudashim/bin /usr/lib/python3
same sh 0:0 $B/sh -c 'echo $((6 * 7)); '$B'/ls / >/dev/null; exit 3'
same python3 0:0 python3 -c 'import hashlib, sys; print(hashlib.sha256(b"x").hexdigest()); sys.exit(4)'
same passwd 65534:65534 /usr/bin/passwd --help
same setuid 65534:65534 $B/privileged plain
grep -q "secure=1" "$TMP/setuid.b.out" || fail "the setuid program ran without privileges"
assert_eq "$(traces)" 0 "traces of programs that never load CUDA"
[ -z "$(ls "$TB_OUT")" ] || fail "files in the job's folder: $(ls "$TB_OUT")"
same torch 0:0 python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.device_count())'
assert_eq "$(traces)" 1 "traces after torch"
t=$(ls "$TMP"/log/cudashim-*.jsonl)
grep -q '"type":"header".*import torch' "$t" || fail "the trace is not torch's"
assert_eq "$(stat -c '%a %u' "$t")" "600 0" "the trace's mode and owner"
mv "$t" "$TMP/torch.jsonl"
# a privileged process that loads CUDA: traced where root's file says, not where its caller says
same setuid-cuda 65534:65534 env CUDASHIM_TRACE_DIR=/out $B/privileged cuda libcuda.so.1
assert_eq "$(traces)" 1 "traces of the privileged CUDA program"
[ -z "$(ls "$TB_OUT")" ] || fail "the privileged program wrote where its caller said: $(ls "$TB_OUT")"
echo ok
