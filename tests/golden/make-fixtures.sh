#!/usr/bin/env bash
# Regenerates tests/fixtures/traces/ from the scenario programs (needs the toolkit for the real
# libcudart), with machine-specific paths, host names and pids replaced by fixed ones so the
# golden outputs in tests/golden/ stay stable. Then regenerates the golden outputs.
#   tests/golden/make-fixtures.sh [BUILD]     (run after an intended change to traces or reports)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
CUDA=${CUDA:-/usr/local/cuda}
OUT="$ROOT/tests/fixtures/traces"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
gcc -O1 -g -o crash "$ROOT/tests/programs/crash.c" -L"$BUILD/fakes" -lcuda -Wl,-rpath,"$BUILD/fakes"
gcc -O1 -g -o load_libs "$ROOT/tests/programs/load_libs.c" -ldl
gcc -O1 -g -o path_linked "$ROOT/tests/programs/path_linked.c" -L"$BUILD/fakes" -lcuda -Wl,-rpath,"$BUILD/fakes"
gcc -O1 -g -o path_cudart "$ROOT/tests/programs/path_cudart.c" -I"$CUDA/include" -L"$CUDA/lib64" -lcudart -Wl,-rpath,"$CUDA/lib64"
for v in 21903 22809; do
    mkdir -p nccl-$v
    gcc -shared -fPIC -o nccl-$v/libnccl.so.2 -Wl,-soname,libnccl.so.2 "$ROOT/tests/programs/libs/fake_stack.c" -DFAKE_NCCL -DVERSION=$v
done
run() { local name=$1; shift; mkdir -p "$W/t/$name"; env CUDASHIM_TRACE_DIR="$W/t/$name" LD_PRELOAD="$BUILD/libcudashim.so" "$@" >/dev/null 2>&1 || true; }
run driver-too-old env LD_LIBRARY_PATH="$BUILD/fakes" FAKE_CUDA_DRIVER_VERSION=12020 ./path_cudart
run crash env FAKE_CUDA_CRASH=cuCtxSynchronize ./crash sync
run rank0 env RANK=0 LD_LIBRARY_PATH="$BUILD/fakes:$W/nccl-22809" ./load_libs dlopen:libnccl.so.2 cuda
run rank1 env RANK=1 LD_LIBRARY_PATH="$BUILD/fakes:$W/nccl-21903" ./load_libs dlopen:libnccl.so.2 cuda
run good env LD_LIBRARY_PATH="$BUILD/fakes" ./path_linked
run bad env LD_LIBRARY_PATH="$BUILD/fakes" FAKE_CUDA_DRIVER_VERSION=12020 FAKE_CUDA_FAIL=cuDeviceGetName=999 ./path_linked
rm -rf "$OUT"; mkdir -p "$OUT"
host=$(hostname)
for d in "$W"/t/*; do
    name=$(basename "$d")
    f=$(ls "$d"/*.jsonl | head -n 1)
    h=node-a; [ "$name" = rank1 ] && h=node-b
    # Fixed paths, host, pids: the build tree becomes /opt/cudashim, the scratch dir /work/job.
    sed -e "s#$BUILD#/opt/cudashim/build#g" -e "s#$ROOT#/opt/cudashim#g" -e "s#$W#/work/job#g" \
        -e "s#\"host\":\"$host\"#\"host\":\"$h\"#g" -e "s#/home/[^/\"]*#/home/user#g" "$f" > "$OUT/$name.jsonl"
done
"$ROOT/tests/golden/update.sh" "$BUILD"
