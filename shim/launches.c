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
#include <stdio.h>
#include <string.h>

#include "../wrappers/gen/cuda_api.h"
#include "devcode.h"
#include "hooks_libs.h"
#include "internal.h"
#include "inventory.h"
#include "../wrappers/gen/hooks.h"  /* the hooks' signatures, from the API tables */
#include "../wrappers/gen/results.h"

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

static struct cs_launch *record(struct cs_thread *t, struct cs_event *ev, void *f, uint32_t gx, uint32_t gy,
                                uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t shmem, void *stream)
{
    ev->arg = (uint64_t)(uintptr_t)f;
    struct cs_launch *l = &t->launch[ev->seq & t->launch_mask];
    l->f = f, l->stream = stream, l->ts = ev->ts, l->seq = ev->seq;
    l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz;
    l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
    l->shmem = shmem;
    l->kind = CS_LAUNCH_KERNEL;
    return l;
}

/* "kernel":"addk","grid":[4,1,1],"block":[256,1,1],"shared_mem":0,"stream":"0x0" */
int cs_launch_extra(const struct cs_thread *t, const struct cs_event *ev, char *out, size_t cap)
{
    const struct cs_launch *l = &t->launch[ev->seq & t->launch_mask];
    if (l->seq != ev->seq || (uint64_t)(uintptr_t)l->f != ev->arg) return 0;
    char name[256];
    struct cs_buf b = { out, 0, cap - 1 };
    if (l->kind == CS_LAUNCH_NCCL) {
        cs_put(&b, "\"comm\":"); cs_put_hex(&b, (uint64_t)(uintptr_t)l->f);
        cs_put(&b, ",\"count\":"); cs_put_u64(&b, l->count);
        cs_put(&b, ",\"datatype\":"); cs_put_str(&b, cs_nccl_dtype((int)l->grid[0]));
        const char *op = cs_nccl_redop((int32_t)l->grid[1]);
        if (op) { cs_put(&b, ",\"op\":"); cs_put_str(&b, op); }
        if ((int32_t)l->grid[2] >= 0) { cs_put(&b, ",\"peer\":"); cs_put_i64(&b, (int32_t)l->grid[2]); }
        cs_put(&b, ",\"stream\":"); cs_put_hex(&b, (uint64_t)(uintptr_t)l->stream);
        out[b.len] = 0;
        return (int)b.len;
    }
    if (l->kind == CS_LAUNCH_GRAPH) {
        cs_put(&b, "\"graph\":"); cs_put_hex(&b, (uint64_t)(uintptr_t)l->f);
    } else {
        cs_kernel_name(l->f, name, sizeof name, NULL, NULL);
        cs_put(&b, "\"kernel\":"); cs_put_str(&b, name);
    }
    if (l->block[0]) {
        cs_put(&b, ",\"grid\":["); cs_put_u64(&b, l->grid[0]); cs_put(&b, ","); cs_put_u64(&b, l->grid[1]);
        cs_put(&b, ","); cs_put_u64(&b, l->grid[2]); cs_put(&b, "],\"block\":["); cs_put_u64(&b, l->block[0]);
        cs_put(&b, ","); cs_put_u64(&b, l->block[1]); cs_put(&b, ","); cs_put_u64(&b, l->block[2]);
        cs_put(&b, "],\"shared_mem\":"); cs_put_u64(&b, l->shmem);
    }
    cs_put(&b, ",\"stream\":"); cs_put_hex(&b, (uint64_t)(uintptr_t)l->stream);
    out[b.len] = 0;
    return (int)b.len;
}

void cs_put_launch(struct cs_thread *t, struct cs_event *ev)
{
    char buf[600];
    int n = cs_launch_extra(t, ev, buf, sizeof buf);
    if (n > 0 && t->extra_len + n + 2 < (int)sizeof t->extra) {
        if (t->extra_len) t->extra[t->extra_len++] = ',';
        memcpy(t->extra + t->extra_len, buf, (size_t)n);
        t->extra_len += n;
    }
}

/* Why a launch failed at once: compare with the device's limits. */
static void launch_reason(struct cs_thread *t, const struct cs_launch *l)
{
    int dev = 0, max_threads = 0, mx = 0, my = 0, mz = 0, smem = 0;
    if (cs_ask_ctx_device(&dev)) dev = 0;
    if (cs_ask_attribute(&max_threads, 1, dev) < 0) return;
    cs_ask_attribute(&mx, 2, dev), cs_ask_attribute(&my, 3, dev), cs_ask_attribute(&mz, 4, dev);
    cs_ask_attribute(&smem, 8, dev);  /* MAX_SHARED_MEMORY_PER_BLOCK */
    unsigned long long threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
    char why[256] = "";
    if (max_threads && threads > (unsigned long long)max_threads)
        snprintf(why, sizeof why, "block %ux%ux%u = %llu threads exceeds the device limit of %d threads per block",
                 l->block[0], l->block[1], l->block[2], threads, max_threads);
    else if ((mx && l->block[0] > (unsigned)mx) || (my && l->block[1] > (unsigned)my) || (mz && l->block[2] > (unsigned)mz))
        snprintf(why, sizeof why, "block %ux%ux%u exceeds the device's block dimensions %dx%dx%d", l->block[0],
                 l->block[1], l->block[2], mx, my, mz);
    else if (smem && l->shmem > (unsigned)smem)
        snprintf(why, sizeof why, "%u bytes of shared memory exceed the device's %d per block (more needs "
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES))", l->shmem, smem);
    else if (!l->grid[0] || !l->grid[1] || !l->grid[2] || !threads)
        snprintf(why, sizeof why, "a grid or block dimension is 0");
    if (why[0]) cs_extra_str(t, "reason", why);
}

static int is_nccl_kernel(const char *name) { return !strncmp(name, "ncclDevKernel", 13) || !strncmp(name, "ncclKernel", 10); }

static void sync_after(struct cs_thread *t, struct cs_event *ev, const struct cs_launch *l)
{
    const char *pat = cs_cfg.sync_launches;
    if (!pat || ev->result) return;
    char name[256];
    cs_kernel_name(l->f, name, sizeof name, NULL, NULL);
    int all = !strcmp(pat, "1");
    if (all ? is_nccl_kernel(name) : (fnmatch(pat, name, 0) && !strstr(name, pat))) return;
    int sr = cs_ask_stream_sync(l->stream);
    if (sr < 0) return;
    uint32_t r = (uint32_t)sr;
    if (!r) { note_synced(l->stream, cs_ticks()); return; }
    const char *rn = cs_api_cuda.result_name((int32_t)r);
    cs_extra(t, "\"synced\":%u", r);
    t->force_write = 1;
    char summary[1024], ev_json[1024];
    snprintf(summary, sizeof summary,
             "found kernel %s (grid %ux%ux%u, block %ux%ux%u) failing with %s (%u): the synchronisation right after its "
             "launch reported it, so this kernel is the one that faulted",
             name, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], rn ? rn : "?", r);
    snprintf(ev_json, sizeof ev_json, "{\"kernel\":\"%.200s\",\"result\":%u,\"stream\":\"%p\"}", name, r, l->stream);
    cs_finding(CS_F_KERNEL_FAULT, CS_ERROR, name, summary,
               "Debug this kernel: run it under compute-sanitizer, check the inputs it was given; after an upgrade, "
               "check that the build targets this GPU natively (a JIT-compiled or wrong-architecture kernel can "
               "fault where native code does not).", ev_json);
}

static void after_launch(struct cs_thread *t, struct cs_event *ev, struct cs_launch *l)
{
    if (cs_unlikely(ev->result)) {
        cs_put_launch(t, ev);
        if (ev->result == 1 || ev->result == 701 /* LAUNCH_OUT_OF_RESOURCES */) launch_reason(t, l);
        if (ev->result == 209 || ev->result == 222 || ev->result == 200 || ev->result == 218)
            cs_devcode_launch_failed(t, ev->result, l->f);
    }
    if (cs_unlikely(cs_cfg.sync_launches != NULL)) sync_after(t, ev, l);
}

void cs_hook_cuLaunchKernel(struct cs_thread *t, struct cs_event *ev, void *f, uint32_t gx, uint32_t gy, uint32_t gz,
                            uint32_t bx, uint32_t by, uint32_t bz, uint32_t shmem, void *stream, void *params, void *extra)
{
    (void)params, (void)extra;
    after_launch(t, ev, record(t, ev, f, gx, gy, gz, bx, by, bz, shmem, stream));
}

void cs_hook_cuLaunchCooperativeKernel(struct cs_thread *t, struct cs_event *ev, void *f, uint32_t gx, uint32_t gy,
                                       uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t shmem,
                                       void *stream, void *params)
{
    (void)params;
    after_launch(t, ev, record(t, ev, f, gx, gy, gz, bx, by, bz, shmem, stream));
}

/* CUlaunchConfig: grid x/y/z, block x/y/z, sharedMemBytes (unsigned ints), then hStream. */
struct launch_config { unsigned g[3], b[3], shmem; void *stream; };

void cs_hook_cuLaunchKernelEx(struct cs_thread *t, struct cs_event *ev, void *config, void *f, void *params, void *extra)
{
    (void)params, (void)extra;
    struct launch_config c = { { 0, 0, 0 }, { 0, 0, 0 }, 0, NULL };
    if (config) memcpy(&c, config, sizeof c);
    after_launch(t, ev, record(t, ev, f, c.g[0], c.g[1], c.g[2], c.b[0], c.b[1], c.b[2], c.shmem, c.stream));
}

/* Kernels inside a graph never call cuLaunchKernel: the graph launch is the record. */
void cs_hook_cuGraphLaunch(struct cs_thread *t, struct cs_event *ev, void *graph, void *stream)
{
    struct cs_launch *l = record(t, ev, graph, 0, 0, 0, 0, 0, 0, 0, stream);
    l->kind = CS_LAUNCH_GRAPH;
    if (ev->result) cs_put_launch(t, ev);
}

/* --- asynchronous errors ----------------------------------------------------------------- */

static int is_async(int32_t r)
{
    return r == CS_CUDA_ERROR_ILLEGAL_ADDRESS || r == CS_CUDA_ERROR_LAUNCH_TIMEOUT || r == CS_CUDA_ERROR_LAUNCH_FAILED ||
           r == CS_CUDA_ERROR_ILLEGAL_INSTRUCTION || r == CS_CUDA_ERROR_MISALIGNED_ADDRESS || r == CS_CUDA_ERROR_ASSERT ||
           r == CS_CUDA_ERROR_HARDWARE_STACK_ERROR;
}

void cs_recent_launches(int (*visit)(const struct cs_thread *, const struct cs_launch *, void *), void *arg)
{
    for (struct cs_thread *th = cs_thread_list(); th; th = th->next) {
        if (!th->launch) continue;
        uint64_t h = atomic_load_explicit(&th->ring->head, memory_order_acquire);
        uint64_t span = h < th->ring->mask + 1 ? h : th->ring->mask + 1;
        for (uint64_t i = h; i-- > h - span;) {
            const struct cs_launch *l = &th->launch[i & th->launch_mask];
            if (l->seq == (uint32_t)i && l->f && visit(th, l, arg)) return;
        }
    }
}

/* The launches not yet covered by a successful synchronisation (of that stream, when known). */
struct suspects {
    const struct cs_event *ev;
    void *stream;
    int stream_known;
    struct cs_buf *list;
    char text[1600];
    size_t tl;
    int n;
};

static int add_suspect(const struct cs_thread *th, const struct cs_launch *l, void *arg)
{
    (void)th;
    struct suspects *s = arg;
    if ((s->stream_known && l->stream != s->stream) || l->ts <= last_synced(l->stream) || l->ts > s->ev->ts) return 0;
    char name[256];
    if (l->kind == CS_LAUNCH_GRAPH) snprintf(name, sizeof name, "graph %p", l->f);
    else if (l->kind == CS_LAUNCH_NCCL) snprintf(name, sizeof name, "%s on communicator %p", cs_api_name((int)l->shmem), l->f);
    else cs_kernel_name(l->f, name, sizeof name, NULL, NULL);
    if (s->n) cs_put(s->list, ",");
    cs_put_str(s->list, name);
    int w = snprintf(s->text + s->tl, sizeof s->text - s->tl, "%s%s", s->n ? ", " : "", name);
    if (w > 0 && (size_t)w < sizeof s->text - s->tl) s->tl += (size_t)w;
    return ++s->n >= 8;
}

void cs_async_error(struct cs_thread *t, struct cs_event *ev, void *stream, int stream_known)
{
    if (!is_async(ev->result)) return;
    char list[2048];
    struct cs_buf b = { list, 0, sizeof list - 1 };
    struct suspects su = { ev, stream, stream_known, &b, "", 0, 0 };
    cs_put(&b, "[");
    cs_recent_launches(add_suspect, &su);
    cs_put(&b, "]");
    int n = su.n;
    const char *text = su.text;
    list[b.len] = 0;
    if (t->extra_len + (int)b.len + 16 < (int)sizeof t->extra) cs_extra(t, "\"suspects\":%s", list);
    const char *rn = cs_api_cuda.result_name(ev->result);
    char summary[2400], ev_json[2400], key[32];
    snprintf(summary, sizeof summary,
             "found %s (%d) at %s, which reports a fault in a kernel that ran earlier; launched on %s since its last "
             "successful synchronisation: %s; rerun with CUDASHIM_SYNC_LAUNCHES=1 to pin the kernel",
             rn ? rn : "an error", ev->result, cs_api_name(ev->api), stream_known ? "that stream" : "the context",
             n ? text : "no launch the shim saw (it came from before the shim, or from a graph)");
    snprintf(ev_json, sizeof ev_json, "{\"api\":\"%s\",\"result\":%d,\"suspects\":%s}", cs_api_name(ev->api),
             ev->result, list);
    snprintf(key, sizeof key, "%d", ev->result);
    if (ev->result == CS_CUDA_ERROR_LAUNCH_TIMEOUT) {
        /* The display watchdog: the kernel is not wrong, it is long, on a GPU that drives a display. */
        snprintf(summary, sizeof summary,
                 "found CUDA_ERROR_LAUNCH_TIMEOUT (702) at %s: a kernel ran longer than the watchdog of a GPU that "
                 "drives a display allows (a few seconds); launched on %s since its last successful synchronisation: "
                 "%s; run on a GPU without a display, or without the display server, or split the kernel",
                 cs_api_name(ev->api), stream_known ? "that stream" : "the context",
                 n ? text : "no launch the shim saw (it came from before the shim, or from a graph)");
        cs_finding(CS_F_LAUNCH_TIMEOUT, CS_ERROR, key, summary,
                   "Use a GPU that drives no display (CUDA_VISIBLE_DEVICES), stop the display server (X, Wayland) on this "
                   "one, or make each kernel shorter. The context is lost: the process must start again.", ev_json);
        return;
    }
    cs_finding(CS_F_ASYNC_KERNEL_ERROR, CS_ERROR, key, summary,
               "Rerun with CUDASHIM_SYNC_LAUNCHES=1 (or =PATTERN for some kernels) to find the exact kernel, then debug "
               "it with compute-sanitizer. The error is sticky: every later call in this context fails too.", ev_json);
}

void cs_hook_cuStreamSynchronize(struct cs_thread *t, struct cs_event *ev, void *stream)
{
    if (ev->result == 0) note_synced(stream, ev->ts);
    else cs_async_error(t, ev, stream, 1);
}

void cs_hook_cuCtxSynchronize(struct cs_thread *t, struct cs_event *ev)
{
    if (ev->result == 0) atomic_store(&ctx_synced, ev->ts);
    else cs_async_error(t, ev, NULL, 0);
}

void cs_hook_cuEventSynchronize(struct cs_thread *t, struct cs_event *ev, void *event)
{
    (void)event;
    if (ev->result) cs_async_error(t, ev, NULL, 0);
}
