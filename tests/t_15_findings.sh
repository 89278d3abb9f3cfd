#!/usr/bin/env bash
# Findings: one broken stack per finding, built inside the test (a fake driver of a chosen
# version, fake libraries with chosen sonames in chosen directories, and NVIDIA's real libraries
# where present). Each asserts the finding id and that its summary names the right versions and
# paths. The healthy stack at the end must produce no warning or error.
. "$(dirname "$0")/lib.sh"
need_python
compile load_libs tests/programs/load_libs.c -ldl
LIBSRC="$ROOT/tests/programs/libs/fake_stack.c"
# fakelib DIR SONAME [cflags...]: a fake library named SONAME in DIR
fakelib() { local dir=$1 so=$2; shift 2; mkdir -p "$dir"
    $CC -shared -fPIC -o "$dir/$so" -Wl,-soname,"$so" "$LIBSRC" "$@" || fail "cannot build $so"; }
run_case() { local name=$1; shift; run_traced "$name" ./load_libs "$@"; }
has_finding() { q findings "$trace" | grep -qx "$1 $2" || { q findings "$trace"; fail "$3: no $2 finding $1"; }; }
summary_has() { local s; s=$(q finding "$trace" "$1"); for w in "${@:2}"; do
    grep -qF -- "$w" <<<"$s" || { echo "$s"; fail "finding $1 does not mention '$w'"; }; done; }
no_alarms() { local f; f=$(q findings "$trace" | grep -E ' (warning|error)$' || true)
    [ -z "$f" ] || fail "$1: unexpected findings: $f"; }

# 5. cuGetProcAddress: a library asks for a function at a CUDA newer than the driver.
run_case procaddr LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 FAKE_CUDA_MISSING=cuCtxCreate_v4 -- \
    cuda procaddr:cuCtxCreate_v4:12080
has_finding missing-symbol info "lookup above the driver, same major"
summary_has missing-symbol "load_libs" "cuCtxCreate_v4" "CUDA 12.8" "CUDA 12.2" "570.26"
run_case procaddr13 LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 FAKE_CUDA_MISSING=cuCtxCreate_v4 -- \
    cuda procaddr:cuCtxCreate_v4:13000
# across majors the lookup is evidence of one cause, not a finding of its own
has_finding driver-too-old error "lookup above the driver's major"
summary_has driver-too-old "load_libs (CUDA 13.0)" "580.65.06" "1 lookup of driver functions this driver lacks"
! q findings "$trace" | grep -q missing-symbol || fail "the lookup across majors is driver-too-old's evidence, not a finding"

# 5. dlsym on a CUDA library's handle returns NULL (an old driver without the function): a probe,
# as runtimes make when they start; counted (driver-too-old names them), never a finding alone.
fakelib "$TMP/olddrv" libcuda.so.1 -DFAKE_DRIVER
run_case dlsym_miss LD_LIBRARY_PATH="$TMP/olddrv" -- dlopen:libcuda.so.1 dlsym:cuMemAlloc_v2 cuda
grep -q "dlsym cuMemAlloc_v2: missing" "$TMP/dlsym_miss.out" || fail "the lookup should miss"
! q findings "$trace" | grep -q missing-symbol || fail "a probe of libcuda is not a finding"
no_alarms "a probe of libcuda"

# 5. A load fails with "undefined symbol: __nvJitLinkAddData_12_1": an old nvJitLink first on
# LD_LIBRARY_PATH shadows the one cuSPARSE was built against.
fakelib "$TMP/new" libnvJitLink.so.12 -DFAKE_JITLINK -DMAJOR=12 -DMINOR=4 -DNEW_API \
    -Wl,--version-script=<(echo 'libnvJitLink.so.12 { global: *; };')
fakelib "$TMP/new" libcusparse.so.12 -DFAKE_SPARSE -L"$TMP/new" -l:libnvJitLink.so.12 -Wl,-rpath,"$TMP/new"
fakelib "$TMP/old" libnvJitLink.so.12 -DFAKE_JITLINK -DMAJOR=12 -DMINOR=0 \
    -Wl,--version-script=<(echo 'libnvJitLink.so.12 { global: *; };')
run_case undefined LD_LIBRARY_PATH="$TMP/old" -- dlopen:"$TMP/new/libcusparse.so.12"
grep -q "undefined symbol: __nvJitLinkAddData_12_1" "$TMP/undefined.out" || fail "the load should fail: $(cat "$TMP/undefined.out")"
has_finding missing-symbol error "undefined symbol at load"
summary_has missing-symbol "libcusparse.so.12" "__nvJitLinkAddData_12_1" "$TMP/old/libnvJitLink.so.12" "LD_LIBRARY_PATH"

# 5. A system cuDNN first on LD_LIBRARY_PATH shadows the one the framework's wheel ships on its
# RUNPATH: the loader searches LD_LIBRARY_PATH first. Without that entry: no warning.
site="$TMP/shadow/site"
fakelib "$site/nvidia/cudnn/lib" libcudnn.so.9 -DFAKE_CUDNN -DVERSION=91002 -DCUDART=12080
mkdir -p "$site/nvidia_cudnn_cu12-9.10.2.21.dist-info"
fakelib "$TMP/shadow/sys" libcudnn.so.9 -DFAKE_CUDNN -DVERSION=90100 -DCUDART=12020
fakelib "$site/torch/lib" libtorch_cuda.so -DFAKE_FRAMEWORK -L"$site/nvidia/cudnn/lib" -Wl,--no-as-needed -l:libcudnn.so.9 \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cudnn/lib'
run_case shadowed LD_LIBRARY_PATH="$FAKES:$TMP/shadow/sys" -- cuda dlopen:"$site/torch/lib/libtorch_cuda.so"
has_finding library-shadowed warning "a system cuDNN shadows the wheel's"
summary_has library-shadowed "libcudnn.so.9" "LD_LIBRARY_PATH entry $TMP/shadow/sys" "that libtorch_cuda.so ships on its RUNPATH" \
    "instead of $(realpath "$site/nvidia/cudnn/lib/libcudnn.so.9"), 9.10.2" "Remove $TMP/shadow/sys from LD_LIBRARY_PATH"
run_case not_shadowed LD_LIBRARY_PATH="$FAKES" -- cuda dlopen:"$site/torch/lib/libtorch_cuda.so"
q findings "$trace" | grep -q library-shadowed && fail "library-shadowed without the LD_LIBRARY_PATH entry"
no_alarms "the wheel's own cuDNN"

# 5. An extension linked to libcudart.so.12, found through LD_LIBRARY_PATH, beside the framework's
# libcudart.so.13 from its RUNPATH: the thing to change is the extension (rebuild it for CUDA 13);
# taking the directory out of LD_LIBRARY_PATH would only break its import.
fakelib "$TMP/two/fw/lib" libcudart.so.13 -DFAKE_FRAMEWORK
fakelib "$TMP/two/sys" libcudart.so.12 -DFAKE_FRAMEWORK
fakelib "$TMP/two/fw" libtorch_cuda.so -DFAKE_FRAMEWORK -L"$TMP/two/fw/lib" -Wl,--no-as-needed -l:libcudart.so.13 \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'
fakelib "$TMP/two/ext" my_ext.so -DFAKE_FRAMEWORK -L"$TMP/two/sys" -Wl,--no-as-needed -l:libcudart.so.12
run_case two_runtimes LD_LIBRARY_PATH="$FAKES:$TMP/two/sys" -- cuda dlopen:"$TMP/two/fw/libtorch_cuda.so" dlopen:"$TMP/two/ext/my_ext.so"
has_finding library-loaded-twice warning "two runtime majors"
summary_has library-loaded-twice "Rebuild my_ext.so (it needs libcudart.so.12) for the CUDA of libcudart.so.13, which libtorch_cuda.so uses" \
    "would only make my_ext.so fail to load"

# 5. cuBLAS 12.4 from a wheel, its cuBLASLt put first by LD_LIBRARY_PATH from a 12.1 toolkit:
# a set of two releases. With both from the wheel: nothing.
pair="$TMP/pair"
mkdir -p "$pair/wheel" "$pair/toolkit"
$CC -shared -fPIC -o "$pair/wheel/libcublasLt.so.12.4.5.8" -Wl,-soname,libcublasLt.so.12 "$LIBSRC" -DFAKE_FRAMEWORK
ln -sf libcublasLt.so.12.4.5.8 "$pair/wheel/libcublasLt.so.12"
$CC -shared -fPIC -o "$pair/toolkit/libcublasLt.so.12.1.3.1" -Wl,-soname,libcublasLt.so.12 "$LIBSRC" -DFAKE_FRAMEWORK
ln -sf libcublasLt.so.12.1.3.1 "$pair/toolkit/libcublasLt.so.12"
$CC -shared -fPIC -o "$pair/wheel/libcublas.so.12.4.5.8" -Wl,-soname,libcublas.so.12 "$LIBSRC" -DFAKE_FRAMEWORK \
    -L"$pair/wheel" -Wl,--no-as-needed -l:libcublasLt.so.12 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
ln -sf libcublas.so.12.4.5.8 "$pair/wheel/libcublas.so.12"
run_case pair LD_LIBRARY_PATH="$FAKES:$pair/toolkit" -- cuda dlopen:"$pair/wheel/libcublas.so.12"
has_finding library-set-mismatch error "cuBLAS 12.4 with cuBLASLt 12.1"
summary_has library-set-mismatch "libcublas.so.12 12.4.5 (" "libcublasLt.so.12 12.1.3 (" "Remove $pair/toolkit from LD_LIBRARY_PATH"
run_case pair_ok LD_LIBRARY_PATH="$FAKES" -- cuda dlopen:"$pair/wheel/libcublas.so.12"
q findings "$trace" | grep -q library-set-mismatch && fail "library-set-mismatch for one release"

# 5. A load fails with "cannot open shared object file" (a cuDNN 8 sub-library asked of a cuDNN 9 stack).
run_case cannot_open LD_LIBRARY_PATH="$FAKES" -- cuda dlopen:libcudnn_cnn_infer.so.8
has_finding library-not-found warning "missing sub-library"
summary_has library-not-found "libcudnn_cnn_infer.so.8"

# A load of the unversioned libcuda.so (cuDNN 8's sub-libraries, bitsandbytes) where only libcuda.so.1
# exists, as in WSL's /usr/lib/wsl/lib: the development link is what is missing, and where to make it.
mkdir -p "$TMP/wsl" && cp "$FAKES/libcuda.so.1" "$TMP/wsl/"
run_case unversioned LD_LIBRARY_PATH="$TMP/wsl" -- cuda dlopen:libcuda.so
has_finding library-not-found warning "the unversioned libcuda.so"
summary_has library-not-found "asks for the unversioned name" "$TMP/wsl/libcuda.so.1"

# Results with one usual cause on a partial install, each checked where it can be.
run_case jit LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_FAIL=cuDeviceGet=221 -- cuda
has_finding ptx-jit-missing error "221"
summary_has ptx-jit-missing "CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221)" "libnvidia-ptxjitcompiler.so.1" "not installed beside libcuda.so.1"
run_case fabric LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_FAIL=cuDeviceGet=802 -- cuda
has_finding fabric-manager-not-running error "802"
summary_has fabric-manager-not-running "CUDA_ERROR_SYSTEM_NOT_READY (802)" "nvidia-fabricmanager"
run_case unknown LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_FAIL=cuInit=999 CUDASHIM_DRIVER_VERSION_FILE=/nonexistent -- cuda
has_finding cuda-unknown-error error "999 at cuInit"
summary_has cuda-unknown-error "cuInit failing with CUDA_ERROR_UNKNOWN (999)"

# 6. CUDA used in a child forked after the parent's cuInit.
run_case fork LD_LIBRARY_PATH="$FAKES" -- cuda fork
grep -q "child cuDeviceGet" "$TMP/fork.out" || fail "the child did not run"
child=$(grep -l forked_from "$TMP"/fork/cudashim-*.jsonl) || fail "no child trace"
trace=$child has_finding cuda-in-forked-child error "fork after cuInit"
trace=$(grep -L forked_from "$TMP"/fork/cudashim-*.jsonl); no_alarms "the parent"

# 7. A CPU-only framework: reported only when a GPU is expected.
fakelib "$TMP/torch" libtorch_cpu.so -DFAKE_FRAMEWORK
run_case cpu_only CUDASHIM_EXPECT_GPU=1 -- dlopen:"$TMP/torch/libtorch_cpu.so"
has_finding no-cuda-loaded error "CPU-only build"
summary_has no-cuda-loaded "libtorch_cpu.so" "CPU-only"
mkdir -p "$TMP/quiet"
CUDASHIM_TRACE_DIR="$TMP/quiet" LD_PRELOAD="$PRELOAD" ./load_libs dlopen:"$TMP/torch/libtorch_cpu.so" >/dev/null 2>&1
[ -z "$(ls "$TMP/quiet")" ] || fail "a CPU program without CUDASHIM_EXPECT_GPU left a trace"

# 2. Errors 803 and 804, with a forward-compatibility libcuda in a compat directory.
mkdir -p "$TMP/cuda-13.0/compat"
cp "$FAKES/libcuda.so.1" "$TMP/cuda-13.0/compat/libcuda.so.580.65.06"
ln -sf libcuda.so.580.65.06 "$TMP/cuda-13.0/compat/libcuda.so.1"
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  575.51.03  Tue Apr 1 00:00:00 UTC 2025" >"$TMP/nvidia-version"
run_case e803 LD_LIBRARY_PATH="$TMP/cuda-13.0/compat" FAKE_CUDA_FAIL=cuInit=803 \
    CUDASHIM_DRIVER_VERSION_FILE="$TMP/nvidia-version" -- cuda
has_finding driver-kernel-mismatch error "803"
summary_has driver-kernel-mismatch "580.65.06" "575.51.03" "$TMP/cuda-13.0/compat" "LD_LIBRARY_PATH"
run_case e804 LD_LIBRARY_PATH="$TMP/cuda-13.0/compat" FAKE_CUDA_FAIL=cuInit=804 \
    CUDASHIM_DRIVER_VERSION_FILE="$TMP/nvidia-version" -- cuda
has_finding compat-unsupported-gpu error "804"
summary_has compat-unsupported-gpu "580.65.06" "$TMP/cuda-13.0/compat"

# 3. One library loaded twice: NCCL from LD_LIBRARY_PATH and a second copy by full path.
fakelib "$TMP/nccl-a" libnccl.so.2 -DFAKE_NCCL -DVERSION=21903
fakelib "$TMP/nccl-b" libnccl.so.2 -DFAKE_NCCL -DVERSION=22809
run_case twice LD_LIBRARY_PATH="$FAKES:$TMP/nccl-a" -- dlopen:libnccl.so.2 dlopen:"$TMP/nccl-b/libnccl.so.2" cuda
has_finding library-loaded-twice error "two NCCLs"
summary_has library-loaded-twice "$TMP/nccl-a/libnccl.so.2 2.19.3" "$TMP/nccl-b/libnccl.so.2 2.28.9" \
    "LD_LIBRARY_PATH entry $TMP/nccl-a"

if [ -e "$CUDA/lib64/libcudart.so.13" ]; then
    # 1. Driver too old for the runtime: the real libcudart.so.13 (shared, then static) on a 12.2 driver.
    compile path_cudart tests/programs/path_cudart.c -I"$CUDA/include" -L"$CUDA/lib64" -lcudart -Wl,-rpath,"$CUDA/lib64"
    compile path_cudart_static tests/programs/path_cudart.c -I"$CUDA/include" -L"$CUDA/lib64" -lcudart_static -ldl -lpthread -lrt
    for prog in path_cudart path_cudart_static; do
        mkdir -p "$TMP/t_$prog"
        LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 CUDASHIM_TRACE_DIR="$TMP/t_$prog" with_shim ./$prog >"$TMP/$prog.out" 2>"$TMP/$prog.err"
        grep -q cudaErrorInsufficientDriver "$TMP/$prog.out" || fail "$prog: the runtime should refuse the driver"
        trace=$(ls "$TMP/t_$prog"/cudashim-*.jsonl)
        has_finding driver-too-old error "$prog"
        who=libcudart.so.13; [ $prog = path_cudart_static ] && who=path_cudart_static
        summary_has driver-too-old "$who (CUDA 13.0)" "CUDA 12.2" "580.65.06"
        grep -q "driver-too-old" "$TMP/$prog.err" || fail "$prog: the diagnosis is not on stderr"
    done

    # 4. cuDNN built for CUDA 12 beside the CUDA 13 runtime; and a second cuDNN beside the toolkit's.
    # A framework wheel built for CUDA 12.1 (torch-2.5.1+cu121 beside it) on a CUDA 11.8 driver.
    mkdir -p "$TMP/wheel/torch/lib" "$TMP/wheel/torch-2.5.1+cu121.dist-info"
    $CC -shared -fPIC -o "$TMP/wheel/torch/lib/libtorch_cuda.so" -DFAKE_FRAMEWORK "$LIBSRC" || fail "fake torch"
    run_case torch LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=11080 -- dlopen:"$TMP/wheel/torch/lib/libtorch_cuda.so" cuda
    has_finding driver-too-old error "torch cu121 on a CUDA 11.8 driver"
    summary_has driver-too-old "libtorch_cuda.so (CUDA 12.1)" "CUDA 11.8"
    # What would work, from the reference tables: the same release built for the driver's CUDA, or the driver this build needs.
    summary_has driver-too-old "What would work here: keep this driver (CUDA 11.8): torch 2.5 built for CUDA 11.8 runs here" \
        "--index-url https://download.pytorch.org/whl/cu118" "or keep torch 2.5.1+cu121 and upgrade the driver to one for CUDA 12.1 (Linux >= 525.60.13)"
    grep -q '"version":"2.5.1+cu121","version_code":0,"version_api":"its wheel (torch)"' "$trace" || fail "the framework's build"

    # TensorFlow 2.16 (built with CUDA 12.3, as its build_info.py says) on a CUDA 11.8 driver of a
    # T4, in a site-packages that also holds a PyTorch wheel which was not imported.
    tf="$TMP/tfsite/tensorflow"
    mkdir -p "$tf/python/platform" "$TMP/tfsite/tensorflow-2.16.1.dist-info" "$TMP/tfsite/torch-2.5.1+cu121.dist-info"
    printf "import collections\nbuild_info = collections.OrderedDict({'cuda_version': '12.3', 'cudnn_version': '8', 'is_cuda_build': True})\n" \
        >"$tf/python/platform/build_info.py"
    fakelib "$tf" libtensorflow_framework.so.2 -DFAKE_FRAMEWORK
    # The runtime refuses the driver before asking any GPU's name: the kernel module's list names it.
    gpu_info() { mkdir -p "$TMP/$1/gpus/0000:00:1e.0"; echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  $2" >"$TMP/$1/version"
        printf 'Model: \t\t %s\nIRQ:   \t\t 42\nBus Location: \t 0000:00:1e.0\n' "$3" >"$TMP/$1/gpus/0000:00:1e.0/information"; }
    gpu_info t4 520.61.05 "Tesla T4"
    run_case tensorflow LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=11080 CUDASHIM_DRIVER_VERSION_FILE="$TMP/t4/version" -- \
        dlopen:"$tf/libtensorflow_framework.so.2" cuda
    has_finding driver-too-old error "tensorflow built with CUDA 12.3 on a CUDA 11.8 driver"
    summary_has driver-too-old "libtensorflow_framework.so.2 (CUDA 12.3)" "its wheel (tensorflow 2.16.1)" \
        "keep this driver (CUDA 11.8): tensorflow 2.14, built with CUDA 11.8 and cuDNN 8.7, runs here" \
        "or keep tensorflow 2.16.1 and upgrade the driver to one for CUDA 12.3 (Linux >= 525.60.13)" \
        "cuda-compat-12-3" "allowed on the Tesla T4"
    grep -q '"version":"2.16.1","version_code":0,"version_api":"its wheel (tensorflow)"' "$trace" ||
        fail "TensorFlow's library was not named by its own wheel"

    # JAX's CUDA 13 plugin on a CUDA 12.2 driver of a GeForce card: jax[cuda12] runs; forward
    # compatibility is not offered where NVIDIA does not allow it.
    jp="$TMP/jaxsite/jax_plugins/xla_cuda13"
    mkdir -p "$TMP/jaxsite/jax_cuda13_plugin-0.7.2.dist-info"
    fakelib "$jp" xla_cuda_plugin.so -DFAKE_FRAMEWORK
    gpu_info rtx 535.183.01 "NVIDIA GeForce RTX 4090"
    run_case jax LD_LIBRARY_PATH="$FAKES" FAKE_CUDA_DRIVER_VERSION=12020 CUDASHIM_DRIVER_VERSION_FILE="$TMP/rtx/version" -- \
        dlopen:"$jp/xla_cuda_plugin.so" cuda
    has_finding driver-too-old error "JAX's CUDA 13 plugin on a CUDA 12.2 driver"
    summary_has driver-too-old "xla_cuda_plugin.so (CUDA 13.0)" "pip install -U \"jax[cuda12]\"" \
        "or keep jax_cuda13_plugin 0.7.2 and upgrade the driver to one for CUDA 13.0 (Linux >= 580.65.06)" \
        "forward compatibility (cuda-compat-13-0) is not an option: the NVIDIA GeForce RTX 4090 is not a data centre GPU"

    # The shim never asks cuDNN (cuDNN 9's cudnnGetVersion loads libcudnn_graph): what cuDNN is
    # and which CUDA it is built for come from its wheel, or from the program's own calls.
    pip="$TMP/site/nvidia/cudnn/lib"
    fakelib "$pip" libcudnn.so.9 -DFAKE_CUDNN -DVERSION=90100 -DCUDART=12080
    mkdir -p "$TMP/site/nvidia_cudnn_cu12-9.1.0.70.dist-info"
    run_case major LD_LIBRARY_PATH="$FAKES:$pip" -- dlopen:"$CUDA/lib64/libcudart.so.13" dlopen:libcudnn.so.9 cuda
    # cuDNN 9 carries its own runtime: its CUDA decides only the driver it needs (driver-too-old's
    # business), not a mismatch with the process's runtime.
    ! q findings "$trace" | grep -q library-cuda-major-mismatch || fail "cuDNN 9 for CUDA 12 beside a CUDA 13 runtime is no mismatch"
    grep -q '"type":"library".*"built_for_cuda":12000,"built_for_source":"its wheel (nvidia_cudnn_cu12)"' "$trace" ||
        fail "cuDNN's CUDA (12, from its wheel) is not in the trace"
    assert_eq "$(grep -c '^cudnnGetVersion=' "$TMP/major.out" || true)" 0 "the program made no cuDNN call"
    assert_eq "$(q count "$trace" api=cudnnGetVersion)" 0 "the shim made no cuDNN call"
    fakelib "$TMP/bare-cudnn" libcudnn.so.9 -DFAKE_CUDNN -DVERSION=90100 -DCUDART=12080
    run_case asked LD_LIBRARY_PATH="$FAKES:$TMP/bare-cudnn" -- dlopen:"$CUDA/lib64/libcudart.so.13" \
        dlopen:libcudnn.so.9 call:cudnnGetVersion call:cudnnGetCudartVersion cuda
    ! q findings "$trace" | grep -q library-cuda-major-mismatch || fail "cuDNN 9 for CUDA 12, as it told the program, is no mismatch"
    grep -q "^cudnn libcudnn.so.9 9.1.0 cudnnGetVersion" <<<"$(q libraries "$trace")" ||
        { q libraries "$trace"; fail "the program's own cudnnGetVersion answer is not the version"; }
    # A cuDNN whose sub-library came from another install: the status, and which file came from where.
    fakelib "$TMP/cudnn-a" libcudnn.so.9 -DFAKE_CUDNN -DVERSION=92000 -DCUDART=13000 -DSUBLIB -ldl
    fakelib "$TMP/cudnn-b" libcudnn_engines_precompiled.so.9 -DFAKE_FRAMEWORK
    run_case sublib LD_LIBRARY_PATH="$FAKES:$TMP/cudnn-b" -- dlopen:"$TMP/cudnn-a/libcudnn.so.9" call:cudnnCreate cuda
    has_finding cudnn-sublibrary-mismatch error "a sub-library from another install"
    summary_has cudnn-sublibrary-mismatch "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (1002) at cudnnCreate" \
        "libcudnn_engines_precompiled.so.9 from $TMP/cudnn-b" "$TMP/cudnn-a"
    run_case unasked LD_LIBRARY_PATH="$FAKES:$TMP/bare-cudnn" -- dlopen:"$CUDA/lib64/libcudart.so.13" dlopen:libcudnn.so.9 cuda
    no_alarms "a cuDNN nobody asked, with no wheel or header beside it"
    if [ -e "$CUDA/lib64/libcudnn.so.9" ]; then
        run_case cudnn_twice LD_LIBRARY_PATH="$FAKES:$pip" -- dlopen:libcudnn.so.9 dlopen:"$CUDA/lib64/libcudnn.so.9" cuda
        has_finding library-loaded-twice error "two cuDNNs"
        summary_has library-loaded-twice "$pip/libcudnn.so.9 9.1.0" "libcudnn.so.9 9.19"
    fi

    # Healthy: NVIDIA's real runtime, cuDNN, NCCL and cuBLAS on a matching driver: an inventory
    # with versions, and not one warning.
    args=(dlopen:"$CUDA/lib64/libcudart.so.13")
    for l in libcudnn.so.9 libnccl.so.2 libcublas.so.13 libnvrtc.so.13 libnvJitLink.so.13; do
        [ -e "$CUDA/lib64/$l" ] && args+=(dlopen:"$CUDA/lib64/$l")
    done
    run_case healthy LD_LIBRARY_PATH="$FAKES" -- "${args[@]}" cuda
    no_alarms "the healthy stack"
    libs=$(q libraries "$trace")
    for want in "cudart libcudart.so.13 13.0" "driver libcuda.so.1 13.0"; do
        grep -q "^$want " <<<"$libs" || { echo "$libs"; fail "inventory lacks '$want'"; }
    done
    if [ -e "$CUDA/lib64/libnccl.so.2" ]; then
        grep -qE "^nccl libnccl.so.2 2\.[0-9]+\.[0-9]+ " <<<"$libs" || { echo "$libs"; fail "no NCCL version"; }
        grep -qE "^cudnn libcudnn.so.9 9\.[0-9]+\.[0-9]+ " <<<"$libs" || { echo "$libs"; fail "no cuDNN version"; }
        grep -qE "^cublas libcublas.so.13 13\.[0-9]+\.[0-9]+ " <<<"$libs" || { echo "$libs"; fail "no cuBLAS version"; }
        grep -qE "^cublasLt libcublasLt.so.13 13\." <<<"$libs" || { echo "$libs"; fail "no cuBLASLt (loaded by cuBLAS)"; }
    fi
    python3 - "$trace" <<'PY' || fail "library lines lack path, soname or build-id"
import json, sys
libs = [json.loads(l) for l in open(sys.argv[1]) if '"type":"library"' in l]
assert libs and all(l["path"].startswith("/") and l.get("soname") and len(l.get("build_id", "")) >= 16 for l in libs), libs
PY
else
    echo "skipped the scenarios that need $CUDA/lib64/libcudart.so.13"
fi
[ -n "${SHOW:-}" ] && cat "$TMP"/*.err; echo ok
