/* The fast path's one way out of line: a call that returned non-zero. It is handled as the full
 * path handles one (counted as an error unless it is the API's "not yet" answer, written, the
 * launch's failure explained), with the precise time of the failure, and errno kept. */
#include <errno.h>

#include "devcode.h"
#include "internal.h"

uint32_t cs_fast_failed(struct cs_thread *t, struct cs_api *api, struct cs_event *ev, int published)
{
    int saved_errno = errno;
    uint64_t now = cs_ticks();
    cs_coarse_note(now, 0);
    ev->ts = now;
    t->extra_len = 0;
    t->force_write = 0;
    if (ev->result != api->benign) {
        t->errors[ev->api]++;
        ev->flags |= CS_EV_FAILED;
    }
    if (ev->kind == CS_LAUNCH_KERNEL) cs_launch_failed(t, ev);
    cs_emit(t, api, ev);
    if (!published)
        atomic_store_explicit(&t->head, atomic_load_explicit(&t->head, memory_order_relaxed) + 1,
                              memory_order_release);
    __atomic_store_n(&t->depth, 0, __ATOMIC_RELAXED);
    errno = saved_errno;
    return (uint32_t)ev->result;
}
