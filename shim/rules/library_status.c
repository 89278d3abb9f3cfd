/* Library statuses whose cause the evidence names:
 *   NCCL's ncclUnhandledCudaError: the CUDA call that failed inside NCCL (NVLS multicast and
 *   CUDA virtual memory on drivers or vGPUs that refuse them are the usual ones after an NCCL
 *   upgrade);
 *   cuBLAS's CUBLAS_STATUS_NOT_INITIALIZED at handle creation: the driver call that failed inside
 *   it (no GPU, no memory left, a driver shut down), or none, which leaves cuBLAS's own runtime
 *   refusing the driver;
 *   cuDNN's sub-library statuses (1002 version mismatch, 1008 loading failed, 3009 unavailable):
 *   which sub-library was loaded from where. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../internal.h"
#include "../../wrappers/gen/results.h"
#include "rules.h"

void cs_rule_nccl_cuda_failure(const char *nccl, const struct cs_inner_failure *bad)
{
    char summary[1536], fix[1024], evj[512];
    if (!bad) {
        snprintf(summary, sizeof summary,
                 "found ncclUnhandledCudaError at %s: a CUDA call inside NCCL failed, one the shim did not see (NCCL's "
                 "static runtime made it before the shim was watching, or it was a runtime call); rerun with "
                 "NCCL_DEBUG=INFO to read it", nccl);
        cs_finding(CS_F_NCCL_CUDA_FAILURE, CS_ERROR, nccl, summary,
                   "Rerun with NCCL_DEBUG=INFO: the \"Cuda failure\" line names the call.", "{}");
        return;
    }
    const char *api = bad->api, *rn = bad->result_name;
    int multicast = !strncmp(api, "cuMulticast", 11);
    int vmm = !strncmp(api, "cuMem", 5) && (strstr(api, "Create") || strstr(api, "Map") || strstr(api, "Pool") ||
                                            strstr(api, "Access") || strstr(api, "Shareable") || strstr(api, "Reserve"));
    snprintf(summary, sizeof summary,
             "found ncclUnhandledCudaError at %s: the CUDA call that failed inside NCCL is %s -> %s (%d)%s", nccl, api,
             rn ? rn : "?", bad->result,
             multicast ? "; NCCL uses NVLink SHARP (NVLS) through CUDA multicast objects, which this driver or system "
                         "refuses; set NCCL_NVLS_ENABLE=0 or upgrade the driver"
             : vmm ? "; NCCL allocates through CUDA virtual memory (cuMem*), which this device or driver refuses (a "
                     "vGPU without UVM, an older driver); set NCCL_CUMEM_ENABLE=0"
                   : "; that call's result is the cause");
    snprintf(fix, sizeof fix, "%s",
             multicast ? "NCCL_NVLS_ENABLE=0 turns NVLS off; a driver new enough for the NCCL version (or an NCCL "
                         "that matches the driver) fixes it for good."
             : vmm ? "NCCL_CUMEM_ENABLE=0 makes NCCL allocate as older versions did; on a vGPU, enable UVM in the "
                     "profile, or use an NCCL from before 2.19."
                   : "Look up that CUDA result for this call; rerun with NCCL_DEBUG=INFO for NCCL's own account.");
    snprintf(evj, sizeof evj, "{\"nccl_call\":\"%s\",\"cuda_call\":\"%s\",\"cuda_result\":%d}", nccl, api, bad->result);
    cs_finding(CS_F_NCCL_CUDA_FAILURE, CS_ERROR, api, summary, fix, evj);
}

void cs_rule_cublas_not_initialized(const char *call, const struct cs_inner_failure *bad)
{
    char summary[1536], evj[512];
    const char *cause, *fix;
    if (!bad) {
        cause = "no driver call failed inside it, so cuBLAS's own runtime refused the driver: most often a driver "
                "older than the CUDA this cuBLAS was built for (driver-too-old names both), or a GPU it cannot use";
        fix = "Compare the driver's CUDA with cuBLAS's (cudashim report lists both): upgrade the driver, or install the "
              "cuBLAS (and framework) built for the driver's CUDA major.";
    } else if (bad->result == CS_CUDA_ERROR_NO_DEVICE) {
        cause = "the driver sees no GPU (CUDA_VISIBLE_DEVICES, a container started without the GPU, or the kernel "
                "module not loaded)";
        fix = "Make the GPU visible to the process (CUDA_VISIBLE_DEVICES, the container's --gpus, nvidia-smi).";
    } else if (bad->result == CS_CUDA_ERROR_OUT_OF_MEMORY) {
        cause = "no device memory was left for the handle's workspace (another process, or this one's caching "
                "allocator, holds it)";
        fix = "Free device memory before creating the handle: other processes on the GPU (nvidia-smi), a smaller "
              "batch, or a cap on the framework's allocator.";
    } else if (bad->result == CS_CUDA_ERROR_NOT_INITIALIZED || bad->result == CS_CUDA_ERROR_DEINITIALIZED) {
        cause = "the driver was not initialised or already shut down (a handle made while the process exits, or in "
                "a child forked after CUDA started)";
        fix = "Create cuBLAS handles before exit begins, and in a child only after exec (multiprocessing start "
              "method 'spawn').";
    } else {
        cause = "that call's result is the cause";
        fix = "Look up that CUDA result for this call: the other findings say more when it is a driver or device "
              "failure.";
    }
    if (bad)
        snprintf(summary, sizeof summary,
                 "found CUBLAS_STATUS_NOT_INITIALIZED at %s: the CUDA call that failed inside cuBLAS is %s -> %s (%d): %s",
                 call, bad->api, bad->result_name ? bad->result_name : "?", bad->result, cause);
    else
        snprintf(summary, sizeof summary, "found CUBLAS_STATUS_NOT_INITIALIZED at %s: %s", call, cause);
    snprintf(evj, sizeof evj, "{\"cublas_call\":\"%s\",\"cuda_call\":%s%s%s,\"cuda_result\":%d}", call,
             bad ? "\"" : "", bad ? bad->api : "null", bad ? "\"" : "", bad ? bad->result : 0);
    cs_finding(CS_F_CUBLAS_NOT_INITIALIZED, CS_ERROR, call, summary, fix, evj);
}

static void dir_of(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash) *slash = 0;
}

void cs_rule_cudnn_sublibraries(const struct cs_evidence *e, int status, const char *rn, const char *call)
{
    const struct cs_library *main = cs_ev_kind(e, "cudnn", 0);
    char home[PATH_MAX] = "", list[2048] = "", where[PATH_MAX];
    if (main) dir_of(main->path, home, sizeof home);
    size_t n = 0;
    int strays = 0;
    for (int i = 0; i < e->nlibs; i++) {
        const struct cs_library *l = &e->libs[i];
        if (strcmp(l->kind, "cudnn-sublibrary")) continue;
        dir_of(l->path, where, sizeof where);
        if (home[0] && !strcmp(where, home)) continue;
        int w = snprintf(list + n, sizeof list - n, "%s%s from %s (%s)", n ? "; " : "", l->name, where, l->found_via);
        if (w > 0 && (size_t)w < sizeof list - n) n += (size_t)w;
        strays++;
    }
    char summary[3072], ev[2560];
    if (strays)
        snprintf(summary, sizeof summary,
                 "found %s (%d) at %s: cuDNN's sub-libraries come from two installs: libcudnn.so.9 %s at %s, but %s; "
                 "the wheel or package at %s lacks them, so the loader took another release's; make it one release",
                 rn ? rn : "a sub-library status", status, call, main ? main->version : "", home, list, home);
    else
        snprintf(summary, sizeof summary,
                 "found %s (%d) at %s: a cuDNN sub-library could not be loaded or does not match libcudnn.so.9 %s at "
                 "%s; the install there is incomplete (a sub-library that cuDNN opens by name is missing)",
                 rn ? rn : "a sub-library status", status, call, main ? main->version : "", home[0] ? home : "?");
    snprintf(ev, sizeof ev, "{\"status\":%d,\"call\":\"%s\",\"cudnn_dir\":\"%s\",\"strays\":%d}", status, call,
             home, strays);
    cs_finding(CS_F_CUDNN_SUBLIBRARY_MISMATCH, CS_ERROR, call, summary,
               "Install one complete cuDNN release where libcudnn.so.9 is (for pip: reinstall or upgrade nvidia-cudnn-cuXX "
               "so every libcudnn_*.so.9 is there), or remove the other cuDNN (the directory named above) from the "
               "loader's path.", ev);
}
