#!/usr/bin/env bash
# Validation on a real GPU stack: builds the shim, runs a small PyTorch training loop without the
# shim, in default mode and in ALL mode, and checks losses, exit codes and traces. Writes a
# summary table and the traces to OUT (default build/gpu-validation). Exits 77 where there is no
# GPU or no PyTorch. Part 2 plants failures (a device-side assert, an impossible allocation, an
# image without this GPU's architecture, a kernel that outlasts the hang watchdog, two NCCL ranks
# on one GPU) and checks that the report names them, and that a healthy run has no alarm.
# Where the build's dependencies are missing (a machine lent for the run), BUILD names a directory
# holding a copied libcudashim.so and cudashim (and lib/ with the command's libjansson).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/gpu-validation}
B="$ROOT/${BUILD:-build}"
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "skipped: no CUDA PyTorch"; exit 77; }
[ "${BUILD:-build}" != build ] || make -C "$ROOT" -s build/libcudashim.so build/cudashim || exit 1
cli() { LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$B/cudashim" "$@"; }
mkdir -p "$OUT"
cat > "$OUT/train.py" <<'PY'
import time, torch, torch.nn as nn
torch.manual_seed(0); torch.backends.cudnn.benchmark = False; torch.backends.cudnn.deterministic = True
m = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 32 * 32, 10)).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.01)
x = torch.randn(64, 3, 32, 32, device="cuda"); y = torch.randint(0, 10, (64,), device="cuda")
times = []
for step in range(60):
    t0 = time.perf_counter()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(m(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
    if step % 10 == 0: print("loss %d %.6f" % (step, loss.item()))
times.sort(); print("median_step_s %.6f" % times[len(times) // 2])
PY
run() { (cd "$OUT" && env "$@" python3 train.py); }
mkdir -p "$OUT/default" "$OUT/all"  # the shim writes into a trace directory, never creates one
run X=1 > "$OUT/plain.txt"; rc0=$?
run CUDASHIM_TRACE_DIR="$OUT/default" LD_PRELOAD="$B/libcudashim.so" > "$OUT/default.txt"; rc1=$?
run CUDASHIM_TRACE_DIR="$OUT/all" CUDASHIM_TRACE_ALL=1 LD_PRELOAD="$B/libcudashim.so" > "$OUT/all.txt"; rc2=$?
ok=1
[ "$rc0 $rc1 $rc2" = "0 0 0" ] || { echo "exit codes differ: $rc0 $rc1 $rc2"; ok=0; }
for m in default all; do
    diff <(grep ^loss "$OUT/plain.txt") <(grep ^loss "$OUT/$m.txt") >/dev/null || { echo "losses differ in $m mode"; ok=0; }
done
t=$(ls "$OUT"/all/cudashim-*.jsonl 2>/dev/null | head -n 1)
gpa=$(grep -c '"via":"cuGetProcAddress"' "$t" 2>/dev/null || echo 0)
drv=$(grep -o '"driver_cuda":"[0-9.]*"' "$t" 2>/dev/null | head -n 1)
p=$(awk '/median_step_s/{print $2}' "$OUT/plain.txt"); d=$(awk '/median_step_s/{print $2}' "$OUT/default.txt"); a=$(awk '/median_step_s/{print $2}' "$OUT/all.txt")
{
    echo "| check | result |"; echo "|---|---|"
    echo "| exit codes (plain/default/all) | $rc0 / $rc1 / $rc2 |"
    echo "| calls via cuGetProcAddress (ALL) | $gpa |"
    echo "| driver | $drv |"
    echo "| median step s (plain/default/all) | $p / $d / $a |"
    echo "| step overhead default / all | $(awk -v p="$p" -v d="$d" -v a="$a" 'BEGIN{printf "%.2f%% / %.2f%%", (d/p-1)*100, (a/p-1)*100}') |"
} | tee "$OUT/summary.md"
[ "$gpa" -gt 0 ] || ok=0

# Part 2: the diagnosis on the real stack. A healthy run: no error or warning finding.
cli report "$OUT/default" > "$OUT/report-healthy.txt"; rh=$?
grep -qE "^  (error|warning) " "$OUT/report-healthy.txt" && { echo "false alarm on a healthy run"; ok=0; }
# Which architectures does this PyTorch carry, and would they run here?
lib=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))')
cc=$(python3 -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability())')
cli inspect --device "$cc" --driver "${drv//[^0-9.]/}" "$lib" > "$OUT/inspect.txt" 2>&1; ri=$?
# Planted: a device-side assert (an out-of-range index) surfaces at a later sync as 710.
cat > "$OUT/assert.py" <<'PY'
import torch
x = torch.zeros(3, device="cuda"); i = torch.tensor([5], device="cuda")
y = x[i]
torch.cuda.synchronize()
PY
(cd "$OUT" && cli run -o "$OUT/assert" -- python3 assert.py) > "$OUT/assert.txt" 2>&1
grep -q "async-kernel-error" "$OUT/assert.txt" || { echo "the device-side assert is not diagnosed"; ok=0; }
# Planted: an allocation larger than the GPU.
cat > "$OUT/oom.py" <<'PY'
import torch
torch.empty(1 << 50, dtype=torch.uint8, device="cuda")
PY
(cd "$OUT" && cli run -o "$OUT/oom" -- python3 oom.py) > "$OUT/oom.txt" 2>&1
grep -q "out-of-memory" "$OUT/oom.txt" || { echo "the OOM is not diagnosed"; ok=0; }
# Planted: an image with sm_80 code only (nvcc 13, tests/fixtures), loaded through the driver.
img="$ROOT/tests/fixtures/fatbin/tv18_sm80_only.fatbin"
if command -v "${CC:-gcc}" >/dev/null && "${CC:-gcc}" -O1 -o "$OUT/devcode" "$ROOT/tests/programs/devcode.c" -l:libcuda.so.1 2>"$OUT/devcode.build"; then
    (cd "$OUT" && cli run -o "$OUT/image" -- ./devcode "$img" load) > "$OUT/image.txt" 2>&1
    grep -q "no-kernel-image" "$OUT/image.txt" || { echo "the image without sm_${cc/./} is not diagnosed"; ok=0; }
    image="$(grep -c no-kernel-image "$OUT/image.txt") ($(grep -m1 -o 'cuModuleLoadData=[0-9]*' "$OUT/image.txt"))"
else
    image="not run: no C compiler"
fi
# Planted: a kernel that runs 4 s while the program synchronises, under a 1 s hang watchdog.
cat > "$OUT/hang.py" <<'PY'
import torch
torch.cuda.synchronize()
torch.cuda._sleep(int(4 * torch.cuda.get_device_properties(0).clock_rate * 1000))
torch.cuda.synchronize()
print("returned")
PY
(cd "$OUT" && CUDASHIM_HANG_TIMEOUT=1 cli run -o "$OUT/hang" -- python3 hang.py) > "$OUT/hang.txt" 2>&1
grep -q "returned" "$OUT/hang.txt" || { echo "the program under the hang watchdog did not finish"; ok=0; }
hang=$(cat "$OUT"/hang/cudashim-*.jsonl 2>/dev/null | grep -o '"type":"hang","tid":[0-9]*,"inside":"[A-Za-z_]*","seconds":[0-9.]*' | head -n 1)
[ -n "$hang" ] || { echo "the watchdog did not report the long synchronisation"; ok=0; }
# Planted: two NCCL ranks spawned on one GPU; mp.spawn's parent never loads the driver.
(cd "$OUT" && python3 "$ROOT/tests/gpu/two_ranks.py") > "$OUT/nccl-plain.txt" 2>&1; rn0=$?
(cd "$OUT" && cli run -o "$OUT/nccl" -- python3 "$ROOT/tests/gpu/two_ranks.py") > "$OUT/nccl.txt" 2>&1; rn1=$?
[ "$rn0" = "$rn1" ] || { echo "two ranks on one GPU: exit status $rn0 without the shim, $rn1 with it"; ok=0; }
grep -q "Duplicate GPU detected" "$OUT/nccl.txt" || { echo "two ranks on one GPU: NCCL's error not seen"; ok=0; }
grep -qE "different stacks|no-kernel-image" "$OUT/nccl.txt" && { echo "two ranks on one GPU: a false alarm"; ok=0; }
grep -q "nccl-duplicate-gpu" "$OUT/nccl.txt" || { echo "two ranks on one GPU: not diagnosed"; ok=0; }
{
    echo "| healthy report exit status | $rh |"
    echo "| inspect libtorch_cuda.so on sm_${cc/./} | exit $ri, $(grep -m1 'would run' "$OUT/inspect.txt" | sed 's/^ *//') |"
    echo "| device-side assert diagnosed | $(grep -c async-kernel-error "$OUT/assert.txt") |"
    echo "| OOM diagnosed | $(grep -c out-of-memory "$OUT/oom.txt") |"
    echo "| sm_80-only image diagnosed | $image |"
    echo "| hang watchdog (1 s) on a 4 s kernel | ${hang:-none} |"
    echo "| two NCCL ranks on one GPU: exit status without / with the shim | $rn0 / $rn1 |"
    echo "| ... false alarms in its report | $(grep -cE 'different stacks|no-kernel-image' "$OUT/nccl.txt") |"
    echo "| ... nccl-duplicate-gpu diagnosed | $(grep -c nccl-duplicate-gpu "$OUT/nccl.txt") |"
} | tee -a "$OUT/summary.md"
[ $ok = 1 ]
