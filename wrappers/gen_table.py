#!/usr/bin/env python3
"""Build an API table (wrappers/<api>.tbl) from the toolkit's headers.

Run by `make regen-tables`; needs the CUDA toolkit. The table is committed, so
the shim itself builds without the toolkit.

How it works: the header is preprocessed (gcc -E) in the configurations that
expose each exported ABI (default, per-thread default stream, legacy internal),
every prototype is parsed, and each parameter type is reduced to its
calling-convention class by compiling a probe program against the header.
Only names the library really exports (nm -D) enter the table. Curated flags in
an existing table are kept across regeneration.
"""
import os, re, subprocess, sys, tempfile

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
INC = os.path.join(CUDA, "include")

# api -> (header, preprocessing variants, library to take exports from, prefix regex)
APIS = {
    "cuda": ("cuda.h\ncudaProfiler.h", ["", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM", "-D__CUDA_API_VERSION_INTERNAL"],
             [os.path.join(CUDA, "lib64/stubs/libcuda.so")], r"cu[A-Z]\w*"),
    "cudnn": ("cudnn.h", [""], [os.path.join(CUDA, "lib64/libcudnn.so.9")], r"cudnn\w*"),
    "nccl": ("nccl.h", [""], [os.path.join(CUDA, "lib64/libnccl.so.2")], r"p?nccl\w*"),
    "cublas": ("cublas_api.h", [""], [os.path.join(CUDA, "lib64/libcublas.so.13")], r"cublas(?!Lt)\w*"),
    "cublasLt": ("cublasLt.h", [""], [os.path.join(CUDA, "lib64/libcublasLt.so.13")], r"cublasLt\w*"),
    # The shared CUDA runtime's own API, and the entry points that nvcc 13's launch code calls
    # (EXTRA_DECLS), but not the __cuda* registration ones.
    "cudart": ("cuda_runtime_api.h", ["", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM"],
               [os.path.join(CUDA, "lib64/libcudart.so.13")], r"cuda[A-Z]\w*|__cuda(?:GetKernel|LaunchKernel(?:_ptsz)?)"),
}
# Functions declared in a C++ header the API's own header does not include: (header, names). Their
# declarations are read from its text (extern "C" and the calling-convention macro dropped).
EXTRA_DECLS = {"cudart": ("crt/device_functions.h", r"__cuda(?:GetKernel|LaunchKernel(?:_ptsz)?)")}


def extra_declarations(api):
    if api not in EXTRA_DECLS:
        return ""
    header, names = EXTRA_DECLS[api]
    text = open(os.path.join(INC, header)).read()
    found = re.findall(r'extern\s+"C"\s+(cudaError_t)\s+CUDARTAPI\s+(' + names + r')\s*\(([^;{]*?)\)\s*;', text)
    return "".join("\n%s %s(%s);\n" % (ret, name, re.sub(r"\s+", " ", params).strip()) for ret, name, params in found)

DECL = re.compile(r"\s*(?:extern\s+)?(?:__attribute__\s*\(\(\w+\)\)\s*)*"
                  r"([A-Za-z_][\w \*]*?)\s*\b(\w+)\s*\(((?:[^()]|\([^()]*\))*)\)\s*"
                  r"(?:__attribute__\s*\(\(.*\)\)\s*)*$", re.S)


def declarations(text):
    """Yield (return type, name, parameter text) for each top-level prototype."""
    for chunk in re.split(r"[;{}]", text):
        m = DECL.fullmatch(chunk)
        if m:
            yield m.group(1).strip(), m.group(2), m.group(3)


def exports(libs, prefix):
    names = {}
    for lib in libs:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TW" and re.fullmatch(prefix, parts[2].split("@")[0]):
                names[parts[2].split("@")[0]] = os.path.basename(lib)
    return names


def preprocess(header, define):
    src = "".join('#include "%s"\n' % h for h in header.split("\n"))
    r = subprocess.run(["gcc", "-E", "-P", "-x", "c", "-I", INC] + ([define] if define else []) + ["-"],
                       input=src, capture_output=True, text=True, check=True)
    return r.stdout


def split_params(text):
    text = " ".join(text.split())
    if text in ("", "void"):
        return []
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip()); cur = ""; continue
        depth += ch == "("; depth -= ch == ")"
        cur += ch
    out.append(cur.strip())
    return out


def param_type_name(p, i):
    """Return (C type usable in a cast probe, parameter name)."""
    m = re.match(r"(.*)\(\s*\*\s*(\w*)\s*\)\s*\((.*)\)$", p)
    if m:  # function pointer parameter
        return "void *", m.group(2) or "a%d" % i
    arr = p.endswith("]")
    p = re.sub(r"\[[^\]]*\]", "", p).strip()
    m = re.match(r"(.*?)(\w+)$", p)
    keywords = ("int", "char", "long", "short", "float", "double", "void", "unsigned", "signed")
    if m and m.group(1).strip() and m.group(1).strip() not in ("const", "struct", "enum") \
            and m.group(2) not in keywords:
        ty, name = m.group(1).strip(), m.group(2)
    else:
        ty, name = p, "a%d" % i
    if arr:
        ty += " *"
    return ty, name


def run_probe(header, define, body):
    lines = ["#include <stdio.h>"] + ['#include "%s"' % h for h in header.split("\n")] + ["int main(void){"]
    lines += body + ["return 0;}"]
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "p.c"), os.path.join(d, "p")
        open(c, "w").write("\n".join(lines))
        subprocess.run(["gcc", "-w", "-I", INC] + ([define] if define else []) + [c, "-o", exe], check=True)
        return subprocess.run([exe], capture_output=True, text=True, check=True).stdout


def probe(header, types):
    """Classify each C type: pointer, signed/unsigned integer of N bits, float, double, or struct blob.

    types maps a type to the preprocessing define under which it is declared."""
    order = sorted(types)
    rows = {}
    for define in sorted(set(types.values())):
        idx = [i for i, t in enumerate(order) if types[t] == define]
        out = run_probe(header, define, ['{ typedef %s T; printf("%d %%d %%zu %%zu\\n", __builtin_classify_type(*(T*)0),'
                                          ' sizeof(T), _Alignof(T)); }' % (order[i], i) for i in idx])
        for line in out.splitlines():
            i, cls, size, align = map(int, line.split())
            rows[i] = [cls, size, align, 0]
        ints = [i for i in idx if rows[i][0] in (1, 3)]
        out = run_probe(header, define, ['{ typedef %s T; printf("%d %%d\\n", (int)((T)-1 < (T)0)); }' % (order[i], i)
                                          for i in ints])
        for line in out.splitlines():
            i, signed = map(int, line.split())
            rows[i][3] = signed
    res = {}
    for i, (cls, size, align, signed) in sorted(rows.items()):
        t = order[i]
        if cls == 5:
            abi = "p"
        elif cls in (1, 3, 4, 2):
            abi = ("i" if signed else "u") + str(size * 8)
        elif cls == 8:
            abi = {4: "f32", 8: "f64"}[size]
        elif cls in (12, 13):
            abi = "s%d_%d" % (size, align)
        else:
            raise SystemExit("unclassified type %r (class %d)" % (t, cls))
        res[t] = abi
    return res


def read_flags(path):
    flags = {}
    if os.path.exists(path):
        for line in open(path):
            if line.strip() and not line.startswith("#"):
                cols = line.rstrip("\n").split("\t")
                flags[cols[0]] = cols[2]
    return flags


def main(api, out):
    header, variants, libs, prefix = APIS[api]
    names = exports(libs, prefix)
    protos = {}
    for v in variants:
        text = preprocess(header, v) + extra_declarations(api)
        for ret, name, params in declarations(text):
            if name in names and ("__CUDA_API_VERSION_INTERNAL" in v or name not in protos):
                protos[name] = (ret, split_params(params), v)
    missing = sorted(set(names) - set(protos))
    types = {}
    parsed = {}
    # Functions returning nothing cannot fail: there is nothing to diagnose, so they pass through.
    void_fns = sorted(n for n, (ret, _, _) in protos.items() if ret.strip() == "void")
    for n in void_fns:
        del protos[n]
    for name, (ret, params, define) in protos.items():
        ps = [param_type_name(p, i) for i, p in enumerate(params)]
        parsed[name] = (ret, ps)
        for t in [ret] + [t for t, _ in ps]:
            if t not in types or define == "":
                types[t] = define
    cls = probe(header, types)
    old = read_flags(out)
    with open(out, "w") as f:
        f.write("# %s API table: one line per exported function, generated by wrappers/gen_table.py from\n" % api)
        f.write("# %s and the exports of %s.\n" % (header.replace("\n", ", "), ", ".join(os.path.basename(l) for l in libs)))
        f.write("# Columns (tab-separated): name, library, flags (curated by hand, kept on regeneration),\n")
        f.write("# return ABI, parameters as 'abi name' (p pointer, iN/uN integers, f32/f64, sSIZE_ALIGN struct).\n")
        for name in sorted(parsed):
            ret, ps = parsed[name]
            f.write("%s\t%s\t%s\t%s\t%s\n" % (name, names[name], old.get(name, "-"), cls[ret],
                                               ", ".join("%s %s" % (cls[t], n) for t, n in ps)))
    print("%s: %d functions, %d exported without a prototype: %s" % (out, len(parsed), len(missing), " ".join(missing)))


# api -> (header, status enum type): the result names of each library API
RESULTS = {"cudnn": ("cudnn.h", "cudnnStatus_t"), "nccl": ("nccl.h", "ncclResult_t"),
           "cublas": ("cublas_api.h", "cublasStatus_t"), "cublasLt": ("cublasLt.h", "cublasStatus_t"),
           "cudart": ("cuda_runtime_api.h", "cudaError_t")}


def library_results(api, tbl_dir):
    """Write <api>_results.tbl: every enumerator of the status type, with its value."""
    header, etype = RESULTS[api]
    text = preprocess(header, "")
    m = re.search(r"typedef\s+enum\s*\w*\s*\{([^}]*)\}\s*" + etype + r"\s*;", text)
    if not m:  # enum cudaError { ... }; typedef enum cudaError cudaError_t;
        tag = re.search(r"typedef\s+enum\s+(\w+)\s+" + etype + r"\s*;", text).group(1)
        m = re.search(r"enum\s+" + tag + r"\s*\{([^}]*)\}", text)
    names = [n for n in re.findall(r"(\w+)\s*(?:=[^,]*)?,?", m.group(1)) if n]
    out = run_probe(header, "", ['printf("%%d\\t%s\\n", (int)%s);' % (n, n) for n in names])
    with open(os.path.join(tbl_dir, api + "_results.tbl"), "w") as f:
        f.write("# %s values from %s, generated by wrappers/gen_table.py.\n" % (etype, header))
        f.write(out)


def cuda_extras(tbl_dir):
    """Write the CUresult names and the cuGetProcAddress version map (both need the toolkit)."""
    text = open(os.path.join(INC, "cuda.h")).read()
    body = text[text.index("typedef enum cudaError_enum"):]
    body = body[:body.index("} CUresult;")]
    with open(os.path.join(tbl_dir, "cuda_results.tbl"), "w") as f:
        f.write("# CUresult values from cuda.h (enum cudaError_enum), generated by wrappers/gen_table.py.\n")
        for name, val in re.findall(r"\b(CUDA_\w+)\s*=\s*(\d+)", body):
            f.write("%s\t%s\n" % (val, name))
    exported = set(exports(APIS["cuda"][2], APIS["cuda"][3]))
    pfn = {}
    for base, ver, ptds in re.findall(r"\bPFN_(cu\w+?)_v(\d+)(_ptsz|_ptds)?\)",
                                      open(os.path.join(INC, "cudaTypedefs.h")).read()):
        pfn.setdefault(base, set()).add((int(ver), ptds))

    def suffix(n, base):
        rest = n[len(base):]
        return 1 if rest == "" else int(rest[2:])
    rows, odd = [], []
    for base in sorted(pfn):
        family = sorted((n for n in exported if re.fullmatch(re.escape(base) + r"(_v\d+)?", n)),
                        key=lambda n: suffix(n, base))
        vers = sorted(v for v, p in pfn[base] if not p)
        if not family:
            continue
        if len(family) != len(vers):
            odd.append(base)
        for i, v in enumerate(vers):
            e = family[min(i, len(family) - 1)]
            rows.append((base, v, 0, e))
            for v2, p in pfn[base]:
                if p and v2 >= v and (e + p) in exported:
                    pass
        for v2, p in sorted(pfn[base]):
            if p:
                legacy = [e for (b, v, _, e) in rows if b == base and v <= v2]
                cand = [e + p for e in reversed(legacy) if (e + p) in exported]
                if cand:
                    rows.append((base, v2, 2, cand[0]))
    with open(os.path.join(tbl_dir, "cuda_procaddr.tbl"), "w") as f:
        f.write("# cuGetProcAddress map from cudaTypedefs.h (PFN_<name>_v<version>[_ptsz|_ptds]) to the exported\n")
        f.write("# name, generated by wrappers/gen_table.py. Columns: name, ABI version, flags (2 = per-thread\n")
        f.write("# default stream), exported function. Used by the fake driver's resolver.\n")
        for r in sorted(set(rows)):
            f.write("%s\t%d\t%d\t%s\n" % r)
    print("procaddr: %d rows; version/export count differs for: %s" % (len(rows), " ".join(odd)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
    if sys.argv[1] == "cuda":
        cuda_extras(os.path.dirname(sys.argv[2]) or ".")
    else:
        library_results(sys.argv[1], os.path.dirname(sys.argv[2]) or ".")
