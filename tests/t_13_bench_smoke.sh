#!/usr/bin/env bash
# The benchmark runs and prints its table (figures are not judged here: see `make bench`).
. "$(dirname "$0")/lib.sh"
need_python
[ -z "$ASAN_LIB" ] || skip "benchmark figures mean nothing under a sanitizer"
out=$(BENCH_QUICK=1 BUILD="${BUILD#$ROOT/}" "$ROOT/tests/bench/run-bench.sh")
echo "$out"
for row in "default   1" "all       8" "start-up:" "resident memory" "ALL mode, 1 process" "ALL mode, 4 processes"; do
    echo "$out" | grep -q "^$row" || fail "benchmark table lacks '$row'"
done
# ALL mode loses nothing, one process or four at once: every call made is in the trace
[ "$(echo "$out" | grep -cE '^ALL mode, .*: ([0-9]+) calls made, \1 in the trace, 0 dropped')" = 2 ] ||
    fail "ALL mode lost calls"
echo ok
