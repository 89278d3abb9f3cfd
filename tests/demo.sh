#!/usr/bin/env bash
# `make demo`: a program on the fake driver (no GPU needed), run under the shim, with a broken
# "upgrade": the driver reports CUDA 12.2 and one allocation asks for more memory than exists.
set -eu
BUILD="$(cd "${1:-build}" && pwd)"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$BUILD/demo"
mkdir -p "$OUT" && rm -f "$OUT"/cudashim-*.jsonl
${CC:-cc} -O1 -o "$OUT/path_linked" "$ROOT/tests/programs/path_linked.c" -L"$BUILD/fakes" -lcuda -Wl,-rpath,"$BUILD/fakes"
echo "== running a CUDA program under the shim (fake driver, CUDA 12.2) =="
set +e
( cd "$OUT" && FAKE_CUDA_DRIVER_VERSION=12020 CUDASHIM_TRACE_DIR="$OUT" LD_PRELOAD="$BUILD/libcudashim.so" ./path_linked )
echo "== program exit status: $? (3 is the program's own) =="
set -e
echo "== trace: $(ls "$OUT"/cudashim-*.jsonl) =="
cat "$OUT"/cudashim-*.jsonl
