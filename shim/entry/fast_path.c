/* The fast path's one way out of line: a call that returned non-zero. It is handled as the full
 * path handles one (counted as an error unless it is the API's "not yet" answer, written, the
 * launch's failure explained), with the precise time of the failure, and errno kept. */
#include <errno.h>

#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../hooks/devcode.h"
#include "wrap.h"
#include "../../wrappers/gen/results.h"

uint32_t cs_fast_failed(struct cs_thread *t, struct cs_api *api, struct cs_event *ev)
{
    return cs_fast_failed_hook(t, api, ev, NULL);
}

uint32_t cs_fast_failed_hook(struct cs_thread *t, struct cs_api *api, struct cs_event *ev,
                             void (*hook)(struct cs_thread *t, struct cs_event *ev, const uint64_t *args))
{
    int saved_errno = errno;
    uint64_t now = cs_ticks();
    ev->seq = (uint32_t)atomic_load_explicit(&t->head, memory_order_relaxed);  /* its slot, not yet published */
    cs_coarse_note(now, 0);
    ev->ts = now;
    t->extra_len = 0;
    t->force_write = 0;
    if (ev->result != api->benign) {
        t->errors[ev->api]++;
        ev->flags |= CS_EV_FAILED;
    }
    if (ev->kind == CS_LAUNCH_KERNEL) cs_launch_failed(t, ev);
    if (hook) hook(t, ev, cs_fast_kept(t)->args);
    if (atomic_load_explicit(&api->real[ev->api - api->base], memory_order_relaxed) == CS_REAL_ABSENT)
        cs_extra_str(t, "note", cs_note_absent);  /* the assembly path's answer for it (cs_fast_absent) */
    cs_emit(t, api, ev);
    atomic_store_explicit(&t->head, atomic_load_explicit(&t->head, memory_order_relaxed) + 1, memory_order_release);
    __atomic_store_n(&t->depth, t->depth - 1, __ATOMIC_RELAXED);  /* 0, or 1 for a call inside another */
    errno = saved_errno;
    return (uint32_t)ev->result;
}

#if CS_FAST_ASM
#include <stddef.h>

uint32_t cs_fast_failed_asm(struct cs_thread *t, struct cs_api *api, struct cs_event *ev, uint32_t bz, uint32_t shmem)
{
    if (ev->kind == CS_LAUNCH_KERNEL) cs_fast_launch_failed(t, ev, bz, shmem);
    return cs_fast_failed(t, api, ev);
}

uint32_t cs_fast_failed_ex_asm(struct cs_thread *t, struct cs_api *api, struct cs_event *ev)
{
    cs_fast_launch_ex_failed(t, ev);
    return cs_fast_failed(t, api, ev);
}

/* A function no loaded library defines: "not found", as the full path answers (cs_missing). Called
 * in the real function's place, with its arguments (ignored); the fast path records the answer as
 * a failure, and cs_fast_failed says why. */
static uint32_t cs_fast_absent(void) { return CS_CUDA_ERROR_NOT_FOUND; }

/* The slot is a cache of api->real: written only here, and set back to the thunk by a rebind.
 * A rebind between reading the real function and caching it is seen by reading it again after
 * (both sides store, then load, sequentially consistent). */
void *cs_fast_resolve(int idx)
{
    int saved_errno = errno;
    struct cs_api *api = cs_api_of(idx);
    void *p = cs_real(api, idx);
    if (!p) {
        errno = saved_errno;
        return (void *)cs_fast_absent;
    }
    int i = idx - api->base;
    atomic_store(&api->call[i], p);
    if (atomic_load(&api->real[i]) != p) atomic_store(&api->call[i], cs_rel(api->unresolved, i));
    errno = saved_errno;
    return p;
}

/* The offsets fast_asm.h writes by number. */
#define CS_AT(type, field, off) _Static_assert(offsetof(type, field) == (off), #type "." #field " moved: update fast_asm.h")
CS_AT(struct cs_thread, gate, CS_T_GATE);
CS_AT(struct cs_thread, depth, CS_T_DEPTH);
CS_AT(struct cs_thread, current, CS_T_CURRENT);
CS_AT(struct cs_thread, ring, CS_T_RING);
CS_AT(struct cs_thread, head, CS_T_HEAD);
CS_AT(struct cs_thread, ring_mask, CS_T_RING_MASK);
CS_AT(struct cs_thread, watch, CS_T_WATCH);
CS_AT(struct cs_thread, launch, CS_T_LAUNCH);
CS_AT(struct cs_thread, save, CS_T_SAVE);
_Static_assert(sizeof(struct cs_fast_launch) == CS_T_LAUNCH_SIZE && offsetof(struct cs_fast_launch, grid) == 8 &&
               offsetof(struct cs_fast_launch, block) == 20 && offsetof(struct cs_fast_launch, ex_f) == 8 &&
               sizeof(((struct cs_thread *)0)->save[0]) == 16,
               "a level's launch and saved registers moved: update fast_asm.h");
#if defined(__aarch64__)
CS_AT(struct cs_thread, launch_tail, CS_T_TAIL);
#endif
CS_AT(struct cs_thread, calls, CS_T_CALLS);
CS_AT(struct cs_ring, ev, CS_R_EV);
CS_AT(struct cs_event, ts, CS_E_TS);
CS_AT(struct cs_event, w_call, CS_E_W_CALL);
CS_AT(struct cs_event, result, CS_E_RESULT);
CS_AT(struct cs_event, arg, CS_E_ARG);
CS_AT(struct cs_event, stream, CS_E_STREAM);
CS_AT(struct cs_event, w_launch, CS_E_W_LAUNCH);
CS_AT(struct cs_launch_config, stream, CS_CONFIG_STREAM);
_Static_assert(CS_LAUNCH_KERNEL == 1 && sizeof(struct cs_event) == 64, "fast_asm.h writes kind 1 and 64-byte events");
#endif
