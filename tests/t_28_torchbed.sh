#!/usr/bin/env bash
# A real framework: Debian's PyTorch 2.6 (built for CUDA 12.4) on NVIDIA's 550, 535 and 470
# drivers, without a GPU, in the bed tests/torchbed/fetch.sh unpacks (make check-torch fetches
# it). Each scenario runs without the shim and under it: the same output (digits masked: torch
# prints times and pids) and exit status; then its findings, one line per scenario.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/torchbed/bed.sh"
tb_available || skip "no PyTorch bed in $TB_CACHE (tests/torchbed/fetch.sh, or make check-torch, fetches it)"
tb_can_run || skip "the PyTorch bed runs as a chroot in a private mount namespace: needs root, unshare and chroot"
under_tsan && skip "python3 cannot run under ThreadSanitizer's runtime"
[ "${CS_SANITIZER:-0}" = 0 ] || skip "the bed's python runs the plain build only"
( cd "$ROOT" && make -s BUILD="$BUILD" CC="$CC" "$BUILD/cudashim-static" ) >/dev/null || fail "the static command (for check)"
tb_prepare
tb_has_toolkit || skip "torch needs a cuDNN 9, taken from the CUDA 13 toolkit at $CUDA (absent)"

SHIM=/opt/cudashim/libcudashim.so
bounded() { timeout 300 bash -c "$(declare -f tb_run); $(declare -p TB_ROOT TB_OUT); tb_run \"\$@\"" _ "$@"; }
# Digits and addresses masked, with the spaces around digits (UCX pads pids to a width); c10d's
# socket warnings dropped (whether the store's client connects before the server listens is a
# matter of timing, with or without the shim).
mask() { sed -E '/^\[W.*socket\.cpp/d; s/0x[0-9a-f]+/0xN/g; s/ *[0-9]+ */N/g'; }
# scenario NAME MODES [VAR=VALUE...] -- CMD...: MODES "0", "1" or "0 1" (ALL mode off/on).
# Sets $trace (the default-mode run's trace of the process that was not forked) and $status.
scenario() {
    local name=$1 modes=$2; shift 2
    local vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    local a b ra rb mode
    set +e
    bounded "${vars[@]}" -- "$@" >"$TMP/a.out" 2>&1; ra=$?
    a=$(mask <"$TMP/a.out")
    set -e
    [ "$ra" != 124 ] || fail "$name: hangs without the shim"
    for mode in $modes; do
        TB_OUT="$TMP/out/$name.$mode"; mkdir -p "$TB_OUT"
        set +e
        bounded "${vars[@]}" LD_PRELOAD=$SHIM CUDASHIM_TRACE_DIR=/out CUDASHIM_STDERR=0 CUDASHIM_TRACE_ALL=$mode \
            -- "$@" >"$TMP/b.out" 2>&1; rb=$?
        b=$(mask <"$TMP/b.out")
        set -e
        [ "$rb" != 124 ] || fail "$name: hangs under the shim (ALL=$mode)"
        [ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b") | head -60 >&2; fail "$name: output differs under the shim (ALL=$mode)"; }
        [ "$ra" = "$rb" ] || fail "$name: exit status $ra without the shim, $rb under it (ALL=$mode)"
    done
    TB_OUT="$TMP/out/$name.${modes%% *}"
    trace=$(grep -L '"forked_from"' "$TB_OUT"/cudashim-*.jsonl 2>/dev/null | head -n 1)
    status=$ra
    printf '  %-22s exit %-3s findings: %s\n' "$name" "$ra" "$(findings_line "$trace")"
}
findings_line() {  # TRACE: its findings, "severity:id" each (xN: N subjects), most severe first
    [ -n "$1" ] || { echo "(no trace)"; return; }
    python3 - "$1" <<'PY'
import json, sys
rank = {"error": 0, "warning": 1, "info": 2}
f = [json.loads(l) for l in open(sys.argv[1]) if '"type":"finding"' in l]
last = {(x["id"], x.get("key")): x for x in f}  # a finding said again (same id and key) replaces itself
seen = {}
for x in last.values():
    seen[(x["severity"], x["id"])] = seen.get((x["severity"], x["id"]), 0) + 1
print(" ".join(f"{s}:{i}" + (f"x{n}" if n > 1 else "") for (s, i), n in sorted(seen.items(), key=lambda k: (rank[k[0][0]], k[0][1]))) or "none")
PY
}
has() {  # TRACE ID: a finding with that id
    grep -q "\"type\":\"finding\",\"id\":\"$2\"" "$1" || fail "no $2 finding in $1"
}
lacks() {
    ! grep -q "\"type\":\"finding\",\"id\":\"$2\"" "$1" || fail "a $2 finding in $1"
}

echo "Debian's PyTorch 2.6 (CUDA 12.4), each scenario without the shim and under it:"
# 1. import torch, is_available, init on each driver (cuDNN 9 from the CUDA 13 toolkit)
# The toolkit's cuDNN 9 is a CUDA 13 build (its GPU code says so, before any cuDNN call): on the 550
# and 535 drivers (CUDA 12.4, 12.2) it is too new, and it is the only library that is.
scenario driver-550 0 LD_LIBRARY_PATH=/opt/cudnn -- python3 /opt/cudashim/cuda_init.py
assert_eq "$(findings_line "$trace")" "error:driver-too-old error:no-gpu-visible" "driver-550: the findings"
grep '"id":"driver-too-old"' "$trace" | grep -qF '"summary":"found libcudnn.so.9 (CUDA 13.' ||
    fail "driver-550: driver-too-old does not name libcudnn.so.9 alone, with its CUDA 13"
scenario driver-535 0 LD_LIBRARY_PATH=/opt/nvidia-535:/opt/cudnn -- python3 /opt/cudashim/cuda_init.py
assert_eq "$(findings_line "$trace")" "error:driver-too-old error:no-gpu-visible" "driver-535: the findings"
run535=$trace
scenario driver-470 "0 1" LD_LIBRARY_PATH=/opt/nvidia-470:/opt/cudnn -- python3 /opt/cudashim/cuda_init.py
# one cause, said once: every library too new for the driver in one finding, the runtime's lookups
# of functions the driver lacks counted in it, the driver chosen on LD_LIBRARY_PATH never "shadowed"
has "$trace" driver-too-old
assert_eq "$(findings_line "$trace")" "error:driver-too-old" "driver-470: the findings"
"$BUILD/cudashim" report "$trace" >"$TMP/report470" || true  # exit 1: the trace has an error finding
# torch is named from its own torch/version.py (no wheel: Debian's build), and the build of the
# same release that runs on this driver
for w in libcudart.so.12.4.127 libcublasLt.so.12.4.5.8 "CUDA 11.4" "470.256.02" "525.60.13" "lookups of driver functions" \
         "torch 2.6 built for CUDA 11.8 runs here" "keep torch 2.6.0+debian"; do
    grep -qF -- "$w" <(tr -s ' \n' ' ' <"$TMP/report470") || fail "driver-470: the report does not say '$w'"
done
[ "$(wc -l <"$TMP/report470")" -le 60 ] || fail "driver-470: the report has $(wc -l <"$TMP/report470") lines (at most 60)"
# 2. the toolkit's lib64 first on LD_LIBRARY_PATH: its NCCL 2.28 and cuDNN 9.19 (CUDA 13 builds)
scenario toolkit-first 0 LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64 -- python3 /opt/cudashim/cuda_init.py
# cuDNN and NCCL carry their own runtime: no major mismatch with torch's, but the 550 driver (CUDA
# 12.4) is too old for both (their GPU code is CUDA 13's); the entry that displaced the system's
# NCCL 2.22.3 (the one Debian's torch was packaged with) by a CUDA 13 build is a warning
assert_eq "$(findings_line "$trace")" "error:driver-too-old error:no-gpu-visible warning:library-shadowed" "toolkit-first: the findings"
for w in "libcudnn.so.9 (CUDA 13." "libnccl.so.2 (CUDA 13."; do
    grep '"id":"driver-too-old"' "$trace" | tail -n 1 | grep -qF -- "$w" || fail "toolkit-first: driver-too-old does not say '$w'"
done
grep '"id":"library-shadowed"' "$trace" | grep -qF "libnccl.so.2: built for CUDA 13 where the other copy is for CUDA 12" ||
    fail "toolkit-first: library-shadowed does not say why the displaced NCCL matters"
for w in "/usr/local/cuda-13.0/lib64" "libnccl.so.2 2.28.9" "libnccl.so.2.22.3, 2.22.3" libtorch_cuda.so.2.6; do
    grep '"id":"library-shadowed"' "$trace" | grep -qF -- "$w" || fail "toolkit-first: library-shadowed does not say '$w'"
done
# 3. no driver library on the search path
mv "$TB_LIB/libcuda.so.1" "$TB_LIB/libcuda.so.1.away"
trap 'mv "$TB_LIB/libcuda.so.1.away" "$TB_LIB/libcuda.so.1" 2>/dev/null || true; rm -rf "$TMP"' EXIT
scenario no-driver 0 LD_LIBRARY_PATH=/opt/cudnn -- python3 /opt/cudashim/cuda_init.py
mv "$TB_LIB/libcuda.so.1.away" "$TB_LIB/libcuda.so.1"
grep -q "Found no NVIDIA driver" "$TMP/a.out" || fail "no-driver: torch should say it found no driver"
assert_eq "$(findings_line "$trace")" "error:no-driver" "no-driver: the findings"
grep -q '"id":"no-driver".*nvidia/current/libcuda.so.1.*update-alternatives' "$trace" || fail "no-driver: the copy in nvidia/current and its link"
# 4. the missing cuDNN: Debian's libcudnn.so.9 links to a file its installer package downloads
scenario missing-cudnn 0 -- python3 -c "import torch"
[ "$status" = 1 ] || fail "missing-cudnn: import torch should fail (exit $status)"
assert_eq "$(findings_line "$trace")" "error:library-not-found" "missing-cudnn: the findings"
for w in libtorch_cuda.so.2.6 "libcudnn.so.9 -> libcudnn.so.9.0.0" /usr/local/cuda-13.0/lib64/libcudnn.so.9; do
    grep '"id":"library-not-found"' "$trace" | grep -qF -- "$w" || fail "missing-cudnn: the finding does not say '$w'"
done
# 5. a DataLoader with 4 fork workers training a small model, both modes, three runs
for run in 1 2 3; do
    scenario dataloader-$run "0 1" LD_LIBRARY_PATH=/opt/cudnn -- python3 /opt/cudashim/dataloader.py
done
# 6. torch.distributed, gloo, two ranks from mp.spawn
scenario gloo-2-ranks 0 LD_LIBRARY_PATH=/opt/cudnn -- python3 /opt/cudashim/gloo.py
# 7. segfaults after import torch: before any CUDA call, and after one
# The shim wakes when the CUDA libraries load (import torch), not at the first call: both crashes
# leave a record with what was loaded and the Python line (Debian 13's CPython 3.13 exports no
# traceback dumper: its frames are walked); UCX's own handler (installed by torch after the
# shim's) still prints its report, as without the shim, and the status stays 139.
for when in before after; do
    scenario segv-$when-cuda 0 LD_LIBRARY_PATH=/opt/cudnn -- python3 /opt/cudashim/segfault.py $when
    [ "$status" = 139 ] || fail "segv-$when-cuda: exit status $status, not 139"
    grep -q "libucs.so.*ucs_handle_error\|Caught signal 11" "$TMP/b.out" || fail "segv-$when-cuda: UCX's own report is gone under the shim"
    [ -n "$trace" ] && grep -q '"type":"crash"' "$trace" || fail "segv-$when-cuda: no crash record"
    grep '"type":"crash"' "$trace" | grep -q 'File \\"/opt/cudashim/segfault.py\\", line 9 in <module>' ||
        { grep -o "\"python[a-z_]*\":\"[^}]*" "$trace" >&2; fail "segv-$when-cuda: the record has no Python line (segfault.py, line 9)"; }
    grep -q '"type":"library","kind":"framework","name":"libtorch_cuda' "$trace" || fail "segv-$when-cuda: the record's trace names no loaded library"
    "$BUILD/cudashim" report "$trace" >"$TMP/crash.report" || true
    grep -q 'File "/opt/cudashim/segfault.py", line 9 in <module>' "$TMP/crash.report" ||
        fail "segv-$when-cuda: the report's CRASH section has no Python line"
done
# cudashim check in the bed: the stack and what would work, without running torch
check() {  # NAME [VAR=VALUE...] -- ARGS...: prints check's output in $TMP/check.out, its status in $status
    local name=$1; shift
    set +e
    bounded "$@" >"$TMP/check.out" 2>&1; status=$?
    set -e
    printf '  %-22s exit %s\n' "check $name" "$status"
}
check_says() { local w; for w in "$@"; do grep -qF -- "$w" <(tr -s ' \n' ' ' <"$TMP/check.out") || { cat "$TMP/check.out" >&2; fail "check: does not say '$w'"; }; done; }
check 470 LD_LIBRARY_PATH=/opt/nvidia-470:/opt/cudnn -- /opt/cudashim/cudashim check
[ "$status" = 1 ] || fail "check on the 470 driver: exit $status (a conflict: 1)"
check_says "torch 2.6.0+debian (CUDA 12.4)" "470.256.02 (CUDA 11.4)" "error [driver-too-old] found 2 libraries" "torch 2.6.0+debian (CUDA 12.4), libcudnn.so.9 (CUDA 13." \
    "torch 2.6 built for CUDA 11.8 runs here"
# check on the setup of the driver-535 run: the same cause, said before the run (the library, its
# CUDA and the driver it needs, from the same evidence: its GPU code)
check 535-cuda13-cudnn LD_LIBRARY_PATH=/opt/nvidia-535:/opt/cudnn -- /opt/cudashim/cudashim check
[ "$status" = 1 ] || fail "check on the 535 driver with the CUDA 13 cuDNN: exit $status (a conflict: 1)"
cause() { grep -oE 'found libcudnn\.so\.9 \(CUDA [0-9.]+\), which needs a driver for CUDA [0-9]+\.x \(Linux >= [0-9.]+' | head -n 1; }
run_cause=$(grep '"id":"driver-too-old"' "$run535" | cause)
check_cause=$(tr -s ' \n' ' ' <"$TMP/check.out" | cause)
[ -n "$run_cause" ] || fail "the driver-535 run does not say its driver-too-old cause"
assert_eq "$check_cause" "$run_cause" "check and the run: the same driver-too-old cause"
check_says "error [driver-too-old]" "(built for CUDA 13." "its GPU code (PTX"
check 535-want-2.9 LD_LIBRARY_PATH=/opt/nvidia-535:/opt/cudnn -- /opt/cudashim/cudashim check --want torch==2.9
# exit 1: torch 2.9's CUDA 12 builds run here, but the CUDA 13 cuDNN on the path is a conflict
[ "$status" = 1 ] || fail "check --want torch==2.9 on the 535 driver with the CUDA 13 cuDNN: exit $status (1)"
check_says "535.261.03 (CUDA 12.2)" "torch 2.9 built for CUDA 12.8" "runs on this driver" \
    "torch 2.9 built for CUDA 13.0" "needs a driver for CUDA 13.0 (Linux >= 580.65.06)"
check 535-want-nccl LD_LIBRARY_PATH=/opt/nvidia-535:/opt/cudnn -- /opt/cudashim/cudashim check --want nccl=2.28
[ "$status" = 1 ] || fail "check --want nccl=2.28 on the 535 driver with the CUDA 13 cuDNN: exit $status (1)"
check_says 'NCCL 2.28 built for CUDA 12 (pip install "nvidia-nccl-cu12==2.28.*"): runs on this driver; the build for torch 2.6.0+debian (CUDA 12)' \
    "NCCL 2.28 built for CUDA 13" "the loader picks libnccl.so.2 here now" "(2.22.3)" "every rank of a job must load the same NCCL"
check 550 LD_LIBRARY_PATH=/opt/cudnn -- /opt/cudashim/cudashim check --want cuda=13.0
[ "$status" = 1 ] || fail "check --want cuda=13.0 on the 550 driver: exit $status"
check_says "550.163.01 (CUDA 12.4)" "CUDA 13.0 needs a driver for CUDA 13.x (Linux >= 580.65.06)"
check missing-cudnn -- /opt/cudashim/cudashim check
check_says "[library-not-found]" "libcudnn.so.9 -> libcudnn.so.9.0.0" "points at a file that is not there"

# Budgets: the end-of-run block on stderr at most 12 lines, the report at most 60 (more only where a
# scenario has several causes, each said once), for each cause.
budget() {  # NAME [MAX_REPORT_LINES] VAR=VALUE...
    local name=$1 most=60; shift
    case $1 in [0-9]*) most=$1; shift ;; esac
    TB_OUT="$TMP/out/budget-$name"; mkdir -p "$TB_OUT"
    bounded "$@" -- python3 /opt/cudashim/cuda_init.py >"$TMP/budget.out" 2>&1 || true
    local block report
    block=$(grep -cE '^(cudashim:|  fix:|  \(details)' "$TMP/budget.out" || true)
    "$BUILD/cudashim" report "$TB_OUT" >"$TMP/budget.report" || true
    report=$(wc -l <"$TMP/budget.report")
    printf '  %-22s end-of-run block %s lines, report %s lines\n' "budget $name" "$block" "$report"
    [ "$block" -le 12 ] || { cat "$TMP/budget.out" >&2; fail "$name: the end-of-run block has $block lines (at most 12)"; }
    [ "$report" -le "$most" ] || { cat "$TMP/budget.report" >&2; fail "$name: the report has $report lines (at most $most)"; }
}
budget driver-470 LD_LIBRARY_PATH=/opt/nvidia-470:/opt/cudnn LD_PRELOAD=$SHIM CUDASHIM_TRACE_DIR=/out
# three causes there (the CUDA 13 cuDNN and NCCL on a CUDA 12.4 driver, no GPU, the displaced NCCL)
budget toolkit-first 66 LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64 LD_PRELOAD=$SHIM CUDASHIM_TRACE_DIR=/out
mv "$TB_LIB/libcuda.so.1" "$TB_LIB/libcuda.so.1.away"
budget no-driver LD_LIBRARY_PATH=/opt/cudnn LD_PRELOAD=$SHIM CUDASHIM_TRACE_DIR=/out
mv "$TB_LIB/libcuda.so.1.away" "$TB_LIB/libcuda.so.1"
echo ok
