#!/usr/bin/env bash
# cuDNN, NCCL and cuBLAS: NVIDIA's real libraries failing in realistic ways (no GPU), a fake
# two-rank NCCL job with different NCCL versions, failing collectives with NCCL's own words,
# async errors, the hang watchdog, and exact counts in ALL mode.
. "$(dirname "$0")/lib.sh"
need_python
for v in 22809 21903; do
    mkdir -p "$TMP/nccl$v"
    $CC -shared -fPIC -O1 -o "$TMP/nccl$v/libnccl.so.2" -Wl,-soname,libnccl.so.2 -DVERSION=$v \
        "$ROOT/tests/programs/libs/fake_nccl.c" || fail "fake NCCL"
done
compile nccl_rank tests/programs/nccl_rank.c -L"$TMP/nccl22809" -l:libnccl.so.2 -L"$FAKES" -lcuda
run() { local name=$1; shift; mkdir -p "$TMP/$name"
    env "$@" CUDASHIM_TRACE_DIR="$TMP/$name" LD_PRELOAD="$PRELOAD" ./nccl_rank 3 >"$TMP/$name.out" 2>"$TMP/$name.err" || true
    trace=$(ls "$TMP/$name"/cudashim-*.jsonl); }

# Two ranks, one of them on an older NCCL: each trace carries its rank's version in the header.
( run r0 RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" ) & ( run r1 RANK=1 LD_LIBRARY_PATH="$FAKES:$TMP/nccl21903" ); wait
t0=$(ls "$TMP"/r0/*.jsonl); t1=$(ls "$TMP"/r1/*.jsonl)
assert_eq "$(q field "$t0" header nccl_version)" 22809 "rank 0 header"
assert_eq "$(q field "$t1" header nccl_version)" 21903 "rank 1 header"
assert_eq "$(q field "$t1" header rank)" 1 "rank in header"
python3 - "$t0" "$t1" <<'PY' || fail "communicator creation lacks its context"
import json, sys
for f, rank in zip(sys.argv[1:], (0, 1)):
    c = [json.loads(l) for l in open(f) if '"ncclCommInitRank"' in l][0]
    assert c["nranks"] == 2 and c["rank"] == rank and c["device"] == rank and len(c["unique_id_hash"]) == 16, c
    assert c["nccl_version"] in (22809, 21903) and c["library_version"].startswith("2."), c
a, b = ([json.loads(l) for l in open(f) if '"ncclCommInitRank"' in l][0]["unique_id_hash"] for f in sys.argv[1:])
assert a == b, "ranks of one communicator share the unique-id hash"
PY
set +e; "$BUILD/cudashim" report "$TMP/r0" "$TMP/r1" >"$TMP/ranks.txt"; set -e
grep -q "rank 1 (1): nccl version 2.19.3 (elsewhere: 2.28.9)" "$TMP/ranks.txt" || { cat "$TMP/ranks.txt"; fail "report does not flag the NCCL mismatch"; }

# A failing collective: status name, NCCL's error string and last error, and the call's arguments.
run fail RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" FAKE_NCCL_FAIL_ALLREDUCE=2
assert_eq "$(q count "$trace" api=ncclAllReduce result_name=ncclSystemError error_string="fake nccl error 2" \
    last_error="fake last error: peer 1 unreachable" count=1024 datatype=float32 op=sum stream=0x10)" 3 "failing collectives"
# ncclUnhandledCudaError at init: the CUDA call that failed inside NCCL is named, with the way out.
run nvls RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" FAKE_NCCL_NVLS=1 FAKE_CUDA_FAIL=cuMulticastCreate=1
python3 - "$trace" <<'PY' || fail "ncclUnhandledCudaError: the failing CUDA call inside NCCL is not named"
import json, sys
f = [json.loads(l) for l in open(sys.argv[1]) if '"type":"finding"' in l]
n = [x for x in f if x["id"] == "nccl-cuda-failure"]
assert n, [x["id"] for x in f]
s = n[0]["summary"]
assert "ncclCommInitRank" in s and "cuMulticastCreate -> CUDA_ERROR_INVALID_VALUE (1)" in s and "NCCL_NVLS_ENABLE=0" in s, s
PY
# An NCCL built for CUDA 12.8 on a 12.2 driver asks for functions the driver lacks, then fails at
# init: one finding, the lookups its cause and their driver the fix; no separate missing-symbol lines.
run probe RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" FAKE_NCCL_PROBE=12080 FAKE_CUDA_DRIVER_VERSION=12020 \
    FAKE_CUDA_MISSING=cuMulticastCreate,cuMulticastBindMem,cuMemGetHandleForAddressRange
has_finding "$trace" nccl-cuda-failure "found ncclUnhandledCudaError at ncclCommInitRank" \
    "before it, NCCL asked the driver for 3 functions this driver (CUDA 12.2) does not have" \
    "cuMulticastCreate cuMulticastBindMem cuMemGetHandleForAddressRange" "they are CUDA 12.8's"
grep '"id":"nccl-cuda-failure"' "$trace" | grep -qF "Upgrade the NVIDIA driver to one for CUDA 12.8 (Linux >= 570.26" ||
    fail "nccl-cuda-failure: the fix does not name the driver the lookups need"
! grep -q '"id":"missing-symbol"' "$trace" || fail "the lookups NCCL's failure explains are still missing-symbol lines"
# The same lookups with no failure after them: missing-symbol info lines, said at exit.
run probe-ok RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" FAKE_NCCL_PROBE=12080 FAKE_CUDA_DRIVER_VERSION=12020 \
    FAKE_CUDA_MISSING=cuMulticastCreate,cuMulticastBindMem
[ "$(grep -c '"id":"missing-symbol","key":"cuMulticast[A-Za-z]*","severity":"info"' "$trace")" = 2 ] || fail "lookups with no failure after them: not 2 missing-symbol info lines"
! grep -q '"id":"nccl-cuda-failure"' "$trace" || fail "nccl-cuda-failure without a failure"
# An NCCL upgrade in a container with a small /dev/shm: NCCL's words, and /dev/shm's size.
run shm RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" FAKE_NCCL_SHM_FULL=1
has_finding "$trace" nccl-shared-memory "found ncclSystemError at ncclCommInitRank" \
    "NCCL's own message: \"Error while creating shared memory segment /dev/shm/nccl-KWfVyt (size 5967872)\"" "/dev/shm holds"
grep '"id":"nccl-shared-memory"' "$trace" | grep -q '"shm_bytes":[0-9]' || fail "nccl-shared-memory lacks /dev/shm's size"
# Two ranks on one GPU (no GPU selected per rank): NCCL's words, and how to give each rank its own.
run samegpu RANK=1 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" FAKE_NCCL_SAME_GPU=1
has_finding "$trace" nccl-duplicate-gpu "found ncclInvalidUsage at ncclCommInitRank" \
    "NCCL says \"Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 60\""
! grep -q '"id":"nccl-shared-memory"' "$trace" || fail "nccl-shared-memory raised for two ranks on one GPU"
# A failing collective whose message is not about shared memory raises nothing of the kind.
! grep -q '"id":"nccl-shared-memory"' "$TMP/fail"/cudashim-*.jsonl || fail "nccl-shared-memory raised for a peer error"
# A stuck job read across its ranks' hang reports (the watchdog on, a rank blocking in a collective):
# the rank behind is named; a rank without a report is named; ranks in the same operation blame the transport.
hang_pair() {  # NAME HANG_AT_RANK0 HANG_AT_RANK1 (0: that rank does not block); started in the background
    local name=$1 k at
    for k in 0 1; do
        at=$2; [ $k = 1 ] && at=$3
        mkdir -p "$TMP/$name/r$k"
        ( env RANK=$k FAKE_NCCL_HANG_AT=$at FAKE_NCCL_HANG_S=2 CUDASHIM_HANG_TIMEOUT=0.5 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" \
            CUDASHIM_TRACE_DIR="$TMP/$name/r$k" LD_PRELOAD="$PRELOAD" ./nccl_rank 4 >/dev/null 2>&1 || true ) &
    done
}
report_pair() {
    set +e; "$BUILD/cudashim" report "$TMP/$1/r0" "$TMP/$1/r1" >"$TMP/$1.txt"; set -e
    "$BUILD/cudashim" report --json "$TMP/$1/r0" "$TMP/$1/r1" >"$TMP/$1.json" || true
}
hang_pair behind 3 2; hang_pair missing 3 0; hang_pair same 3 3; wait
for p in behind missing same; do report_pair $p; done
stuck_says() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["stuck_collectives"]; print("\n".join(x["text"] for x in s))' "$1"; }
grep -q "STUCK NCCL COMMUNICATORS" "$TMP/behind.txt" || fail "report: no stuck communicator section"
stuck_says "$TMP/behind.json" | grep -q "(2 ranks): rank 1 made fewer operations (1) than the others (2, the last ncclAllReduce of 1024 float32): it is the one the others wait for. Rank 1 was inside ncclAllReduce" ||
    fail "stuck: the rank behind is not named: $(stuck_says "$TMP/behind.json")"
stuck_says "$TMP/missing.json" | grep -q "the rank that reported made 2 operations (the last ncclAllReduce of 1024 float32); rank 1 sent no hang report" ||
    fail "stuck: the rank without a report is not named: $(stuck_says "$TMP/missing.json")"
stuck_says "$TMP/same.json" | grep -q "every rank made 2 operations and waits in the same one (ncclAllReduce of 1024 float32): none is behind, so the transport is the suspect" ||
    fail "stuck: ranks in the same operation: $(stuck_says "$TMP/same.json")"
"$BUILD/cudashim" bugreport "$TMP/behind/r0" "$TMP/behind/r1" | grep -q "^- communicator [0-9a-f]* (2 ranks): rank 1 made fewer operations" ||
    fail "bugreport: no stuck communicator"
# The same, with rank 1's last operation another collective: out of step (its hang lines rewritten).
mkdir -p "$TMP/step/r0" "$TMP/step/r1" && cp "$TMP"/same/r0/*.jsonl "$TMP/step/r0/"
python3 - "$TMP"/same/r1/*.jsonl "$TMP/step/r1/rank1.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        e = json.loads(line)
        for c in e.get("nccl", []) if e.get("type") == "hang" else []:
            c["last_ops"][-1]["api"] = "ncclBroadcast"
        out.write(json.dumps(e) + "\n")
PY
report_pair step
stuck_says "$TMP/step.json" | grep -q "every rank made 2 operations, but not the same last one: rank 0 ncclAllReduce of 1024 float32, rank 1 ncclBroadcast of 1024 float32: the program issues its collectives in a different order" ||
    fail "stuck: ranks out of step: $(stuck_says "$TMP/step.json")"
# A library call slower than usual but shorter than the timeout, after a hot-path driver call and a
# pause: no hang (the watchdog times each call from its own entry, not from an earlier one's).
mkdir -p "$TMP/slow"
env RANK=0 PAUSE_S=1 FAKE_NCCL_COUNT_S=1 CUDASHIM_HANG_TIMEOUT=1.5 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" \
    CUDASHIM_TRACE_DIR="$TMP/slow" LD_PRELOAD="$PRELOAD" ./nccl_rank 2 >/dev/null 2>&1 || fail "slow collective: the program failed"
! grep -q '"type":"hang"' "$TMP/slow"/cudashim-*.jsonl || fail "a 1 s ncclCommCount under a 1.5 s hang timeout was reported as hung: $(grep -o '"type":"hang"[^[]*' "$TMP/slow"/cudashim-*.jsonl)"
# An asynchronous communicator error.
run async RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" FAKE_NCCL_ASYNC_ERROR=6
assert_eq "$(q count "$trace" api=ncclCommGetAsyncError async_error=6 async_error_name=ncclRemoteError)" 1 "async error"
# ALL mode: the counts equal the calls made.
run all RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" CUDASHIM_TRACE_ALL=1
"$BUILD/cudashim" export --jsonl "$trace" >"$TMP/all.jsonl" || fail "export --jsonl of an ALL-mode trace"
python3 - "$TMP/all.jsonl" <<'PY' || fail "ALL-mode counts"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
s = ev[-1]["calls"]
want = {"cuInit": 1, "cuCtxGetCurrent": 1, "ncclGetUniqueId": 1, "ncclCommInitRank": 1, "ncclAllReduce": 3, "cuStreamSynchronize": 1,
        "ncclCommGetAsyncError": 1, "ncclCommDestroy": 1}
assert s == want, s
written = {}
for e in ev:
    if e["type"] == "call": written[e["api"]] = written.get(e["api"], 0) + 1
assert written == want, written
assert all(e.get("count") == 1024 for e in ev if e.get("api") == "ncclAllReduce")
PY

# The watchdog: a synchronize that blocks, then an init that waits for its peers.
run hang RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" CUDASHIM_HANG_TIMEOUT=1 FAKE_CUDA_BLOCK=cuStreamSynchronize=3
python3 - "$trace" <<'PY' || fail "hang report"
import json, sys
h = [json.loads(l) for l in open(sys.argv[1]) if '"type":"hang"' in l]
assert 1 <= len(h) <= 3, len(h)          # at most once per timeout period
assert h[0]["inside"] == "cuStreamSynchronize" and h[0]["seconds"] >= 1, h[0]
assert h[0]["threads"][0]["inside"] == "cuStreamSynchronize"
ops = h[0]["nccl"][0]["last_ops"]
assert h[0]["nccl"][0]["rank"] == 0 and ops and ops[-1]["api"] == "ncclAllReduce", h[0]["nccl"]
PY
grep -q "has been inside cuStreamSynchronize" "$TMP/hang.err" || fail "no hang note on stderr"
run hanginit RANK=1 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809" CUDASHIM_HANG_TIMEOUT=1 FAKE_NCCL_INIT_SLEEP=2
grep -q '"type":"hang","tid":[0-9]*,"inside":"ncclCommInitRank"' "$trace" || fail "a stuck ncclCommInitRank is not reported"
run nohang RANK=0 LD_LIBRARY_PATH="$FAKES:$TMP/nccl22809"
grep -q '"type":"hang"' "$trace" && fail "a hang report without CUDASHIM_HANG_TIMEOUT"

# A framework that links NCCL statically and exports its names (no libnccl.so.2 loaded): the
# program's calls still reach that copy, traced, and behave exactly as without the shim.
mkdir -p "$TMP/static"
$CC -shared -fPIC -O1 -o "$TMP/static/libframework_cuda.so" -Wl,-soname,libframework_cuda.so -DVERSION=21805 \
    "$ROOT/tests/programs/libs/fake_nccl.c" || fail "framework library"
compile nccl_static tests/programs/nccl_rank.c -L"$TMP/static" -lframework_cuda -Wl,-rpath,"$TMP/static" -L"$FAKES" -lcuda
LD_LIBRARY_PATH="$FAKES" FAKE_NCCL_FAIL_ALLREDUCE=3 same_behaviour ./nccl_static 2 | grep -q "ncclAllReduce=3" ||
    fail "the statically linked NCCL was not called"
mkdir -p "$TMP/st"
LD_LIBRARY_PATH="$FAKES" FAKE_NCCL_FAIL_ALLREDUCE=3 CUDASHIM_TRACE_DIR="$TMP/st" with_shim ./nccl_static 2 >/dev/null 2>&1 || true
assert_eq "$(q count "$(ls "$TMP"/st/*.jsonl)" api=ncclAllReduce result_name=ncclInternalError)" 2 "calls to a static NCCL are traced"

# Two frameworks, two cuDNN majors in one process: each keeps calling its own copy.
for m in 8 9; do
    v=$([ $m = 8 ] && echo 8907 || echo 91900)
    mkdir -p "$TMP/cudnn$m"
    $CC -shared -fPIC -o "$TMP/cudnn$m/libcudnn.so.$m" -Wl,-soname,libcudnn.so.$m -DFAKE_CUDNN -DVERSION=$v -DCUDART=12080 \
        -Wl,--version-script=<(echo "libcudnn.so.$m { global: *; };") "$ROOT/tests/programs/libs/fake_stack.c" || fail "cuDNN $m"
    ln -sf "libcudnn.so.$m" "$TMP/cudnn$m/libcudnn.so"
    $CC -shared -fPIC -o "$TMP/cudnn$m/libframework$m.so" -DFRAMEWORK_FN=framework${m}_version \
        "$ROOT/tests/programs/libs/framework_cudnn.c" -L"$TMP/cudnn$m" -lcudnn -Wl,-rpath,"$TMP/cudnn$m" || fail "framework $m"
done
compile two_cudnn tests/programs/two_cudnn.c -L"$TMP/cudnn8" -lframework8 -L"$TMP/cudnn9" -lframework9 \
    -Wl,-rpath,"$TMP/cudnn8:$TMP/cudnn9"
assert_eq "$(same_behaviour ./two_cudnn)" "framework8=8907 framework9=91900" "each framework calls its own cuDNN"
mkdir -p "$TMP/two"
CUDASHIM_TRACE_DIR="$TMP/two" CUDASHIM_TRACE_ALL=1 with_shim ./two_cudnn >/dev/null 2>&1
assert_eq "$(q count "$(ls "$TMP"/two/*.jsonl)" api=cudnnGetVersion via=linked)" 2 "both calls traced"

# NVIDIA's real libraries: with no GPU their calls fail, with their own names and words.
if [ -e "$CUDA/lib64/libcudnn.so.9" ] && [ -e "$CUDA/lib64/libcublas.so.13" ] && [ -e "$CUDA/lib64/libnccl.so.2" ]; then
    mkdir -p "$TMP/real"
    cat >"$TMP/real.py" <<PY
import ctypes as c
L = "$CUDA/lib64/"
c.CDLL(L + "libcudart.so.13", mode=c.RTLD_GLOBAL)
h = c.c_void_p()
print(c.CDLL(L + "libcudnn.so.9").cudnnCreate(c.byref(h)), c.CDLL(L + "libcublas.so.13").cublasCreate_v2(c.byref(h)))
class Id(c.Structure): _fields_ = [("internal", c.c_char * 128)]
nccl = c.CDLL(L + "libnccl.so.2")
uid = Id(); nccl.ncclGetUniqueId(c.byref(uid))
print(nccl.ncclCommInitRank(c.byref(h), 1, uid, 0))
PY
    LD_LIBRARY_PATH="$FAKES" CUDASHIM_TRACE_DIR="$TMP/real" timeout 120 env LD_PRELOAD="$PRELOAD" python3 "$TMP/real.py" >/dev/null 2>&1 || true
    trace=$(ls "$TMP"/real/*.jsonl)
    assert_eq "$(q count "$trace" api=cudnnCreate via=dlsym result_name=CUDNN_STATUS_NOT_INITIALIZED \
        error_string=CUDNN_STATUS_NOT_INITIALIZED)" 1 "real cudnnCreate"
    grep '"api":"cudnnCreate"' "$trace" | grep -q '"library_version":"9\.' || fail "cudnnCreate lacks which cuDNN"
    assert_eq "$(q count "$trace" api=cublasCreate_v2 result_name=CUBLAS_STATUS_NOT_INITIALIZED \
        error_string="the library was not initialized")" 1 "real cublasCreate_v2"
    # No driver call failed inside it (the fake driver answers them all): cuBLAS's runtime refused it.
    summary_of=$(python3 -c 'import json,sys; print([e["summary"] for e in map(json.loads, open(sys.argv[1])) if e.get("id") == "cublas-not-initialized"])' "$trace")
    grep -q "at cublasCreate_v2: no driver call failed inside it" <<<"$summary_of" || fail "cublas-not-initialized: $summary_of"
    assert_eq "$(q count "$trace" api=ncclCommInitRank result_name=ncclUnhandledCudaError nranks=1 rank=0)" 1 "real ncclCommInitRank"
    grep '"api":"ncclCommInitRank"' "$trace" | grep -q '"last_error":' || fail "no ncclGetLastError text"
    # The CUDA call failed inside NCCL's own static runtime, unseen: NCCL's words name the error.
    nccl_said=$(python3 -c 'import json,sys; print("\n".join(e["summary"] for e in map(json.loads, open(sys.argv[1])) if e.get("id") == "nccl-cuda-failure"))' "$trace")
    grep -qF "NCCL's own message: \"Cuda failure" <<<"$nccl_said" || fail "nccl-cuda-failure does not quote NCCL: $nccl_said"
    # A driver call that fails inside cuDNN (no GPU: cuInit's 100) explains cuDNN's generic status.
    mkdir -p "$TMP/dnn"
    printf 'import ctypes as c\nh = c.c_void_p()\nprint(c.CDLL("%s").cudnnCreate(c.byref(h)))\n' "$CUDA/lib64/libcudnn.so.9" >"$TMP/dnn.py"
    FAKE_CUDA_FAIL=cuInit=100 LD_LIBRARY_PATH="$FAKES" CUDASHIM_TRACE_DIR="$TMP/dnn" timeout 60 env LD_PRELOAD="$PRELOAD" \
        python3 "$TMP/dnn.py" >/dev/null 2>&1 || true
    has_finding "$(ls "$TMP"/dnn/*.jsonl)" cudnn-cuda-failure "found CUDNN_STATUS_NOT_INITIALIZED at cudnnCreate" \
        "cuInit -> CUDA_ERROR_NO_DEVICE (100)" "the driver sees no GPU"
    # Linked (versioned references: cudnnCreate@libcudnn.so.9, cublasCreate_v2@libcublas.so.13).
    compile cudnn_linked tests/programs/cudnn_linked.c -L"$CUDA/lib64" -lcudnn -lcublas -Wl,-rpath,"$CUDA/lib64"
    mkdir -p "$TMP/linked"
    LD_LIBRARY_PATH="$FAKES" CUDASHIM_TRACE_DIR="$TMP/linked" with_shim ./cudnn_linked >/dev/null 2>&1 || true
    trace=$(ls "$TMP"/linked/*.jsonl)
    assert_eq "$(q count "$trace" api=cudnnCreate via=linked)" 1 "linked cudnnCreate is caught"
    assert_eq "$(q count "$trace" api=cublasCreate_v2 via=linked)" 1 "linked cublasCreate_v2 is caught"
    LD_LIBRARY_PATH="$FAKES" same_behaviour ./cudnn_linked >/dev/null
else
    echo "skipped the real-library checks: cuDNN, cuBLAS or NCCL missing under $CUDA/lib64"
fi
echo ok
