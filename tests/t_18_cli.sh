#!/usr/bin/env bash
# The cudashim command: golden outputs on fixture traces (report, several ranks, --json, diff,
# bugreport), then live runs: run's exit status, Chrome export, planted secrets, bad traces,
# --help everywhere, 100 columns, no colour when not on a terminal.
. "$(dirname "$0")/lib.sh"
need_python
CLI="$BUILD/cudashim"
[ -x "$CLI" ] || fail "no $CLI"
# Golden: tests/golden/update.sh rewrites these after an intended change.
mkdir -p "$TMP/golden"
"$ROOT/tests/golden/commands.sh" "$BUILD" "$TMP/golden"
for want in "$ROOT"/tests/golden/*.out; do
    diff -u "$want" "$TMP/golden/$(basename "$want")" || fail "golden output differs: $(basename "$want")"
done
for f in "$TMP"/golden/report-*.out "$TMP"/golden/diff-*.out; do
    [[ $f == *json* ]] && continue
    awk -v f="$f" 'length > 100 { print f ": a line of " length " columns"; bad = 1 } END { exit bad }' "$f" || fail "over 100 columns"
done
grep -q $'\033' "$TMP"/golden/*.out && fail "colour codes in output that is not a terminal"
python3 - "$TMP/golden/report-json-ranks.out" <<'PY' || fail "report --json"
import json, sys
text = open(sys.argv[1]).read().rsplit("exit", 1)[0]
d = json.loads(text)
assert len(d["traces"]) == 2 and d["differences"], d.keys()
assert any(x["what"] == "nccl version" for x in d["differences"])
PY

# Live: a broken stack gives exit 1 and names the finding; a healthy one exits 0.
compile path_linked tests/programs/path_linked.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
mkdir -p "$TMP/ok" "$TMP/broken"
CUDASHIM_TRACE_DIR="$TMP/ok" with_shim ./path_linked >/dev/null 2>&1 || true
"$CLI" report "$TMP/ok" >"$TMP/ok.txt" || fail "report on a healthy trace should exit 0"
grep -q "cuMemAlloc_v2 -> CUDA_ERROR_OUT_OF_MEMORY (2) x1" "$TMP/ok.txt" || { cat "$TMP/ok.txt"; fail "failing calls grouped"; }
compile load_libs tests/programs/load_libs.c -ldl
CUDASHIM_TRACE_DIR="$TMP/broken" FAKE_CUDA_FAIL=cuInit=803 LD_LIBRARY_PATH="$FAKES" with_shim ./load_libs cuda >/dev/null 2>&1 || true
set +e; "$CLI" report "$TMP/broken" >"$TMP/broken.txt"; rc=$?; set -e
assert_eq "$rc" 1 "report exit status with an error finding"
grep -q "driver-kernel-mismatch" "$TMP/broken.txt" || fail "report does not show the finding"
# Paths under the home directory are written from ~, in a library's path and in how it was found;
# a path that merely contains the home directory's name is left alone.
HOME="$ROOT" "$CLI" report "$TMP/broken" >"$TMP/home.txt" || true
grep -q "~/${FAKES#"$ROOT"/}" "$TMP/home.txt" || fail "report: the home directory is not written as ~"
! grep -q "$FAKES" "$TMP/home.txt" || fail "report: a path under the home directory is written in full: $(grep "$FAKES" "$TMP/home.txt")"
HOME="/${FAKES##*/}" "$CLI" report "$TMP/broken" >"$TMP/nothome.txt" || true
! grep -q "~" "$TMP/nothome.txt" || fail "report: a path that only contains the home directory's name got a ~"

# Chrome export: valid JSON with the fields Perfetto needs; the failing call is marked.
"$CLI" export --chrome "$(ls "$TMP"/ok/*.jsonl)" -o "$TMP/trace.json"
python3 - "$TMP/trace.json" <<'PY' || fail "Chrome export"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
calls = [e for e in ev if e["ph"] == "X"]
assert calls and all({"name", "ts", "dur", "pid", "tid", "cat"} <= e.keys() for e in calls)
assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in ev)
assert any(e.get("args", {}).get("failed") and e["name"] == "cuMemAlloc_v2" for e in calls)
assert any(e["ph"] == "i" and e["name"].startswith("FAILED cuLaunchKernel") for e in ev)
ts = [e["ts"] for e in ev if e["ph"] != "M"]
assert ts == sorted(ts) and min(ts) >= 0, "events sorted, none before the start"
assert all(len(repr(e["ts"])) <= 16 for e in ev if "ts" in e), "compact times"
PY
# Several traces: one timeline, a process each.
"$CLI" export --chrome "$ROOT/tests/fixtures/traces/rank0.jsonl" "$ROOT/tests/fixtures/traces/rank1.jsonl" -o "$TMP/ranks.json"
python3 - "$TMP/ranks.json" <<'PY' || fail "Chrome export of two ranks"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert len(procs) == 2 and len({e["pid"] for e in procs}) == 2, procs
assert all("rank" in e["args"]["name"] for e in procs), procs
ts = [e["ts"] for e in ev if e["ph"] != "M"]
assert ts == sorted(ts) and min(ts) >= 0
PY

# bugreport: none of the planted secrets survives; the home directory becomes ~.
mkdir -p "$TMP/secret"
HOME=/home/alice CUDA_HOME="https://bob:hunter2@example.com/cuda" LD_LIBRARY_PATH="$FAKES:/home/alice/lib" \
    HF_TOKEN=hf_planted1 CUDASHIM_TRACE_DIR="$TMP/secret" with_shim ./load_libs cuda --api-key planted2 \
    WANDB_API_KEY=planted3 --password=planted4 "https://carol:planted5@host/x" >/dev/null 2>&1 || true
HOME=/home/alice "$CLI" bugreport --hide-hosts "$TMP/secret" >"$TMP/report.md"
for s in planted1 planted2 planted3 planted4 planted5 hunter2 alice "$(hostname)"; do
    grep -q -- "$s" "$TMP/report.md" && { cat "$TMP/report.md"; fail "bugreport leaks '$s'"; }
done
grep -q '`~/lib`\|:~/lib' "$TMP/report.md" || fail "home directory not written as ~"

# run: traces in the output directory, one per process and rank; the exit status is the program's.
# (Under the sanitizer suite the shim needs the ASan runtime first: run keeps it ahead of itself.)
runcli() { env LD_PRELOAD="$ASAN_LIB" "$CLI" "$@"; }
set +e
runcli run -q -o "$TMP/run1" -- sh -c 'exit 7'; rc=$?
set -e
assert_eq "$rc" 7 "run passes the exit status through"
rc=$(bash -c 'LD_PRELOAD="$2" "$0" run -q -o "$1" -- sh -c "kill -SEGV \$\$"; echo $?' "$CLI" "$TMP/run2" "$ASAN_LIB" 2>/dev/null)
base=$(bash -c 'LD_PRELOAD="$0" sh -c "kill -SEGV \$\$"; echo $?' "$ASAN_LIB" 2>/dev/null)
assert_eq "$rc" "$base" "run dies of the program's signal (139 without a sanitizer)"
# The Quickstart as written: run with the default output, then report the default directory
# (its latest run-* subdirectory).
( mkdir -p "$TMP/qs" && cd "$TMP/qs" && LD_LIBRARY_PATH="$FAKES" runcli run -- "$TMP/load_libs" cuda >/dev/null 2>&1 ) || true
( cd "$TMP/qs" && "$CLI" report cudashim-traces/ >"$TMP/qs.out" 2>"$TMP/qs.err" ) || [ $? = 1 ] || { cat "$TMP/qs.err"; fail "Quickstart: report cudashim-traces/"; }
grep -q "^cudashim report: .*load_libs cuda" "$TMP/qs.out" || { cat "$TMP/qs.err"; fail "Quickstart: report found no trace"; }
grep -q "reading the latest run" "$TMP/qs.err" || fail "Quickstart: report does not say which run it read"
LD_LIBRARY_PATH="$FAKES" runcli run -o "$TMP/run3" -- sh -c "RANK=0 ./load_libs cuda & RANK=1 ./load_libs cuda; wait" \
    >/dev/null 2>"$TMP/run3.err" || fail "run of two ranks"
ls "$TMP"/run3/cudashim-*-rank0-*.jsonl "$TMP"/run3/cudashim-*-rank1-*.jsonl >/dev/null || fail "one trace per rank: $(ls "$TMP/run3")"
grep -q "ACROSS" "$TMP/run3.err" || fail "run prints the report of every process"
# Options map to the variables the shim reads.
runcli run -q -o "$TMP/run5" -a --sync-launches=addk -t 30 -- sh -c 'echo "$CUDASHIM_TRACE_ALL $CUDASHIM_SYNC_LAUNCHES $CUDASHIM_HANG_TIMEOUT"' \
    >"$TMP/run5.out" || fail "run with options"
assert_eq "$(cat "$TMP/run5.out")" "1 addk 30" "run options become CUDASHIM_* variables"
# make install: the command, the library beside it in ../lib (which run finds), the man page.
# (Not in the sanitizer suite: install depends on `all`, which would rebuild without its flags.)
if [ "${CS_SANITIZER:-0}" = 0 ]; then
    make -s -C "$ROOT" BUILD="$BUILD" install DESTDIR="$TMP/inst" PREFIX=/usr >/dev/null || fail "make install"
    for f in usr/bin/cudashim usr/lib/libcudashim.so usr/share/man/man1/cudashim.1; do
        [ -f "$TMP/inst/$f" ] || fail "make install did not install $f"
    done
    "$TMP/inst/usr/bin/cudashim" run -q -o "$TMP/run6" -- sh -c 'echo "$LD_PRELOAD"' >"$TMP/run6.out"
    grep -q "$TMP/inst/usr/lib/libcudashim.so" "$TMP/run6.out" || fail "the installed command does not find its library"
fi
# A CPU-only framework under run: the no-cuda-loaded finding, exit status still the program's;
# a plain CPU program (a launcher, a shell wrapper) is no fault and leaves no trace.
mkdir -p "$TMP/fw"
$CC -shared -fPIC -o "$TMP/fw/libtorch_cpu.so" -DFAKE_FRAMEWORK "$ROOT/tests/programs/libs/fake_stack.c" || fail "fake framework"
runcli run -o "$TMP/run4" -- ./load_libs dlopen:"$TMP/fw/libtorch_cpu.so" >/dev/null 2>"$TMP/run4.err" || fail "run a CPU-only framework"
grep -q "no-cuda-loaded" "$TMP/run4.err" || { cat "$TMP/run4.err"; fail "run of a CPU-only framework"; }
runcli run -o "$TMP/run7" -- sh -c 'true; /bin/true' 2>/dev/null || fail "run true"
[ -z "$(ls "$TMP/run7" 2>/dev/null)" ] || fail "a plain CPU program under run left a trace: $(ls "$TMP/run7")"

# Bad traces: garbage in the middle names file:line; a cut last line is tolerated; a newer format is refused.
t=$(ls "$TMP"/ok/*.jsonl)
{ head -n 2 "$t"; echo "this is not json"; tail -n 1 "$t"; } >"$TMP/garbage.jsonl"
set +e; "$CLI" report "$TMP/garbage.jsonl" >/dev/null 2>"$TMP/err"; rc=$?; set -e
assert_eq "$rc" 3 "garbage trace exit status"
grep -q "garbage.jsonl:3:" "$TMP/err" || { cat "$TMP/err"; fail "error does not name file:line"; }
{ cat "$t"; printf '{"type":"call","api":"cuIn'; } >"$TMP/cut.jsonl"
"$CLI" report "$TMP/cut.jsonl" >"$TMP/cut.txt" || fail "a cut last line must be tolerated"
grep -q "last line was cut" "$TMP/cut.txt" || fail "the cut line is not mentioned"
sed '1s/"version":[0-9]*/"version":99/' "$t" >"$TMP/future.jsonl"
set +e; "$CLI" report "$TMP/future.jsonl" >/dev/null 2>"$TMP/err"; rc=$?; set -e
assert_eq "$rc" 3 "a newer trace format is refused"
grep -q "version 99" "$TMP/err" || fail "the refusal names the version"

# --help on every subcommand.
for c in run report diff export inspect bugreport; do
    "$CLI" $c --help | grep -q "usage: cudashim $c" || fail "$c --help"
done
"$CLI" --help | grep -q bugreport || fail "cudashim --help"
set +e; "$CLI" frobnicate >/dev/null 2>&1; rc=$?; set -e
assert_eq "$rc" 2 "unknown command"
"$CLI" help report | grep -q "usage: cudashim report" || fail "cudashim help report"
"$CLI" -V | grep -q "^cudashim [0-9]" || fail "cudashim -V"

# Every option is validated: exit 2 and a message that says what was wanted.
usage_error() {  # TEXT ARGS...: exit status 2, and TEXT on stderr
    local want=$1; shift
    set +e; "$CLI" "$@" >/dev/null 2>"$TMP/err"; local rc=$?; set -e
    assert_eq "$rc" 2 "cudashim $*"
    grep -q -- "$want" "$TMP/err" || { cat "$TMP/err"; fail "cudashim $*: the message lacks '$want'"; }
}
usage_error "compute capability" inspect --device banana /bin/true
usage_error "not 'abc'" inspect --driver abc --device 8.6 /bin/true
usage_error "needs a value" inspect /bin/true --device
usage_error "is a directory" diff "$TMP/ok" "$TMP/ok"
usage_error "needs a value" run -o
usage_error "needs a value" bugreport "$t" -o
usage_error "unknown option --frob" report --frob "$t"
# Options after the operands: report TRACE --json is JSON, not a file named --json.
"$CLI" report "$t" --json | python3 -c 'import json,sys; json.load(sys.stdin)' || fail "report TRACE --json"
# run -q: nothing from cudashim or the shim on stderr, only the program's own words.
LD_LIBRARY_PATH="$FAKES" runcli run -q -o "$TMP/quiet" -- ./load_libs cuda dlopen:libcudnn_cnn_infer.so.8 >/dev/null 2>"$TMP/quiet.err" || true
[ ! -s "$TMP/quiet.err" ] || { cat "$TMP/quiet.err"; fail "run -q printed on stderr"; }
ls "$TMP"/quiet/cudashim-*.jsonl >/dev/null || fail "run -q wrote no trace"

# diff is linear in the traces: two traces of 200,000 calls each, compared in one pass.
python3 - "$t" "$TMP/big_good.jsonl" "$TMP/big_bad.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
head = [l for l in lines if l["type"] not in ("call", "summary")]
for out, bad in ((sys.argv[2], False), (sys.argv[3], True)):
    with open(out, "w") as f:
        for l in head: f.write(json.dumps(l) + "\n")
        for i in range(200000):
            r = 2 if bad and i == 199990 else 0
            f.write('{"type":"call","api":"cuMemAlloc_v2","via":"linked","tid":1,"ts_ns":%d,"dur_ns":5,"result":%d%s}\n'
                    % (1000 + i, r, ',"result_name":"CUDA_ERROR_OUT_OF_MEMORY"' if r else ""))
PY
start=$(date +%s%N)
set +e; "$CLI" diff "$TMP/big_good.jsonl" "$TMP/big_bad.jsonl" >"$TMP/big.txt"; rc=$?; set -e
ms=$(( ($(date +%s%N) - start) / 1000000 ))
assert_eq "$rc" 1 "diff of two 200,000-call traces finds the difference"
grep -q "CUDA_ERROR_OUT_OF_MEMORY" "$TMP/big.txt" || { cat "$TMP/big.txt"; fail "diff names the first call that differs"; }
echo "diff of two 200,000-call traces: $ms ms"

# make_ranks DIR N KIND: N rank traces made from a fixture. odd-drivers: ranks 812 and 1907 on a
# CUDA 12.2 driver; own-nccl: every rank with its own NCCL path.
make_ranks() {
    python3 - "$ROOT/tests/fixtures/traces/rank0.jsonl" "$@" <<'PY'
import json, os, sys
src, out, n, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
os.makedirs(out)
lines = [json.loads(l) for l in open(src)]
for r in range(n):
    with open(os.path.join(out, "cudashim-node-rank%d.jsonl" % r), "w") as f:
        for l in lines:
            l = dict(l)
            if l["type"] == "header": l["rank"] = str(r); l["pid"] = 10000 + r
            if kind == "odd-drivers" and l["type"] == "library" and l["kind"] == "driver" and r in (812, 1907):
                l["version"] = "12.2"
            if kind == "own-nccl" and l["type"] == "library" and l["kind"] == "nccl":
                l["path"] = "/opt/nccl-%d/libnccl.so.2" % r
            if kind == "launcher" and r == 0 and l["type"] == "library" and l["kind"] == "driver":
                continue  # the launcher (torchrun, mp.spawn's parent) loads CUDA libraries, never the driver
            f.write(json.dumps(l) + "\n")
PY
}
# 2048 ranks, two on another driver: the odd ones out first, one report for the alike, short.
make_ranks "$TMP/job" 2048 odd-drivers
start=$(date +%s%N)
set +e; "$CLI" report "$TMP/job" >"$TMP/job.txt"; set -e
ms=$(( ($(date +%s%N) - start) / 1000000 ))
lines=$(wc -l <"$TMP/job.txt")
echo "report over 2048 rank traces: $ms ms, $lines lines"
[ "$lines" -lt 300 ] || fail "report over 2048 ranks prints $lines lines"
grep -q "ranks 812, 1907 (2): driver version 12.2" "$TMP/job.txt" || { head -20 "$TMP/job.txt"; fail "the odd ranks are not named first"; }
grep -q "ranks 0-811, 813-1906, 1908-2047 (2046): the most common stack" "$TMP/job.txt" || fail "the majority in one line"
# bugreport of the same job fits in an issue body, with the machine's facts.
"$CLI" bugreport "$TMP/job" -o "$TMP/job.md" 2>/dev/null || fail "bugreport of 2048 ranks"
size=$(wc -c <"$TMP/job.md")
echo "bugreport of 2048 rank traces: $size characters"
[ "$size" -le 60000 ] || fail "bugreport of 2048 ranks is $size characters"
grep -q "ranks 812, 1907 (2).*: driver version 12.2" "$TMP/job.md" || fail "bugreport names the odd ranks"
grep -q "^### System" "$TMP/job.md" || fail "bugreport has no System section"
# A launcher's trace beside its ranks: not compared, and not an odd stack.
make_ranks "$TMP/spawn" 3 launcher
set +e; "$CLI" report "$TMP/spawn" >"$TMP/spawn.txt"; "$CLI" bugreport "$TMP/spawn" -o "$TMP/spawn.md" 2>/dev/null; set -e
grep -q "rank 0 (1) never loaded the CUDA driver (a launcher such as torchrun, or a helper" "$TMP/spawn.txt" ||
    { head -8 "$TMP/spawn.txt"; fail "the launcher is not set apart"; }
grep -q "every trace that used CUDA loaded the same driver" "$TMP/spawn.txt" || fail "the launcher reads as another stack"
! grep -q "different stacks" "$TMP/spawn.txt" || fail "a launcher makes a partially upgraded cluster"
grep -q "Not compared: rank 0 (1) never loaded the CUDA driver" "$TMP/spawn.md" || fail "bugreport: the launcher is not set apart"
# 600 ranks, each on its own NCCL: too much for an issue body, so it is cut and the whole goes to a file.
make_ranks "$TMP/zoo" 600 own-nccl
"$CLI" bugreport "$TMP/zoo" -o "$TMP/zoo.md" 2>/dev/null || fail "bugreport of 600 different ranks"
[ "$(wc -c <"$TMP/zoo.md")" -le 60000 ] || fail "the cut bugreport is $(wc -c <"$TMP/zoo.md") characters"
grep -q "Cut at 60000 characters" "$TMP/zoo.md" || fail "the cut is not said"
[ "$(wc -c <"$TMP/zoo.full.md")" -gt 60000 ] || fail "the whole report is not in zoo.full.md"
# cudashim check: the machine and what would work, without running a job (the fake driver
# answers cuDriverGetVersion in check's child process: CUDA 12.2)
set +e
"$BUILD/cudashim" check --want torch=2.9.x,oops >/dev/null 2>&1; rc=$?
set -e
assert_eq "$rc" 2 "check with a bad --want"
set +e
out=$(LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 "$BUILD/cudashim" check --want torch==2.9); rc=$?
set -e
grep -q "CUDA 12.2" <<<"$out" || { echo "$out"; fail "check does not name the driver's CUDA"; }
grep -q "torch 2.9 built for CUDA 12.8 .*runs on this driver\|torch 2.9 built for CUDA 12.8" <<<"$out" || { echo "$out"; fail "check --want torch==2.9: no CUDA 12.8 build"; }
grep -q "needs a driver for CUDA 13.0 (Linux >= 580.65.06)" <<<"$out" || { echo "$out"; fail "check --want torch==2.9: the CUDA 13 build's driver"; }
assert_eq "$rc" 0 "check --want torch==2.9 on a CUDA 12.2 driver (its 12.x builds run)"
set +e
LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 "$BUILD/cudashim" check --want cuda=13.0 --json >"$TMP/check.json"; rc=$?
set -e
assert_eq "$rc" 1 "check --want cuda=13.0 on a CUDA 12.2 driver"
python3 - "$TMP/check.json" <<'PY' || fail "check --json"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["driver"]["cuda"] == "12.2", c["driver"]
assert c["wanted"][0]["works"] is False and "580.65.06" in c["wanted"][0]["answers"][0], c["wanted"]
PY
# --want nccl=/cudnn=: each build (one per CUDA major) against the driver, the one the installed
# torch needs, the environment's own wheel. A made-up environment: torch for CUDA 12.4 with
# NCCL 2.21.5's wheel, or torch for CUDA 11.8.
site() { rm -rf "$TMP/site"; mkdir -p "$TMP/site/torch" "$TMP/site/nvidia_nccl_cu12-2.21.5.dist-info"; : >"$TMP/site/torch/__init__.py"
    printf "__version__ = '2.6.0+cu%s'\ncuda: Optional[str] = '%s'\n" "${1//./}" "$1" >"$TMP/site/torch/version.py"
    printf 'Metadata-Version: 2.1\nName: nvidia-nccl-cu12\nVersion: 2.21.5\n' >"$TMP/site/nvidia_nccl_cu12-2.21.5.dist-info/METADATA"; }
checkw() { set +e; out=$(PYTHONPATH="$TMP/site" LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 "$BUILD/cudashim" check --json "$@"); rc=$?
    set -e; out=$(python3 -c 'import json, sys; print("\n".join(a for w in json.load(sys.stdin)["wanted"] for a in w["answers"]))' <<<"$out"); }
has() { grep -qF -- "$2" <<<"$1" || { echo "$1"; fail "$3: no '$2'"; }; }
site 12.4; checkw --want nccl=2.28
has "$out" 'NCCL 2.28 built for CUDA 12 (pip install "nvidia-nccl-cu12==2.28.*"): runs on this driver; the build for torch 2.6.0+cu124 (CUDA 12)' "check --want nccl=2.28"
has "$out" 'NCCL 2.28 built for CUDA 13 (pip install "nvidia-nccl-cu13==2.28.*"): needs a driver for CUDA 13.x (Linux >= 580.65.06)' "check --want nccl=2.28"
has "$out" "this environment has nvidia-nccl-cu12 2.21.5" "check --want nccl=2.28"
has "$out" "every rank of a job must load the same NCCL" "check --want nccl=2.28"
assert_eq "$rc" 0 "check --want nccl=2.28 beside torch for CUDA 12.4 on a CUDA 12.2 driver"
site 11.8; checkw --want cudnn=9.17
has "$out" "torch 2.6.0+cu118 is built for CUDA 11.8, and cuDNN 9.17 has no build for CUDA 11 (builds for CUDA 12,13)" "check --want cudnn=9.17"
assert_eq "$rc" 1 "check --want cudnn=9.17 beside torch for CUDA 11.8"
checkw --want cudnn=9.1
has "$out" "as for cuDNN 9.0: the nearest release the reference tables have" "check --want cudnn=9.1"
assert_eq "$rc" 0 "check --want cudnn=9.1 beside torch for CUDA 11.8"
echo ok
