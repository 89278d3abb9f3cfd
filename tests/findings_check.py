"""The table of findings (shim/trace/findings_table.h), the rules that raise them and docs/diagnoses.md
say the same: every row is raised somewhere and has its section, whose severity line names the
row's severities; no section or raise is left without a row; no id is written as a string."""
import glob, re, sys

root = sys.argv[1]
rows = re.findall(r'^CS_FINDING\((\w+),\s*"([a-z0-9-]+)",\s*"([a-z ]+)",\s*"[^"]+"\)',
                  open(f"{root}/shim/trace/findings_table.h").read(), re.M)
code = "".join(open(f).read() for f in glob.glob(f"{root}/shim/*/*.c"))
docs = open(f"{root}/docs/diagnoses.md").read()
sections = dict(re.findall(r"^## `([a-z0-9-]+)`\n(.*?)(?=^## |\Z)", docs, re.M | re.S))
bad = []
for name, fid, sevs in rows:
    if f"CS_F_{name}" not in code.replace("CS_F_COUNT", ""):
        bad.append(f"{fid}: in the table, raised by no rule")
    if name != fid.upper().replace("-", "_"):
        bad.append(f"{fid}: row name {name} is not the id in capitals")
    sec = sections.get(fid)
    if sec is None:
        bad.append(f"{fid}: no section in docs/diagnoses.md")
        continue
    m = re.search(r"\*\*Severity:\*\*(.*)", sec)
    for s in sevs.split():
        if not m or s not in m.group(1):
            bad.append(f"{fid}: the docs' severity line does not name {s}")
ids = {fid for _, fid, _ in rows}
bad += [f"{s}: a section of docs/diagnoses.md with no row in the table" for s in sections if s not in ids]
bad += [f"{x}: written as a string, not a row of the table" for x in re.findall(r'cs_finding\("([^"]+)"', code)]
print("\n".join(bad) or f"{len(rows)} findings: table, rules and docs agree")
sys.exit(1 if bad else 0)
