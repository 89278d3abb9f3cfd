#!/usr/bin/env python3
"""The reference tables (data/cuda-reference.txt) against themselves and against the values a
review read in primary sources (NVIDIA's release notes and support matrices, PyTorch's RELEASE.md
and build scripts, TensorFlow's tested configurations).

  check_reference.py [ROOT]
Fails, naming each problem, when:
  - a value the review confirmed has changed (REVIEWED below: table, key, field, value, source);
  - a torch release's CUDA build has no architecture row for that release (x86-64 and aarch64);
  - a CUDA that a torch or TensorFlow build, or a PTX ISA, needs has no toolkit driver row;
  - an architecture row says a build covers a GPU that its CUDA cannot target or has dropped;
  - a CUDA major with toolkits has no minor-version floor.
tools/gen_reference.py checks order, sources and the generated C; this checks what the rows say."""
import os
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gen_reference as g  # noqa: E402

# (table, key, field index after the key, value): each read in the source named beside it.
REVIEWED = [
    ("floor", "12", 0, "525.60.13"),         # cuDNN 8.9.6 / 9.x support matrices
    ("floor", "13", 0, "580.65.06"),         # cuDNN 9.17.0 support matrix
    ("toolkit", "11.8", 1, "520.06"),        # CUDA release notes, table 3
    ("toolkit", "12.1", 0, "530.30.02"),
    ("toolkit", "12.2", 0, "535.54.03"),
    ("toolkit", "12.3", 0, "545.23.06"),
    ("toolkit", "12.8", 0, "570.26"),
    ("toolkit", "13.1", 0, "590.44.01"),
    ("toolkit", "13.2", 0, "595.45.04"),
    ("ptx", "8.6", 0, "12.7"),               # cuda-python _ptx_utils.py
    ("ptx", "9.1", 0, "13.1"),
    ("ptx", "9.2", 0, "13.2"),               # CUDA 13.2 Update 2 release notes
    ("arch", "3.5", 1, "K20/K40"),           # the K80 is compute capability 3.7
    ("arch", "3.7", 3, "11"),                # clang MaxVersionForOffloadArch
    ("arch", "7.0", 2, "9.0"),               # clang MinVersionForOffloadArch
    ("arch", "7.0", 3, "12"),                # CUDA 13.0 dropped Volta
    ("arch", "10.1", 2, "12.8"),             # sm_101 before its renaming to sm_110
    ("arch", "10.3", 2, "12.9"),             # CUDA 12.9 features archive
    ("arch", "12.1", 2, "12.9"),
    ("cudnn", "9.10", 0, "11,12"),           # cuDNN 9.10.2 support matrix
    ("cudnn", "9.17", 1, "7.5"),             # cuDNN 9.17.0: compute capability 7.5 and newer
    ("nccl", "2.21", 0, "11,12"),            # the last NCCL with a CUDA 11 wheel
    ("nccl", "2.22", 0, "12"),               # NVIDIA/nccl#1408
    ("torch", "1.13", 0, "11.6,11.7"),       # RELEASE.md
    ("torch", "2.12", 0, "12.6,13.0,13.2"),
    ("torch", "2.14", 0, "12.6,13.0,13.2"),
    ("tensorflow", "2.21", 0, "12.5"),       # tensorflow/docs install/source.md
    ("tensorflow", "2.21", 1, "9.3"),
]
# torch release, CUDA, lowest and highest architecture of its wheels (build_cuda.sh, RELEASE.md,
# the binaries): where the list depends on the release.
REVIEWED_TORCHARCH = [
    ("2.7", "12.8", "7.5", "12.0"),
    ("2.8", "12.8", "7.0", "12.0"),
    ("2.9", "12.8", "7.0", "12.0"),
    ("2.10", "12.8", "7.0", "12.0"),
    ("2.11", "12.8", "7.5", "12.0"),
    ("2.8", "12.9", "7.0", "12.0"),
    ("2.9", "13.0", "7.5", "12.0"),
    ("2.0", "11.7", "3.7", "8.6"),
    ("2.5", "11.8", "3.7", "9.0"),
]
# The same for PyTorch's Linux aarch64 (SBSA) wheels (RELEASE.md's aarch64 table).
REVIEWED_TORCHARCH_AARCH64 = [
    ("2.11", "12.6", "8.0", "9.0"),
    ("2.11", "12.8", "8.0", "12.0"),
    ("2.14", "13.0", "8.0", "12.0"),
    ("2.12", "13.2", "8.0", "12.0"),
]


def main():
    rows, errors = g.load()
    problems = list(errors)
    table = {t: {r[1][0]: r[1] for r in rs} for t, rs in rows.items() if not t.startswith("torcharch")}

    for t, key, field, want in REVIEWED:
        row = table[t].get(key)
        got = row[1 + field] if row else None
        if got != want:
            problems.append("%s %s: field %d is %r; the reviewed source says %r" % (t, key, field + 1, got, want))

    def torcharch(release, cuda, platform=""):
        r = g.release_code(release)
        for _, (c, rel, lo, hi, _) in rows["torcharch" + platform]:
            first, last = g.releases(rel)
            if c == cuda and first <= r <= last:
                return lo, hi
        return None

    for platform, reviewed in (("", REVIEWED_TORCHARCH), ("-aarch64", REVIEWED_TORCHARCH_AARCH64)):
        for release, cuda, lo, hi in reviewed:
            if torcharch(release, cuda, platform) != (lo, hi):
                problems.append("torcharch%s for torch %s cu%s: %r; the reviewed source says %s to %s"
                                % (platform, release, cuda, torcharch(release, cuda, platform), lo, hi))
        # Every build a torch release ships has its architectures, for that release.
        for _, (release, cudas, _) in rows["torch" + platform]:
            for cuda in cudas.split(","):
                if not torcharch(release, cuda, platform):
                    problems.append("torch%s %s has a CUDA %s build but no torcharch%s row covers that release"
                                    % (platform, release, cuda, platform))

    # Every CUDA a build or a PTX ISA names has the driver its toolkit ships with (12.7 never shipped).
    needed = {c for t in ("torch", "torch-aarch64") for _, (_, cudas, _) in rows[t] for c in cudas.split(",")}
    needed |= {r[1][1] for r in rows["tensorflow"]}
    needed |= {r[1][1] for r in rows["ptx"] if g.ver(r[1][1]) >= (10, 0) and r[1][1] != "12.7"}
    for cuda in sorted(needed, key=g.ver):
        if cuda not in table["toolkit"]:
            problems.append("CUDA %s is named by a build or a PTX ISA but has no toolkit row" % cuda)

    # A CUDA major with toolkits has a minor-version floor (from 11, when the guarantee began).
    for major in {g.ver(c)[0] for c in table["toolkit"]}:
        if major >= 11 and str(major) not in table["floor"]:
            problems.append("CUDA %d has toolkit rows but no floor row" % major)

    # An architecture row may only claim GPUs that CUDA can target and has not dropped.
    arch = {g.ver(cc): (g.ver(first), last) for cc, (_, _, _, first, last, _) in table["arch"].items()}
    for _, (cuda, rel, lo, hi, _) in rows["torcharch"] + rows["torcharch-aarch64"]:
        cv = g.ver(cuda)
        for cc in (g.ver(lo), g.ver(hi)):
            if cc not in arch:
                problems.append("torcharch %s (%s): sm %d.%d has no arch row" % (cuda, rel, cc[0], cc[1]))
                continue
            first, last = arch[cc]
            if first and first > cv:
                problems.append("torcharch %s (%s): CUDA %s cannot target sm %d.%d (first in %d.%d)"
                                % (cuda, rel, cuda, cc[0], cc[1], first[0], first[1]))
            if last != "-" and int(last) < cv[0]:
                problems.append("torcharch %s (%s): CUDA %d dropped sm %d.%d (its last major is %s)"
                                % (cuda, rel, cv[0], cc[0], cc[1], last))
    # cuDNN's floor is an architecture the table knows, and no lower than a CUDA 13 build allows.
    for v, (_, majors, lowest, _) in table["cudnn"].items():
        if lowest != "?" and g.ver(lowest) not in arch:
            problems.append("cudnn %s: lowest architecture %s has no arch row" % (v, lowest))
        if "13" in majors.split(",") and lowest != "?" and g.ver(lowest) < (7, 5):
            problems.append("cudnn %s: a CUDA 13 build cannot support sm %s (CUDA 13 starts at 7.5)" % (v, lowest))

    for p in problems:
        print("data/cuda-reference.txt: " + p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print("ok: %d rows, %d reviewed values" % (sum(len(r) for r in rows.values()), len(REVIEWED) + len(REVIEWED_TORCHARCH) + len(REVIEWED_TORCHARCH_AARCH64)))


main()
