/* Library statuses whose cause the shim can name from what it saw:
 *   NCCL's ncclUnhandledCudaError: the CUDA call that failed inside NCCL, read back from the
 *   calling thread's own ring (NVLS multicast and CUDA virtual memory on drivers or vGPUs that
 *   refuse them are the usual ones after an NCCL upgrade);
 *   cuDNN's sub-library statuses (1002 version mismatch, 1008 loading failed, 3009 unavailable):
 *   which sub-library was loaded from where, from the inventory (the scanner says it: the
 *   sub-library was loaded a moment ago, inside the failing call). */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../wrappers/gen/cuda_api.h"
#include "../wrappers/gen/results.h"
#include "internal.h"
#include "inventory.h"

/* --- NCCL ---------------------------------------------------------------------------------- */

static void nccl_cuda_failure(struct cs_thread *t, const struct cs_event *ev)
{
    struct cs_ring *r = t->ring;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    const struct cs_event *bad = NULL;
    for (uint64_t k = 1; k <= 1024 && k <= head; k++) {
        const struct cs_event *e = &r->ev[(head - k) & r->mask];
        if (e->ts < ev->ts) break;  /* from before the NCCL call */
        if (e->api < CS_CUDA_COUNT && (e->flags & CS_EV_FAILED) && e->inside == ev->api + 1) { bad = e; break; }
    }
    const char *nccl = cs_api_name(ev->api);
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
    const char *api = cs_api_name(bad->api), *rn = cs_api_cuda.result_name(bad->result);
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

/* --- cuDNN --------------------------------------------------------------------------------- */

static int _Atomic cudnn_status;  /* a sub-library status seen, for the scanner to explain */
static uint64_t _Atomic cudnn_seen_ns;  /* when: only a scan begun after it has the sub-library */
static char cudnn_call[64];

static void dir_of(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash) *slash = 0;
}

/* Run by the scanner with the inventory read-locked (cs_diagnose_libraries). */
void cs_diagnose_cudnn_sublibraries(int final)
{
    /* A scan that began before the failing call may not list the sub-library it loaded. */
    if (!atomic_load(&cudnn_status) || (!final && cs_inventory_scanned_since() <= atomic_load(&cudnn_seen_ns))) return;
    int status = atomic_exchange(&cudnn_status, 0);
    if (!status) return;
    const struct cs_library *main = cs_library_find_kind("cudnn", 0);
    char home[PATH_MAX] = "", list[2048] = "", where[PATH_MAX];
    if (main) dir_of(main->path, home, sizeof home);
    size_t n = 0;
    int strays = 0;
    for (int i = 0; i < cs_library_count(); i++) {
        const struct cs_library *l = cs_library_at(i);
        if (strcmp(l->kind, "cudnn-sublibrary")) continue;
        dir_of(l->path, where, sizeof where);
        if (home[0] && !strcmp(where, home)) continue;
        int w = snprintf(list + n, sizeof list - n, "%s%s from %s (%s)", n ? "; " : "", l->name, where, l->found_via);
        if (w > 0 && (size_t)w < sizeof list - n) n += (size_t)w;
        strays++;
    }
    const char *rn = cs_api_cudnn.result_name(status);
    char summary[3072], ev[2560];
    if (strays)
        snprintf(summary, sizeof summary,
                 "found %s (%d) at %s: cuDNN's sub-libraries come from two installs: libcudnn.so.9 %s at %s, but %s; "
                 "the wheel or package at %s lacks them, so the loader took another release's; make it one release",
                 rn ? rn : "a sub-library status", status, cudnn_call, main ? main->version : "", home, list, home);
    else
        snprintf(summary, sizeof summary,
                 "found %s (%d) at %s: a cuDNN sub-library could not be loaded or does not match libcudnn.so.9 %s at "
                 "%s; the install there is incomplete (a sub-library that cuDNN opens by name is missing)",
                 rn ? rn : "a sub-library status", status, cudnn_call, main ? main->version : "", home[0] ? home : "?");
    snprintf(ev, sizeof ev, "{\"status\":%d,\"call\":\"%s\",\"cudnn_dir\":\"%s\",\"strays\":%d}", status, cudnn_call,
             home, strays);
    cs_finding(CS_F_CUDNN_SUBLIBRARY_MISMATCH, CS_ERROR, cudnn_call, summary,
               "Install one complete cuDNN release where libcudnn.so.9 is (for pip: reinstall or upgrade nvidia-cudnn-cuXX "
               "so every libcudnn_*.so.9 is there), or remove the other cuDNN (the directory named above) from the "
               "loader's path.", ev);
}

/* From cs_emit, on a failing library call. */
void cs_diagnose_library_failure(struct cs_thread *t, struct cs_api *api, const struct cs_event *ev)
{
    if (api == &cs_api_nccl && ev->result == CS_ncclUnhandledCudaError) nccl_cuda_failure(t, ev);
    if (api == &cs_api_cudnn && (ev->result == CS_CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH ||
                                 ev->result == CS_CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED ||
                                 ev->result == CS_CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE)) {
        snprintf(cudnn_call, sizeof cudnn_call, "%s", cs_api_name(ev->api));
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        atomic_store(&cudnn_seen_ns, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
        atomic_store(&cudnn_status, ev->result);
        cs_scan_request();
    }
}
