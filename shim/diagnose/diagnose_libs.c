/* The evidence of a failing library call, for the rules of library statuses (rules/library_status.c):
 *   NCCL's ncclUnhandledCudaError and cuBLAS's CUBLAS_STATUS_NOT_INITIALIZED at handle creation:
 *   the CUDA call that failed inside the library, read back from the calling thread's own ring;
 *   NCCL's other failures: its own last message, and how big and how full /dev/shm is;
 *   a failing cuDNN call: the CUDA call that failed inside it;
 *   cuDNN's sub-library statuses: kept until a scan has listed the sub-library the failing call
 *   loaded a moment ago, then explained from the inventory. */
#include <limits.h>
#include <stdatomic.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../wrappers/gen/cuda_api.h"
#include "../../wrappers/gen/results.h"
#include "../process/locks.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../evidence/inventory.h"
#include "../rules/rules.h"
#include "diagnose.h"

/* --- lookups the driver lacks, for the failures below -------------------------------------- */

/* Lookups above the driver within its major (a library built for a newer driver of the same
 * major probing for what it lacks): kept, under the DIAGNOSE lock, for a library failure that
 * follows to name as its cause; those none took are said as missing-symbol info at exit. */
#define MAX_MISSES 32
static struct miss { char caller[256], symbol[64]; int cuda, status, taken; } misses[MAX_MISSES];
static int nmisses;

void cs_diagnose_keep_miss(const char *caller, const char *symbol, int cuda, int status)
{
    for (int i = 0; i < nmisses; i++)
        if (!strcmp(misses[i].symbol, symbol) && !strcmp(misses[i].caller, caller)) return;
    if (nmisses >= MAX_MISSES) return;
    struct miss *m = &misses[nmisses++];
    snprintf(m->caller, sizeof m->caller, "%s", caller);
    snprintf(m->symbol, sizeof m->symbol, "%s", symbol);
    m->cuda = cuda, m->status = status, m->taken = 0;
}

int cs_diagnose_driver_gap(const char *library_prefix, struct cs_driver_gap *gap, char *names, size_t cap)
{
    size_t len = 0, plen = strlen(library_prefix);
    memset(gap, 0, sizeof *gap);
    if (cap) names[0] = 0;
    cs_lock(CS_LOCK_DIAGNOSE);
    for (int i = 0; i < nmisses; i++) {
        const char *slash = strrchr(misses[i].caller, '/'), *base = slash ? slash + 1 : misses[i].caller;
        if (strncmp(base, library_prefix, plen)) continue;
        misses[i].taken = 1;
        if (gap->count++ < 4 && len < cap)
            len += (size_t)snprintf(names + len, cap - len, "%s%s", len ? " " : "", misses[i].symbol);
        if (misses[i].cuda > gap->needs) gap->needs = misses[i].cuda;
    }
    cs_unlock(CS_LOCK_DIAGNOSE);
    gap->functions = names, gap->driver = cs_driver_version_seen();
    return gap->count > 0 && gap->driver > 0;
}

void cs_diagnose_say_misses(const struct cs_evidence *e)
{
    for (int i = 0; i < nmisses; i++)
        if (!misses[i].taken) {
            misses[i].taken = 1;
            cs_rule_lookup_missing_say(e, misses[i].caller, misses[i].symbol, misses[i].cuda, misses[i].status);
        }
}

void cs_diagnose_drop_misses(void) { nmisses = 0; }

/* --- NCCL ---------------------------------------------------------------------------------- */

/* The driver call that failed inside a library call, read back from the calling thread's own
 * ring (the library's own runtime calls the driver through the wrappers). */
static int inner_failure(struct cs_thread *t, const struct cs_event *ev, struct cs_inner_failure *out)
{
    struct cs_ring *r = t->ring;
    uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
    /* The calls made inside it are the events just before its own (not yet published); the first
     * one not inside it is from before it. (Not by time: a call inside it that succeeded on the
     * fast path carries the coarse clock, which may read earlier than the library call's entry.) */
    for (uint64_t k = 1; k <= 1024 && k <= head; k++) {
        const struct cs_event *e = &r->ev[(head - k) & r->mask];
        if (e->inside != ev->api + 1) break;
        if (e->api < CS_CUDA_COUNT && (e->flags & CS_EV_FAILED)) {
            *out = (struct cs_inner_failure){ cs_api_name(e->api), cs_api_cuda.result_name(e->result), e->result };
            return 1;
        }
    }
    return 0;
}

static void nccl_cuda_failure(struct cs_thread *t, const struct cs_event *ev, const char *nccl_said)
{
    struct cs_inner_failure inner;
    struct cs_driver_gap gap;
    char names[300];
    int lacks = cs_diagnose_driver_gap("libnccl", &gap, names, sizeof names);
    cs_rule_nccl_cuda_failure(cs_api_name(ev->api), inner_failure(t, ev, &inner) ? &inner : NULL, nccl_said,
                              lacks ? &gap : NULL);
}

/* --- cuBLAS -------------------------------------------------------------------------------- */

static void cublas_not_initialized(struct cs_thread *t, const struct cs_event *ev)
{
    const char *call = cs_api_name(ev->api);
    if (!strstr(call, "Create")) return;  /* a handle's other calls say NOT_INITIALIZED for a bad handle */
    struct cs_inner_failure inner;
    struct cs_driver_gap gap;
    char names[300];
    int lacks = cs_diagnose_driver_gap("libcublas", &gap, names, sizeof names);
    cs_rule_cublas_not_initialized(call, inner_failure(t, ev, &inner) ? &inner : NULL, lacks ? &gap : NULL);
}

/* --- cuDNN --------------------------------------------------------------------------------- */

static int _Atomic cudnn_status;  /* a sub-library status seen, for the scanner to explain */
static uint64_t _Atomic cudnn_seen_ns;  /* when: only a scan begun after it has the sub-library */
static char cudnn_call[64];

/* Run where the library rules run, with the inventory read-locked and its evidence taken. */
void cs_diagnose_cudnn_status(const struct cs_evidence *e)
{
    /* A scan that began before the failing call may not list the sub-library it loaded. */
    if (!atomic_load(&cudnn_status) || (!e->final && cs_inventory_scanned_since() <= atomic_load(&cudnn_seen_ns))) return;
    int status = atomic_exchange(&cudnn_status, 0);
    if (status) cs_rule_cudnn_sublibraries(e, status, cs_api_cudnn.result_name(status), cudnn_call);
}

/* From cs_emit, on a failing library call. */
void cs_diagnose_library_failure(struct cs_thread *t, struct cs_api *api, const struct cs_event *ev, const char *library_said)
{
    if (api == &cs_api_nccl && ev->result == CS_ncclUnhandledCudaError) nccl_cuda_failure(t, ev, library_said);
    else if (api == &cs_api_nccl && library_said) {
        cs_rule_nccl_duplicate_gpu(cs_api_name(ev->api), api->result_name(ev->result), library_said);
        struct statvfs v;
        int ok = statvfs("/dev/shm", &v) == 0;
        cs_rule_nccl_shared_memory(cs_api_name(ev->api), api->result_name(ev->result), library_said,
                                   ok ? (long long)v.f_blocks * (long long)v.f_frsize : -1,
                                   ok ? (long long)v.f_bavail * (long long)v.f_frsize : -1);
    }
    if ((api == &cs_api_cublas || api == &cs_api_cublasLt) && ev->result == CS_CUBLAS_STATUS_NOT_INITIALIZED)
        cublas_not_initialized(t, ev);
    if (api == &cs_api_cudnn && (ev->result == CS_CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH ||
                                 ev->result == CS_CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED ||
                                 ev->result == CS_CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE)) {
        snprintf(cudnn_call, sizeof cudnn_call, "%s", cs_api_name(ev->api));
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        atomic_store(&cudnn_seen_ns, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
        atomic_store(&cudnn_status, ev->result);
        cs_scan_request();
    } else if (api == &cs_api_cudnn) {
        struct cs_inner_failure inner;
        if (inner_failure(t, ev, &inner)) {
            struct cs_driver_gap gap;
            char names[300];
            int lacks = cs_diagnose_driver_gap("libcudnn", &gap, names, sizeof names);
            cs_rule_cudnn_cuda_failure(cs_api_name(ev->api), api->result_name(ev->result), &inner, lacks ? &gap : NULL);
        }
    }
}
