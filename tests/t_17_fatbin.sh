#!/usr/bin/env bash
# The device-code parser and predictor on the reference test vectors (committed fixtures, and the
# same vectors rebuilt by nvcc when the toolkit is here), malformed inputs, and `cudashim inspect`
# on them and on NVIDIA's real libcublas.so.13.
. "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/fatbin"
$CC -std=c11 -D_GNU_SOURCE -O1 -g -o "$TMP/fatbin_test" "$ROOT/tests/unit/fatbin_test.c" "$ROOT/shim/base/fatbin.c" \
    "$ROOT/shim/base/reference.c" "$ROOT/shim/base/reference_data.c" || fail "cannot build the parser test"
"$TMP/fatbin_test" "$FIX" || fail "parser on the committed vectors"
CLI="$BUILD/cudashim"
out=$("$CLI" inspect "$FIX/tv01_basic.fatbin") || fail "inspect tv01"
grep -q "SASS   sm_80 x1, sm_90 x1" <<<"$out" || { echo "$out"; fail "inspect: SASS of tv01"; }
grep -q "PTX    compute_90 (PTX 9.0) x1" <<<"$out" || { echo "$out"; fail "inspect: PTX of tv01"; }
out=$("$CLI" inspect "$FIX/tv13_host.o") || fail "inspect a host object"
grep -q "1 device-code container, 3 entries" <<<"$out" || { echo "$out"; fail "inspect: .nv_fatbin of a host object"; }
set +e
out=$("$CLI" inspect --device sm_100 --driver 12.8 "$FIX/tv01_basic.fatbin"); rc=$?
set -e
assert_eq "$rc" 1 "inspect exit status when a module cannot run"
grep -q "PTX 9.0 needs a driver for CUDA 13.0" <<<"$out" || { echo "$out"; fail "inspect: 222 explanation"; }
grep -q "CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222" <<<"$out" || { echo "$out"; fail "inspect: 222 named"; }
out=$("$CLI" inspect --device 12.0 --driver 13.0 "$FIX/tv17_default.fatbin") || fail "tv17 on sm_120 should JIT"
grep -q "1 would JIT-compile PTX" <<<"$out" || { echo "$out"; fail "inspect: JIT verdict"; }
set +e
out=$("$CLI" inspect --device sm_120 "$FIX/tv07_bw.fatbin" 2>&1); rc=$?
set -e
grep -q "sm_120 (Blackwell" <<<"$out" && grep -q "209" <<<"$out" || { echo "$out"; fail "inspect: 209 explanation"; }
for f in "$FIX"/bad0[1-5]* "$FIX"/bad07* "$FIX"/bad08*; do
    set +e; "$CLI" inspect "$f" >/dev/null 2>"$TMP/err"; rc=$?; set -e
    assert_eq "$rc" 3 "inspect rejects $(basename "$f")"
    [ -s "$TMP/err" ] || fail "no message for $(basename "$f")"
done

if [ -x "$CUDA/bin/nvcc" ]; then
    # The same vectors from this machine's nvcc: the expectations must hold for fresh output too.
    V="$TMP/vectors"; mkdir -p "$V"; cp "$FIX"/bad* "$FIX/tv12_lto.fatbin" "$V/"
    ( cd "$V" && export PATH="$CUDA/bin:$PATH"
      cat > k.cu <<'CU'
__global__ void addk(float *a, const float *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += b[i] * 2.0f; }
CU
      G3="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]"
      nvcc -fatbin $G3 -o tv01_basic.fatbin k.cu
      nvcc -fatbin $G3 -Xfatbin -compress-all --compress-mode=speed -o tv03_mode_speed_lz4.fatbin k.cu
      nvcc -fatbin -gencode arch=compute_90a,code=[sm_90a,compute_90a] -gencode arch=compute_100a,code=[sm_100a,compute_100a] \
          -gencode arch=compute_100f,code=[sm_100f,compute_100f] -gencode arch=compute_120,code=[sm_120,compute_120] -o tv06_a_f.fatbin k.cu
      nvcc -fatbin -gencode arch=compute_103,code=sm_103 -gencode arch=compute_110,code=sm_110 \
          -gencode arch=compute_121,code=[sm_121,compute_121] -o tv07_bw.fatbin k.cu
      nvcc -ptx -arch=compute_80 -o k80.ptx k.cu
      sed -e 's/^\.version .*/.version 7.8/' k80.ptx > k80_v78.ptx
      sed -e 's/^\.version .*/.version 8.0/' -e 's/^\.target .*/.target sm_75/' k80.ptx > k75_v80.ptx
      sed -e 's/^\.version .*/.version 9.1/' k80.ptx > k80_v91.ptx
      nvcc -cubin -arch=compute_90 -code=sm_90 -o c_sm_90.cubin k.cu
      fatbinary --create=tv10_handmade.fatbin -64 --image3=kind=ptx,sm=80,file=k80_v78.ptx \
          --image3=kind=ptx,sm=75,file=k75_v80.ptx --image3=kind=elf,sm=90,file=c_sm_90.cubin
      fatbinary --create=tv11_ptx91.fatbin -64 --image3=kind=ptx,sm=80,file=k80_v91.ptx
      nvcc -cubin -arch=compute_120 -code=sm_120 -o tv15_sm_120.cubin k.cu
      cp k80.ptx tv16_compute80.ptx
      nvcc -fatbin -o tv17_default.fatbin k.cu ) >"$TMP/nvcc.log" 2>&1 || { cat "$TMP/nvcc.log"; fail "nvcc could not build the vectors"; }
    "$TMP/fatbin_test" "$V" || fail "parser on vectors built by nvcc"
else
    echo "skipped the nvcc-built vectors: no $CUDA/bin/nvcc"
fi
if [ -e "$CUDA/lib64/libcublas.so.13" ]; then
    out=$("$CLI" inspect "$CUDA/lib64/libcublas.so.13") || fail "inspect libcublas"
    grep -q "193 device-code containers, 1257 entries" <<<"$out" || { echo "$out"; fail "libcublas: containers/entries"; }
    for a in sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 "compute_120 (PTX 9.0)"; do
        grep -q "$a x" <<<"$out" || { echo "$out"; fail "libcublas: no $a"; }
    done
fi
# A Pascal GPU and a build for sm_80 only: the advice names toolkits that can still target it
# (CUDA 13 dropped Pascal), not "CUDA 8.0 or later".
out=$("$CLI" inspect --device 6.1 --driver 13.0 "$ROOT/tests/fixtures/fatbin/tv18_sm80_only.fatbin" || true)
grep -q "made with CUDA 8.0 to" <<<"$out" && grep -q "12.x (CUDA 13 and later cannot target it)" <<<"$(tr '\n' ' ' <<<"$out" | tr -s ' ')" ||
    { echo "$out"; fail "the advice for sm_61 must stop at CUDA 12"; }
echo ok
