#!/usr/bin/env bash
# Figures for the cudashim command at the scale of real runs (make bench-cli): report and
# export of a 1M-call ALL-mode trace, diff of two 100k-call traces, report and bugreport over
# 2048 rank traces. Wall time and peak resident memory of each; nothing is asserted.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
CLI="$ROOT/$BUILD/cudashim"
CALLS=${CLI_BENCH_CALLS:-1000000}
W=$(mktemp -d /tmp/cudashim-cli-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
python3 - "$ROOT/tests/fixtures/traces/rank0.jsonl" "$W" "$CALLS" <<'PY'
import json, os, sys
src, out, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = [json.loads(l) for l in open(src)]
head = [json.dumps(l) for l in lines if l["type"] not in ("call", "summary")]
call = ('{"type":"call","api":"cuLaunchKernel","lib":"cuda","via":"linked","tid":%d,"ts_ns":%d,"dur_ns":%d,'
        '"result":%d%s,"kernel":"_Z6kernelPfS_i","grid":[256,1,1],"block":[128,1,1],"shared_mem":0,"stream":"0x0"}\n')
def write(path, n, fail_at=-1):
    with open(path, "w") as f:
        f.write("\n".join(head) + "\n")
        for i in range(n):
            r = 2 if i == fail_at or i % 100003 == 7 else 0
            f.write(call % (1 + i % 8, 1000000 + i * 100, 1500, r, ',"result_name":"CUDA_ERROR_OUT_OF_MEMORY"' if r else ""))
        f.write('{"type":"summary","total_calls":%d}\n' % n)
write(os.path.join(out, "big.jsonl"), calls)
write(os.path.join(out, "good.jsonl"), 100000)
write(os.path.join(out, "bad.jsonl"), 100000, 99990)
os.makedirs(os.path.join(out, "job"))
for r in range(2048):
    with open(os.path.join(out, "job", "cudashim-node-rank%d.jsonl" % r), "w") as f:
        for l in lines:
            l = dict(l)
            if l["type"] == "header": l["rank"] = str(r)
            if l["type"] == "library" and l["kind"] == "driver" and r in (812, 1907): l["version"] = "12.2"
            f.write(json.dumps(l) + "\n")
PY
measure() {  # LABEL CMD...: wall seconds and peak resident memory
    local label=$1; shift
    /usr/bin/time -f "%e %M" -o "$W/time" "$@" >"$W/out" 2>/dev/null || true
    read -r secs kb < <(tail -n 1 "$W/time")  # after "Command exited with non-zero status" when there is one
    printf '%-44s %7.2f s  %7d MB peak resident  %s\n' "$label" "$secs" $((kb / 1024)) "$(wc -l <"$W/out") lines out"
}
echo "cudashim command at scale ($(nproc) CPUs): $CALLS-call trace of $(( $(stat -c %s "$W/big.jsonl") >> 20 )) MB"
measure "report, $CALLS calls" "$CLI" report "$W/big.jsonl"
measure "export --chrome, $CALLS calls" "$CLI" export --chrome "$W/big.jsonl" -o "$W/big.json"
measure "diff, two 100000-call traces" "$CLI" diff "$W/good.jsonl" "$W/bad.jsonl"
measure "report, 2048 rank traces" "$CLI" report "$W/job"
measure "bugreport, 2048 rank traces" "$CLI" bugreport "$W/job"
echo "bugreport size: $(wc -c <"$W/out") characters"
