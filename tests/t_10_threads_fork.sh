#!/usr/bin/env bash
# 8 threads call concurrently: ALL-mode counts stay exact. A forked child writes its own trace.
. "$(dirname "$0")/lib.sh"
need_python
compile threads_fork tests/programs/threads_fork.c -pthread -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
same_behaviour ./threads_fork 1000 >/dev/null
rm -f "$TMP"/cudashim-*
FAKE_CUDA_COUNTS="$TMP/counts" CUDASHIM_TRACE_ALL=1 with_shim ./threads_fork 20000 >/dev/null 2>err
child=$(sed -n 's/.*child pid \([0-9]*\).*/\1/p' err)
parent_trace=$(ls "$TMP"/cudashim-*.jsonl | grep -v -- "-$child.jsonl")
child_trace=$(ls "$TMP"/cudashim-*-"$child".jsonl) || fail "the forked child wrote no trace"
# The parent never asked the driver's version: the shim asks once at exit for the inventory,
# counted apart as its own call (q summary adds own_calls to the program's calls).
assert_eq "$(q summary "$parent_trace")" "cuDeviceGet 160000
cuDriverGetVersion 1" "parent counts"
assert_eq "$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1])][-1]['calls'])" "$parent_trace")" \
    "{'cuDeviceGet': 160000}" "parent: the program's own calls only"
assert_eq "$(q summary "$child_trace")" "cuDriverGetVersion 5" "child counts: only its own calls"
assert_eq "$(q field "$child_trace" header forked_from)" "$(q field "$parent_trace" header pid)" "child header names its parent"
dropped=$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1])][-1]['dropped'])" "$parent_trace")
written=$(q count "$parent_trace" api=cuDeviceGet)
assert_eq "$((written + dropped))" 160000 "every call written or counted as dropped"
diff <(cat "$TMP"/counts.* | sort) <(q summary "$parent_trace"; q summary "$child_trace" | sort) >/dev/null || true
# Forked workers while other threads are inside the shim (make stress runs 20 of each).
bash "$ROOT/tests/stress/fork_safety.sh" 3 100
echo ok
