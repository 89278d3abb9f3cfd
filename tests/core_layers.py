"""The shim's modules call each other one way: the graph of object files, each linked to the
objects that define what it uses (nm), has no cycle. Prints the modules in layer order (each
uses only those before it), or the cycle that breaks the order, with the symbols on its edges.
And the rules (shim/rules/) are pure: they use only each other, the pure helpers below, the
findings sink, and C library functions that do no I/O.

  core_layers.py OBJDIR     (OBJDIR/shim/*.o, OBJDIR/shim/rules/*.o)"""
import glob, os, subprocess, sys

objs = sorted(glob.glob(os.path.join(sys.argv[1], "shim", "*.o")) + glob.glob(os.path.join(sys.argv[1], "shim", "rules", "*.o")))
if not objs:
    sys.exit(f"no objects under {sys.argv[1]}/shim")
defined, used = {}, {}
for o in objs:
    mod = os.path.relpath(o, os.path.join(sys.argv[1], "shim"))[:-2]
    used[mod] = set()
    for line in subprocess.run(["nm", "-g", o], capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used[mod].add(f[1])
        elif len(f) == 3 and f[1] in "TDBRVWCGS":
            defined[f[2]] = mod
edges = {m: {} for m in used}  # module -> {module it uses: [symbols]}
for m, syms in used.items():
    for s in sorted(syms):
        d = defined.get(s)
        if d and d != m:
            edges[m].setdefault(d, []).append(s)

# Depth-first search: a back edge is a cycle.
state, order, stack = {}, [], []

def visit(m):
    state[m] = 1
    stack.append(m)
    for d in sorted(edges[m]):
        if state.get(d) == 1:
            cyc = stack[stack.index(d):] + [d]
            print("a cycle among the shim's modules (each line: a call the layers forbid):")
            for a, b in zip(cyc, cyc[1:]):
                print(f"  {a} -> {b}: {', '.join(edges[a][b][:4])}")
            sys.exit(1)
        if d not in state:
            visit(d)
    stack.pop()
    state[m] = 2
    order.append(m)

# The rules' allowed world: pure helpers (text, JSON, names, tables, the device-code parser),
# the findings sink, and these C library functions.
PURE_HELPERS = {"json", "library_names", "loader_message", "reference", "reference_data", "alternatives",
                "fatbin", "image_explain"}
RULE_SINKS = {"cs_finding"}
LIBC_PURE = {"snprintf", "vsnprintf", "sscanf", "strcmp", "strncmp", "strlen", "strstr", "strrchr", "strchr",
             "strcspn", "strspn", "strchrnul", "memcpy", "memmove", "memset", "memcmp", "strtol", "strtoul",
             "qsort", "__stack_chk_fail", "__tls_get_addr", "_GLOBAL_OFFSET_TABLE_", "__snprintf_chk",
             "__memcpy_chk", "__memset_chk", "__isoc99_sscanf", "__isoc23_sscanf", "__isoc23_strtol",
             "__tsan_func_entry", "__tsan_func_exit"}
impure = []
for m, syms in sorted(used.items()):
    if not m.startswith("rules/"):
        continue
    for s_ in sorted(syms):
        d = defined.get(s_)
        if d is None:
            ok = s_ in LIBC_PURE or s_.startswith(("__asan", "__ubsan", "__tsan", "__sanitizer"))
        else:
            ok = d.startswith("rules/") or d in PURE_HELPERS or s_ in RULE_SINKS
        if not ok:
            impure.append(f"  {m} uses {s_}" + (f" (from {d})" if d else " (C library)"))
if impure:
    print("a rule reaches outside its evidence (rules are pure: no I/O, no locks, no other shim layer):")
    print("\n".join(impure))
    sys.exit(1)

sys.setrecursionlimit(10000)
for m in sorted(edges):
    if m not in state:
        visit(m)
print(f"{len(order)} modules, one way: " + " ".join(order))
