/* The hot path every generated wrapper inlines: the real function, the fast path's record.
 *
 * Nothing here takes a lock or makes a system call. Slow paths (first call on a
 * thread, writing a failing call) are out of line in thread.c, record.c and fast_path.c. */
#ifndef CS_WRAP_H
#define CS_WRAP_H

#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../hooks/devcode.h"
#include "fast_asm.h"

uint32_t cs_fast_failed(struct cs_thread *t, struct cs_api *api, struct cs_event *ev);

/* The fast path (default mode, an outermost call, nothing unusual): no clock read, no call
 * into the shim, no write to memory another thread writes. The event is filled after the real
 * call returns (calls it makes are recorded first, as on the full path); a failure goes to
 * cs_fast_failed with the event not yet published. A successful call's event has no sequence
 * number (its slot's place in the ring says it; nothing reads it): a failing one gets it there. */
static inline __attribute__((always_inline)) void cs_fast_enter(struct cs_thread *t, int idx)
{
    __atomic_store_n(&t->current, idx, __ATOMIC_RELAXED);
    /* The depth byte alone: the mode byte may say the watchdog runs (an unwatched call takes
     * this path then), and losing it would leave later watched calls timed from an older one. */
    __atomic_store_n(&t->depth, 1, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) struct cs_event *cs_fast_record(struct cs_thread *t, int idx, uint8_t via,
                                                                             uint32_t r, uint8_t kind, uint64_t *hp)
{
    uint64_t h = atomic_load_explicit(&t->head, memory_order_relaxed);
    struct cs_event *ev = &t->ring->ev[h & t->ring_mask];
    ev->ts = atomic_load_explicit(&cs_coarse_ticks, memory_order_relaxed);
    ev->api = (uint16_t)idx;  /* with via and flags, constants: one store */
    ev->via = via;
    ev->flags = 0;
    ev->result = (int32_t)r;
    ev->w_launch = (uint64_t)kind << 16;  /* not inside another call, no duration */
    t->calls[idx]++;
    *hp = h;
    return ev;
}

static inline __attribute__((always_inline)) void cs_fast_publish(struct cs_thread *t, uint64_t h)
{
    atomic_store_explicit(&t->head, h + 1, memory_order_release);
    __atomic_store_n(&t->depth, 0, __ATOMIC_RELAXED);
}

/* A kernel launch on the fast path: recorded as any call, with its function and stream; its
 * geometry only when it fails (cs_fast_launch_failed), from what cs_fast_launch_args kept. */
static inline __attribute__((always_inline)) void cs_fast_launch_args(struct cs_thread *t, void *f, uint32_t gx, uint32_t gy, uint32_t gz,
                                       uint32_t bx, uint32_t by)
{
    struct cs_fast_launch *a = &t->launch[0];
    a->f = f;
    a->grid[0] = gx, a->grid[1] = gy, a->grid[2] = gz;
    a->block[0] = bx, a->block[1] = by;
}

static inline __attribute__((always_inline)) void cs_fast_launch_record(struct cs_thread *t, struct cs_event *ev, void *stream)
{
    ev->arg = (uint64_t)(uintptr_t)t->launch[0].f;
    ev->stream = (uint64_t)(uintptr_t)stream;
}

/* The assembly fast path's ways out of line (fast_path.c): a failure (bz and shmem: a launch's
 * stack arguments), and a function's first call. */
uint32_t cs_fast_failed_asm(struct cs_thread *t, struct cs_api *api, struct cs_event *ev, uint32_t bz, uint32_t shmem);
uint32_t cs_fast_failed_ex_asm(struct cs_thread *t, struct cs_api *api, struct cs_event *ev);
/* A failure whose hook runs with the arguments the entry point kept (fast=on_failure). */
uint32_t cs_fast_failed_hook(struct cs_thread *t, struct cs_api *api, struct cs_event *ev,
                             void (*hook)(struct cs_thread *t, struct cs_event *ev, const uint64_t *args));
void *cs_fast_resolve(int idx);

#endif
