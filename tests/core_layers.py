"""The shim's layers, checked from its sources and objects.

shim/ has one folder per layer, ordered in docs/HACKING.md's map ("Layers": the table of layer,
folder, files). The checks:
  - the map matches the tree: every folder and every file under shim/ is in it, and nothing else;
  - the folder rule: a file uses only its own folder and the folders below it, both what its
    object calls or reads (nm: each undefined symbol, matched to the object that defines it) and
    what it includes (#include "...", through the generated headers too). The generated wrappers'
    data (the API tables, cs_api_*) is below every layer, their code above every layer. The few
    arrows up that cannot be hooks are the map's second table ("Arrows up": file, symbol, why),
    at most 8, each still in use;
  - no circle: between folders none can form (the folder rule); within a folder the objects'
    graph has no cycle (the one found is printed with the symbols on its edges);
  - base/ is pure (its files use only each other and C library functions that do no I/O), and so
    are the rules (shim/rules/): they use only each other, base/, the findings sink and those
    C library functions.
Prints the modules in layer order, or each broken rule, naming the file and the symbol.

  core_layers.py OBJDIR [ROOT]   (OBJDIR/shim/<folder>/*.o and OBJDIR/wrappers/gen/*.o; ROOT: the
                                 sources and docs, this file's repository by default)"""
import glob, os, re, subprocess, sys

objdir = sys.argv[1]
root = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_UP = 8
problems = []

# The map: docs/HACKING.md's "Layers" tables.
doc = open(os.path.join(root, "docs", "HACKING.md")).read()
section = doc[doc.index("\n## Layers"):]
section = section[:section.index("\n## ", 1)]
layer_of, mapped = {}, {}
for num, folder, files in re.findall(r"^\| (\d+) \| `(\w+)/` \| ([^|]+) \|", section, re.M):
    layer_of[folder] = int(num)
    mapped[folder] = set(re.findall(r"`([\w.]+)`", files))
ups = set(re.findall(r"^\| `([\w/.]+)` \| `(\w+)` \|", section[section.index("Arrows up"):], re.M)) \
    if "Arrows up" in section else set()
if not layer_of:
    sys.exit("docs/HACKING.md has no map of the layers (## Layers: | layer | `folder/` | files | job |)")
tree = {d: {f for f in os.listdir(os.path.join(root, "shim", d)) if re.search(r"\.[chS]$", f)}
        for d in os.listdir(os.path.join(root, "shim")) if os.path.isdir(os.path.join(root, "shim", d))}
for d in sorted(set(tree) | set(mapped)):
    if d not in mapped:
        problems.append(f"shim/{d}/ is not in docs/HACKING.md's map of the layers")
    elif d not in tree:
        problems.append(f"docs/HACKING.md's map names shim/{d}/, which does not exist")
    else:
        for f in sorted(tree[d] - mapped[d]):
            problems.append(f"shim/{d}/{f} is not in docs/HACKING.md's map (its row for {d}/)")
        for f in sorted(mapped[d] - tree[d]):
            problems.append(f"docs/HACKING.md's map lists {d}/{f}, which is not in shim/{d}/")
loose = [f for f in os.listdir(os.path.join(root, "shim")) if os.path.isfile(os.path.join(root, "shim", f))]
for f in loose:
    problems.append(f"shim/{f} is in no layer's folder")
if len(ups) > MAX_UP:
    problems.append(f"{len(ups)} arrows up in docs/HACKING.md; at most {MAX_UP}: make the others hooks")

def layer(path):  # a path relative to root, or None outside shim/
    parts = path.split("/")
    return layer_of.get(parts[1]) if parts[0] == "shim" and len(parts) == 3 else None

# Objects: who defines and who uses each symbol.
# (an object whose source is gone, left by a move in a build tree, is not a module)
objs = sorted(o for o in glob.glob(os.path.join(objdir, "shim", "*", "*.o"))
              if any(os.path.exists(os.path.join(root, os.path.relpath(o, objdir))[:-2] + e) for e in (".c", ".S")))
if not objs:
    sys.exit(f"no objects under {objdir}/shim/<folder>/")
GENERATED_DATA = "(generated API tables)"
defined, used = {}, {}
for o in objs:
    mod = os.path.relpath(o, os.path.join(objdir, "shim"))[:-2]
    used[mod] = set()
    for line in subprocess.run(["nm", "-g", o], capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used[mod].add(f[1])
        elif len(f) == 3 and f[1] in "TDBRVWCGS":
            defined[f[2]] = mod
for o in glob.glob(os.path.join(objdir, "wrappers", "gen", "*.o")):
    for line in subprocess.run(["nm", "-g", o], capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] not in defined:
            defined[f[2]] = GENERATED_DATA if f[1] in "DBRVG" else "(generated wrappers)"

def mod_layer(mod):
    if mod == GENERATED_DATA:
        return -1
    if mod == "(generated wrappers)":
        return max(layer_of.values()) + 1
    return layer_of.get(mod.split("/")[0])

def source_of(mod):
    for ext in (".c", ".S"):
        if os.path.exists(os.path.join(root, "shim", mod + ext)):
            return mod + ext
    return mod

seen_ups = set()
edges = {m: {} for m in used}  # module -> {module it uses: [symbols]}
for m, syms in sorted(used.items()):
    for s in sorted(syms):
        d = defined.get(s)
        if not d or d == m:
            continue
        if not d.startswith("("):
            edges[m].setdefault(d, []).append(s)
        lm, ld = mod_layer(m), mod_layer(d)
        if lm is None or ld is None or ld <= lm:
            continue
        key = (source_of(m), s)
        if key in ups:
            seen_ups.add(key)
        else:
            problems.append(f"shim/{source_of(m)} uses {s} from {d.strip('()') if d.startswith('(') else 'shim/' + source_of(d)}, "
                            f"a layer above ({m.split('/')[0]}/ may use only its own folder and lower ones)")

# Includes: each file's own, and those a generated header it includes brings along.
def includes(path):
    out = []
    try:
        text = open(os.path.join(root, path)).read()
    except OSError:
        return out
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        out.append(os.path.normpath(os.path.join(os.path.dirname(path), inc)))
    return out

for d, files in sorted(tree.items()):
    if d not in layer_of:
        continue
    for f in sorted(files):
        path = f"shim/{d}/{f}"
        todo, done = includes(path), set()
        while todo:
            inc = todo.pop()
            if inc in done:
                continue
            done.add(inc)
            if inc.startswith("wrappers/gen/"):
                todo += includes(inc)
                continue
            li = layer(inc)
            if li is not None and li > layer_of[d]:
                key = (f"{d}/{f}", os.path.basename(inc))
                if key in ups:
                    seen_ups.add(key)
                else:
                    problems.append(f"{path} includes {inc}, a layer above ({d}/ may use only its own folder and lower ones)")

for f, s in sorted(ups - seen_ups):
    problems.append(f"docs/HACKING.md lists an arrow up that is gone: shim/{f} -> {s} (remove its row)")

# The rules' allowed world: pure helpers (text, JSON, names, tables, the device-code parser),
# the findings sink, and these C library functions.
RULE_SINKS = {"cs_finding"}
LIBC_PURE = {"snprintf", "vsnprintf", "sscanf", "strcmp", "strncmp", "strlen", "strstr", "strrchr", "strchr",
             "strcspn", "strspn", "strchrnul", "memcpy", "memmove", "memset", "memcmp", "strtol", "strtoul",
             "qsort", "__stack_chk_fail", "__tls_get_addr", "_GLOBAL_OFFSET_TABLE_", "__snprintf_chk",
             "__memcpy_chk", "__memset_chk", "__isoc99_sscanf", "__isoc23_sscanf", "__isoc23_strtol",
             "__tsan_func_entry", "__tsan_func_exit", "__ctype_b_loc", "__ctype_tolower_loc", "__ctype_toupper_loc",
             # what clang and newer glibc turn string work into
             "memchr", "memrchr", "bcmp", "strnlen", "strpbrk", "strcpy", "strncpy", "stpcpy", "strcat", "strncat",
             "__strcpy_chk", "__strncpy_chk", "__stpcpy_chk", "__strcat_chk", "__strncat_chk", "__memmove_chk",
             "strtoll", "strtoull", "atoi", "__isoc23_strtoul", "__isoc23_strtoll", "__isoc23_strtoull"}
for m, syms in sorted(used.items()):
    folder = m.split("/")[0]
    if folder not in ("rules", "base"):
        continue
    for s_ in sorted(syms):
        d = defined.get(s_)
        if d is None:
            ok = s_ in LIBC_PURE or s_.startswith(("__asan", "__ubsan", "__tsan", "__sanitizer"))
        elif folder == "base":
            ok = d.startswith("base/")
        else:
            ok = d.startswith(("rules/", "base/")) or s_ in RULE_SINKS
        if not ok:
            problems.append(f"shim/{m}.c uses {s_}" + (f" from shim/{source_of(d)}" if d else " (C library)") +
                            f": {folder}/ is pure (no I/O, no lock, no other layer" +
                            (" but the findings sink)" if folder == "rules" else ")"))

# Within a folder: no cycle among its objects (a depth-first search; a back edge is a cycle).
state, order, stack = {}, [], []

def visit(m):
    state[m] = 1
    stack.append(m)
    for d in sorted(edges[m]):
        if state.get(d) == 1:
            cyc = stack[stack.index(d):] + [d]
            problems.append("a cycle among the shim's modules: " +
                            "; ".join(f"{a} -> {b} ({', '.join(edges[a][b][:4])})" for a, b in zip(cyc, cyc[1:])))
            continue
        if d not in state:
            visit(d)
    stack.pop()
    state[m] = 2
    order.append(m)

sys.setrecursionlimit(10000)
for m in sorted(edges, key=lambda m: (mod_layer(m) or 0, m)):
    if m not in state:
        visit(m)

if problems:
    print("the shim's layers (docs/HACKING.md, \"Layers\") are broken:")
    print("\n".join("  " + p for p in problems))
    sys.exit(1)
folders = sorted(layer_of, key=layer_of.get)
print(f"{len(order)} modules in {len(folders)} folders, each using only its own folder and lower ones "
      f"({len(ups)} arrows up, listed), no cycle:")
for d in folders:
    print(f"  {layer_of[d]} {d}/: " + " ".join(m.split("/")[1] for m in order if m.startswith(d + "/")))
