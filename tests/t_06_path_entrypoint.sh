#!/usr/bin/env bash
# Path 5: cudaGetDriverEntryPointByVersion. The runtime answers it from the resolver it obtained
# through its own cuGetProcAddress self-lookup, which the shim wraps (checked here). With the
# fake driver the runtime stops before the entry-point query (it needs private export tables
# a fake cannot provide), so the end-to-end call is checked on a GPU by tests/gpu/validate.sh.
. "$(dirname "$0")/lib.sh"
need_cuda; need_python
compile path_cudart tests/programs/path_cudart.c -I"$CUDA/include" -L"$CUDA/lib64" -lcudart -Wl,-rpath,"$CUDA/lib64"
export LD_LIBRARY_PATH="$FAKES"
out=$(same_behaviour ./path_cudart)
rm -f "$TMP"/cudashim-*
CUDASHIM_TRACE_ALL=1 with_shim ./path_cudart >/dev/null
t=$(only_trace)
assert_eq "$(q count "$t" symbol=cuGetProcAddress resolved=cuGetProcAddress_v2)" 1 \
    "the runtime's resolver is our wrapper"
if echo "$out" | grep -q "found=1"; then
    assert_eq "$(q count "$t" api=cuDriverGetVersion via=cuGetProcAddress)" 2 "entry point call traced"
else
    echo "entry-point call itself not reachable on the fake driver: $(echo "$out" | grep EntryPoint)"
fi
echo ok
