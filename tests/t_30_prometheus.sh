#!/usr/bin/env bash
# The fleet view: the traces of 256 ranks (8 of them on an older driver, with its finding) exported
# as Prometheus metrics; promtool accepts them; Debian's node_exporter serves them from its
# textfile directory and Debian's Prometheus scrapes it, both started here on loopback ports and
# stopped after; PromQL finds the odd ranks. tests/prometheus/fetch.sh brings the binaries.
. "$(dirname "$0")/lib.sh"
need_python
PROM="${CUDASHIM_PROMETHEUS:-$HOME/.cache/cudashim-prometheus}/root/usr/bin"
[ -x "$PROM/prometheus" ] && [ -x "$PROM/promtool" ] && [ -x "$PROM/prometheus-node-exporter" ] ||
    skip "no Prometheus in ${PROM%/root/usr/bin} (tests/prometheus/fetch.sh fetches Debian's)"

# 256 ranks on 32 hosts; ranks 40-47 (host node-5) on a CUDA 12.2 driver with driver-too-old
python3 - "$ROOT/tests/fixtures/traces/rank0.jsonl" "$TMP/job" <<'PY'
import json, os, sys
src = [json.loads(l) for l in open(sys.argv[1])]
os.makedirs(sys.argv[2])
for r in range(256):
    old = 40 <= r < 48
    with open(os.path.join(sys.argv[2], "cudashim-node-rank%d.jsonl" % r), "w") as f:
        for l in src:
            l = dict(l)
            if l["type"] == "header":
                l["rank"], l["host"] = str(r), "node-%d" % (r // 8)
                l["env"] = dict(l["env"], CUDASHIM_JOB="train-42")
            if l["type"] == "library" and l["kind"] == "driver" and old:
                l["version"], l["version_code"], l["file_version"] = "12.2", 12020, "535.261.03"
            if l["type"] == "summary" and old:
                f.write(json.dumps({"type": "finding", "id": "driver-too-old", "key": "driver", "severity": "error",
                                    "summary": "found libnccl.so.2 ...", "fix": "...", "evidence": {}}) + "\n")
            f.write(json.dumps(l) + "\n")
PY
mkdir -p "$TMP/textfile"
"$BUILD/cudashim" export --prometheus "$TMP/job" -o "$TMP/textfile/cudashim.prom" || fail "export --prometheus"
[ -z "$(ls "$TMP"/textfile/*.tmp.* 2>/dev/null)" ] || fail "export left its temporary file"
"$PROM/promtool" check metrics <"$TMP/textfile/cudashim.prom" >"$TMP/promtool.out" 2>&1 ||
    { cat "$TMP/promtool.out"; fail "promtool check metrics"; }
series=$(grep -vc '^#' "$TMP/textfile/cudashim.prom")
grep -q 'cudashim_finding{host="node-5",job="train-42",rank="40",id="driver-too-old",severity="error"} 1' \
    "$TMP/textfile/cudashim.prom" || fail "no finding series for rank 40"
! grep -q '/work\|pid=' "$TMP/textfile/cudashim.prom" || fail "a path or a pid as a label value"

# The shim's own file (CUDASHIM_PROMETHEUS_DIR), into the same directory: a process with a rank
# replaces its file when run again; the directory keeps the newest 256 of the shim's files.
compile app tests/programs/path_linked.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
for i in $(seq 1 300); do : >"$TMP/textfile/cudashim-old-p$i.prom"; done
touch -d '1 hour ago' "$TMP"/textfile/cudashim-old-p*.prom
for run in 1 2; do
    RANK=7000 CUDASHIM_JOB=train-42 CUDASHIM_PROMETHEUS_DIR="$TMP/textfile" CUDASHIM_STDERR=0 FAKE_CUDA_FAIL=cuInit=100 \
        with_shim ./app >/dev/null 2>&1 || true
done
own="$TMP/textfile/cudashim-$(hostname)-7000.prom"
[ -f "$own" ] || fail "the shim wrote no metrics file into CUDASHIM_PROMETHEUS_DIR"
"$PROM/promtool" check metrics <"$own" >"$TMP/promtool.out" 2>&1 || { cat "$TMP/promtool.out"; fail "promtool check metrics (the shim's file)"; }
grep -q 'cudashim_finding{host="[^"]*",job="train-42",rank="7000",id="no-gpu-visible",severity="error"} 1' "$own" ||
    { cat "$own"; fail "the shim's file lacks its finding"; }
assert_eq "$(ls "$TMP"/textfile/cudashim-*.prom | wc -l)" 256 "the shim's files kept in the directory (the newest 256)"
[ -f "$TMP/textfile/cudashim.prom" ] || fail "a file that is not the shim's own was removed"
rm -f "$TMP"/textfile/cudashim-old-p*.prom  # (they hold nothing)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ne_port=$(free_port); pr_port=$(free_port)
"$PROM/prometheus-node-exporter" --web.listen-address="127.0.0.1:$ne_port" --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$TMP/textfile" >"$TMP/ne.log" 2>&1 &
ne=$!
cat >"$TMP/prometheus.yml" <<YML
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: node
    static_configs: [ { targets: ["127.0.0.1:$ne_port"] } ]
YML
"$PROM/prometheus" --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
    --web.listen-address="127.0.0.1:$pr_port" >"$TMP/prom.log" 2>&1 &
pr=$!
trap 'kill $ne $pr 2>/dev/null; wait $ne $pr 2>/dev/null; rm -rf "$TMP"' EXIT
query() {  # PROMQL: the result vector as "labels value" lines, after at most 30 s of waiting for data
    python3 - "$pr_port" "$1" <<'PY'
import json, sys, time, urllib.parse, urllib.request
port, q = sys.argv[1], sys.argv[2]
deadline = time.time() + 30
while True:
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q})), timeout=5) as r:
            res = json.load(r)["data"]["result"]
        if res:
            for e in sorted(res, key=lambda e: sorted(e["metric"].items())):
                print(",".join("%s=%s" % kv for kv in sorted(e["metric"].items()) if kv[0] not in ("instance", "job")),
                      e["value"][1])
            break
    except OSError:
        pass
    if time.time() > deadline:
        sys.exit("no answer to %s within 30 s" % q)
    time.sleep(0.5)
PY
}
got=$(query 'sum by (cuda) (cudashim_driver_info{rank!="7000"})') || fail "Prometheus: $got"
assert_eq "$got" "cuda=12.2 8
cuda=13.0 248" "driver CUDA versions across 256 ranks"
got=$(query 'sort(count by (exported_job, host) (cudashim_finding{id="driver-too-old"}))') || fail "Prometheus: $got"
assert_eq "$got" "exported_job=train-42,host=node-5 8" "the hosts whose ranks report driver-too-old"
got=$(query 'count(cudashim_process_info)') || fail "Prometheus: $got"
assert_eq "$got" " 257" "processes seen (256 exported ranks, 1 process's own file)"
got=$(query 'cudashim_failed_calls_total{rank="7000",api="cuInit"}') || fail "Prometheus: $got"
grep -q "api=cuInit.*rank=7000.*result=any 1$" <<<"$got" || fail "the shim's own file, scraped: $got"
echo "  256 ranks, $series series, and a process's own file; node_exporter and Prometheus on 127.0.0.1:$ne_port and :$pr_port found the 8 odd ranks"
echo ok
