#!/usr/bin/env bash
# real_traces.sh BUILD DIR: the rank traces a job of many ranks is made from, each a real run of
# the fake NCCL job (tests/programs/nccl_rank.c) under the shim with the fake driver, into
# DIR/real/KIND/: ahead (waits in its fourth all-reduce), behind (stuck in its third: the rank
# the others wait for), olddriver (a CUDA 12.2 driver), failing (an all-reduce fails). PRELOAD:
# what to preload instead of BUILD's library (a sanitizer's runtime first, from tests/lib.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=$1 W=$2
CC=${CC:-cc}
mkdir -p "$W/nccl"
$CC -shared -fPIC -O1 -o "$W/nccl/libnccl.so.2" -Wl,-soname,libnccl.so.2 -DVERSION=22809 "$ROOT/tests/programs/libs/fake_nccl.c"
$CC -O1 -o "$W/nccl_rank" "$ROOT/tests/programs/nccl_rank.c" -L"$W/nccl" -l:libnccl.so.2 -L"$BUILD/fakes" -lcuda
real() {  # KIND RANK ENV...
    local kind=$1 rank=$2; shift 2
    mkdir -p "$W/real/$kind"
    env RANK="$rank" LD_LIBRARY_PATH="$BUILD/fakes:$W/nccl" CUDASHIM_TRACE_DIR="$W/real/$kind" "$@" \
        LD_PRELOAD="${PRELOAD:-$BUILD/libcudashim.so}" "$W/nccl_rank" 4 >/dev/null 2>&1 || true
}
hang="FAKE_NCCL_HANG_S=2 CUDASHIM_HANG_TIMEOUT=0.5"
# shellcheck disable=SC2086
real ahead 0 $hang FAKE_NCCL_HANG_AT=3 & real behind 1 $hang FAKE_NCCL_HANG_AT=2 &
real olddriver 0 FAKE_CUDA_DRIVER_VERSION=12020 & real failing 0 FAKE_NCCL_FAIL_ALLREDUCE=2 & wait
for k in ahead behind olddriver failing; do
    ls "$W/real/$k"/*.jsonl >/dev/null 2>&1 || { echo "real_traces.sh: no $k trace" >&2; exit 1; }
done
