#!/usr/bin/env bash
# A job's traces as a large job leaves them: per-node directories read recursively, node
# summaries (report --summarize) mixed with plain node directories and loose traces, stale and
# broken summaries, memory that does not grow with the ranks, a communicator wider than 65,536.
# The traces are copies of real runs of the fake NCCL job under the shim (tests/bench/job/).
. "$(dirname "$0")/lib.sh"
need_python
CLI="$BUILD/cudashim"
PRELOAD="$PRELOAD" "$ROOT/tests/bench/job/real_traces.sh" "$BUILD" "$TMP" || fail "the real rank traces"
job() { python3 "$ROOT/tests/bench/job/make_job.py" "$TMP" "$@" || fail "make_job.py $*"; }
# 64 ranks: node-00000..00006 as directories, node-00007's traces loose in the job directory;
# the same 64 in one flat directory (same order of paths, same path lengths).
job "$TMP/jobd" 64 && mv "$TMP"/jobd/node-00007/* "$TMP/jobd/" && rmdir "$TMP/jobd/node-00007"
for f in "$TMP"/jobd/cudashim-*; do mv "$f" "$TMP/jobd/node-00007-${f##*/}"; done
job "$TMP/flat" 64 --flat
outputs() {  # DIR NAME: what the commands say about DIR, into $TMP/NAME.*
    set +e
    "$CLI" report "$1" >"$TMP/$2.report" 2>"$TMP/$2.err"; echo "exit $?" >>"$TMP/$2.report"
    "$CLI" report --json "$1" >"$TMP/$2.json" 2>"$TMP/$2.json-err"
    "$CLI" bugreport --hide-hosts "$1" -o "$TMP/$2.md" 2>>"$TMP/$2.err"
    "$CLI" export --prometheus "$1" -o "$TMP/$2.prom" 2>>"$TMP/$2.err"; echo "exit $?" >>"$TMP/$2.prom"
    set -e
}
same() {  # A B WHAT [KINDS]
    for k in ${4:-report json md prom}; do
        diff -u "$TMP/$1.$k" "$TMP/$2.$k" >"$TMP/diff" || { head -30 "$TMP/diff"; fail "$3: $k differs"; }
    done
}
outputs "$TMP/flat" flat
outputs "$TMP/jobd" dirs
for k in report json md prom; do sed -i 's#/jobd/\(node-[0-9]*\|host-[0-9]*\)/#/flat/\1-#g; s#/jobd/#/flat/#g' "$TMP/dirs.$k"; done  # host-N: --hide-hosts
same flat dirs "node directories read recursively"
grep -q "^ACROSS 64 TRACES" "$TMP/flat.report" || fail "the job is not read whole: $(head -3 "$TMP/flat.report")"
grep -q "ranks 40-47 (8): driver version 12.2" "$TMP/flat.report" || fail "node 5's older driver is not named"
grep -q "rank 61 made fewer operations (1) than the others (2" "$TMP/flat.report" || fail "the rank behind is not named"
grep -q "^exit 1" "$TMP/flat.report" || fail "report's exit status on a stuck job"

# Summaries of nodes 0-4; nodes 5 and 6 and the loose traces stay plain: the same answers.
outputs "$TMP/jobd" before
"$CLI" report --summarize "$TMP"/jobd/node-0000[0-4] 2>"$TMP/sum.err" || { cat "$TMP/sum.err"; fail "report --summarize"; }
[ "$(grep -c "^cudashim: wrote .*/cudashim-summary.json (8 traces)" "$TMP/sum.err")" = 5 ] || fail "summaries written: $(cat "$TMP/sum.err")"
[ -z "$(find "$TMP/jobd" -name '*.tmp.*')" ] || fail "--summarize left a temporary file"
python3 - "$TMP/jobd/node-00002/cudashim-summary.json" <<'PY' || fail "the summary's contents"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["format"] == "cudashim-summary" and s["version"] == 1, s.keys()
assert len(s["traces"]) == 8 and len(s["stacks"]) == 1, (len(s["traces"]), len(s["stacks"]))
assert sorted(t["rank"] for t in s["traces"]) == [str(r) for r in range(16, 24)]
PY
# A summarized node's trace made unreadable with its size and time kept: only the summary is read.
t="$TMP/jobd/node-00003/cudashim-node-00003-rank27.jsonl"
cp -p "$t" "$TMP/rank27.keep"
size=$(stat -c %s "$t")  # before the pipeline: its other side truncates the file
head -c "$size" /dev/zero | tr '\0' 'x' >"$t" && touch -r "$TMP/rank27.keep" "$t"
outputs "$TMP/jobd" summarized
# --json holds every trace whole, so it reads them: the spoiled one fails there.
same before summarized "summaries mixed with plain directories and loose traces" "report md prom"
if grep -v "^cudashim: wrote" "$TMP/summarized.err" | grep -q .; then fail "stderr with fresh summaries: $(cat "$TMP/summarized.err")"; fi
"$CLI" report "$TMP/jobd/node-00003/cudashim-node-00003-rank27.jsonl" >/dev/null 2>&1 && fail "the spoiled trace still reads (the check above proves nothing)"
cp -p "$TMP/rank27.keep" "$t"
# Stale: a trace grew, or appeared, after its summary: said, and the traces are read.
tail -n 1 "$TMP/jobd/node-00002/cudashim-node-00002-rank17.jsonl" >>"$TMP/jobd/node-00002/cudashim-node-00002-rank17.jsonl"
outputs "$TMP/jobd" stale
same before stale "a stale summary"
grep -q "node-00002/cudashim-summary.json is older than the traces beside it: reading the traces" "$TMP/stale.err" ||
    fail "a stale summary is not said: $(cat "$TMP/stale.err")"
# Broken: not JSON; or naming a trace that could not be read when it was written.
echo "{" >"$TMP/jobd/node-00001/cudashim-summary.json"
outputs "$TMP/jobd" broken
same before broken "a broken summary"
grep -q "node-00001/cudashim-summary.json: .*reading the traces instead" "$TMP/broken.err" || fail "a broken summary is not said"
mkdir "$TMP/bad" && cp "$TMP"/jobd/node-00004/*.jsonl "$TMP/bad/" && echo "not json" >"$TMP/bad/zz.jsonl"
set +e; "$CLI" report --summarize "$TMP/bad" 2>/dev/null; "$CLI" report "$TMP/bad" >/dev/null 2>"$TMP/bad.err"; rc=$?; set -e
assert_eq "$rc" 3 "report over a summary that names an unreadable trace"
grep -q "zz.jsonl:1: not a trace line" "$TMP/bad.err" || fail "the unreadable trace is not named: $(cat "$TMP/bad.err")"
set +e; "$CLI" report --summarize "$t" 2>/dev/null; rc=$?; set -e
assert_eq "$rc" 2 "report --summarize of a file"

# Memory: 8 times the ranks, almost no more memory (each trace is read, digested and let go).
job "$TMP/j1k" 1024 && job "$TMP/j8k" 8192
peak() { /usr/bin/time -f %M -o "$TMP/rss" "$CLI" "$@" >/dev/null 2>&1 || true; tail -n 1 "$TMP/rss"; }
for cmd in report bugreport; do
    a=$(peak $cmd "$TMP/j1k") b=$(peak $cmd "$TMP/j8k")
    echo "$cmd peak resident: 1024 ranks $((a / 1024)) MB, 8192 ranks $((b / 1024)) MB"
    [ $((b - a)) -lt 8192 ] || fail "$cmd: 7168 more ranks took $(((b - a) / 1024)) MB more"
done
a=$(peak export --prometheus "$TMP/j1k") b=$(peak export --prometheus "$TMP/j8k")
echo "export --prometheus peak resident: 1024 ranks $((a / 1024)) MB, 8192 ranks $((b / 1024)) MB"
[ $((b - a)) -lt 16384 ] || fail "export --prometheus: 7168 more ranks took $(((b - a) / 1024)) MB more"

# A communicator of 70,000 ranks, two reporting: every other rank is missing, not only those below 65,536.
mkdir "$TMP/wide"
for r in 0 69999; do
    sed "s/\"rank\":[0-9]*,\"nranks\":[0-9]*/\"rank\":$r,\"nranks\":70000/; s/\"rank\":\"[0-9]*\"/\"rank\":\"$r\"/" \
        "$TMP"/real/ahead/*.jsonl >"$TMP/wide/rank$r.jsonl"
done
"$CLI" report --json "$TMP/wide" >"$TMP/wide.json" || true
python3 - "$TMP/wide.json" <<'PY' || fail "a 70,000-rank communicator"
import json, sys
s = json.load(open(sys.argv[1]))["stuck_collectives"]
assert len(s) == 1 and s[0]["nranks"] == 70000 and len(s[0]["missing"]) == 69998, [(x["nranks"], len(x["missing"])) for x in s]
assert "and 69982 more sent no hang report" in s[0]["text"], s[0]["text"]
PY
echo "ok"
