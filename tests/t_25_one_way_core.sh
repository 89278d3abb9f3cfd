#!/usr/bin/env bash
# The shim's modules call each other one way (docs/HACKING.md, "Layers"): the object files'
# dependency graph has no cycle. A change that makes a lower module call a higher one fails
# here, naming the call; the way round is a hook the higher layer fills in at load time.
. "$(dirname "$0")/lib.sh"
need_python
command -v nm >/dev/null || skip "nm (binutils) is not installed"
python3 "$ROOT/tests/core_layers.py" "$BUILD/obj" || fail "the shim's modules call each other in a cycle"
