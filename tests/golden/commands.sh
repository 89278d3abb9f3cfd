#!/usr/bin/env bash
# The golden commands: each writes NAME.out (stdout, then "exit N") into OUTDIR. Used by
# update.sh to write the expected outputs and by tests/t_18_cli.sh to compare.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLI="$1/cudashim"; OUTDIR=$2; F="$ROOT/tests/fixtures/traces"
export NO_COLOR=1 HOME=/home/user
cd "$F"
g() { local name=$1; shift; { "$CLI" "$@" 2>&1; echo "exit $?"; } >"$OUTDIR/$name.out"; }
g report-driver-too-old report driver-too-old.jsonl
g report-crash report crash.jsonl
g report-ranks report rank0.jsonl rank1.jsonl
g report-json-ranks report --json rank0.jsonl rank1.jsonl
g diff-good-bad diff good.jsonl bad.jsonl
g bugreport-ranks bugreport --hide-hosts rank0.jsonl rank1.jsonl
