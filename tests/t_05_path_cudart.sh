#!/usr/bin/env bash
# Path 4: the real CUDA runtime (shared and static) resolves the driver through cuGetProcAddress_v2.
. "$(dirname "$0")/lib.sh"
need_cuda; need_python
compile path_cudart tests/programs/path_cudart.c -I"$CUDA/include" -L"$CUDA/lib64" -lcudart -Wl,-rpath,"$CUDA/lib64"
compile path_cudart_static tests/programs/path_cudart.c -I"$CUDA/include" -L"$CUDA/lib64" -lcudart_static -ldl -lpthread -lrt
export LD_LIBRARY_PATH="$FAKES"
for prog in path_cudart path_cudart_static; do
    rm -f "$TMP"/cudashim-* "$TMP"/counts*
    same_behaviour ./$prog >/dev/null
    FAKE_CUDA_COUNTS="$TMP/counts" CUDASHIM_TRACE_ALL=1 with_shim ./$prog >/dev/null
    t=$(ls -t "$TMP"/cudashim-*.jsonl | head -n 1)
    [ "$(q count "$t" api=cuGetProcAddress_v2 via=dlsym)" -ge 1 ] || fail "$prog: the resolver the runtime got from dlsym is not ours"
    n=$(q count "$t" api=cuGetProcAddress_v2 via=cuGetProcAddress)
    [ "$n" -gt 300 ] || fail "$prog: only $n lookups went through the wrapped resolver"
    [ "$(q count "$t" api=cuInit via=cuGetProcAddress)" -ge 1 ] || fail "$prog: cuInit not reached through cuGetProcAddress"
    assert_eq "$(q count "$t" symbol=cuGetProcAddress cuda_version=12000 resolved=cuGetProcAddress_v2)" 1 \
        "$prog: the resolver's self-lookup (5-argument ABI) returns our resolver"
    assert_eq "$(q count "$t" symbol=cuGetProcAddress cuda_version=11030 resolved=cuGetProcAddress)" 1 \
        "$prog: the resolver's self-lookup (4-argument ABI) returns the 4-argument one"
    assert_eq "$(q count "$t" symbol=cuLaunchKernel flags=2 resolved=cuLaunchKernel_ptsz)" 1 \
        "$prog: per-thread default stream request gets the _ptsz wrapper"
    assert_eq "$(q count "$t" symbol=cuMemAlloc cuda_version=3020 resolved=cuMemAlloc_v2)" 1 \
        "$prog: versioned ABI kept"
    diff <(q summary "$t") <(q counts "$TMP"/counts.*) || fail "$prog: ALL-mode counts differ from the driver's"
done
echo ok
