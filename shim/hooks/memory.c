/* Device memory: what the process allocated through the calls the shim saw (live bytes, by
 * pointer), so that an out-of-memory failure can say how much was asked, how much the driver
 * says is free, and how much this process already holds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <uthash.h>

#include "../../wrappers/gen/cuda_api.h"
#include "../base/json.h"
#include "../process/locks.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../evidence/driver_ask.h"
#include "../rules/rules.h"
#include "devcode.h"
#include "../../wrappers/gen/results.h"
#include "../../wrappers/gen/hooks.h"  /* the hooks' signatures, from the API tables */

struct block { uint64_t ptr; uint64_t size; UT_hash_handle hh; };
static struct block *blocks;
static uint64_t live_bytes, live_count, total_bytes;

static void allocated(uint64_t ptr, uint64_t size)
{
    struct block *b = malloc(sizeof *b);
    cs_lock(CS_LOCK_MEMORY);
    total_bytes += size;
    if (b) {
        struct block *old;
        HASH_FIND(hh, blocks, &ptr, sizeof ptr, old);
        if (old) { live_bytes -= old->size; live_count--; HASH_DEL(blocks, old); free(old); }
        b->ptr = ptr, b->size = size;
        HASH_ADD(hh, blocks, ptr, sizeof b->ptr, b);
        live_bytes += size, live_count++;
    }
    cs_unlock(CS_LOCK_MEMORY);
}

/* What bounds the process's address space and locked memory, and whether a sanitizer's runtime
 * (which reserves terabytes of shadow) is preloaded: read only when an allocation failed. */
static void limits(struct cs_oom *m)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) m->as_limit = r.rlim_cur;
    if (getrlimit(RLIMIT_MEMLOCK, &r) == 0 && r.rlim_cur != RLIM_INFINITY) m->memlock = r.rlim_cur;
    const char *pre = getenv("LD_PRELOAD");
    m->sanitizer = pre && (strstr(pre, "libasan") || strstr(pre, "libtsan") || strstr(pre, "libmsan"));
}

void cs_memory_live(uint64_t *bytes, uint64_t *count)
{
    cs_lock(CS_LOCK_MEMORY);
    *bytes = live_bytes, *count = live_count;
    cs_unlock(CS_LOCK_MEMORY);
}

static void failure(struct cs_thread *t, struct cs_event *ev, uint64_t size, int kind)
{
    char n1[24], n2[24], n3[24], n4[24];
    cs_extra(t, "\"requested\":%s", cs_num(n1, size));
    if (ev->result != CS_CUDA_ERROR_OUT_OF_MEMORY) return;
    size_t free_b = 0, total_b = 0;
    int have = kind != CS_OOM_PINNED && !cs_ask_mem_info(&free_b, &total_b);
    uint64_t live, count;
    cs_memory_live(&live, &count);
    if (have) cs_extra(t, "\"free\":%s,\"total\":%s", cs_num(n2, free_b), cs_num(n3, total_b));
    cs_extra(t, "\"process_live_bytes\":%s,\"process_allocations\":%s", cs_num(n4, live), cs_num(n1, count));
    struct cs_oom m = { cs_api_name(ev->api), size, free_b, total_b, live, count, have, kind, 0, 0, 0 };
    limits(&m);
    cs_rule_out_of_memory(&m);
}

/* Address space reserved (pools, cuMemAddressReserve) or host memory pinned: nothing to count on
 * the device, only a failure to explain. */
static void reservation(struct cs_thread *t, struct cs_event *ev, uint64_t size)
{
    ev->arg = size;
    if (ev->result) failure(t, ev, size, CS_OOM_RESERVATION);
}

static void pinned(struct cs_thread *t, struct cs_event *ev, uint64_t size)
{
    ev->arg = size;
    if (ev->result) failure(t, ev, size, CS_OOM_PINNED);
}

void cs_hook_cuMemAddressReserve(struct cs_thread *t, struct cs_event *ev, void *ptr, uint64_t size, uint64_t alignment,
                                 uint64_t addr, uint64_t flags)
{ (void)ptr, (void)alignment, (void)addr, (void)flags; reservation(t, ev, size); }
void cs_hook_cuMemPoolCreate(struct cs_thread *t, struct cs_event *ev, void *pool, void *props)
{ (void)pool, (void)props; reservation(t, ev, 0); }
void cs_hook_cuMemHostAlloc(struct cs_thread *t, struct cs_event *ev, void *pp, uint64_t size, uint32_t flags)
{ (void)pp, (void)flags; pinned(t, ev, size); }
void cs_hook_cuMemAllocHost(struct cs_thread *t, struct cs_event *ev, void *pp, uint64_t size)
{ (void)pp; pinned(t, ev, size); }
void cs_hook_cuMemHostRegister(struct cs_thread *t, struct cs_event *ev, void *p, uint64_t size, uint32_t flags)
{ (void)p, (void)flags; pinned(t, ev, size); }

static void result(struct cs_thread *t, struct cs_event *ev, uint64_t ptr, uint64_t size)
{
    ev->arg = size;
    if (ev->result == 0) { if (ptr) allocated(ptr, size); return; }
    /* cudaMallocAsync's pool reserves address space first: its refusal may be the address space's */
    int api_reserves = !strncmp(cs_api_name(ev->api), "cuMemAllocAsync", 15) ||
                       !strncmp(cs_api_name(ev->api), "cuMemAllocFromPoolAsync", 23);
    failure(t, ev, size, api_reserves ? CS_OOM_RESERVATION : CS_OOM_DEVICE);
}

static uint64_t out_ptr(struct cs_event *ev, void *p) { return ev->result == 0 && p ? *(uint64_t *)p : 0; }

void cs_hook_cuMemAlloc(struct cs_thread *t, struct cs_event *ev, void *dptr, uint64_t size)
{ result(t, ev, out_ptr(ev, dptr), size); }
void cs_hook_cuMemAllocAsync(struct cs_thread *t, struct cs_event *ev, void *dptr, uint64_t size, void *stream)
{ (void)stream; result(t, ev, out_ptr(ev, dptr), size); }
void cs_hook_cuMemAllocFromPoolAsync(struct cs_thread *t, struct cs_event *ev, void *dptr, uint64_t size, void *pool,
                                     void *stream)
{ (void)pool, (void)stream; result(t, ev, out_ptr(ev, dptr), size); }
void cs_hook_cuMemAllocManaged(struct cs_thread *t, struct cs_event *ev, void *dptr, uint64_t size, uint32_t flags)
{ (void)flags; result(t, ev, out_ptr(ev, dptr), size); }
void cs_hook_cuMemAllocPitch(struct cs_thread *t, struct cs_event *ev, void *dptr, void *pitch, uint64_t w, uint64_t h,
                             uint32_t elt)
{
    (void)elt;
    uint64_t p = ev->result == 0 && pitch ? *(size_t *)pitch : w;
    result(t, ev, out_ptr(ev, dptr), p * h);
}
/* cuMemCreate makes a physical allocation handle, not an address: counted by handle. */
void cs_hook_cuMemCreate(struct cs_thread *t, struct cs_event *ev, void *handle, uint64_t size, void *prop, uint64_t flags)
{ (void)prop, (void)flags; result(t, ev, out_ptr(ev, handle), size); }

void cs_hook_cuMemFree(struct cs_thread *t, struct cs_event *ev, uint64_t dptr)
{
    (void)t;
    if (ev->result) return;
    cs_lock(CS_LOCK_MEMORY);
    struct block *b;
    HASH_FIND(hh, blocks, &dptr, sizeof dptr, b);
    if (b) { live_bytes -= b->size; live_count--; HASH_DEL(blocks, b); }
    cs_unlock(CS_LOCK_MEMORY);
    free(b);
}

/* A child forked while another thread was changing the table: it starts an empty one (the
 * parent's blocks are its own; the child's allocations start at zero anyway). */
void cs_memory_drop(void)
{
    blocks = NULL;
    live_bytes = live_count = total_bytes = 0;
}
