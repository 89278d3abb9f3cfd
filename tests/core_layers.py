"""The shim's modules call each other one way: the graph of object files, each linked to the
objects that define what it uses (nm), has no cycle. Prints the modules in layer order (each
uses only those before it), or the cycle that breaks the order, with the symbols on its edges.

  core_layers.py OBJDIR     (OBJDIR/shim/*.o)"""
import glob, os, subprocess, sys

objs = sorted(glob.glob(os.path.join(sys.argv[1], "shim", "*.o")))
if not objs:
    sys.exit(f"no objects under {sys.argv[1]}/shim")
defined, used = {}, {}
for o in objs:
    mod = os.path.basename(o)[:-2]
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

sys.setrecursionlimit(10000)
for m in sorted(edges):
    if m not in state:
        visit(m)
print(f"{len(order)} modules, one way: " + " ".join(order))
