#!/usr/bin/env bash
# Validation on a real GPU stack (issue 9): builds the shim, runs a small PyTorch training loop
# without the shim, in default mode and in ALL mode, and checks losses, exit codes and traces.
# Writes a summary table and the traces to OUT (default build/gpu-validation). Exits 77 where
# there is no GPU or no PyTorch. Part 1 only so far; planted failures and two NCCL ranks are
# still to be written (see the issue).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/gpu-validation}
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "skipped: no CUDA PyTorch"; exit 77; }
make -C "$ROOT" -s build/libcudashim.so || exit 1
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
run X=1 > "$OUT/plain.txt"; rc0=$?
run CUDASHIM_TRACE_DIR="$OUT/default" LD_PRELOAD="$ROOT/build/libcudashim.so" > "$OUT/default.txt"; rc1=$?
run CUDASHIM_TRACE_DIR="$OUT/all" CUDASHIM_TRACE_ALL=1 LD_PRELOAD="$ROOT/build/libcudashim.so" > "$OUT/all.txt"; rc2=$?
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
[ $ok = 1 ]
