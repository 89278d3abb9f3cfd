#!/usr/bin/env bash
# The benchmark runs and prints its table (figures are not judged here: see `make bench`).
. "$(dirname "$0")/lib.sh"
need_python
[ -z "$ASAN_LIB" ] || skip "benchmark figures mean nothing under a sanitizer"
out=$(BENCH_QUICK=1 BUILD="${BUILD#$ROOT/}" "$ROOT/tests/bench/run-bench.sh")
echo "$out"
for row in "default   1" "all       8" "start-up:" "resident memory" "ALL mode burst"; do
    echo "$out" | grep -q "^$row" || fail "benchmark table lacks '$row'"
done
echo "$out" | grep -q "0 unaccounted" || fail "events lost without being counted"
echo ok
