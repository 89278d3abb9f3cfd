#!/usr/bin/env bash
# The GEMM census and its findings: PyTorch's call sequences (cublasSetMathMode before every
# GEMM, cuBLASLt descriptors made and destroyed around every call) replayed against a fake
# cuBLAS and cuBLASLt with the real signatures and the fake driver at a chosen compute
# capability. Each finding is raised by its scenario, healthy runs (bf16 autocast, TF32, FP8 TN
# on Hopper, padded shapes, trivial work) raise none, and the program's output and exit status
# are as without the shim.
. "$(dirname "$0")/lib.sh"
need_python
compile replay tests/programs/gemm_replay.c -ldl
LIB="$TMP/lib"
mkdir -p "$LIB"
cp "$FAKES/libcuda.so.1" "$LIB/"
$CC -shared -fPIC -O1 -o "$LIB/libcublas.so.13" -Wl,-soname,libcublas.so.13 -DFAKE_CUBLAS \
    "$ROOT/tests/programs/libs/fake_blas.c" || fail "fake cuBLAS"
$CC -shared -fPIC -O1 -o "$LIB/libcublasLt.so.13" -Wl,-soname,libcublasLt.so.13 -DFAKE_CUBLASLT \
    "$ROOT/tests/programs/libs/fake_blas.c" || fail "fake cuBLASLt"

# scenario NAME CC ARGS...: the replay under the shim; $trace is its trace
scenario() { local name=$1 cc=$2; shift 2
    run_traced "$name" ./replay LD_LIBRARY_PATH="$LIB" FAKE_CUDA_CC="$cc" ${EXTRA_ENV:-} -- "$@"; }
gemm_findings() { q findings "$trace" | grep -E '^(gemm-|fp8-)' || true; }
expect_only() {  # ID SEVERITY WHAT: the one GEMM finding of the run
    local got; got=$(gemm_findings)
    [ "$got" = "$1 $2" ] || { q findings "$trace"; fail "$3: expected only '$1 $2', got '${got:-nothing}'"; }; }
expect_none() { local got; got=$(gemm_findings); [ -z "$got" ] || fail "$1: unexpected GEMM findings: $got"; }
says() { local s; s=$(q finding "$trace" "$1"); for w in "${@:2}"; do
    grep -qF -- "$w" <<<"$s" || { echo "$s"; fail "$1 does not say '$w'"; }; done; }
gemm_field() {  # API FIELD: the value in the trace's gemm line for API
    python3 - "$trace" "$1" "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"type":"gemm"' in l]
print(" ".join(str(r.get(sys.argv[3])) for r in rows if r["api"] == sys.argv[2]))
PY
}

# TF32 off: PyTorch's default for fp32 matmuls since 1.12.
scenario fp32 9.0 fp32
expect_only gemm-fp32-no-tf32 info "fp32 under DEFAULT_MATH on 9.0"
says gemm-fp32-no-tf32 "100%" "2.7 TFLOP in 20 calls" "9.0" "set_float32_matmul_precision('high')"
assert_eq "$(gemm_field cublasSgemm_v2 precision)" "fp32" "the census's precision"
assert_eq "$(gemm_field cublasSgemm_v2 math)" "DEFAULT_MATH" "the handle's math mode"
assert_eq "$(gemm_field cublasSgemm_v2 count)" "20" "calls counted"
assert_eq "$(gemm_field cublasSgemm_v2 flops)" "2748779069440" "the work"
! grep -q '"api":"cublasSetMathMode"' "$trace" || fail "a successful cublasSetMathMode is written as a line"
EXTRA_ENV=NVIDIA_TF32_OVERRIDE=0 scenario fp32_override 8.0 fp32
expect_only gemm-fp32-no-tf32 info "fp32 with NVIDIA_TF32_OVERRIDE=0"
says gemm-fp32-no-tf32 "NVIDIA_TF32_OVERRIDE=0"
scenario tf32 9.0 tf32
expect_none "fp32 under TF32_TENSOR_OP_MATH"
assert_eq "$(gemm_field cublasSgemm_v2 precision)" "tf32" "TF32's precision"
scenario trivial 9.0 trivial
expect_none "under a TFLOP of work"
scenario volta 7.0 fp32
expect_only gemm-no-reduced-precision info "all fp32 on 7.0"
scenario legacy 9.0 legacy
expect_only gemm-legacy-tensor-op-math warning "CUBLAS_TENSOR_OP_MATH on fp32"

# bf16 autocast: cublasGemmEx and cuBLASLt's gemm_and_bias, Tensor Core algorithms.
scenario bf16 9.0 bf16
expect_none "bf16 autocast"
assert_eq "$(gemm_field cublasLtMatmul tensor_cores)" "True" "the cuBLASLt algorithm's flags, read by the scanner"
assert_eq "$(gemm_field cublasLtMatmul k)" "1024" "cuBLASLt's k from the layouts"

# cuBLASLt picks an FMA kernel for an unpadded vocabulary.
scenario lt_fma 9.0 lt-fma
expect_only gemm-fma-kernel warning "fp16 on an FMA algorithm"
says gemm-fma-kernel "m=50257" "16-byte"
assert_eq "$(gemm_field cublasLtMatmul tensor_cores)" "False" "FMA flags"
scenario lt_padded 9.0 lt-padded
expect_none "the padded vocabulary"

# FP8 where it cannot run, where it can, and a small share.
scenario fp8_a100 8.0 fp8
expect_only fp8-cannot-run error "FP8 on 8.0"
says fp8-cannot-run "compute capability 8.0" "no FP8 Tensor Cores" "20 FP8 GEMM requests"
scenario fp8_nn 9.0 fp8 20 nn
expect_only fp8-cannot-run error "FP8 NN on 9.0"
says fp8-cannot-run "transa=N transb=N" "TN"
scenario fp8_nn_ada 8.9 fp8 20 nn
expect_only fp8-cannot-run error "FP8 NN on 8.9"
scenario fp8_nn_b200 10.0 fp8 20 nn
expect_none "FP8 NN on 10.0"
scenario fp8_tn 9.0 fp8
expect_none "FP8 TN on 9.0"
assert_eq "$(gemm_field cublasLtMatmul fast_accum)" "True" "FAST_ACCUM from the descriptor"
scenario fp8_small 9.0 fp8-small
expect_only fp8-small-share info "FP8 on a tenth of the work"
says fp8-small-share "10%" "1.05x"

# A GPU with the display watchdog that runs compute: one info line; none without it.
EXTRA_ENV=FAKE_CUDA_EXEC_TIMEOUT=1 scenario watchdog 9.0 bf16
q findings "$trace" | grep -qx "display-watchdog info" || { q findings "$trace"; fail "no display-watchdog line"; }
says display-watchdog "GPU 0" "KERNEL_EXEC_TIMEOUT = 1"
scenario no_watchdog 9.0 bf16
! q findings "$trace" | grep -q display-watchdog || fail "display-watchdog without the limit"

# The census changes nothing the program sees.
for s in fp32 bf16 lt-fma fp8; do
    same_behaviour env LD_LIBRARY_PATH="$LIB" FAKE_CUDA_CC=8.0 ./replay $s 5
done

# The report's GEMM section and diff between a fp32 run and a TF32 run.
"$CS_CLI" report "$TMP/fp32"/cudashim-*.jsonl >"$TMP/report.txt" || fail "report"
grep -q "^GEMM" "$TMP/report.txt" || { cat "$TMP/report.txt"; fail "the report has no GEMM section"; }
grep -q "fp32 .*100%" "$TMP/report.txt" || { cat "$TMP/report.txt"; fail "the GEMM section gives no share by precision"; }
grep -q "m=4096 n=4096 k=4096" "$TMP/report.txt" || fail "the GEMM section names no shape"
"$CS_CLI" diff "$TMP/tf32"/cudashim-*.jsonl "$TMP/fp32"/cudashim-*.jsonl >"$TMP/diff.txt" || true
grep -q "GEMM" "$TMP/diff.txt" && grep -q "tf32" "$TMP/diff.txt" && grep -q "fp32" "$TMP/diff.txt" ||
    { cat "$TMP/diff.txt"; fail "diff does not compare the GEMM shares"; }
# `cudashim check` says it before the job: Tensor Cores, the watchdog, ulimit -v, the variables.
(ulimit -v 67108864; env LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_CC=8.0 FAKE_CUDA_EXEC_TIMEOUT=1 NVIDIA_TF32_OVERRIDE=0 \
    CUDA_MODULE_LOADING=EAGER "$CS_CLI" check >"$TMP/check.txt" 2>&1) || true
for w in "TF32, bf16 and fp16; no FP8" "display watchdog on" "ulimit -v (address space)          65536 MiB" \
         "TF32 off in every NVIDIA library" "CUDA_MODULE_LOADING                EAGER"; do
    grep -qF -- "$w" "$TMP/check.txt" || { cat "$TMP/check.txt"; fail "check does not say '$w'"; }
done
env LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_CC=9.0 "$CS_CLI" check >"$TMP/check90.txt" 2>&1 || true
grep -qF "FP8 (TN layouts only)" "$TMP/check90.txt" || { cat "$TMP/check90.txt"; fail "check on 9.0 does not say FP8"; }
! grep -q "display watchdog on" "$TMP/check90.txt" || fail "check names a watchdog the GPU does not have"
echo "GEMM census: every finding raised by its scenario, none by the healthy ones"
