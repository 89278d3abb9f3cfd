#!/usr/bin/env bash
# CUDASHIM_* handling: garbage warns once and uses the default; file naming and safety.
. "$(dirname "$0")/lib.sh"
need_python
compile path_linked tests/programs/path_linked.c -L"$FAKES" -lcuda -Wl,-rpath,"$FAKES"
CUDASHIM_TRACE_ALL=banana with_shim ./path_linked >/dev/null 2>err || true
assert_eq "$(grep -c 'CUDASHIM_TRACE_ALL' err)" 1 "one warning naming the variable"
t=$(only_trace)
assert_eq "$(q field "$t" header mode)" default "default used after garbage"
rm -f "$TMP"/cudashim-*
RANK=3 CUDASHIM_TRACE_FILE="run-%r-%h-%p.jsonl" with_shim ./path_linked >/dev/null 2>&1 || true
ls "$TMP"/run-3-"$(hostname)"-*.jsonl >/dev/null || fail "%r %h %p not expanded: $(ls "$TMP")"
assert_eq "$(q field "$TMP"/run-3-*.jsonl header rank)" 3 "rank in header"
# An existing file (or a planted symlink) is never written through.
ln -s /etc/passwd "$TMP/fixed.jsonl"
CUDASHIM_TRACE_FILE="fixed.jsonl" with_shim ./path_linked >/dev/null 2>&1 || true
[ -f "$TMP/fixed.jsonl.1" ] || fail "did not move to a fresh name beside an existing file"
[ "$(readlink "$TMP/fixed.jsonl")" = /etc/passwd ] || fail "symlink touched"
# Disabled: nothing at all.
rm -f "$TMP"/*.jsonl*
CUDASHIM_DISABLE=1 with_shim ./path_linked >/dev/null 2>&1 || true
[ -z "$(ls "$TMP"/*.jsonl 2>/dev/null)" ] || fail "CUDASHIM_DISABLE=1 wrote a trace"
# Every variable in the code's table is documented, and nothing else is.
diff <(sed -n 's/^CS_VAR(\([A-Z_]*\),.*/CUDASHIM_\1/p' "$ROOT/shim/process/config_table.h" | sort) \
     <(grep -o '^| `CUDASHIM_[A-Z_]*`' "$ROOT/docs/configuration.md" | tr -d '|` ' | sort) ||
    fail "docs/configuration.md does not match shim/process/config_table.h"
echo ok
