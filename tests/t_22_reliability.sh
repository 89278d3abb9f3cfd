#!/usr/bin/env bash
# Nothing the program does to its process makes the shim hurt it, and nothing the shim writes
# lies: descriptors taken over, a file-size limit, unreadable numbers, long headers, bad
# settings, false hangs, forked children, a full disk, a killed process.
. "$(dirname "$0")/lib.sh"
need_python
compile reliability tests/programs/reliability.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
CLI="$BUILD/cudashim"
valid() { "$CLI" report "$1" >/dev/null 2>"$TMP/report.err" || { cat "$TMP/report.err"; fail "$2: cudashim report cannot read $1"; }; }

# 1. The program closes every descriptor and puts its own file where the trace was: the shim
#    reopens its trace by name and never writes into the program's file.
same_behaviour ./reliability fail:2 closeall:"$TMP/mine.1" fail:5 check:"$TMP/mine.1" >/dev/null
run_traced closeall ./reliability -- fail:2 closeall:"$TMP/mine.2" fail:5 check:"$TMP/mine.2"
grep -q "mine.2: 0 bytes" "$TMP/closeall.out" || fail "the shim wrote into the program's file: $(cat "$TMP/closeall.out")"
[ "$(q count "$trace" api=cuMemAlloc_v2)" = 7 ] || fail "the trace lost the calls made after close_range"

# 2. A file-size limit: the shim's writes never raise SIGXFSZ (the program exits 3, not 153), the
#    program's output is intact, and the loss is said.
set +e
out=$( (ulimit -f 4; CUDASHIM_TRACE_DIR="$TMP" env LD_PRELOAD="$PRELOAD" ./reliability fail:500) 2>"$TMP/fsize.err"); rc=$?
set -e
assert_eq "$rc" 3 "exit status under ulimit -f"
grep -q "fail x500: 2" <<<"$out" || fail "output under ulimit -f: $out"
grep -q "file-size limit" "$TMP/fsize.err" || fail "the loss under ulimit -f was not said: $(cat "$TMP/fsize.err")"
rm -f "$TMP"/cudashim-*.jsonl

# 3. Every number is readable: sizes of 2^63 and more; a 40 KB LD_LIBRARY_PATH; a 100 KB argv.
run_traced numbers ./reliability -- fail:1
valid "$trace" "a 2^63+1 allocation"
grep -q '"api":"cuMemAlloc_v2".*"requested":"9223372036854775809"' "$trace" || fail "the requested size is not kept exactly"
longpath=$(python3 -c 'print(":".join("/nonexistent/dir%04d" % i for i in range(2000)))')
run_traced header ./reliability LD_LIBRARY_PATH="$FAKES:$longpath" -- fail:1
valid "$trace" "a 40 KB LD_LIBRARY_PATH"
args=$(python3 -c 'print(" ".join("arg%06d" % i for i in range(12000)))')
# shellcheck disable=SC2086
run_traced argv ./reliability -- fail:1 $args
valid "$trace" "a 100 KB argv"
assert_eq "$(q field "$trace" header argv_truncated)" True "a long argv says it was cut"

# 4. Settings: garbage is refused with a warning, never half-taken.
for bad in banana -1 inf 1e-12 nan 0; do
    run_traced "hang$bad" ./reliability CUDASHIM_HANG_TIMEOUT="$bad" -- key:10
    grep -q "ignoring CUDASHIM_HANG_TIMEOUT" "$TMP/hang$bad.err" || fail "CUDASHIM_HANG_TIMEOUT=$bad was accepted"
done
run_traced clock ./reliability CUDASHIM_CLOCK="tsc or" -- key:1
grep -q "ignoring CUDASHIM_CLOCK" "$TMP/clock.err" || fail "CUDASHIM_CLOCK='tsc or' was accepted"

# 5. No false hangs: 2 s of microsecond calls under a 0.3 s watchdog.
run_traced nohang ./reliability CUDASHIM_HANG_TIMEOUT=0.3 -- key:200000 sleep:300 key:200000 sleep:300 key:200000
assert_eq "$(grep -c '"type":"hang"' "$trace" || true)" 0 "hang records for calls that all returned"

# A launch that does not return while another thread waits (lazy module loading behind a running
# kernel): the hang report names the launch, and report and bugreport say what it means; with
# CUDA_MODULE_LOADING=EAGER they say it is not lazy loading.
compile lazy_launch tests/programs/lazy_launch.c -pthread -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
run_traced lazy ./lazy_launch FAKE_CUDA_BLOCK=cuLaunchKernel=2,cuCtxSynchronize=2 CUDASHIM_HANG_TIMEOUT=0.5 --
grep -q '"inside":"cuLaunchKernel"' "$trace" || fail "the hang report does not name the launch in progress"
"$CLI" report "$TMP/lazy" >"$TMP/lazy.txt" || true
tr '\n' ' ' <"$TMP/lazy.txt" | tr -s ' ' | grep -q "is still inside cuLaunchKernel while the others wait: a launch returns at once unless it first loads its kernel's module" ||
    fail "report: no lazy-loading reading of the stuck launch"
"$CLI" bugreport "$TMP/lazy" | grep -q "^  - thread [0-9]* is still inside cuLaunchKernel.*CUDA_MODULE_LOADING=EAGER" ||
    fail "bugreport: no hang section"
run_traced eager ./lazy_launch FAKE_CUDA_BLOCK=cuLaunchKernel=2,cuCtxSynchronize=2 CUDASHIM_HANG_TIMEOUT=0.5 CUDA_MODULE_LOADING=EAGER --
"$CLI" report "$TMP/eager" | tr '\n' ' ' | tr -s ' ' | grep -q "modules load at start here (CUDA_MODULE_LOADING=EAGER)" ||
    fail "report: lazy loading blamed under CUDA_MODULE_LOADING=EAGER"

# 6. Default mode is bounded: a million key calls write a bounded trace, and count them all.
run_traced bounded ./reliability -- key:1000000
[ "$(stat -c %s "$trace")" -lt 200000 ] || fail "a million key calls made a $(stat -c %s "$trace")-byte trace"
assert_eq "$(q summary "$trace" | grep cuDeviceGet)" "cuDeviceGet 1000000" "key calls counted"

# 7. A forked child reports its own findings only, and names its own trace.
run_traced forkfind ./reliability FAKE_CUDA_DRIVER_VERSION=12020 -- fail:1 fork
assert_eq "$(grep -c '\[out-of-memory\]' "$TMP/forkfind.err")" 1 "the parent's finding said once (not again by its child)"
grep -q "trace: )" "$TMP/forkfind.err" && fail "a child printed an empty trace path"

# 8. Loss is said: a trace that cannot be created, a path too long to use as given.
set +e
CUDASHIM_TRACE_DIR=/nonexistent/dir env LD_PRELOAD="$PRELOAD" ./reliability fail:1 >/dev/null 2>"$TMP/nodir.err"; rc=$?
set -e
assert_eq "$rc" 3 "exit status without a trace directory"
grep -q "cannot create trace file" "$TMP/nodir.err" || fail "no word of the trace that could not be created"
grep -q "each failing call is in the trace" "$TMP/nodir.err" && fail "claims the calls are in a trace that does not exist"
long=$(python3 -c 'print("x" * 4200)')
set +e
CUDASHIM_TRACE_FILE="$TMP/$long.jsonl" env LD_PRELOAD="$PRELOAD" ./reliability fail:1 >/dev/null 2>"$TMP/long.err"
set -e
grep -q "cannot create trace file" "$TMP/long.err" || fail "a 4200-character trace path was silently cut"
[ -z "$(ls "$TMP" | grep -c xxxxxxxxxx | grep -v '^0$')" ] || fail "a cut trace name was written"

# 9. A full disk (where a small tmpfs can be mounted): said, counted, and the program unharmed.
if mkdir -p "$TMP/full" && mount -t tmpfs -o size=16k tmpfs "$TMP/full" 2>/dev/null; then
    set +e
    CUDASHIM_TRACE_DIR="$TMP/full" env LD_PRELOAD="$PRELOAD" ./reliability fail:2000 >"$TMP/full.out" 2>"$TMP/full.err"; rc=$?
    set -e
    t=$(ls "$TMP"/full/cudashim-*.jsonl | head -n 1)
    cp "$t" "$TMP/full.jsonl"; umount "$TMP/full"
    assert_eq "$rc" 3 "exit status on a full disk"
    grep -q "No space left" "$TMP/full.err" || fail "a full disk was not said: $(cat "$TMP/full.err")"
else
    echo "skipped the full-disk case: cannot mount a tmpfs here"
fi

# 10. Killed: the inventory is on disk already (the scanner writes it within moments).
CUDASHIM_TRACE_DIR="$TMP" env LD_PRELOAD="$PRELOAD" ./reliability key:1 sleep:5000 >/dev/null 2>&1 &
pid=$!; sleep 1; kill -9 $pid; wait $pid 2>/dev/null || true
t=$(ls "$TMP"/cudashim-*-$pid.jsonl)
grep -q '"type":"library","kind":"driver"' "$t" || fail "after SIGKILL the trace has no library inventory"
# 11. A bug report carries no secret given on the command line, in any of the usual shapes.
secrets=(hf_AAAAAAAAAAAAAAAAAAAAAAAAAAAA ghp_BBBBBBBBBBBBBBBBBBBBBBBBBBBB AKIAIOSFODNN7EXAMPLE
         "Authorization: Bearer hunter1token" -p hunter2pass -phunter3pass PASS=hunter4 --db-pass=hunter5
         --passphrase=hunter6 '{"password": "hunter7"}' "postgres://admin:hun/ter@8x@db.example.com/app")
run_traced secrets ./reliability -- fail:1 "${secrets[@]}"
"$CLI" bugreport "$trace" >"$TMP/report.md" 2>/dev/null || true
grep -q "reliability" "$TMP/report.md" || fail "the bug report lacks the command line"
for leak in AAAAAAAAAAAAAAAAAAAA BBBBBBBBBBBBBBBBBBBB IOSFODNN7EXAMPLE hunter1 hunter2 hunter3 hunter4 hunter5 \
            hunter6 hunter7 "hun/ter" "ter@8x"; do
    grep -q -- "$leak" "$TMP/report.md" && { grep -- "$leak" "$TMP/report.md"; fail "the bug report leaks $leak"; }
done
grep -q "db.example.com" "$TMP/report.md" || fail "redaction ate the URL's host"

# 12. CUDASHIM_TRACE_MAX: a trace of 60,000 calls in ALL mode stays within twice 1 MiB on disk per
#     file (the lines, and the binary calls beside them); the newest part starts with the header
#     and says again what was loaded and found; the command reads both parts as one trace.
compile many_calls tests/programs/many_calls.c -L"$FAKES" -lcuda
mkdir -p "$TMP/max"
LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 CUDASHIM_TRACE_ALL=1 CUDASHIM_TRACE_MAX=1M \
    CUDASHIM_TRACE_FILE=capped.jsonl CUDASHIM_TRACE_DIR="$TMP/max" with_shim ./many_calls 60000 >"$TMP/max.out" 2>/dev/null
assert_eq "$(cat "$TMP/max.out")" "done 60000" "the program under a size limit"
for f in "$TMP/max/capped.jsonl" "$TMP/max/capped.jsonl.prev"; do
    [ -e "$f" ] || fail "no $f: $(ls "$TMP/max")"
    size=$(stat -c %s "$f")
    [ "$size" -le $((1024 * 1024 + 4096)) ] || fail "$f is $size bytes, above the limit"
    head -n 1 "$f" | grep -q '"type":"header"' || fail "$f does not start with the header"
done
[ "$(ls "$TMP/max" | grep -c jsonl)" = 2 ] || fail "more than two parts on disk: $(ls "$TMP/max")"
# The binary calls beside it (ALL mode's successful calls): the same limit, two parts at most, and
# the newest calls read from them.
mkdir -p "$TMP/maxb"
LD_LIBRARY_PATH="$FAKES" CUDASHIM_TRACE_ALL=1 CUDASHIM_TRACE_MAX=1M CUDASHIM_TRACE_FILE=capped.jsonl \
    CUDASHIM_TRACE_DIR="$TMP/maxb" with_shim ./many_calls 60000 current >/dev/null 2>&1
for f in "$TMP/maxb/capped.calls" "$TMP/maxb/capped.calls.prev"; do
    [ -e "$f" ] || fail "no $f: $(ls "$TMP/maxb")"
    size=$(stat -c %s "$f")
    [ "$size" -le $((1024 * 1024)) ] || fail "$f is $size bytes, above the limit"
    [ "$(head -c 7 "$f")" = CSCALLS ] || fail "$f does not start with its header"
done
[ "$(ls "$TMP/maxb" | grep -c calls)" = 2 ] || fail "more than two parts of the calls on disk: $(ls "$TMP/maxb")"
"$CLI" export --jsonl "$TMP/maxb/capped.jsonl" | grep '"api":"cuCtxGetCurrent"' | tail -n 1 | grep -q '"seq":60001' ||
    fail "the newest calls are not read from the binary file"
grep -q '"type":"continued"' "$TMP/max/capped.jsonl" || fail "the new part does not say it continues"
grep -q '"type":"library","kind":"driver"' "$TMP/max/capped.jsonl" || fail "the new part lacks the library lines"
grep -q '"id":"driver-too-old"' "$TMP/max/capped.jsonl" || fail "the new part lacks the early finding"
"$CLI" report "$TMP/max/capped.jsonl" >"$TMP/max.txt" || true
grep -q "CUDASHIM_TRACE_MAX and went on in part" "$TMP/max.txt" || { cat "$TMP/max.txt"; fail "report does not say the trace was continued"; }
assert_eq "$(grep -c "^  error   driver-too-old" "$TMP/max.txt")" 1 "the finding said once, not once per part"
echo ok
