#!/usr/bin/env bash
# The table of findings, the rules and docs/diagnoses.md agree (tests/findings_check.py); so do
# the table of trace records and docs/trace-format.md. The reference data is ordered, sourced, and
# the C generated from it is current.
. "$(dirname "$0")/lib.sh"
need_python
python3 "$ROOT/tests/findings_check.py" "$ROOT" || fail "the table of findings, the rules and docs/diagnoses.md differ"
python3 "$ROOT/tests/records_check.py" "$ROOT" || fail "the table of trace records and docs/trace-format.md differ"
python3 "$ROOT/tools/gen_reference.py" --check || fail "data/cuda-reference.txt"
python3 "$ROOT/tests/check_reference.py" "$ROOT" || fail "the reference tables against their sources"
python3 "$ROOT/tests/locks_check.py" "$ROOT" || fail "the locks and docs/HACKING.md's table of them differ"
echo ok
