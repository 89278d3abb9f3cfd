#!/usr/bin/env bash
# Figures for the cudashim command over the largest jobs (make bench-ranks): report, bugreport and
# export --prometheus over 2,048, 32,768 and 131,072 rank traces laid out as a job writes them
# (DIR/node-NNNNN/, 8 ranks a node), then over the same 131,072 with each node's summary
# (report --summarize). The traces are copies of real ones: the fake NCCL job of the test suite
# run under the shim, stuck as a large job gets stuck (every rank waits in an all-reduce, one
# rank is a collective behind), a node on an older driver, one rank with a failing call. Wall
# time and peak resident memory of each; nothing is asserted (tests/t_37 checks the answers).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
CLI="$BUILD/cudashim"
SIZES=${BENCH_RANKS:-"2048 32768 131072"}
W=$(mktemp -d "${TMPDIR:-/tmp}/cudashim-ranks-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"

"$ROOT/tests/bench/job/real_traces.sh" "$BUILD" "$W"
for n in $SIZES; do python3 "$ROOT/tests/bench/job/make_job.py" "$W" "$W/job$n" "$n"; done

measure() {  # LABEL CMD...: wall seconds and peak resident memory
    local label=$1; shift
    /usr/bin/time -f "%e %M" -o "$W/time" "$@" >"$W/out" 2>/dev/null || true
    read -r secs kb < <(tail -n 1 "$W/time")  # after "Command exited with non-zero status" when there is one
    printf '%-46s %7.2f s  %5d MB peak resident  %6d lines out\n' "$label" "$secs" $((kb / 1024)) "$(wc -l <"$W/out")"
}
echo "cudashim over a job's rank traces ($(nproc) CPUs; one trace $(cat real/ahead/*.jsonl | wc -c) bytes, 8 ranks a node)"
for n in $SIZES; do
    measure "report, $n ranks" "$CLI" report "job$n"
    measure "bugreport, $n ranks" "$CLI" bugreport "job$n" -o "$W/bug.md"
    measure "export --prometheus, $n ranks" "$CLI" export --prometheus "job$n" -o "$W/job.prom"
done
n=${SIZES##* }
measure "report --summarize, $n ranks ($((n / 8)) nodes)" "$CLI" report --summarize "job$n"
bytes() { find "job$n" -name "$1" -printf '%s\n' | awk '{ s += $1 } END { printf "%.1f MB", s / 1048576 }'; }
echo "summaries: $(bytes cudashim-summary.json) for $(bytes '*.jsonl') of traces"
measure "report from summaries, $n ranks" "$CLI" report "job$n"
measure "bugreport from summaries, $n ranks" "$CLI" bugreport "job$n" -o "$W/bug.md"
measure "export --prometheus from summaries, $n ranks" "$CLI" export --prometheus "job$n" -o "$W/job.prom"
