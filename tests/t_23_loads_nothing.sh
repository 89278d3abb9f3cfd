#!/usr/bin/env bash
# The shim learns library versions without calling what the program has not called: it calls
# only version functions that are constants in NVIDIA's own binaries (checked here by
# disassembly), so it loads no library, prints no API log line and runs no initialiser the
# program did not, and cannot race the program's exit inside a library (cuDNN 9's
# cudnnGetVersion loads libcudnn_graph, whose initialisers crashed a process that was exiting).
. "$(dirname "$0")/lib.sh"
need_python
command -v objdump >/dev/null || skip "no objdump (binutils)"
C="$CUDA/lib64"
RS="${CUDASHIM_REALSTACK:-$HOME/.cache/cudashim-realstack}/root/usr/lib/x86_64-linux-gnu"
[ -e "$C/libcudnn.so.9" ] || [ -e "$RS/libcudart.so.11.0" ] || skip "no NVIDIA libraries (toolkit or fetched stack)"

# 1. Every version function the scanner may call is a constant: no call, no jump out of itself,
#    in every copy of its library on this machine.
python3 - "$ROOT/shim/evidence/library_version.c" "$C" "$RS" <<'PY' || fail "a version function the shim calls is not a constant"
import glob, os, re, subprocess, sys
src, dirs = open(sys.argv[1]).read(), sys.argv[2:]
files = {"nccl": "libnccl.so.*", "nvrtc": "libnvrtc.so.*", "nvJitLink": "libnvJitLink.so.*",
         "cufft": "libcufft.so.*", "cupti": "libcupti.so.*", "cusparse": "libcusparse.so.*",
         "cublas": "libcublas.so.*", "cublasLt": "libcublasLt.so.*", "cudnn": "libcudnn.so.*",
         "curand": "libcurand.so.*", "cusolver": "libcusolver.so.*", "cudart": "libcudart.so.*"}
constant = re.findall(r'\{ "(\w+)", "(\w+)", D_\w+, ASK_CONSTANT', src)
assert constant, "no ASK_CONSTANT sources found in library_version.c"
checked, bad = 0, []
for kind, fn in constant:
    assert kind in files, "no file pattern for " + kind
    for d in dirs:
        for lib in sorted(set(os.path.realpath(p) for p in glob.glob(os.path.join(d, files[kind])))):
            t = subprocess.run(["objdump", "-T", lib], capture_output=True, text=True).stdout
            row = [l.split() for l in t.splitlines() if l.split() and l.split()[-1] == fn and ".text" in l]
            if not row: continue
            start, size = int(row[0][0], 16), int(row[0][4], 16)
            asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=%d" % start,
                                  "--stop-address=%d" % (start + size), lib], capture_output=True, text=True).stdout
            for line in asm.splitlines():
                m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(\S*)", line)
                if not m: continue
                op, arg = m.group(2), m.group(3)
                target = int(arg, 16) if re.fullmatch(r"[0-9a-f]+", arg or "") else None
                if op.startswith("call") or (op.startswith("jmp") and (target is None or not start <= target < start + size)):
                    bad.append("%s %s: %s" % (os.path.basename(lib), fn, line.strip()))
            checked += 1
            print("constant: %s in %s (%d bytes)" % (fn, os.path.basename(lib), size))
for b in bad: print("NOT A CONSTANT:", b)
assert checked, "no library to check"
sys.exit(1 if bad else 0)
PY

# 2. cuDNN and cuBLAS, loaded and never called: under the shim the same libraries stay loaded
#    (cuDNN 9 does not load libcudnn_graph) and API logging prints the same lines.
compile load_libs tests/programs/load_libs.c -ldl
if [ -e "$C/libcudnn.so.9" ] && [ -e "$C/libcudart.so.13" ]; then
    args=(dlopen:"$C/libcudart.so.13" dlopen:"$C/libcudnn.so.9")
    [ -e "$C/libcublas.so.13" ] && args+=(dlopen:"$C/libcublas.so.13")
    [ -e "$C/libnccl.so.2" ] && args+=(dlopen:"$C/libnccl.so.2")
    (LD_LIBRARY_PATH="$FAKES" CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=stdout CUBLAS_LOGINFO_DBG=1 \
        CUBLAS_LOGDEST_DBG=stdout CUBLASLT_LOG_LEVEL=5 same_behaviour ./load_libs "${args[@]}" cuda sleep:300 libs) \
        >"$TMP/libs.out" || { cat "$TMP/libs.out"; exit 1; }
    out=$(cat "$TMP/libs.out")
    grep -q "loaded libcudnn.so.9" <<<"$out" || fail "cuDNN should be loaded: $out"
    ! grep -q "libcudnn_graph" <<<"$out" || fail "the program never called cuDNN, yet libcudnn_graph is loaded: $out"

    # 3. The program exits right after its first CUDA call, while the scanner takes its first
    #    inventory: never a crash (a crash here was once 1 run in 160 under load).
    for i in $(seq 1 12); do
        for j in 1 2; do
            LD_LIBRARY_PATH="$FAKES" CUDASHIM_TRACE_DIR="$TMP/exit$i.$j" with_shim ./load_libs "${args[@]}" cuda \
                >/dev/null 2>"$TMP/exit$i.$j.err" &
        done
        for j in 1 2; do wait -n || fail "run $i: the program failed at exit under the shim: $(cat "$TMP"/exit$i.*.err)"; done
    done
fi
echo ok
