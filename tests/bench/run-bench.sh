#!/usr/bin/env bash
# `make bench`: prints the overhead table (docs/performance.md explains it). BENCH_QUICK=1 is the
# CI smoke run: few iterations, same table. Figures are ratios within one run, not pass/fail.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD="$ROOT/${BUILD:-build}"
SHIM="$BUILD/libcudashim.so"
FAKES="$BUILD/fakes"
CC="${CC:-gcc}"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
$CC -O2 -o bench "$ROOT/tests/bench/bench.c" -ldl -pthread -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
if [ "${BENCH_QUICK:-0}" = 1 ]; then ITERS=20000; ROUNDS=3; STARTS=20; BURST=200000
else ITERS=2000000; ROUNDS=7; STARTS=200; BURST=1000000; fi
export CUDASHIM_TRACE_DIR="$TMP"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "cudashim overhead benchmark ($(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo "cuLaunchKernel on the fake driver; ns per call = wall time / calls per thread; median of $ROUNDS interleaved rounds"
printf '\n%-9s %-8s %9s %9s %9s %18s  %s\n' mode threads direct linked dlsym cuGetProcAddress "added (linked/dlsym/gpa)"
for threads in 1 2 8; do
    for mode in none default all; do
        case $mode in
        none) env=(env) ;;
        default) env=(env LD_PRELOAD="$SHIM") ;;
        all) env=(env LD_PRELOAD="$SHIM" CUDASHIM_TRACE_ALL=1) ;;
        esac
        out=$("${env[@]}" ./bench calls "$threads" "$ITERS" "$ROUNDS" 2>/dev/null)
        d=$(echo "$out" | awk '$1=="direct"{print $2}'); l=$(echo "$out" | awk '$1=="linked"{print $2}')
        s=$(echo "$out" | awk '$1=="dlsym"{print $2}'); g=$(echo "$out" | awk '$1=="cuGetProcAddress"{print $2}')
        printf '%-9s %-8s %9s %9s %9s %18s  %s\n' "$mode" "$threads" "$d" "$l" "$s" "$g" \
            "$(awk -v d="$d" -v l="$l" -v s="$s" -v g="$g" 'BEGIN{printf "%+.1f / %+.1f / %+.1f ns", l-d, s-d, g-d}')"
        rm -f "$TMP"/cudashim-*
    done
done

# Instructions added per linked cuLaunchKernel, counted by callgrind (deterministic, unlike a
# time on a virtual machine): the inclusive cost of the benchmark's calling loop on its own
# thread, at two burst lengths, so the first call's set-up cancels out. The scanner's and the
# ALL-mode writer's threads are not the call's cost on the calling thread.
if [ "${BENCH_QUICK:-0}" = 1 ] && [ "${BENCH_CALLGRIND:-0}" != 1 ]; then
    echo "callgrind: skipped in the quick run (make bench counts instructions)"
elif command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
    ir() {  # instructions in the calling loop of ./bench MODE N (run_runtime: ./runtime_launch N), with the VAR=VALUE settings given
        local mode=$1 n=$2 loop=run; shift 2
        [ "$mode" = burst2 ] && loop=run2
        local prog=./bench
        [ "$mode" = run_runtime ] && { loop=run_runtime; prog=./runtime_launch; mode=; }
        rm -f "$TMP"/cg.out*
        env "$@" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/cg.out" \
            $prog ${mode:+"$mode"} "$n" >/dev/null 2>&1 || { echo 0; return; }
        callgrind_annotate --inclusive=yes "$TMP/cg.out-01" 2>/dev/null | awk -v l=":$loop\$" '$NF ~ /^\[/ && $(NF-1) ~ l {gsub(",", "", $1); print $1; exit}'
    }
    n1=10000; n2=30000
    per() { local m=$1 a b; shift; a=$(ir "$m" $n1 "$@"); b=$(ir "$m" $n2 "$@"); echo $(( (b - a) / (n2 - n1) )); }
    base=$(per burst); d=$(per burst LD_PRELOAD="$SHIM"); a=$(per burst LD_PRELOAD="$SHIM" CUDASHIM_TRACE_ALL=1)
    echo "callgrind, instructions per linked cuLaunchKernel on the calling thread: $base without the shim, default $d (+$((d - base))), ALL mode $a (+$((a - base)))"
    base=$(per burst2); d=$(per burst2 LD_PRELOAD="$SHIM")
    echo "callgrind, instructions per linked cuEventRecord (two arguments) on the calling thread: $base without the shim, default $d (+$((d - base)))"
    # A launch through a CUDA runtime: cudaLaunchKernel with the driver's cuLaunchKernel inside it
    # (two intercepted calls; the fake runtime in tests/programs/libs/fake_runtime.c).
    $CC -O2 -shared -fPIC -Wl,-soname,libcudart.so.13 -o libcudart.so.13 "$ROOT/tests/programs/libs/fake_runtime.c" -L"$FAKES" -lcuda
    $CC -O2 -o runtime_launch "$ROOT/tests/programs/runtime_launch.c" "$TMP/libcudart.so.13" -L"$FAKES" -lcuda -Wl,-rpath,"$TMP:$FAKES"
    base=$(per run_runtime); d=$(per run_runtime LD_PRELOAD="$SHIM")
    echo "callgrind, instructions per cudaLaunchKernel through a runtime (cuLaunchKernel inside it) on the calling thread: $base without the shim, default $d (+$((d - base)), two calls)"
    # The GEMM census: PyTorch's per-GEMM call sequences on the fake cuBLAS and cuBLASLt.
    $CC -O2 -shared -fPIC -Wl,-soname,libcublas.so.13 -o libcublas.so.13 -DFAKE_CUBLAS "$ROOT/tests/programs/libs/fake_blas.c"
    $CC -O2 -shared -fPIC -Wl,-soname,libcublasLt.so.13 -o libcublasLt.so.13 -DFAKE_CUBLASLT "$ROOT/tests/programs/libs/fake_blas.c"
    $CC -O2 -o gemm_bench "$ROOT/tests/bench/gemm_bench.c" "$TMP/libcublas.so.13" "$TMP/libcublasLt.so.13" -Wl,-rpath,"$TMP"
    gemm_ir() {  # instructions in ./gemm_bench KIND N's loop, with the VAR=VALUE settings given
        local kind=$1 n=$2; shift 2
        rm -f "$TMP"/cg.out*
        env "$@" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/cg.out" \
            ./gemm_bench "$kind" "$n" >/dev/null 2>&1 || { echo 0; return; }
        callgrind_annotate --inclusive=yes "$TMP/cg.out-01" 2>/dev/null | awk -v l=":run_$kind\$" '$NF ~ /^\[/ && $(NF-1) ~ l {gsub(",", "", $1); print $1; exit}'
    }
    gemm_per() { local k=$1 a b; shift; a=$(gemm_ir "$k" 2000 "$@"); b=$(gemm_ir "$k" 6000 "$@"); echo $(( (b - a) / 4000 )); }
    base=$(gemm_per sgemm); d=$(gemm_per sgemm LD_PRELOAD="$SHIM")
    echo "callgrind, instructions per cuBLAS GEMM as PyTorch issues it (cublasSetMathMode + cublasSgemm_v2) on the calling thread: $base without the shim, default $d (+$((d - base)), two calls)"
    base=$(gemm_per lt); d=$(gemm_per lt LD_PRELOAD="$SHIM")
    echo "callgrind, instructions per cuBLASLt GEMM as PyTorch issues it (13 calls: descriptor, layouts, preference, heuristic, matmul, destroys) on the calling thread: $base without the shim, default $d (+$((d - base)))"
    rm -f "$TMP"/cudashim-* "$TMP"/cg.out*
else
    echo "callgrind: valgrind not installed (instructions per call not counted)"
fi

if command -v ltrace >/dev/null; then
    t0=$(date +%s%N); ltrace -e cuLaunchKernel -o /dev/null ./bench burst 2000 2>/dev/null; t1=$(date +%s%N)
    echo "ltrace: $(( (t1 - t0) / 2000 )) ns per call (2000 calls, start-up included)"
else
    echo "ltrace: not installed (about 250 us per call on these machines)"
fi

# Start-up: process start to exit of a program whose main returns at once, interleaved.
for i in $(seq "$STARTS"); do
    t0=$(date +%s%N); ./bench startup; t1=$(date +%s%N); echo $((t1 - t0)) >> plain
    t0=$(date +%s%N); LD_PRELOAD="$SHIM" ./bench startup; t1=$(date +%s%N); echo $((t1 - t0)) >> shim
done
p=$(median < plain); s=$(median < shim)
echo "start-up: $((p / 1000)) us without, $((s / 1000)) us with the shim: $(( (s - p) / 1000 )) us added (median of $STARTS)"

# Idle: a preloaded process that never loads CUDA (every process of a node where the shim is in
# /etc/ld.so.preload), start to exit, interleaved; and what the loader does to map the library.
idle() {  # NAME CMD...: median start-to-exit without and with the preload
    local name=$1 i t0 t1; shift
    rm -f idle.plain idle.shim
    for i in $(seq "$STARTS"); do
        t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $((t1 - t0)) >> idle.plain
        t0=$(date +%s%N); LD_PRELOAD="$SHIM" "$@" >/dev/null; t1=$(date +%s%N); echo $((t1 - t0)) >> idle.shim
    done
    local p s
    p=$(median < idle.plain); s=$(median < idle.shim)
    echo "idle, $name: $((p / 1000)) us without, $((s / 1000)) us preloaded: $(( (s - p) / 1000 )) us added, ratio $(awk -v p="$p" -v s="$s" 'BEGIN{printf "%.2f", s / p}') (median of $STARTS)"
}
idle true /bin/true
# the system's python3 (a version manager's python3 on PATH is a script, timed with it)
py=$(command -v /usr/bin/python3 || command -v python3 || true)
[ -n "$py" ] && idle "python3 -c pass" "$py" -c pass
relocs() { LD_DEBUG=statistics "$@" 2>&1 >/dev/null | awk '/number of relocations:/ {n += $NF} END {print n + 0}'; }
relative() { LD_DEBUG=statistics "$@" 2>&1 >/dev/null | awk '/number of relative relocations:/ {n += $NF} END {print n + 0}'; }
faults() { /usr/bin/time -f %R "$@" 2>&1 >/dev/null | tail -1; }
echo "idle, relocations at start of /bin/true: $(relocs /bin/true) symbol and $(relative /bin/true) relative without, $(LD_PRELOAD="$SHIM" relocs /bin/true) and $(LD_PRELOAD="$SHIM" relative /bin/true) preloaded; the library maps $(( $(stat -c %s "$SHIM") / 1024 )) KiB"
[ -x /usr/bin/time ] && echo "idle, page faults of /bin/true: $(faults /bin/true) without, $(LD_PRELOAD="$SHIM" faults /bin/true) preloaded"
rm -f "$TMP"/cudashim-*

# Exit: a CUDA process's time from the end of main to the process's end (the shim's trace end,
# summary and metrics file, bounded by CUDASHIM_EXIT_TIMEOUT), interleaved, without and with it.
python3 - "$SHIM" "$STARTS" <<'PY'
import os, statistics, subprocess, sys, time
shim, n = sys.argv[1], int(sys.argv[2])
def one(preload):
    env = dict(os.environ)
    if preload: env["LD_PRELOAD"] = shim
    p = subprocess.Popen(["./bench", "exit"], stdout=subprocess.PIPE, env=env)
    out = p.stdout.read(); p.wait()
    return time.monotonic_ns() - int(out)
plain, shimmed = [], []
for _ in range(n):
    plain.append(one(False)); shimmed.append(one(True))
p, s = statistics.median(plain), statistics.median(shimmed)
print(f"exit of a CUDA process (end of main to its end): {p / 1000:.0f} us without, {s / 1000:.0f} us with the shim: "
      f"{(s - p) / 1000:.0f} us added (median of {n}; bounded by CUDASHIM_EXIT_TIMEOUT, 5 s by default)")
PY
rm -f "$TMP"/cudashim-*

r0=$(./bench rss); r1=$(LD_PRELOAD="$SHIM" ./bench rss); r2=$(LD_PRELOAD="$SHIM" CUDASHIM_TRACE_ALL=1 ./bench rss)
echo "resident memory after 1000 calls: $r0 KiB without, $r1 KiB default (+$((r1 - r0))), $r2 KiB ALL mode (+$((r2 - r0)))"
rm -f "$TMP"/cudashim-*

# ALL mode, lossless: one process making BURST calls as fast as it can, then 4 such processes at
# once (on however many CPUs there are); every call must be in the trace, none dropped. The
# successful calls are counted in the binary calls file (its chunk headers), bytes per call over
# both files.
count_all() {  # DIR BURST LABEL
    python3 - "$1" "$2" "$3" <<'PY'
import glob, json, os, struct, sys
d, n, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tot = {"made": 0, "written": 0, "dropped": 0, "bytes": 0}
for path in glob.glob(d + "/cudashim-*.jsonl"):
    lines = open(path).read().splitlines()
    s = json.loads(lines[-1])
    lined = sum(1 for l in lines if '"api":"cuLaunchKernel"' in l)
    binary = 0
    calls = os.path.join(d, json.loads(lines[0])["calls_file"])
    with open(calls, "rb") as f:
        f.seek(struct.unpack_from("<I", f.read(24), 12)[0])
        while True:
            h = f.read(48)
            if len(h) < 48: break
            kind, tid, count, size = struct.unpack_from("<IIII", h)
            if kind == 1: binary += count
            f.seek(size, 1)
    tot["made"] += s["calls"].get("cuLaunchKernel", 0)
    tot["written"] += lined + binary
    tot["dropped"] += s["dropped"]
    tot["bytes"] += os.path.getsize(path) + os.path.getsize(calls)
print("ALL mode, %s: %d calls made, %d in the trace, %d dropped; %.1f bytes per call on disk"
      % (label, tot["made"], tot["written"], tot["dropped"], tot["bytes"] / max(tot["made"], 1)))
PY
}
mkdir -p "$TMP/all1" "$TMP/all4"
CUDASHIM_TRACE_DIR="$TMP/all1" LD_PRELOAD="$SHIM" CUDASHIM_TRACE_ALL=1 ./bench burst "$BURST" 2>/dev/null
count_all "$TMP/all1" "$BURST" "1 process x $BURST calls"
for i in 1 2 3 4; do CUDASHIM_TRACE_DIR="$TMP/all4" LD_PRELOAD="$SHIM" CUDASHIM_TRACE_ALL=1 ./bench burst "$BURST" 2>/dev/null & done
wait
count_all "$TMP/all4" "$BURST" "4 processes x $BURST calls at once"

# The cost of `import torch` (Debian's PyTorch 2.6, CUDA 12.4) with and without the shim, runs
# interleaved: the ratio of the medians. Only where the PyTorch bed has been fetched and can run.
if [ "${BENCH_QUICK:-0}" != 1 ]; then
    (
        . "$ROOT/tests/torchbed/bed.sh"
        if tb_available && tb_can_run && { tb_prepare; tb_has_toolkit; }; then
            : >"$TMP/import.without"; : >"$TMP/import.with"
            for i in 1 2 3 4 5 6 7; do
                tb_run LD_LIBRARY_PATH=/opt/cudnn -- python3 /opt/cudashim/import_cost.py >>"$TMP/import.without" 2>/dev/null
                tb_run LD_LIBRARY_PATH=/opt/cudnn LD_PRELOAD=/opt/cudashim/libcudashim.so CUDASHIM_STDERR=0 \
                       CUDASHIM_TRACE_DIR=/tmp -- python3 /opt/cudashim/import_cost.py >>"$TMP/import.with" 2>/dev/null
            done
            python3 - "$TMP/import.without" "$TMP/import.with" <<'PY'
import statistics, sys
a, b = ([float(x) for x in open(p)] for p in sys.argv[1:3])
ma, mb = statistics.median(a), statistics.median(b)
print("import torch (Debian's 2.6, CUDA 12.4), 7 runs each, interleaved: median %.3f s without the shim, "
      "%.3f s with it: ratio %.3f" % (ma, mb, mb / ma))
PY
        else
            echo "import torch: skipped (no PyTorch bed: tests/torchbed/fetch.sh)"
        fi
    )
fi
