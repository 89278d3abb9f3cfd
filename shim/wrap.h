/* The hot path every generated wrapper inlines: guard, timestamp, record, finish.
 *
 * Nothing here takes a lock or makes a system call. Slow paths (first call on a
 * thread, writing a failing call) are out of line in thread.c and writer.c. */
#ifndef CS_WRAP_H
#define CS_WRAP_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../wrappers/gen/apis.h"

#define CS_EXPORT __attribute__((visibility("default")))
#define CS_HIDDEN __attribute__((visibility("hidden")))
#define cs_likely(x) __builtin_expect(!!(x), 1)
#define cs_unlikely(x) __builtin_expect(!!(x), 0)

/* How a call reached its wrapper. */
enum { CS_VIA_LINKED = 0, CS_VIA_DLSYM = 1, CS_VIA_PROCADDR = 2, CS_VIA_COUNT = 3 };

/* Classes of calls, from the table flags. */
enum {
    CS_CLASS_KEY = 1,    /* written in default mode even when it succeeds */
    CS_CLASS_LAUNCH = 2,
    CS_CLASS_SYNC = 4,
    CS_CLASS_ALLOC = 8,
};

/* One wrapped API (driver, cuDNN, NCCL, cuBLAS): generated, one per table. */
struct cs_api {
    const char *name;
    const char *soname;          /* the library whose handle real functions come from */
    int base, count;             /* this API's slice of the global index space */
    const char *const *names;    /* sorted, for binary search */
    const uint8_t *classes;
    void *const *via[CS_VIA_COUNT];
    void *_Atomic *real;         /* resolved lazily; CS_REAL_MISSING / CS_REAL_ABSENT when absent */
    const char *(*result_name)(int32_t);
    int32_t benign;              /* a non-zero result that is an answer, not a failure */
    /* Older majors (libcudnn.so.8): their own entries, each calling that major's copy. */
    const struct cs_node { const char *soname; void *const *linked; } *nodes;
    int nnodes;
    /* filled at bind time */
    void *_Atomic handle;        /* the bound copy's link-map entry */
    uintptr_t _Atomic bound_addr;  /* and its load address: a reused entry is not the same copy */
    struct cs_ptr_index *_Atomic by_ptr;
};

#define CS_REAL_MISSING ((void *)1)  /* the library lacks it; the next definition not yet looked for */
#define CS_REAL_ABSENT ((void *)2)   /* defined nowhere after the shim */

/* Ring events are compact and fixed-size; formatting happens later, off the hot path. */
enum { CS_EV_WRITTEN = 1, CS_EV_FAILED = 2, CS_EV_ANSWER = 4 /* non-zero, but an answer (lookup miss) */ };
struct cs_event {
    uint64_t ts;      /* clock ticks at entry */
    uint32_t dur;     /* ticks, saturated */
    uint16_t api;     /* global API index */
    uint8_t via;
    uint8_t flags;
    int32_t result;
    uint32_t seq;     /* per-thread call number, low bits */
    uint64_t arg;     /* role-specific: launch function, alloc size, stream ... */
    uint16_t inside;  /* 1 + global index of the wrapped call this one was made inside; 0: none */
};

struct cs_ring {
    _Atomic uint64_t head;       /* written by the owning thread only */
    _Atomic uint64_t tail;       /* written by the writer thread only (ALL mode) */
    uint64_t mask;
    struct cs_event ev[];
};

/* A launch, kept in a side ring parallel to the call ring (same index): read on failures, by
 * the async-error search and by the ALL-mode writer. */
enum { CS_LAUNCH_KERNEL, CS_LAUNCH_GRAPH, CS_LAUNCH_NCCL };
struct cs_launch {
    void *f;                     /* CUfunction/CUkernel; CUgraphExec; or the NCCL communicator */
    void *stream;
    uint64_t ts;
    uint64_t count;              /* NCCL: element count */
    uint32_t seq;
    uint32_t grid[3], block[3], shmem;  /* NCCL: grid = datatype, op, peer; shmem = API index */
    uint8_t kind;
};

/* A library's calls made inside a wrapped call (cuBLAS's runtime asking the driver inside
 * cublasCreate) are the program's calls and are recorded; this many levels deep. */
#define CS_MAX_NEST 4

struct cs_thread {
    int depth;                   /* wrapped calls the thread is inside (nested up to CS_MAX_NEST) */
    int hide;                    /* > 0 while the shim itself is calling: nothing is recorded */
    int current;                 /* global index of the outermost API the thread is inside (valid while depth) */
    uint64_t enter_ts;           /* when it entered that call (ticks), for the hang watchdog */
    uint64_t hang_reported;      /* the enter_ts of the call last reported as hung */
    int tid;
    int lossless;                /* ALL mode: never overwrite unwritten events */
    int _Atomic dead;
    struct cs_ring *ring;
    struct cs_launch *launch;    /* [launch_mask + 1], indexed by the event's seq */
    uint64_t launch_mask;
    uint64_t *calls;             /* [CS_API_TOTAL] */
    uint64_t *errors;            /* [CS_API_TOTAL] */
    uint64_t dropped;
    struct cs_event scratch;     /* target for a dropped event, so hooks can still write to it */
    struct cs_thread *next;      /* global list, never unlinked */
    /* Extra JSON fields a hook adds to the event being finished (no leading comma). */
    int extra_len;
    int force_write;
    char extra[1024];
};

extern __thread struct cs_thread *cs_tls __attribute__((tls_model("initial-exec")));
extern int cs_clock_is_tsc;
extern int cs_disabled;

struct cs_thread *cs_thread_slow(int idx);
uint32_t cs_missing(struct cs_api *api, int idx, int via);
void *cs_real_resolve(struct cs_api *api, int idx);
void cs_emit(struct cs_thread *t, struct cs_api *api, struct cs_event *ev);
uint64_t cs_ticks_slow(void);

/* The per-thread state accessor: the only way code reaches thread state. Returns NULL when
 * the shim is disabled, the shim itself is calling (cs_hide), or calls nest too deep. */
static inline struct cs_thread *cs_enter(int idx)
{
    struct cs_thread *t = cs_tls;
    if (cs_unlikely(!t) && !(t = cs_thread_slow(idx)))
        return NULL;
    /* depth, current and enter_ts are read by the watchdog thread: relaxed atomic stores (plain
     * moves on x86 and arm64), so the reads are well defined. */
    if (cs_unlikely(t->depth | t->hide)) {
        if (t->hide || t->depth >= CS_MAX_NEST)
            return NULL;
        __atomic_store_n(&t->depth, t->depth + 1, __ATOMIC_RELAXED);
        return t;
    }
    __atomic_store_n(&t->current, idx, __ATOMIC_RELAXED);  /* so a crash inside the real call can name it */
    __atomic_store_n(&t->depth, 1, __ATOMIC_RELAXED);
    return t;
}

static inline void cs_leave(struct cs_thread *t) { __atomic_store_n(&t->depth, t->depth - 1, __ATOMIC_RELAXED); }

/* Around the shim's own calls into a CUDA library: whatever they reach is not the program's. */
static inline struct cs_thread *cs_hide(void)
{
    struct cs_thread *t = cs_tls;
    if (t) t->hide++;
    return t;
}
static inline void cs_unhide(struct cs_thread *t) { if (t) t->hide--; }

static inline uint64_t cs_ticks(void)
{
#if defined(__x86_64__)
    if (cs_likely(cs_clock_is_tsc)) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
#endif
    return cs_ticks_slow();
}

/* The real function from one named library (an older major's versioned name): that library's
 * own definition when it is loaded, else the API's usual one. Cached in *slot. */
void *cs_real_in(struct cs_api *api, int idx, const char *soname, void *_Atomic *slot);

static inline void *cs_real(struct cs_api *api, int idx)
{
    void *p = atomic_load_explicit(&api->real[idx - api->base], memory_order_relaxed);
    if (cs_unlikely((uintptr_t)p <= (uintptr_t)CS_REAL_MISSING))
        p = cs_real_resolve(api, idx);
    return p == CS_REAL_ABSENT ? NULL : p;
}

static inline struct cs_event *cs_record(struct cs_thread *t, struct cs_api *api, int idx, int via,
                                         uint32_t result, uint64_t t0)
{
    uint64_t now = cs_ticks();
    struct cs_ring *r = t->ring;
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    struct cs_event *ev;
    (void)api;
    t->calls[idx]++;
    if (cs_unlikely(t->lossless) &&
        h - atomic_load_explicit(&r->tail, memory_order_acquire) > r->mask) {
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
    ev->inside = t->depth > 1 ? (uint16_t)(t->current + 1) : 0;
    t->extra_len = 0;
    t->force_write = 0;
    return ev;
}

/* Publish the event; failing and key calls are written now (rare, off the hot path). */
static inline void cs_finish(struct cs_thread *t, struct cs_api *api, struct cs_event *ev, int key)
{
    if (cs_unlikely(ev->result != 0 || key || t->force_write)) {
        if (ev->result != 0 && ev->result != api->benign && !(ev->flags & CS_EV_ANSWER)) {
            t->errors[ev->api]++;
            ev->flags |= CS_EV_FAILED;
        }
        cs_emit(t, api, ev);
    }
    if (cs_likely(ev != &t->scratch))
        atomic_store_explicit(&t->ring->head, atomic_load_explicit(&t->ring->head, memory_order_relaxed) + 1,
                              memory_order_release);
    cs_leave(t);
}

#define CS_API_DECL(a) extern struct cs_api cs_api_##a; const char *cs_##a##_result_name(int32_t r);
CS_API_LIST(CS_API_DECL)

#endif
