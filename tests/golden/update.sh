#!/usr/bin/env bash
# Rewrites the golden outputs from the fixture traces: run it after an intended change to what
# the cudashim command prints, and review the diff.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
"$ROOT/tests/golden/commands.sh" "$BUILD" "$ROOT/tests/golden"
