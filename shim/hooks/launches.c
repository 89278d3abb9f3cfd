/* Launches: each one is recorded (kernel, grid, block, shared memory, stream) in a per-thread side
 * ring parallel to the call ring, at the cost of a few stores. From it:
 *  - a launch that fails at once gets its reason (block larger than the device allows, ...);
 *  - an asynchronous error (700, 719, 715, 716, 710) reported later by a sync, copy or event
 *    call names the suspects: the launches on that stream (or context) since its last
 *    successful synchronisation, taken from the rings, without serialising anything;
 *  - CUDASHIM_SYNC_LAUNCHES=1|PATTERN synchronises after each matching launch to pin the exact
 *    kernel. NCCL's kernels are left alone unless the pattern names them: syncing a collective's
 *    stream from one rank deadlocks the others. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../wrappers/gen/cuda_api.h"
#include "../base/json.h"
#include "../base/nccl_names.h"
#include "../process/process.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../evidence/driver_ask.h"
#include "../rules/rules.h"
#include "devcode.h"
#include "../../wrappers/gen/hooks.h"  /* the hooks' signatures, from the API tables */
#include "../../wrappers/gen/results.h"

/* Last successful synchronisation, per stream (a small table; the context-wide one apart). */
#define SYNC_SLOTS 64
static struct { void *_Atomic stream; uint64_t _Atomic ts; } synced[SYNC_SLOTS];
static uint64_t _Atomic ctx_synced;

static void note_synced(void *stream, uint64_t ts)
{
    unsigned h = (unsigned)(((uintptr_t)stream >> 4) % SYNC_SLOTS);
    for (unsigned k = 0; k < SYNC_SLOTS; k++) {
        unsigned i = (h + k) % SYNC_SLOTS;
        void *s = atomic_load(&synced[i].stream), *expected = NULL;
        if (s == stream || (!s && atomic_compare_exchange_strong(&synced[i].stream, &expected, stream)) ||
            expected == stream) {
            atomic_store(&synced[i].ts, ts);
            return;
        }
    }
}

static uint64_t last_synced(void *stream)
{
    unsigned h = (unsigned)(((uintptr_t)stream >> 4) % SYNC_SLOTS);
    uint64_t c = atomic_load(&ctx_synced);
    for (unsigned k = 0; k < SYNC_SLOTS; k++) {
        unsigned i = (h + k) % SYNC_SLOTS;
        void *s = atomic_load(&synced[i].stream);
        if (!s) break;
        if (s == stream) { uint64_t t = atomic_load(&synced[i].ts); return t > c ? t : c; }
    }
    return c;
}

static uint16_t sat16(uint32_t v) { return v > 0xffff ? 0xffff : (uint16_t)v; }

static void record(struct cs_event *ev, void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                   uint32_t bz, uint32_t shmem, void *stream)
{
    ev->arg = (uint64_t)(uintptr_t)f;
    ev->stream = (uint64_t)(uintptr_t)stream;
    ev->kind = CS_LAUNCH_KERNEL;
    ev->shmem = shmem;
    ev->k.gx = gx, ev->k.gy = sat16(gy), ev->k.gz = sat16(gz);
    ev->k.bx = sat16(bx), ev->k.by = sat16(by), ev->k.bz = sat16(bz);
}

/* What a launch was given, written: "kernel":"addk","grid":[4,1,1],"block":[256,1,1],
 * "shared_mem":0,"stream":"0x0" (kernel: its name, looked up before). */
static void launch_fields(struct cs_buf *b, const struct cs_event *ev, const char *kernel)
{
    if (ev->kind == CS_LAUNCH_NCCL) {
        cs_put(b, "\"comm\":"); cs_put_hex(b, ev->arg);
        cs_put(b, ",\"count\":"); cs_put_u64(b, ev->n.count);
        cs_put(b, ",\"datatype\":"); cs_put_str(b, cs_nccl_dtype(ev->n.dtype));
        const char *op = cs_nccl_redop(ev->n.op);
        if (op) { cs_put(b, ",\"op\":"); cs_put_str(b, op); }
        if (ev->n.peer >= 0) { cs_put(b, ",\"peer\":"); cs_put_i64(b, ev->n.peer); }
        cs_put(b, ",\"stream\":"); cs_put_hex(b, ev->stream);
        return;
    }
    if (ev->kind == CS_LAUNCH_GRAPH) {
        cs_put(b, "\"graph\":"); cs_put_hex(b, ev->arg);
    } else {
        cs_put(b, "\"kernel\":"); cs_put_str(b, kernel);
    }
    if (ev->kind == CS_LAUNCH_KERNEL && ev->k.bx) {
        cs_put(b, ",\"grid\":["); cs_put_u64(b, ev->k.gx); cs_put(b, ","); cs_put_u64(b, ev->k.gy);
        cs_put(b, ","); cs_put_u64(b, ev->k.gz); cs_put(b, "],\"block\":["); cs_put_u64(b, ev->k.bx);
        cs_put(b, ","); cs_put_u64(b, ev->k.by); cs_put(b, ","); cs_put_u64(b, ev->k.bz);
        cs_put(b, "],\"shared_mem\":"); cs_put_u64(b, ev->shmem);
    }
    cs_put(b, ",\"stream\":"); cs_put_hex(b, ev->stream);
}

static void put_launch_fields(struct cs_thread *t, const struct cs_event *ev, const char *kernel)
{
    char buf[600];
    struct cs_buf b = { buf, 0, sizeof buf - 1 };
    launch_fields(&b, ev, kernel);
    if (b.len && t->extra_len + (int)b.len + 2 < (int)sizeof t->extra) {
        if (t->extra_len) t->extra[t->extra_len++] = ',';
        memcpy(t->extra + t->extra_len, buf, b.len);
        t->extra_len += (int)b.len;
    }
}

void cs_put_launch(struct cs_thread *t, struct cs_event *ev)
{
    if (!ev->kind) return;
    char name[256] = "";
    if (ev->kind == CS_LAUNCH_KERNEL) cs_kernel_name((void *)(uintptr_t)ev->arg, name, sizeof name);
    put_launch_fields(t, ev, name);
}

/* --- a launch that failed at once: what explains it collected first, then written once ---- */

struct launch_failure {
    struct cs_devcode_facts code;     /* the kernel, its module's image, the image rule's explanation */
    int limits;                       /* the device's limits below were asked */
    int max_threads, dim[3], smem;    /* per block */
};

/* The device's limits, for a launch the device may have refused for its shape. */
static void ask_limits(struct launch_failure *f)
{
    int dev = 0;
    if (cs_ask_ctx_device(&dev)) dev = 0;
    if (cs_ask_attribute(&f->max_threads, 1, dev) < 0) return;
    cs_ask_attribute(&f->dim[0], 2, dev), cs_ask_attribute(&f->dim[1], 3, dev), cs_ask_attribute(&f->dim[2], 4, dev);
    cs_ask_attribute(&f->smem, 8, dev);  /* MAX_SHARED_MEMORY_PER_BLOCK */
    f->limits = 1;
}

static void collect_failure(const struct cs_thread *t, const struct cs_event *ev, struct launch_failure *f)
{
    f->limits = f->max_threads = f->dim[0] = f->dim[1] = f->dim[2] = f->smem = 0;
    cs_kernel_facts((void *)(uintptr_t)ev->arg, &f->code);
    if (ev->result == CS_CUDA_ERROR_INVALID_VALUE || ev->result == CS_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
        ask_limits(f);
    cs_devcode_explain(t, ev->result, "launch", &f->code);
}

/* Why the device refused the launch's shape, from its limits; "" when they do not say. */
static void launch_reason(const struct cs_event *l, const struct launch_failure *f, char *why, size_t cap)
{
    unsigned bx = l->k.bx, by = l->k.by, bz = l->k.bz;
    unsigned long long threads = (unsigned long long)bx * by * bz;
    const int *d = f->dim;
    why[0] = 0;
    if (!f->limits) return;
    if (f->max_threads && threads > (unsigned long long)f->max_threads)
        snprintf(why, cap, "block %ux%ux%u = %llu threads exceeds the device limit of %d threads per block",
                 bx, by, bz, threads, f->max_threads);
    else if ((d[0] && bx > (unsigned)d[0]) || (d[1] && by > (unsigned)d[1]) || (d[2] && bz > (unsigned)d[2]))
        snprintf(why, cap, "block %ux%ux%u exceeds the device's block dimensions %dx%dx%d", bx, by, bz, d[0], d[1], d[2]);
    else if (f->smem && l->shmem > (unsigned)f->smem)
        snprintf(why, cap, "%u bytes of shared memory exceed the device's %d per block (more needs "
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES))", l->shmem, f->smem);
    else if (!l->k.gx || !l->k.gy || !l->k.gz || !threads)
        snprintf(why, cap, "a grid or block dimension is 0");
}

static void write_failure(struct cs_thread *t, const struct cs_event *ev, const struct launch_failure *f)
{
    char why[256];
    put_launch_fields(t, ev, f->code.kernel);
    launch_reason(ev, f, why, sizeof why);
    if (why[0]) cs_extra_str(t, "reason", why);
    if (f->code.diagnosis[0]) cs_extra_str(t, "diagnosis", f->code.diagnosis);
}

static int is_nccl_kernel(const char *name) { return !strncmp(name, "ncclDevKernel", 13) || !strncmp(name, "ncclKernel", 10); }

static void sync_after(struct cs_thread *t, struct cs_event *ev)
{
    const char *pat = cs_cfg.sync_launches;
    if (!pat || ev->result) return;
    char name[256];
    void *f = (void *)(uintptr_t)ev->arg, *stream = (void *)(uintptr_t)ev->stream;
    cs_kernel_name(f, name, sizeof name);
    int all = !strcmp(pat, "1");
    if (all ? is_nccl_kernel(name) : (fnmatch(pat, name, 0) && !strstr(name, pat))) return;
    int sr = cs_ask_stream_sync(stream);
    if (sr < 0) return;
    uint32_t r = (uint32_t)sr;
    if (!r) { note_synced(stream, cs_ticks()); return; }
    const char *rn = cs_api_cuda.result_name((int32_t)r);
    cs_extra(t, "\"synced\":%u", r);
    t->force_write = 1;
    struct cs_kernel_fault kf = { name, rn, r, { ev->k.gx, ev->k.gy, ev->k.gz }, { ev->k.bx, ev->k.by, ev->k.bz }, stream };
    cs_rule_kernel_fault(&kf);
}

/* The fast path kept a launch's register arguments in the thread; the rest it passes here. */
void cs_fast_launch_failed(struct cs_thread *t, struct cs_event *ev, uint32_t bz, uint32_t shmem)
{
    const struct cs_fast_launch *a = cs_fast_kept(t);
    record(ev, a->f, a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1], bz, shmem,
           (void *)(uintptr_t)ev->stream);
}

/* A launch that failed at once: what it was given, and why when the device's limits or its
 * module's image say. Also the fast path's failure handling for launches (the event holds the
 * launch). */
void cs_launch_failed(struct cs_thread *t, struct cs_event *ev)
{
    struct launch_failure f;
    collect_failure(t, ev, &f);
    write_failure(t, ev, &f);
}

static void after_launch(struct cs_thread *t, struct cs_event *ev)
{
    if (cs_unlikely(ev->result)) cs_launch_failed(t, ev);
    if (cs_unlikely(cs_cfg.sync_launches != NULL)) sync_after(t, ev);
}

void cs_hook_cuLaunchKernel(struct cs_thread *t, struct cs_event *ev, void *f, uint32_t gx, uint32_t gy, uint32_t gz,
                            uint32_t bx, uint32_t by, uint32_t bz, uint32_t shmem, void *stream, void *params, void *extra)
{
    (void)params, (void)extra;
    record(ev, f, gx, gy, gz, bx, by, bz, shmem, stream);
    after_launch(t, ev);
}

void cs_hook_cuLaunchCooperativeKernel(struct cs_thread *t, struct cs_event *ev, void *f, uint32_t gx, uint32_t gy,
                                       uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t shmem,
                                       void *stream, void *params)
{
    (void)params;
    record(ev, f, gx, gy, gz, bx, by, bz, shmem, stream);
    after_launch(t, ev);
}

static void record_ex(struct cs_event *ev, const void *config, void *f)
{
    struct cs_launch_config c = { { 0, 0, 0 }, { 0, 0, 0 }, 0, NULL };
    if (config) memcpy(&c, config, sizeof c);
    record(ev, f, c.g[0], c.g[1], c.g[2], c.b[0], c.b[1], c.b[2], c.shmem, c.stream);
}

void cs_hook_cuLaunchKernelEx(struct cs_thread *t, struct cs_event *ev, void *config, void *f, void *params, void *extra)
{
    (void)params, (void)extra;
    record_ex(ev, config, f);
    after_launch(t, ev);
}

/* The assembly fast path's failing cuLaunchKernelEx: what it kept at its level. */
void cs_fast_launch_ex_failed(struct cs_thread *t, struct cs_event *ev)
{
    const struct cs_fast_launch *a = cs_fast_kept(t);
    record_ex(ev, a->config, a->ex_f);
}

/* Kernels inside a graph never call cuLaunchKernel: the graph launch is the record. */
void cs_hook_cuGraphLaunch(struct cs_thread *t, struct cs_event *ev, void *graph, void *stream)
{
    ev->arg = (uint64_t)(uintptr_t)graph;
    ev->stream = (uint64_t)(uintptr_t)stream;
    ev->kind = CS_LAUNCH_GRAPH;
    if (ev->result) cs_put_launch(t, ev);
}

/* --- asynchronous errors ----------------------------------------------------------------- */

/* Launches still in the rings, newest first per thread: at most this many events back, so that
 * a long flight recorder does not make an error slow to report. */
#define LOOK_BACK 4096
void cs_recent_launches(int (*visit)(const struct cs_thread *, const struct cs_event *, void *), void *arg)
{
    for (struct cs_thread *th = cs_thread_list(); th; th = th->next) {
        uint64_t h = atomic_load_explicit(&th->head, memory_order_acquire);
        uint64_t span = h < th->ring->mask + 1 ? h : th->ring->mask + 1;
        if (span > LOOK_BACK) span = LOOK_BACK;
        for (uint64_t i = h; i-- > h - span;) {
            const struct cs_event *l = &th->ring->ev[i & th->ring->mask];
            if (l->kind && l->arg && !(l->flags & CS_EV_PENDING) && visit(th, l, arg)) return;
        }
    }
}

/* The launches not yet covered by a successful synchronisation (of that stream, when known):
 * their names collected from the rings first, then written once, as JSON and as text. */
#define MAX_SUSPECTS 8
struct suspects {
    const struct cs_event *ev;
    void *stream;
    int stream_known;
    int n;
    char name[MAX_SUSPECTS][256];
};

static int add_suspect(const struct cs_thread *th, const struct cs_event *l, void *arg)
{
    (void)th;
    struct suspects *s = arg;
    void *stream = (void *)(uintptr_t)l->stream, *f = (void *)(uintptr_t)l->arg;
    if ((s->stream_known && stream != s->stream) || l->ts <= last_synced(stream) || l->ts > s->ev->ts) return 0;
    char *name = s->name[s->n];
    if (l->kind == CS_LAUNCH_GRAPH) snprintf(name, sizeof s->name[0], "graph %p", f);
    else if (l->kind == CS_LAUNCH_NCCL) snprintf(name, sizeof s->name[0], "%s on communicator %p", cs_api_name(l->api), f);
    else cs_kernel_name(f, name, sizeof s->name[0]);
    return ++s->n >= MAX_SUSPECTS;
}

void cs_async_error(struct cs_thread *t, struct cs_event *ev, void *stream, int stream_known)
{
    if (!cs_rule_is_async_error(ev->result)) return;
    struct suspects su = { .ev = ev, .stream = stream, .stream_known = stream_known };
    cs_recent_launches(add_suspect, &su);
    char list[2048], text[1600];
    struct cs_buf b = { list, 0, sizeof list - 1 }, tb = { text, 0, sizeof text - 1 };
    cs_put(&b, "[");
    for (int i = 0; i < su.n; i++) {
        if (i) cs_put(&b, ","), cs_put(&tb, ", ");
        cs_put_str(&b, su.name[i]);
        cs_put(&tb, su.name[i]);
    }
    cs_put(&b, "]");
    list[b.len] = 0, text[tb.len] = 0;
    if (t->extra_len + (int)b.len + 16 < (int)sizeof t->extra) cs_extra(t, "\"suspects\":%s", list);
    struct cs_async_failure f = { cs_api_name(ev->api), cs_api_cuda.result_name(ev->result), ev->result, stream_known,
                                  text, list, su.n, 0, 0, 0 };
    if (ev->result == CS_CUDA_ERROR_LAUNCH_TIMEOUT) {
        f.watchdog_devices = cs_device_watchdog_mask(&f.watchdog_asked);
        f.wsl = cs_kernel_is_wsl();
    }
    cs_rule_async_error(&f);
}

/* A synchronisation covers the launches made before it began (ev->ts); launches after it carry a
 * later time even on the fast path, because it moves the coarse clock past its own start. */
void cs_hook_cuStreamSynchronize(struct cs_thread *t, struct cs_event *ev, void *stream)
{
    cs_coarse_note(cs_ticks(), 1);
    if (ev->result == 0) note_synced(stream, ev->ts);
    else cs_async_error(t, ev, stream, 1);
}

void cs_hook_cuCtxSynchronize(struct cs_thread *t, struct cs_event *ev)
{
    cs_coarse_note(cs_ticks(), 1);
    if (ev->result == 0) atomic_store(&ctx_synced, ev->ts);
    else cs_async_error(t, ev, NULL, 0);
}

/* CUDA 13's form (a context given; the runtime's cudaDeviceSynchronize calls it): the same. */
void cs_hook_cuCtxSynchronize_v2(struct cs_thread *t, struct cs_event *ev, void *ctx)
{
    (void)ctx;
    cs_hook_cuCtxSynchronize(t, ev);
}

void cs_hook_cuEventSynchronize(struct cs_thread *t, struct cs_event *ev, void *event)
{
    (void)event;
    if (ev->result) cs_async_error(t, ev, NULL, 0);
}
