#!/usr/bin/env bash
# The shim's layers (docs/HACKING.md, "Layers"): shim/ has one folder per layer, the map in
# HACKING.md matches the tree, each file uses only its own folder and lower ones (its object's
# symbols and its includes), no folder's objects call each other in a cycle, base/ and rules/
# are pure. A change that breaks one fails here, naming the file and the symbol; the way round
# is a hook the higher layer fills in at load time.
. "$(dirname "$0")/lib.sh"
need_python
command -v nm >/dev/null || skip "nm (binutils) is not installed"
out=$(python3 "$ROOT/tests/core_layers.py" "$BUILD/obj") || { echo "$out"; fail "the shim's layers are broken"; }
echo "$out" | head -1
has() { case "$1" in *"$2"*) ;; *) echo "$1"; fail "$3";; esac; }
has "$out" "(0 arrows up" "no file uses a folder above its own"

# The checker itself: each kind of break, made in a copy of the sources, is caught and named.
copy() { rm -rf "$TMP/r"; mkdir -p "$TMP/r/docs" "$TMP/r/wrappers"; cp -r "$ROOT/shim" "$TMP/r/"; cp -r "$ROOT/wrappers/gen" "$TMP/r/wrappers/"; cp "$ROOT/docs/HACKING.md" "$TMP/r/docs/"; }
check() { python3 "$ROOT/tests/core_layers.py" "$BUILD/obj" "$TMP/r" 2>&1; }

copy; echo '#include "../trace/trace.h"' >>"$TMP/r/shim/process/thread.c"
out=$(check) && fail "an include from a higher folder passed"
has "$out" "shim/process/thread.c includes shim/trace/trace.h, a layer above" "an include up is named"

copy; sed -i 's/^| 3 | `trace\/`/| 1 | `trace\/`/; s/^| 1 | `process\/`/| 3 | `process\/`/' "$TMP/r/docs/HACKING.md"
out=$(check) && fail "a call into a higher folder passed"
has "$out" "shim/trace/writer.c uses cs_exe_path from shim/loader/elf_sym.c, a layer above" "a call up is named"

copy; : >"$TMP/r/shim/trace/stray.c"; : >"$TMP/r/shim/loose.h"
out=$(check) && fail "a file outside the map passed"
has "$out" "shim/trace/stray.c is not in docs/HACKING.md's map" "a file missing from the map is named"
has "$out" "shim/loose.h is in no layer's folder" "a file outside the folders is named"

copy; sed -i 's/^| file | symbol | why it cannot be a hook |$/&\n|---|---|---|\n| `trace\/writer.c` | `cs_gone` | a test row |/' "$TMP/r/docs/HACKING.md"
out=$(check) && fail "a stale arrow up passed"
has "$out" "lists an arrow up that is gone: shim/trace/writer.c -> cs_gone" "a stale arrow up is named"
echo ok
