#!/usr/bin/env bash
# The fork soak (make stress): every fork pattern of fork_safety.sh, SOAK_FORKS forks (10,000)
# per pattern and mode, under pressure: a CPU hog per core and a writer filling and syncing a
# file beside the traces, the load a busy node puts on page faults and the loader. No child may
# hang; one that does is reported (hang_report.py) before it is killed.
. "$(dirname "$0")/../lib.sh"
FORKS=${SOAK_FORKS:-10000}
RUNS=20
per_run=$(( (FORKS + RUNS - 1) / RUNS ))
pool_runs=$(( (FORKS + 39) / 40 ))   # the pool forks 40 workers a run
pressure=()
for _ in $(seq "$(nproc)"); do
    ( while :; do :; done ) &
    pressure+=($!)
done
( while :; do
    dd if=/dev/zero of="$TMP/pressure.fill" bs=1M count=256 conv=fsync status=none
    rm -f "$TMP/pressure.fill"
  done ) &
pressure+=($!)
# The hogs and the writer are stopped, and the writer's dd with them; their statuses (killed) are
# not this script's: it exits with the soak's.
stop_pressure() {
    local p
    for p in "${pressure[@]}"; do kill "$p" $(cat /proc/"$p"/task/*/children 2>/dev/null) 2>/dev/null || true; done
    wait "${pressure[@]}" 2>/dev/null || true
    rm -f "$TMP/pressure.fill"
}
trap 'stop_pressure; rm -rf "$TMP"' EXIT
echo "  under pressure: $(nproc) CPU hogs and a writer syncing 256 MB at a time in $TMP"
start=$(date +%s)
bash "$ROOT/tests/stress/fork_safety.sh" "$RUNS" "$per_run" "$pool_runs"
echo "  soak: $((RUNS * per_run)) forks per pattern and mode ($((pool_runs * 40)) in the pool), $(( $(date +%s) - start )) s"
