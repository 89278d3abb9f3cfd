/* cuDNN, NCCL and cuBLAS: the context that makes a failing call actionable. Every failing call
 * gets the library's own words (cudnnGetErrorString, ncclGetErrorString and ncclGetLastError,
 * cublasGetStatusString); handle creation says which library copy the handle came from;
 * NCCL communicators are remembered (ranks, device, unique-id hash, version, last operations)
 * for the trace and for the hang watchdog; collectives go into the launch side ring. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../wrappers/gen/cublasLt_api.h"
#include "../../wrappers/gen/cublas_api.h"
#include "../../wrappers/gen/cudnn_api.h"
#include "../../wrappers/gen/nccl_api.h"
#include "../process/locks.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../evidence/inventory.h"
#include "../evidence/library_version.h"
#include "devcode.h"
#include "hooks_libs.h"
#include "../../wrappers/gen/hooks.h"  /* the hooks' signatures, from the API tables */

/* --- the library's own error string, on every failing call ---------------------------- */

const char *cs_library_error_string(struct cs_thread *t, struct cs_api *api, struct cs_event *ev)
{
    const char *s = NULL, *last = NULL;
    struct cs_thread *own = cs_hide();
    if (api == &cs_api_cudnn) {
        const char *(*f)(int) = cs_real(api, CS_CUDNN_cudnnGetErrorString);
        if (f) s = f(ev->result);
    } else if (api == &cs_api_nccl) {
        const char *(*f)(int) = cs_real(api, CS_NCCL_ncclGetErrorString);
        const char *(*l)(void *) = cs_real(api, CS_NCCL_ncclGetLastError);
        if (f) s = f(ev->result);
        if (l) last = l(NULL);  /* the calling thread's last error message */
    } else if (api == &cs_api_cublas) {
        const char *(*f)(int) = cs_real(api, CS_CUBLAS_cublasGetStatusString);
        if (f) s = f(ev->result);
    } else if (api == &cs_api_cublasLt) {
        const char *(*f)(int) = cs_real(api, CS_CUBLASLT_cublasLtGetStatusString);
        if (f) s = f(ev->result);
    }
    cs_unhide(own);
    if (s && *s) cs_extra_str(t, "error_string", s);
    if (last && *last) cs_extra_str(t, "last_error", last);
    return last && *last ? last : NULL;
}

/* Which copy of a library: path and version from the inventory. */
static void library_extra(struct cs_thread *t, const char *kind)
{
    const struct cs_library *l = cs_library_find_kind(kind, 0);
    cs_inventory_rdlock();
    int asked = l && l->asked;
    cs_inventory_unlock();
    if (!asked) {
        cs_scan_wait(100);  /* once per library (its first handle): bounded */
        l = cs_library_find_kind(kind, 0);
    }
    if (!l) return;
    cs_inventory_rdlock();
    cs_extra_str(t, "library_path", l->path);
    if (l->version[0]) cs_extra_str(t, "library_version", l->version);
    cs_inventory_unlock();
}

/* --- cuDNN ------------------------------------------------------------------------------ */

void cs_hook_cudnnCreate(struct cs_thread *t, struct cs_event *ev, void *handle)
{
    (void)ev, (void)handle;
    library_extra(t, "cudnn");
}

/* The program asked cuDNN its version: the inventory's best source (the shim never asks it:
 * cuDNN 9's cudnnGetVersion loads libcudnn_graph). */
void cs_hook_cudnnGetVersion(struct cs_thread *t, struct cs_event *ev, uint64_t version)
{
    (void)t, (void)ev;
    cs_version_seen_value("cudnn", cs_real(&cs_api_cudnn, CS_CUDNN_cudnnGetVersion), (long)version);
}

void cs_hook_cudnnGetCudartVersion(struct cs_thread *t, struct cs_event *ev, uint64_t version)
{
    (void)t, (void)ev;
    cs_version_seen_cuda("cudnn", cs_real(&cs_api_cudnn, CS_CUDNN_cudnnGetCudartVersion), (int)version);
}

/* Backend descriptors: remember each one's type, so a failing finalize or execute names the
 * operation involved. A small open-addressed table: descriptors are few and long-lived. */
#define DESC_SLOTS 4096
static struct { void *_Atomic d; int type; } descs[DESC_SLOTS];

static const char *desc_type_name(int type)
{
    /* cudnnBackendDescriptorType_t, cuDNN 9 (cudnn_graph.h) */
    static const char *const names[] = {
        "POINTWISE", "CONVOLUTION", "ENGINE", "ENGINECFG", "ENGINEHEUR", "EXECUTION_PLAN", "INTERMEDIATE_INFO",
        "KNOB_CHOICE", "KNOB_INFO", "LAYOUT_INFO", "OPERATION_CONVOLUTION_FORWARD",
        "OPERATION_CONVOLUTION_BACKWARD_FILTER", "OPERATION_CONVOLUTION_BACKWARD_DATA", "OPERATION_POINTWISE",
        "OPERATION_GEN_STATS", "OPERATIONGRAPH", "VARIANT_PACK", "TENSOR", "MATMUL", "OPERATION_MATMUL",
        "OPERATION_BN_FINALIZE_STATISTICS", "REDUCTION", "OPERATION_REDUCTION", "OPERATION_BN_BWD_WEIGHTS",
        "RESAMPLE", "OPERATION_RESAMPLE_FWD", "OPERATION_RESAMPLE_BWD", "OPERATION_CONCAT_DESCRIPTOR",
        "OPERATION_SIGNAL", "OPERATION_NORM_FORWARD", "OPERATION_NORM_BACKWARD", "OPERATION_RESHAPE",
        "RNG", "OPERATION_RNG",
    };
    return type >= 0 && type < (int)(sizeof names / sizeof *names) ? names[type] : NULL;
}

static int desc_slot(void *d) { return (int)(((uintptr_t)d >> 4) % DESC_SLOTS); }

void cs_hook_cudnnBackendCreateDescriptor(struct cs_thread *t, struct cs_event *ev, uint32_t type, void *descriptor)
{
    (void)t;
    if (ev->result || !descriptor) return;
    void *d = *(void **)descriptor;
    for (int k = 0, i = desc_slot(d); k < 64; k++, i = (i + 1) % DESC_SLOTS) {
        void *expected = NULL;
        if (atomic_compare_exchange_strong(&descs[i].d, &expected, d) || expected == d) {
            descs[i].type = (int)type;
            return;
        }
    }
}

static void desc_extra(struct cs_thread *t, void *d, const char *what)
{
    cs_extra_str(t, "operation", what);
    for (int k = 0, i = desc_slot(d); k < 64; k++, i = (i + 1) % DESC_SLOTS)
        if (atomic_load(&descs[i].d) == d) {
            const char *n = desc_type_name(descs[i].type);
            cs_extra(t, "\"descriptor_type\":\"CUDNN_BACKEND_%s_DESCRIPTOR\"", n ? n : "UNKNOWN");
            return;
        }
}

void cs_hook_cudnnBackendFinalize(struct cs_thread *t, struct cs_event *ev, void *descriptor)
{
    if (ev->result) desc_extra(t, descriptor, "finalize");
}

void cs_hook_cudnnBackendExecute(struct cs_thread *t, struct cs_event *ev, void *handle, void *plan, void *pack)
{
    (void)handle, (void)pack;
    if (ev->result) desc_extra(t, plan, "execute");
}

/* --- cuBLAS -------------------------------------------------------------------------------- */

void cs_hook_cublasCreate(struct cs_thread *t, struct cs_event *ev, void *handle)
{
    (void)ev, (void)handle;
    library_extra(t, "cublas");
}

void cs_hook_cublasLtCreate(struct cs_thread *t, struct cs_event *ev, void *handle)
{
    (void)ev, (void)handle;
    library_extra(t, "cublasLt");
}

/* libraryPropertyType: 0 major, 1 minor, 2 patch. */
void cs_hook_cublasGetProperty(struct cs_thread *t, struct cs_event *ev, uint32_t type, void *value)
{
    (void)t;
    if (ev->result == 0 && value)
        cs_version_seen_part("cublas", cs_real(&cs_api_cublas, CS_CUBLAS_cublasGetProperty), (int)type, *(int *)value);
}

void cs_hook_cublasLtGetProperty(struct cs_thread *t, struct cs_event *ev, uint32_t type, void *value)
{
    (void)t;
    if (ev->result == 0 && value)
        cs_version_seen_part("cublasLt", cs_real(&cs_api_cublasLt, CS_CUBLASLT_cublasLtGetProperty), (int)type,
                             *(int *)value);
}

/* --- NCCL ---------------------------------------------------------------------------------- */

static struct cs_comm comms[CS_MAX_COMMS];

/* A slot half-claimed at a fork: the child has no communicator of its parent's anyway. */
void cs_comms_drop(void) { memset(comms, 0, sizeof comms); }

struct cs_comm *cs_comm_at(int i) { return i < CS_MAX_COMMS && atomic_load(&comms[i].comm) ? &comms[i] : NULL; }

static struct cs_comm *comm_of(void *c, int create)
{
    for (int i = 0; i < CS_MAX_COMMS; i++) {
        void *x = atomic_load(&comms[i].comm);
        if (x == c) return &comms[i];
        if (!x) {
            if (!create) return NULL;
            cs_lock(CS_LOCK_COMMS);
            if (!atomic_load(&comms[i].comm)) {
                memset(&comms[i], 0, sizeof comms[i]);
                comms[i].rank = comms[i].nranks = comms[i].device = -1;
                atomic_store(&comms[i].comm, c);
                cs_unlock(CS_LOCK_COMMS);
                return &comms[i];
            }
            cs_unlock(CS_LOCK_COMMS);
            if (atomic_load(&comms[i].comm) == c) return &comms[i];
        }
    }
    return NULL;
}

/* NCCL's version as the scanner asked it (a hook never asks NCCL itself). */
static int nccl_version(void) { return cs_nccl_version_if_loaded(); }

/* FNV-1a of the 128-byte unique id: ranks of one communicator share it, and it says nothing
 * about the address inside it. */
static uint64_t id_hash(const void *id)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 128; i++) h = (h ^ ((const unsigned char *)id)[i]) * 1099511628211ull;
    return h;
}

/* The NCCL version goes in the trace header when NCCL is loaded before the trace opens; otherwise
 * a "process" line carries it as soon as a communicator is made (readers merge the two). */

static void comm_created(struct cs_thread *t, struct cs_event *ev, void *out, int nranks, int rank, const void *id)
{
    int v = nccl_version();
    if (!v) { cs_scan_wait(100); v = nccl_version(); }
    cs_extra(t, "\"nranks\":%d,\"rank\":%d,\"nccl_version\":%d", nranks, rank, v);
    if (id) cs_extra(t, "\"unique_id_hash\":\"%016llx\"", (unsigned long long)id_hash(id));
    library_extra(t, "nccl");
    /* The plugins NCCL loaded (libnccl-net*.so, tuner, profiler) are in the inventory. */
    char names[512] = "";
    size_t w = 0;
    for (int i = 0; i < cs_library_count(); i++)
        if (!strcmp(cs_library_at(i)->kind, "nccl-plugin")) {
            int x = snprintf(names + w, sizeof names - w, "%s%s", w ? "," : "", cs_library_at(i)->name);
            if (x > 0 && (size_t)x < sizeof names - w) w += (size_t)x;
        }
    cs_extra_str(t, "plugins", names);
    if (ev->result || !out) return;
    void *c = *(void **)out;
    struct cs_comm *cm = comm_of(c, 1);
    if (cm) {
        cm->rank = rank, cm->nranks = nranks, cm->version = v;
        cm->id_hash = id ? id_hash(id) : 0;
        int dev = -1;
        int (*cudev)(void *, int *) = cs_real(&cs_api_nccl, CS_NCCL_ncclCommCuDevice);
        struct cs_thread *own = cs_hide();
        if (cudev && !cudev(c, &dev)) cm->device = dev;
        cs_unhide(own);
        cs_extra(t, "\"comm\":\"%p\",\"device\":%d", c, dev);
    }
    cs_trace_nccl_version(v);
}


void cs_hook_ncclCommInitRank(struct cs_thread *t, struct cs_event *ev, void *comm, int32_t nranks,
                              struct cs_blob_128_1 id, int32_t rank)
{
    comm_created(t, ev, comm, nranks, rank, &id);
}

void cs_hook_ncclCommInitRankConfig(struct cs_thread *t, struct cs_event *ev, void *comm, int32_t nranks,
                                    struct cs_blob_128_1 id, int32_t rank, void *config)
{
    (void)config;
    comm_created(t, ev, comm, nranks, rank, &id);
}

void cs_hook_ncclCommSplit(struct cs_thread *t, struct cs_event *ev, void *comm, int32_t color, int32_t key,
                           void *newcomm, void *config)
{
    (void)config;
    cs_extra(t, "\"parent\":\"%p\",\"color\":%d,\"key\":%d", comm, color, key);
    struct cs_comm *parent = comm_of(comm, 0);
    comm_created(t, ev, newcomm, -1, parent ? -1 : -1, NULL);
}

void cs_hook_ncclCommEnd(struct cs_thread *t, struct cs_event *ev, void *comm)
{
    (void)ev;
    struct cs_comm *cm = comm_of(comm, 0);
    cs_extra(t, "\"comm\":\"%p\"", comm);
    if (cm) {
        cs_extra(t, "\"rank\":%d,\"nranks\":%d", cm->rank, cm->nranks);
        cm->ended = 1;
    }
}

void cs_hook_ncclCommGetAsyncError(struct cs_thread *t, struct cs_event *ev, void *comm, void *async_error)
{
    if (ev->result || !async_error) return;
    int e = *(int *)async_error;
    if (e == 0 || e == 7 /* ncclInProgress */) return;
    const char *rn = cs_api_nccl.result_name(e);
    cs_extra(t, "\"comm\":\"%p\",\"async_error\":%d", comm, e);
    if (rn) cs_extra_str(t, "async_error_name", rn);
    const char *(*f)(int) = cs_real(&cs_api_nccl, CS_NCCL_ncclGetErrorString);
    if (f && f(e)) cs_extra_str(t, "async_error_string", f(e));
    t->force_write = 1;
}

/* Collectives and point-to-point: one slot of the side ring, and the communicator's last ops. */
static void nccl_op(struct cs_thread *t, struct cs_event *ev, void *comm, uint64_t count, uint32_t dtype, int32_t op,
                    int32_t peer, void *stream)
{
    ev->arg = (uint64_t)(uintptr_t)comm;
    ev->stream = (uint64_t)(uintptr_t)stream;
    ev->kind = CS_LAUNCH_NCCL;
    ev->n.count = count, ev->n.peer = peer, ev->n.dtype = (uint8_t)dtype, ev->n.op = (int8_t)op;
    struct cs_comm *cm = comm_of(comm, 1);
    if (cm) {
        uint32_t i = atomic_fetch_add_explicit(&cm->nops, 1, memory_order_relaxed) % CS_COMM_OPS;
        cm->ops[i] = (struct cs_comm_op){ ev->api, (int32_t)dtype, op, peer, count, ev->ts, stream };
    }
    if (cs_unlikely(ev->result)) cs_put_launch(t, ev);
}

enum { NO_OP = -1, NO_PEER = -1 };
void cs_hook_ncclAllReduce(struct cs_thread *t, struct cs_event *ev, void *s, void *r, uint64_t count, uint32_t dt,
                           uint32_t op, void *comm, void *stream)
{ (void)s, (void)r; nccl_op(t, ev, comm, count, dt, (int32_t)op, NO_PEER, stream); }
void cs_hook_ncclBroadcast(struct cs_thread *t, struct cs_event *ev, void *s, void *r, uint64_t count, uint32_t dt,
                           int32_t root, void *comm, void *stream)
{ (void)s, (void)r; nccl_op(t, ev, comm, count, dt, NO_OP, root, stream); }
void cs_hook_ncclReduce(struct cs_thread *t, struct cs_event *ev, void *s, void *r, uint64_t count, uint32_t dt,
                        uint32_t op, int32_t root, void *comm, void *stream)
{ (void)s, (void)r; nccl_op(t, ev, comm, count, dt, (int32_t)op, root, stream); }
void cs_hook_ncclAllGather(struct cs_thread *t, struct cs_event *ev, void *s, void *r, uint64_t count, uint32_t dt,
                           void *comm, void *stream)
{ (void)s, (void)r; nccl_op(t, ev, comm, count, dt, NO_OP, NO_PEER, stream); }
void cs_hook_ncclReduceScatter(struct cs_thread *t, struct cs_event *ev, void *s, void *r, uint64_t count, uint32_t dt,
                               uint32_t op, void *comm, void *stream)
{ (void)s, (void)r; nccl_op(t, ev, comm, count, dt, (int32_t)op, NO_PEER, stream); }
void cs_hook_ncclSend(struct cs_thread *t, struct cs_event *ev, void *b, uint64_t count, uint32_t dt, int32_t peer,
                      void *comm, void *stream)
{ (void)b; nccl_op(t, ev, comm, count, dt, NO_OP, peer, stream); }
void cs_hook_ncclRecv(struct cs_thread *t, struct cs_event *ev, void *b, uint64_t count, uint32_t dt, int32_t peer,
                      void *comm, void *stream)
{ (void)b; nccl_op(t, ev, comm, count, dt, NO_OP, peer, stream); }


/* For the header: NCCL's version if it is already loaded (never loads it). */
int cs_nccl_version_if_loaded(void)
{
    /* From the inventory (the scanner asked it): a hook never calls into NCCL for this. */
    const struct cs_library *l = cs_library_find_kind("nccl", 0);
    cs_inventory_rdlock();
    int v = l && l->version_rank == CS_VERSION_API ? (int)l->code : 0;
    cs_inventory_unlock();
    return v;
}
