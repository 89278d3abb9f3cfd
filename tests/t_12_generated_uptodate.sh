#!/usr/bin/env bash
# The committed C matches the tables (wrappers/gen_c.py is deterministic).
. "$(dirname "$0")/lib.sh"
need_python
cp -r "$ROOT/wrappers" "$TMP/w"; mkdir -p "$TMP/tests/fakes/gen"
cp "$ROOT/tests/fakes/fake_cuda_special.txt" "$TMP/tests/fakes/"
python3 "$TMP/w/gen_c.py" || fail "generator failed"
diff -r "$ROOT/wrappers/gen" "$TMP/w/gen" || fail "wrappers/gen is stale: run make regen"
diff "$ROOT/tests/fakes/gen/fake_cuda_gen.c" "$TMP/tests/fakes/gen/fake_cuda_gen.c" || fail "fake driver is stale"
n=$(grep -vc '^#' "$ROOT/wrappers/cuda.tbl")
assert_eq "$n" 637 "driver functions in the table"
echo ok
