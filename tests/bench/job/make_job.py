#!/usr/bin/env python3
"""make_job.py REAL OUT RANKS [--flat]: a job's rank traces from the real ones (real_traces.sh):
OUT/node-NNNNN/cudashim-node-NNNNN-rankR.jsonl, 8 ranks a node (--flat: all in OUT, named
node-NNNNN-cudashim-...: the same order). Each rank's header says its rank, host and pid, and its
hang report its rank in a communicator of RANKS. Every rank waits in an all-reduce (ahead) but
one, three from the end, a collective behind; node 5's ranks run on an older driver and sent no
hang report; rank 1234 had a failing all-reduce."""
import glob, json, os, sys

real, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
flat = "--flat" in sys.argv

def template(kind):
    lines = []
    for line in open(glob.glob(os.path.join(real, "real", kind, "*.jsonl"))[0]):
        e = json.loads(line)
        if e["type"] == "header":
            e.update(rank="@RANK@", host="@HOST@", pid=987654321)
        for c in e.get("nccl", []) if e["type"] == "hang" else []:
            c.update(rank=987654322, nranks=987654323)
        lines.append(json.dumps(e, separators=(",", ":")))
    return "\n".join(lines) + "\n"

def kind_of(r):
    node = r // 8
    return "olddriver" if node == 5 else "behind" if r == n - 3 else "failing" if r == 1234 else "ahead"

kinds = {k: template(k) for k in ("ahead", "behind", "olddriver", "failing")}
os.makedirs(out, exist_ok=True)
for r in range(n):
    node = "node-%05d" % (r // 8)
    d = out if flat else os.path.join(out, node)
    if r % 8 == 0 and not flat: os.makedirs(d)
    text = (kinds[kind_of(r)].replace('"@RANK@"', '"%d"' % r).replace("@HOST@", node)
            .replace("987654321", str(100000 + r)).replace("987654322", str(r)).replace("987654323", str(n)))
    name = "cudashim-%s-rank%d.jsonl" % (node, r)
    with open(os.path.join(d, node + "-" + name if flat else name), "w") as f:
        f.write(text)
