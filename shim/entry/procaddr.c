/* cuGetProcAddress (4 arguments, CUDA 11.3 ABI) and cuGetProcAddress_v2 (5 arguments, 12.0).
 *
 * The real resolver answers first. Only when it succeeds is its answer mapped back to the exact
 * exported name (by address) and swapped for our wrapper of that name, so the caller keeps the
 * ABI version and stream semantics (_ptsz/_ptds) the driver chose. A lookup of the resolver
 * itself returns our resolver of the matching ABI, so later lookups stay covered. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <string.h>

#include "../base/json.h"
#include "../process/process.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../diagnose/diagnose.h"
#include "../../wrappers/gen/cuda_api.h"
#include "../../wrappers/gen/results.h"

enum { STATUS_SUCCESS = 0, STATUS_SYMBOL_NOT_FOUND = 1, STATUS_VERSION_NOT_SUFFICIENT = 2 };
static const char *const status_names[] = { "CU_GET_PROC_ADDRESS_SUCCESS", "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND",
                                            "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT" };

typedef uint32_t (*gpa_v1)(void *, void *, int32_t, uint64_t);
typedef uint32_t (*gpa_v2)(void *, void *, int32_t, uint64_t, void *);

/* The library that asked: a static cudart copy inside cuBLAS or NCCL shows up here. */
static const char *caller_name(void *ra)
{
    const char *name = cs_lm_name_of_addr(ra);  /* lock-free: never dladdr inside a hook */
    if (!name) return "?";
    if (!*name) return "the program";
    const char *slash = strrchr(name, '/');
    return slash ? slash + 1 : name;
}

/* Callers already attributed: most lookups come from a handful of return addresses' libraries,
 * and the per-lookup dladdr is not free, so remember the (caller object) we have seen. */
static int cs_seen_caller(void *ra)
{
    static void *_Atomic seen[64];
    static int _Atomic n;
    void *obj = cs_lm_of_addr(ra);
    if (!obj) return 1;
    int k = atomic_load(&n);
    for (int i = 0; i < k && i < 64; i++)
        if (atomic_load(&seen[i]) == obj) return 1;
    if (k < 64) atomic_store(&seen[atomic_fetch_add(&n, 1) % 64], obj);
    return 0;
}

static uint32_t lookup(int via, int api_idx, const char *sym, void **pfn, int32_t ver, uint64_t flags,
                       int *status, void *ra)
{
    struct cs_api *api = &cs_api_cuda;
    void *realf = cs_real(api, api_idx);
    struct cs_thread *t;
    if (!realf)
        return cs_missing(api, api_idx, via);
    int st_local = -1;
    if (!(t = cs_enter(api_idx)))
        return api_idx == CS_CUDA_cuGetProcAddress ? ((gpa_v1)realf)((void *)sym, pfn, ver, flags)
                                                   : ((gpa_v2)realf)((void *)sym, pfn, ver, flags, status);
    uint64_t t0 = cs_ticks();
    uint32_t r = api_idx == CS_CUDA_cuGetProcAddress ? ((gpa_v1)realf)((void *)sym, pfn, ver, flags)
                                                     : ((gpa_v2)realf)((void *)sym, pfn, ver, flags, status);
    int saved_errno = errno;
    struct cs_event *ev = cs_record(t, api, api_idx, via, r, t0);
    int st = status ? *status : (r == 0 && pfn && *pfn ? STATUS_SUCCESS : st_local);
    const char *got = NULL;
    if (r == 0 && pfn && *pfn && st == STATUS_SUCCESS && cs_api_bind(api)) {
        int idx = cs_api_index_of_ptr(api, *pfn, sym);
        if (idx >= 0) {
            got = cs_fn_name(api, idx - api->base);
            *pfn = cs_rel(api->via[CS_VIA_PROCADDR], idx - api->base);
        }
    }
    ev->arg = (uint64_t)(uint32_t)ver;
    if (r == CS_CUDA_ERROR_NOT_FOUND)  /* the driver's answer "no such function", written, not a failed call */
        ev->flags |= CS_EV_ANSWER;
    int failed = r != 0 || !pfn || !*pfn || st != STATUS_SUCCESS;
    /* The runtime probes with an empty name; that answer is expected, not a finding. */
    if ((failed && sym && *sym) || cs_cfg.trace_all) {
        cs_extra_str(t, "symbol", sym ? sym : "");
        char n[24];
        cs_extra(t, "\"cuda_version\":%d,\"flags\":%s", (int)ver, cs_num(n, flags));
        if (st >= 0 && st <= 2) cs_extra_str(t, "status", status_names[st]);
        if (got) cs_extra_str(t, "resolved", got);
        cs_extra_str(t, "caller", caller_name(ra));
        t->force_write = 1;  /* with its details; in ALL mode successful lookups too */
    }
    cs_finish(t, api, ev, 0);
    if (sym && *sym && (failed || !cs_seen_caller(ra)))
        cs_diagnose_procaddr(ra, sym, (int)ver, st, (int)r);
    errno = saved_errno;
    return r;
}

#define RA __builtin_return_address(0)
CS_EXPORT uint32_t cuGetProcAddress(void *s, void *p, int32_t v, uint64_t f)
{ return lookup(CS_VIA_LINKED, CS_CUDA_cuGetProcAddress, s, p, v, f, NULL, RA); }
uint32_t cs_d_cuGetProcAddress(void *s, void *p, int32_t v, uint64_t f)
{ return lookup(CS_VIA_DLSYM, CS_CUDA_cuGetProcAddress, s, p, v, f, NULL, RA); }
uint32_t cs_g_cuGetProcAddress(void *s, void *p, int32_t v, uint64_t f)
{ return lookup(CS_VIA_PROCADDR, CS_CUDA_cuGetProcAddress, s, p, v, f, NULL, RA); }
CS_EXPORT uint32_t cuGetProcAddress_v2(void *s, void *p, int32_t v, uint64_t f, void *st)
{ return lookup(CS_VIA_LINKED, CS_CUDA_cuGetProcAddress_v2, s, p, v, f, st, RA); }
uint32_t cs_d_cuGetProcAddress_v2(void *s, void *p, int32_t v, uint64_t f, void *st)
{ return lookup(CS_VIA_DLSYM, CS_CUDA_cuGetProcAddress_v2, s, p, v, f, st, RA); }
uint32_t cs_g_cuGetProcAddress_v2(void *s, void *p, int32_t v, uint64_t f, void *st)
{ return lookup(CS_VIA_PROCADDR, CS_CUDA_cuGetProcAddress_v2, s, p, v, f, st, RA); }
