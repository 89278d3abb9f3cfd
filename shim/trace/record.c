/* The full path's event: filled after the real call returned (calls it made are recorded first),
 * then published, written at once when it failed or is a key call. */
#include <stdarg.h>
#include <stdio.h>

#include "../base/json.h"
#include "../process/state.h"
#include "trace.h"
#include "../../wrappers/gen/results.h"

struct cs_event *cs_record(struct cs_thread *t, struct cs_api *api, int idx, int via, uint32_t result, uint64_t t0)
{
    uint64_t now = cs_ticks();
    struct cs_ring *r = t->ring;
    uint64_t h = atomic_load_explicit(&t->head, memory_order_relaxed);
    struct cs_event *ev;
    (void)api;
    cs_coarse_note(now, 0);
    t->calls[idx]++;
    if (cs_unlikely(t->lossless) && h - atomic_load_explicit(&r->tail, memory_order_acquire) > r->mask &&
        !cs_calls_make_room(t)) {
        t->dropped++;
        ev = &t->scratch;
    } else {
        ev = &r->ev[h & r->mask];
    }
    ev->ts = t0;
    uint64_t d = now - t0;
    ev->dur = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    ev->api = (uint16_t)idx;
    ev->via = (uint8_t)via;
    ev->flags = 0;
    ev->result = (int32_t)result;
    ev->seq = (uint32_t)h;
    ev->arg = 0;
    ev->stream = 0;
    ev->inside = t->depth > 1 ? (uint16_t)(t->current + 1) : 0;
    ev->kind = CS_LAUNCH_NONE;
    t->extra_len = 0;
    t->force_write = 0;
    return ev;
}

void cs_finish(struct cs_thread *t, struct cs_api *api, struct cs_event *ev, int key)
{
    if (cs_unlikely(ev->result != 0 || key || t->force_write)) {
        if (ev->result != 0 && ev->result != api->benign && !(ev->flags & CS_EV_ANSWER)) {
            t->errors[ev->api]++;
            ev->flags |= CS_EV_FAILED;
        }
        cs_emit(t, api, ev);
    }
    if (cs_likely(ev != &t->scratch))
        atomic_store_explicit(&t->head, atomic_load_explicit(&t->head, memory_order_relaxed) + 1,
                              memory_order_release);
    cs_leave(t);
}

const char cs_note_absent[] = "the loaded library does not export this function (or is not loaded)";

/* A wrapped function the loaded library does not have: the caller gets "not found" (what the
 * driver says of a function it lacks), and the trace says so. */
uint32_t cs_missing(struct cs_api *api, int idx, int via)
{
    struct cs_thread *t = cs_enter(idx);
    if (t) {
        struct cs_event *ev = cs_record(t, api, idx, via, CS_CUDA_ERROR_NOT_FOUND, cs_ticks());
        cs_extra_str(t, "note", cs_note_absent);
        t->force_write = 1;
        cs_finish(t, api, ev, 1);
    }
    return CS_CUDA_ERROR_NOT_FOUND;
}

/* Hooks add fields to the event being finished; fields are comma-separated, no leading comma. */
void cs_extra(struct cs_thread *t, const char *fmt, ...)
{
    size_t cap = sizeof t->extra - (size_t)t->extra_len;
    if (cap < 2) return;
    char *p = t->extra + t->extra_len;
    if (t->extra_len) *p++ = ',', cap--;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p, cap, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= cap) n = (int)cap - 1;
    t->extra_len = (int)(p - t->extra) + n;
}

void cs_extra_str(struct cs_thread *t, const char *key, const char *val)
{
    char tmp[512];
    struct cs_buf b = { tmp, 0, sizeof tmp - 1 };
    cs_put_str(&b, key);
    cs_put(&b, ":");
    cs_put_str(&b, val);
    tmp[b.len] = 0;
    cs_extra(t, "%s", tmp);
}
