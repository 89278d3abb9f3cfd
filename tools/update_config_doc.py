#!/usr/bin/env python3
"""Rewrite the CUDASHIM_* table in docs/configuration.md from shim/process/config_table.h."""
import os, subprocess
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
doc = os.path.join(ROOT, "docs/configuration.md")
lines = open(doc).read().split("\n")
table = subprocess.run([os.path.join(ROOT, "tools/gen_config_doc.sh")], capture_output=True, text=True,
                       check=True).stdout.rstrip("\n").split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("| variable"))
j = i
while j < len(lines) and lines[j].startswith("|"):
    j += 1
lines[i:j] = table
open(doc, "w").write("\n".join(lines))
