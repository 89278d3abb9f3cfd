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

#include "../base/json.h"
#include "../trace/findings.h"
#include "../evidence/inventory.h"
#include "rules.h"
#include "../../wrappers/gen/results.h"

/* What a driver call that failed inside a library (its own CUDA runtime calls the driver through
 * the shim) says about the stack; 0 when its result is its own explanation (cause and fix then
 * say so). */
static int inner_meaning(const char *lib, const struct cs_inner_failure *bad, char *cause, size_t ccap, char *fix,
                         size_t fcap)
{
    if (!strcmp(bad->api, "cuGetExportTable")) {
        /* A runtime asks the driver for its private interfaces first; a driver older than the
         * runtime lacks the newer ones (NVIDIA's CUDA 13 libraries on a CUDA 12.2 driver). */
        snprintf(cause, ccap, "the CUDA runtime inside %s asked the driver for an interface this driver does not "
                 "have: the driver is older than the CUDA %s was built for (driver-too-old names both)", lib, lib);
        snprintf(fix, fcap, "Upgrade the driver to one for %s's CUDA, or install the %s (and framework) built for "
                 "the driver's CUDA major.", lib, lib);
    } else if (bad->result == CS_CUDA_ERROR_NO_DEVICE) {
        snprintf(cause, ccap, "the driver sees no GPU (CUDA_VISIBLE_DEVICES, a container started without the GPU, or "
                 "the kernel module not loaded)");
        snprintf(fix, fcap, "Make the GPU visible to the process (CUDA_VISIBLE_DEVICES, the container's --gpus, "
                 "nvidia-smi).");
    } else if (bad->result == CS_CUDA_ERROR_OUT_OF_MEMORY) {
        snprintf(cause, ccap, "no device memory was left for %s's workspace (another process, or this one's caching "
                 "allocator, holds it)", lib);
        snprintf(fix, fcap, "Free device memory first: other processes on the GPU (nvidia-smi), a smaller batch, or a "
                 "cap on the framework's allocator.");
    } else if (bad->result == CS_CUDA_ERROR_NOT_INITIALIZED || bad->result == CS_CUDA_ERROR_DEINITIALIZED) {
        snprintf(cause, ccap, "the driver was not initialised or already shut down (a call made while the process "
                 "exits, or in a child forked after CUDA started)");
        snprintf(fix, fcap, "Make %s calls before exit begins, and in a child only after exec (multiprocessing start "
                 "method 'spawn').", lib);
    } else if (bad->result == CS_CUDA_ERROR_NO_BINARY_FOR_GPU || bad->result == CS_CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
               bad->result == CS_CUDA_ERROR_INVALID_PTX || bad->result == CS_CUDA_ERROR_INVALID_IMAGE) {
        snprintf(cause, ccap, "%s carries no kernels this GPU can run (a build older than the GPU's architecture, "
                 "or PTX newer than the driver)", lib);
        snprintf(fix, fcap, "Install the %s (and framework) built for a CUDA that knows this GPU (e.g. CUDA 11.1 or "
                 "later for sm_86, 11.8 for sm_89 and sm_90, 12.8 for sm_120); the device-code findings name the "
                 "architectures.", lib);
    } else {
        snprintf(cause, ccap, "that call's result is the cause");
        snprintf(fix, fcap, "Look up that CUDA result for this call: the other findings say more when it is a driver or "
                 "device failure.");
        return 0;
    }
    return 1;
}

/* NCCL's last warning, one line, at most 240 characters: "Cuda failure 2 'out of memory'". */
static void nccl_words(const char *said, char *out, size_t cap)
{
    size_t n = 0;
    for (; said && *said && n + 1 < cap && n < 240; said++)
        out[n++] = (unsigned char)*said < 0x20 ? ' ' : *said;
    while (n && out[n - 1] == ' ') n--;
    out[n] = 0;
}

/* A library that asked the driver for functions it lacks and then failed: the lookups are the cause
 * (a library built for a newer driver of the same major, which minor-version compatibility lets
 * load but not use its newer features). cause: "; before it, ..."; fix: the way out, first. */
static int gap_words(const char *lib, const struct cs_driver_gap *g, char *cause, size_t ccap, char *fix, size_t fcap)
{
    if (ccap) cause[0] = 0;
    if (fcap) fix[0] = 0;
    if (!g || g->count <= 0) return 0;
    char need[16], have[16], mins[160];
    const char *lin, *win;
    cs_cuda_text(need, sizeof need, g->needs);
    cs_cuda_text(have, sizeof have, g->driver);
    cs_min_driver_text(mins, sizeof mins, g->needs, 1, &lin, &win);
    snprintf(cause, ccap, "; before it, %s asked the driver for %d function%s this driver (CUDA %s) does not have (%s): "
             "they are CUDA %s's, so %s was built for a newer driver than this one, which lets it load but not run",
             lib, g->count, g->count == 1 ? "" : "s", have, g->functions, need, lib);
    snprintf(fix, fcap, "Upgrade the NVIDIA driver to one for CUDA %s (%s), or install the %s built for the driver's CUDA "
             "(%s). ", need, mins, lib, have);
    return 1;
}

void cs_rule_nccl_cuda_failure(const char *nccl, const struct cs_inner_failure *bad, const char *nccl_said,
                               const struct cs_driver_gap *gap)
{
    char summary[2300], evj[1024], said[256], said_part[600], quoted[300] = "";
    nccl_words(nccl_said, said, sizeof said);
    struct cs_buf said_json = { said_part, 0, sizeof said_part - 1 };  /* ,"nccl_message":"..." or nothing */
    if (said[0]) { cs_put(&said_json, ",\"nccl_message\":"); cs_put_str(&said_json, said); }
    said_part[said_json.len] = 0;
    if (said[0]) snprintf(quoted, sizeof quoted, "; NCCL's own message: \"%s\"", said);
    /* NCCL's words name the cause when the call it names does not: a CUDA 13 NCCL on a CUDA 12
     * driver fails at cuGetExportTable (INVALID_VALUE), and NCCL says the driver is too old. */
    int old_driver = strstr(said, "driver version is insufficient") != NULL;
    int oom = strstr(said, "out of memory") != NULL;
    const char *api = bad ? bad->api : NULL;
    int multicast = api && !strncmp(api, "cuMulticast", 11);
    int vmm = api && !strncmp(api, "cuMem", 5) && (strstr(api, "Create") || strstr(api, "Map") || strstr(api, "Pool") ||
                                                   strstr(api, "Access") || strstr(api, "Shareable") || strstr(api, "Reserve"));
    char meaning[540] = "", meaning_fix[512] = "", m[512];
    if (bad && inner_meaning("NCCL", bad, m, sizeof m, meaning_fix, sizeof meaning_fix))
        snprintf(meaning, sizeof meaning, ": %s", m);
    const char *cause =
        multicast ? "; NCCL uses NVLink SHARP (NVLS) through CUDA multicast objects, which this driver or system "
                    "refuses; set NCCL_NVLS_ENABLE=0 or upgrade the driver"
        : vmm ? "; NCCL allocates through CUDA virtual memory (cuMem*), which this device or driver refuses (a vGPU "
                "without UVM, an older driver); set NCCL_CUMEM_ENABLE=0"
        : old_driver ? ": the CUDA runtime built into NCCL refused this driver, which is older than the CUDA that NCCL "
                       "was built for"
        : oom ? ": NCCL could not allocate its buffers on the GPU"
        : meaning[0] ? meaning
        : bad ? "; that call's result is the cause" : "";
    const char *fix =
        multicast ? "NCCL_NVLS_ENABLE=0 turns NVLS off; a driver new enough for the NCCL version (or an NCCL that "
                    "matches the driver) fixes it for good."
        : vmm ? "NCCL_CUMEM_ENABLE=0 makes NCCL allocate as older versions did; on a vGPU, enable UVM in the profile, "
                "or use an NCCL from before 2.19."
        : old_driver ? "Install the NCCL built for the driver's CUDA major (pip install nvidia-nccl-cu12 for a CUDA 12 "
                       "driver; the framework's own CUDA build pins it), or upgrade the driver to one for NCCL's CUDA."
        : oom ? "Free GPU memory before NCCL sets up (create the communicator before the model fills the GPU), or "
                "shrink NCCL's buffers (NCCL_BUFFSIZE, NCCL_NCHANNELS_PER_NET_PEER); NCCL_DEBUG=INFO names the "
                "allocation."
        : meaning[0] ? meaning_fix
        : bad ? "Look up that CUDA result for this call; rerun with NCCL_DEBUG=INFO for NCCL's own account."
        : said[0] ? "The quoted CUDA error is the cause; NCCL_DEBUG=INFO shows the call that returned it."
                  : "Rerun with NCCL_DEBUG=INFO: the \"Cuda failure\" line names the call.";
    char gap_cause[700], gap_fix[400], full_fix[1400];
    if (gap_words("NCCL", gap, gap_cause, sizeof gap_cause, gap_fix, sizeof gap_fix)) {
        if (!multicast && !vmm && !old_driver && !oom) cause = "";  /* the lookups say why */
        snprintf(full_fix, sizeof full_fix, "%s%s", gap_fix, fix);
        fix = full_fix;
    }
    if (bad) {
        const char *rn = bad->result_name;
        snprintf(summary, sizeof summary,
                 "found ncclUnhandledCudaError at %s: the CUDA call that failed inside NCCL is %s -> %s (%d)%s%s%s", nccl,
                 api, rn ? rn : "?", bad->result, quoted, cause, gap_cause);
        snprintf(evj, sizeof evj, "{\"nccl_call\":\"%s\",\"cuda_call\":\"%s\",\"cuda_result\":%d%s}", nccl, api,
                 bad->result, said_part);
    } else {
        snprintf(summary, sizeof summary,
                 "found ncclUnhandledCudaError at %s: a CUDA call inside NCCL failed, one the shim did not see (NCCL's "
                 "static runtime made it before the shim was watching, or it was a runtime call)%s%s%s", nccl,
                 said[0] ? quoted : "; rerun with NCCL_DEBUG=INFO to read it", cause, gap_cause);
        snprintf(evj, sizeof evj, "{\"nccl_call\":\"%s\"%s}", nccl, said_part);
    }
    cs_finding(CS_F_NCCL_CUDA_FAILURE, CS_ERROR, bad ? api : nccl, summary, fix, evj);
}

/* NCCL 2.7 began to use shared memory between the ranks of one machine where 2.6 did not, and
 * later versions changed its segments: an NCCL upgrade in a container with the default 64 MiB
 * /dev/shm fails at init with "No space left on device" or "Permission denied". */
void cs_rule_nccl_shared_memory(const char *call, const char *status_name, const char *nccl_said, long long shm_total,
                                long long shm_free)
{
    char said[256], summary[1536], state[256], evj[1024];
    nccl_words(nccl_said, said, sizeof said);
    if (!strstr(said, "/dev/shm") && !strstr(said, "shm_open") && !strstr(said, "shared memory") &&
        !strstr(said, "posix_fallocate"))
        return;
    int denied = strstr(said, "Permission denied") != NULL;
    if (denied)
        snprintf(state, sizeof state, "this process may not create files in /dev/shm");
    else if (shm_total >= 0)
        snprintf(state, sizeof state, "/dev/shm holds %lld MiB, %lld MiB free (a container's default is 64 MiB; NCCL's "
                 "shared-memory transport needs several MiB per pair of ranks on this machine)",
                 shm_total >> 20, shm_free >> 20);
    else
        snprintf(state, sizeof state, "/dev/shm could not be read");
    snprintf(summary, sizeof summary, "found %s at %s: NCCL could not set up its shared memory (NCCL's own message: "
             "\"%s\"); %s", status_name ? status_name : "an NCCL error", call, said, state);
    struct cs_buf b = { evj, 0, sizeof evj - 1 };
    cs_put(&b, "{\"nccl_call\":"); cs_put_str(&b, call);
    cs_put(&b, ",\"nccl_message\":"); cs_put_str(&b, said);
    cs_put(&b, ",\"shm_bytes\":"); if (shm_total >= 0) cs_put_u64(&b, (uint64_t)shm_total); else cs_put(&b, "null");
    cs_put(&b, ",\"shm_free_bytes\":"); if (shm_free >= 0) cs_put_u64(&b, (uint64_t)shm_free); else cs_put(&b, "null");
    cs_put(&b, "}");
    evj[b.len] = 0;
    cs_finding(CS_F_NCCL_SHARED_MEMORY, CS_ERROR, call, summary,
               "Give the container a larger /dev/shm (docker run --shm-size=8g, or --ipc=host; Kubernetes: an emptyDir "
               "with medium Memory mounted at /dev/shm), or set NCCL_SHM_DISABLE=1 (the ranks of one machine then go "
               "through P2P or the network, slower).", evj);
}

/* Every process of the job picked the same GPU (no torch.cuda.set_device(local_rank), one
 * CUDA_VISIBLE_DEVICES for all, more ranks than GPUs): NCCL refuses the communicator. */
void cs_rule_nccl_duplicate_gpu(const char *call, const char *status_name, const char *nccl_said)
{
    char said[256], summary[1024], evj[512];
    nccl_words(nccl_said, said, sizeof said);
    if (!strstr(said, "Duplicate GPU detected")) return;
    snprintf(summary, sizeof summary, "found %s at %s: NCCL says \"%s\": two ranks of this communicator use the "
             "same GPU, which NCCL does not allow", status_name ? status_name : "an NCCL error", call, said);
    struct cs_buf b = { evj, 0, sizeof evj - 1 };
    cs_put(&b, "{\"nccl_call\":"); cs_put_str(&b, call);
    cs_put(&b, ",\"nccl_message\":"); cs_put_str(&b, said);
    cs_put(&b, "}");
    evj[b.len] = 0;
    cs_finding(CS_F_NCCL_DUPLICATE_GPU, CS_ERROR, call, summary,
               "Give each rank its own GPU before the communicator is made: PyTorch: "
               "torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"])) before init_process_group, or its "
               "device_id=torch.device(\"cuda\", local_rank); check that CUDA_VISIBLE_DEVICES is not the same single "
               "GPU for every rank, and that no more ranks run on a machine than it has GPUs "
               "(torchrun --nproc-per-node).", evj);
}

void cs_rule_cublas_not_initialized(const char *call, const struct cs_inner_failure *bad, const struct cs_driver_gap *gap)
{
    char summary[2300], evj[512], cause[512], fix[1000], gap_cause[700], gap_fix[400];
    if (!bad) {
        snprintf(cause, sizeof cause, "no driver call failed inside it, so cuBLAS's own runtime refused the driver: "
                 "most often a driver older than the CUDA this cuBLAS was built for (driver-too-old names both), or a "
                 "GPU it cannot use");
        snprintf(fix, sizeof fix, "Compare the driver's CUDA with cuBLAS's (cudashim report lists both): upgrade the "
                 "driver, or install the cuBLAS (and framework) built for the driver's CUDA major.");
    } else {
        inner_meaning("cuBLAS", bad, cause, sizeof cause, fix, sizeof fix);
    }
    if (gap_words("cuBLAS", gap, gap_cause, sizeof gap_cause, gap_fix, sizeof gap_fix)) {
        char rest[512];
        snprintf(rest, sizeof rest, "%s", fix);
        snprintf(fix, sizeof fix, "%s%s", gap_fix, rest);
    }
    if (bad)
        snprintf(summary, sizeof summary,
                 "found CUBLAS_STATUS_NOT_INITIALIZED at %s: the CUDA call that failed inside cuBLAS is %s -> %s (%d): %s%s",
                 call, bad->api, bad->result_name ? bad->result_name : "?", bad->result, cause, gap_cause);
    else
        snprintf(summary, sizeof summary, "found CUBLAS_STATUS_NOT_INITIALIZED at %s: %s%s", call, cause, gap_cause);
    snprintf(evj, sizeof evj, "{\"cublas_call\":\"%s\",\"cuda_call\":%s%s%s,\"cuda_result\":%d}", call,
             bad ? "\"" : "", bad ? bad->api : "null", bad ? "\"" : "", bad ? bad->result : 0);
    cs_finding(CS_F_CUBLAS_NOT_INITIALIZED, CS_ERROR, call, summary, fix, evj);
}

/* Any failing cuDNN call with a driver call that failed inside it: cuDNN turns the driver's
 * answer into a generic status (NOT_INITIALIZED, EXECUTION_FAILED, INTERNAL_ERROR). */
void cs_rule_cudnn_cuda_failure(const char *call, const char *status_name, const struct cs_inner_failure *bad,
                                const struct cs_driver_gap *gap)
{
    char summary[2300], evj[512], cause[512], fix[1000], gap_cause[700], gap_fix[400];
    if (!bad) return;  /* a bad parameter, an unsupported shape: cuDNN's own status says it */
    inner_meaning("cuDNN", bad, cause, sizeof cause, fix, sizeof fix);
    if (gap_words("cuDNN", gap, gap_cause, sizeof gap_cause, gap_fix, sizeof gap_fix)) {
        char rest[512];
        snprintf(rest, sizeof rest, "%s", fix);
        snprintf(fix, sizeof fix, "%s%s", gap_fix, rest);
    }
    snprintf(summary, sizeof summary, "found %s at %s: the CUDA call that failed inside cuDNN is %s -> %s (%d): %s%s",
             status_name ? status_name : "a cuDNN error", call, bad->api, bad->result_name ? bad->result_name : "?",
             bad->result, cause, gap_cause);
    snprintf(evj, sizeof evj, "{\"cudnn_call\":\"%s\",\"cudnn_status\":\"%s\",\"cuda_call\":\"%s\",\"cuda_result\":%d}",
             call, status_name ? status_name : "", bad->api, bad->result);
    cs_finding(CS_F_CUDNN_CUDA_FAILURE, CS_ERROR, call, summary, fix, evj);
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
