#!/usr/bin/env python3
"""data/cuda-reference.txt -> shim/base/reference_data.c, after checking it.

  gen_reference.py           check and write
  gen_reference.py --check   check, and fail if shim/base/reference_data.c is not up to date
Checks: every row has a source; each table is ordered by its first version; toolkit minimum
drivers never decrease; PTX ISA -> CUDA never decreases; an arch's first CUDA is before its last."""
import os, shlex, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "data/cuda-reference.txt")
OUT = os.path.join(ROOT, "shim/base/reference_data.c")
WIDTH = {"floor": 5, "toolkit": 5, "ptx": 4, "arch": 7, "cudnn": 5, "nccl": 4, "torch": 4, "torcharch": 6,
         "torch-aarch64": 4, "torcharch-aarch64": 6, "tensorflow": 5, "jax": 5}


def ver(s):
    """'12.4' -> (12, 4); '580.65.06' -> (580, 65, 6); '-' and '?' -> None"""
    return None if s in ("-", "?") else tuple(int(x) for x in s.split("."))


def release_code(s):
    """'2.10' -> 210"""
    v = ver(s)
    return v[0] * 100 + v[1]


def releases(s):
    """'2.8-2.10' -> (208, 210); '2.7' -> (207, 207); '*' -> (0, 9999)"""
    if s == "*":
        return (0, 9999)
    first, _, last = s.partition("-")
    return (release_code(first), release_code(last or first))


def cuda_code(s):
    v = ver(s)
    return 0 if v is None else v[0] * 1000 + (v[1] if len(v) > 1 else 0) * 10


def load():
    rows, errors = {k: [] for k in WIDTH}, []
    last_source = {}
    for n, line in enumerate(open(SRC), 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = shlex.split(line)
        if f[0] not in WIDTH or len(f) != WIDTH[f[0]]:
            errors.append("%d: expected %s fields for %r" % (n, WIDTH.get(f[0]), f[0]))
            continue
        src = f[-1]
        if src == "same":
            if f[0] not in last_source:
                errors.append("%d: 'same' source with no earlier source in the table" % n)
        elif len(src) < 8:
            errors.append("%d: the source %r names nothing" % (n, src))
        else:
            last_source[f[0]] = src
        rows[f[0]].append((n, f[1:]))
    for table, rs in rows.items():
        keys = [ver(r[1][0]) for r in rs]
        if table.startswith("torcharch"):  # one CUDA may have a row per range of releases
            keys = [(ver(r[1][0]), releases(r[1][1])) for r in rs]
        if keys != sorted(keys) or len(set(keys)) != len(keys):
            errors.append("table %s is not in strictly increasing order" % table)
    prev = None
    for n, (cuda, lin, win, _) in rows["toolkit"]:
        if prev and ver(lin) < prev:
            errors.append("%d: toolkit %s needs an older driver than the toolkit before it" % (n, cuda))
        prev = ver(lin)
    prev = None
    for n, (isa, cuda, _) in rows["ptx"]:
        if prev and ver(cuda) <= prev:
            errors.append("%d: PTX %s maps to a CUDA not newer than the row before" % (n, isa))
        prev = ver(cuda)
    for n, (cc, name, ex, first, last, _) in rows["arch"]:
        if ver(first) and ver(last) and ver(first)[0] > ver(last)[0]:
            errors.append("%d: sm %s first CUDA %s after its last %s" % (n, cc, first, last))
    for platform in ("", "-aarch64"):
        torch, torcharch = "torch" + platform, "torcharch" + platform
        for n, (release, cudas, _) in rows[torch]:
            vs = [ver(c) for c in cudas.split(",")]
            if vs != sorted(vs):
                errors.append("%d: %s %s: CUDA versions not in increasing order" % (n, torch, release))
        for n, (cuda, rel, lo, hi, _) in rows[torcharch]:
            if ver(lo) > ver(hi):
                errors.append("%d: %s %s: lowest architecture above the highest" % (n, torcharch, cuda))
            if releases(rel)[0] > releases(rel)[1]:
                errors.append("%d: %s %s: releases %s run backwards" % (n, torcharch, cuda, rel))
        by_cuda = {}
        for n, (cuda, rel, lo, hi, _) in rows[torcharch]:
            for m, other in by_cuda.get(cuda, []):
                a, b = releases(rel), releases(other)
                if a[0] <= b[1] and b[0] <= a[1]:
                    errors.append("%d: %s %s: releases %s overlap line %d's" % (n, torcharch, cuda, rel, m))
            by_cuda.setdefault(cuda, []).append((n, rel))
    for n, (major, lin, lo, _) in rows["jax"]:
        fl = [r for r in rows["floor"] if r[1][0] == major]
        if fl and ver(lin) < ver(fl[0][1][1]):
            errors.append("%d: jax for CUDA %s on a driver below that major's floor" % (n, major))
    for n, (major, lin, win, _) in rows["floor"]:
        tk = [r for r in rows["toolkit"] if ver(r[1][0])[0] == int(major)]
        if tk and ver(lin) < ver(tk[0][1][1]):
            errors.append("%d: floor for CUDA %s is below what its first toolkit needs" % (n, major))
    return rows, errors


def c_str(s):
    return "NULL" if s in ("-", "?") else '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def generate(rows):
    o = ["/* Generated by tools/gen_reference.py from data/cuda-reference.txt: edit that file. */",
         '#include "reference_data.h"', ""]
    o.append("const struct cs_ref_driver cs_ref_floor[] = {")
    for _, (major, lin, win, src) in rows["floor"]:
        o.append("    { %d, %s, %s }," % (int(major) * 1000, c_str(lin), c_str(win)))
    o += ["};", "const int cs_ref_floor_count = %d;" % len(rows["floor"]), ""]
    o.append("const struct cs_ref_driver cs_ref_toolkit[] = {")
    for _, (cuda, lin, win, src) in rows["toolkit"]:
        o.append("    { %d, %s, %s }," % (cuda_code(cuda), c_str(lin), c_str(win)))
    o += ["};", "const int cs_ref_toolkit_count = %d;" % len(rows["toolkit"]), ""]
    o.append("const struct cs_ref_ptx cs_ref_ptx[] = {")
    for _, (isa, cuda, src) in rows["ptx"]:
        v = ver(isa)
        o.append("    { %d, %d }," % (v[0] * 10 + v[1], cuda_code(cuda)))
    o += ["};", "const int cs_ref_ptx_count = %d;" % len(rows["ptx"]), ""]
    o.append("const struct cs_ref_arch cs_ref_arch[] = {")
    for _, (cc, name, ex, first, last, src) in rows["arch"]:
        v = ver(cc)
        o.append("    { %d, %s, %s, %d, %d }," % (v[0] * 10 + v[1], c_str(name), c_str(ex), cuda_code(first),
                                                  0 if last == "-" else int(last)))
    o += ["};", "const int cs_ref_arch_count = %d;" % len(rows["arch"]), ""]
    for table in ("cudnn", "nccl"):
        o.append("const struct cs_ref_build cs_ref_%s[] = {" % table)
        for _, r in rows[table]:
            lowest = ver(r[2]) if table == "cudnn" else None
            o.append("    { %s, %s, %d }," % (c_str(r[0]), c_str(r[1]), lowest[0] * 10 + lowest[1] if lowest else 0))
        o += ["};", "const int cs_ref_%s_count = %d;" % (table, len(rows[table])), ""]
    # PyTorch's wheels differ by platform: the build's own platform's tables are the ones it has.
    for platform, guard in (("-aarch64", "#if defined(__aarch64__)  /* Linux aarch64 (SBSA) wheels */"),
                            ("", "#else  /* Linux x86-64 wheels */")):
        o.append(guard)
        o.append("const struct cs_ref_torch cs_ref_torch[] = {")
        for _, (release, cudas, src) in rows["torch" + platform]:
            o.append("    { %s, { %s } }," % (c_str(release), ", ".join(str(cuda_code(c)) for c in cudas.split(","))))
        o += ["};", "const int cs_ref_torch_count = %d;" % len(rows["torch" + platform])]
        o.append("const struct cs_ref_torcharch cs_ref_torcharch[] = {")
        for _, (cuda, rel, lo, hi, src) in rows["torcharch" + platform]:
            lv, hv = ver(lo), ver(hi)
            first, last = releases(rel)
            o.append("    { %d, %d, %d, %d, %d }," % (cuda_code(cuda), first, last, lv[0] * 10 + lv[1], hv[0] * 10 + hv[1]))
        o += ["};", "const int cs_ref_torcharch_count = %d;" % len(rows["torcharch" + platform])]
    o += ["#endif", ""]
    o.append("const struct cs_ref_tensorflow cs_ref_tensorflow[] = {")
    for _, (release, cuda, cudnn, src) in rows["tensorflow"]:
        o.append("    { %s, %d, %s }," % (c_str(release), cuda_code(cuda), c_str(cudnn)))
    o += ["};", "const int cs_ref_tensorflow_count = %d;" % len(rows["tensorflow"]), ""]
    o.append("const struct cs_ref_jax cs_ref_jax[] = {")
    for _, (major, lin, lo, src) in rows["jax"]:
        lv = ver(lo)
        o.append("    { %d, %s, %d }," % (int(major) * 1000, c_str(lin), lv[0] * 10 + lv[1]))
    o += ["};", "const int cs_ref_jax_count = %d;" % len(rows["jax"]), ""]
    return "\n".join(o)


def main():
    rows, errors = load()
    for e in errors:
        print("data/cuda-reference.txt:" + e, file=sys.stderr)
    if errors:
        sys.exit(1)
    text = generate(rows)
    if "--check" in sys.argv:
        if not os.path.exists(OUT) or open(OUT).read() != text:
            sys.exit("shim/base/reference_data.c is out of date: run tools/gen_reference.py")
        print("ok: %d rows" % sum(len(r) for r in rows.values()))
    else:
        open(OUT, "w").write(text)


if __name__ == "__main__":
    main()
