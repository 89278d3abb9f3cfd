"""The table of trace records (shim/trace/trace_records.h) and docs/trace-format.md say the same: every
record type has its section, every key of the table is named in it, and no section is left for a
type the table lacks."""
import re, sys

root = sys.argv[1]
text = re.sub(r'"\s*"', "", open(f"{root}/shim/trace/trace_records.h").read())
table = {t: keys.split() for t, keys in re.findall(r'^CS_RECORD\((\w+),\s*"([^"]*)"\)', text, re.M)}
docs = open(f"{root}/docs/trace-format.md").read()
sections = dict(re.findall(r"^## `([a-z_]+)`\n(.*?)(?=^## |\Z)", docs, re.M | re.S))
bad = []
for t, keys in table.items():
    if t not in sections:
        bad.append(f"{t}: no section in docs/trace-format.md")
        continue
    named = set(re.findall(r"`([a-z_]+)`", sections[t]))
    bad += [f"{t}: key {k} is not named in its section" for k in keys if k not in named]
bad += [f"{t}: a section with no row in shim/trace/trace_records.h" for t in sections if t not in table]
print("\n".join(bad) or f"{len(table)} record types: table and docs agree")
sys.exit(1 if bad else 0)
