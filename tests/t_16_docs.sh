#!/usr/bin/env bash
# Every finding id the shim can write has its section in docs/diagnoses.md, and no section is
# left for an id the code no longer writes. The reference data is ordered, sourced, and the C
# generated from it is current.
. "$(dirname "$0")/lib.sh"
need_python
code=$(grep -ho 'cs_finding("[a-z0-9-]*"' "$ROOT"/shim/*.c | sed 's/cs_finding("//; s/"//' | sort -u)
docs=$(sed -n 's/^## `\([a-z0-9-]*\)`$/\1/p' "$ROOT/docs/diagnoses.md" | sort -u)
diff <(echo "$code") <(echo "$docs") || fail "finding ids in shim/*.c and sections of docs/diagnoses.md differ"
python3 "$ROOT/tools/gen_reference.py" --check || fail "data/cuda-reference.txt"
echo ok
