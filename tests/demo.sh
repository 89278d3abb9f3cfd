#!/usr/bin/env bash
# `make demo`: the main job on a machine without a GPU. A CUDA program runs under `cudashim run`
# after a broken "upgrade": it was built with the CUDA 13 runtime (NVIDIA's real libcudart.so.13
# when /usr/local/cuda has it), but the driver only supports CUDA 12.2: NVIDIA's real 535 driver
# when tests/realstack/fetch.sh has fetched it, else the fake driver. The report at the end says
# why it fails and what to do.
set -eu
BUILD="$(cd "${1:-build}" && pwd)"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CUDA="${CUDA:-/usr/local/cuda}"
OUT="$BUILD/demo"
rm -rf "$OUT" && mkdir -p "$OUT"
if [ -e "$CUDA/lib64/libcudart.so.13" ] && [ -f "$CUDA/include/cuda_runtime_api.h" ]; then
    ${CC:-cc} -O1 -o "$OUT/app" "$ROOT/tests/programs/path_cudart.c" -I"$CUDA/include" -L"$CUDA/lib64" -lcudart -Wl,-rpath,"$CUDA/lib64"
    what="a program linked with NVIDIA's libcudart.so.13"
else
    ${CC:-cc} -O1 -o "$OUT/app" "$ROOT/tests/programs/path_linked.c" -L"$BUILD/fakes" -lcuda -Wl,-rpath,"$BUILD/fakes"
    what="a program linked with -lcuda (no toolkit here, so no real runtime)"
fi
REAL="${CUDASHIM_REALSTACK:-$HOME/.cache/cudashim-realstack}/root/usr/lib/x86_64-linux-gnu/nvidia/current"
if [ -e "$REAL/libcuda.so.1" ] && [ "$what" != "${what#a program linked with NVIDIA}" ]; then
    driver_dir=$REAL; driver="NVIDIA's real 535.261.03 driver (CUDA 12.2), no GPU"
else
    driver_dir=$BUILD/fakes; driver="a fake driver that supports CUDA 12.2"
fi
echo "== $what, on $driver =="
echo "\$ cudashim run -o $OUT/traces -- ./app"
set +e
( cd "$OUT" && LD_LIBRARY_PATH="$driver_dir" FAKE_CUDA_DRIVER_VERSION=12020 NO_COLOR=${NO_COLOR:-} \
      "$BUILD/cudashim" run -o "$OUT/traces" -- ./app )
rc=$?
set -e
echo "== exit status $rc: the program's own =="
echo "== the trace: $(ls "$OUT"/traces/*.jsonl); read it again with: $BUILD/cudashim report $OUT/traces =="
