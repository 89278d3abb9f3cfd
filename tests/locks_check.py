"""docs/HACKING.md's table of locks lists each row of shim/process/locks_table.h, in its order, with its
kind and file; and no lock is made outside the table (a pthread mutex, rwlock or spin lock in
shim/ other than locks.c's).

  locks_check.py ROOT"""
import glob, os, re, sys

root = sys.argv[1]
table = re.findall(r'^CS_LOCK\((\w+),\s*(\w+),\s*"([^"]+)"', open(os.path.join(root, "shim/process/locks_table.h")).read(), re.M)
doc = open(os.path.join(root, "docs/HACKING.md")).read()
rows = re.findall(r'^\| `(\w+)` \| (mutex|rwlock) \| `([^`]+)` \|', doc, re.M)
want = [(i, k.lower(), f) for i, k, f in table]
bad = 0
if rows != want:
    print("docs/HACKING.md's lock table differs from shim/process/locks_table.h:")
    print("  table:", want)
    print("  doc:  ", rows)
    bad = 1
for i, k, f in table:
    src = os.path.join(root, "shim", f)
    if not os.path.exists(src) or not re.search(r"CS_LOCK_%s\b" % i, open(src).read()):
        print(f"shim/process/locks_table.h: {i}'s file shim/{f} does not take it")
        bad = 1
for path in sorted(glob.glob(os.path.join(root, "shim", "**", "*.[ch]"), recursive=True)):
    if path.endswith("/locks.c") or path.endswith("/glibc_floor.h"):  # names them, takes none
        continue
    for n, line in enumerate(open(path), 1):
        if re.search(r'pthread_(mutex|rwlock|spin)_t\b|PTHREAD_(MUTEX|RWLOCK)_INITIALIZER|pthread_(mutex|rwlock)_(lock|rdlock|wrlock|timedlock)\b', line):
            print(f"{os.path.relpath(path, root)}:{n}: a lock outside shim/process/locks_table.h: {line.strip()}")
            bad = 1
print(f"{len(table)} locks, in order, documented" if not bad else "", end="\n" if not bad else "")
sys.exit(bad)
