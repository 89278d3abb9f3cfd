/* Every finding the shim can write, one row each:
 *   CS_FINDING(NAME, "id", severities, "what it means, in one line")
 * The rules name a row (CS_F_NAME) and choose a severity among the row's; findings.c writes the
 * id; the cudashim command shows where the id is explained (docs/diagnoses.md, one section per
 * id, with the same severities: tests/t_16_docs.sh holds the three together).
 * Included several times with CS_FINDING defined differently: no include guard. */
CS_FINDING(DRIVER_TOO_OLD,             "driver-too-old",             "error",               "the driver is older than the CUDA the program or a library was built for")
CS_FINDING(DRIVER_KERNEL_MISMATCH,     "driver-kernel-mismatch",     "error",               "the driver's user-space libraries and its kernel module are different versions")
CS_FINDING(COMPAT_UNSUPPORTED_GPU,     "compat-unsupported-gpu",     "error",               "a forward-compatibility driver on a GPU it does not support")
CS_FINDING(LIBRARY_LOADED_TWICE,       "library-loaded-twice",       "error warning",       "two copies of one CUDA library in one process")
CS_FINDING(LIBRARY_CUDA_MAJOR_MISMATCH,"library-cuda-major-mismatch","warning",             "a library built for another CUDA major than the runtime loaded")
CS_FINDING(MISSING_SYMBOL,             "missing-symbol",             "error warning info",  "a function the caller needs is not in the copy that was loaded")
CS_FINDING(NO_GPU_VISIBLE,             "no-gpu-visible",             "error",               "the driver sees no GPU")
CS_FINDING(LIBRARY_SHADOWED,           "library-shadowed",           "warning",             "LD_LIBRARY_PATH put another copy before the one the framework ships on its RUNPATH")
CS_FINDING(LIBRARY_NOT_FOUND,          "library-not-found",          "warning",             "a CUDA library was asked for and not found")
CS_FINDING(CUDA_IN_FORKED_CHILD,       "cuda-in-forked-child",       "error",               "CUDA used in a child forked after CUDA was initialised")
CS_FINDING(NO_CUDA_LOADED,             "no-cuda-loaded",             "error",               "the program ended without loading the CUDA driver")
CS_FINDING(NO_KERNEL_IMAGE,            "no-kernel-image",            "error",               "no device code for this GPU's architecture")
CS_FINDING(PTX_TOO_NEW,                "ptx-too-new",                "error",               "PTX made by a newer toolkit than the driver can compile")
CS_FINDING(IMAGE_REJECTED,             "image-rejected",             "error",               "the driver refused a module's device code")
CS_FINDING(ASYNC_KERNEL_ERROR,         "async-kernel-error",         "error",               "a kernel failed; the error surfaced at a later call")
CS_FINDING(LAUNCH_TIMEOUT,             "launch-timeout",             "error",               "a kernel ran past the display watchdog's limit")
CS_FINDING(PTX_JIT_MISSING,            "ptx-jit-missing",            "error",               "the driver's PTX compiler library is missing")
CS_FINDING(FABRIC_MANAGER_NOT_RUNNING, "fabric-manager-not-running", "error",               "an NVSwitch system whose fabric manager is not running")
CS_FINDING(CUDA_UNKNOWN_ERROR,         "cuda-unknown-error",         "error",               "cuInit failed with an unknown error")
CS_FINDING(NCCL_CUDA_FAILURE,          "nccl-cuda-failure",          "error",               "NCCL's unhandled CUDA error, and the CUDA call behind it")
CS_FINDING(CUDNN_SUBLIBRARY_MISMATCH,  "cudnn-sublibrary-mismatch",  "error",               "cuDNN's sub-libraries come from different installs")
CS_FINDING(KERNEL_FAULT,               "kernel-fault",               "error",               "a kernel faulted (illegal address, assertion, illegal instruction)")
CS_FINDING(OUT_OF_MEMORY,              "out-of-memory",              "warning",             "an allocation failed for lack of device memory")
