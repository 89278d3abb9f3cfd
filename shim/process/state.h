/* The shapes every layer shares: a wrapped API (generated, one per table), a recorded call
 * (one 64-byte event), a thread's state and ring; and the few inline helpers that read them
 * without a lock or a system call (the thread's state, the clock, the shim's own calls hidden). */
#ifndef CS_STATE_H
#define CS_STATE_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../../wrappers/gen/apis.h"

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
    /* The tables below hold no pointer, so the loader relocates nothing of them when the
     * library is mapped into a process that may never load CUDA: names are offsets into one
     * string (cs_fn_name), entry points offsets from the table entry (cs_rel). */
    const char *names_blob;      /* sorted, for binary search */
    const uint32_t *name_off;
    const uint8_t *classes;
    const int32_t *via[CS_VIA_COUNT];
    void *_Atomic *real;         /* resolved lazily; CS_REAL_MISSING / CS_REAL_ABSENT when absent */
    /* The assembly fast path calls through these: the real function once a first call resolved
     * it, until then (and after a rebind) the function's resolving thunk, unresolved[i]. NULL
     * where the fast path is C. */
    void *_Atomic *call;
    const int32_t *unresolved;   /* cs_rel; 0 where the function has no fast path */
    const char *(*result_name)(int32_t);
    int32_t benign;              /* a non-zero result that is an answer, not a failure */
    /* Older majors (libcudnn.so.8): their own entries, each calling that major's copy. */
    const struct cs_node { const char *soname; const int32_t *linked; } *nodes;
    int nnodes;
    /* filled at bind time */
    void *_Atomic handle;        /* the bound copy's link-map entry */
    uintptr_t _Atomic bound_addr;  /* and its load address: a reused entry is not the same copy */
    struct cs_ptr_index *_Atomic by_ptr;
};

/* An entry of a self-relative table (the distance from the entry to its target), or NULL for 0. */
static inline void *cs_rel(const int32_t *table, int i)
{
    return table[i] ? (void *)((const char *)&table[i] + table[i]) : NULL;
}

static inline const char *cs_fn_name(const struct cs_api *api, int i)
{
    return api->names_blob + api->name_off[i];
}

#define CS_REAL_MISSING ((void *)1)  /* the library lacks it; the next definition not yet looked for */
#define CS_REAL_ABSENT ((void *)2)   /* defined nowhere after the shim */

/* A recorded call: one cache line. The launch fields say what a kernel launch, graph launch or
 * NCCL operation was given (kind says which, 0: none), so that an asynchronous error can name
 * its suspects and ALL mode can write them, without a second ring. */
enum { CS_EV_WRITTEN = 1, CS_EV_FAILED = 2, CS_EV_ANSWER = 4 /* non-zero, but an answer (lookup miss) */,
       CS_EV_PENDING = 8 /* slot taken, call still running */ };
enum { CS_LAUNCH_NONE, CS_LAUNCH_KERNEL, CS_LAUNCH_GRAPH, CS_LAUNCH_NCCL };
/* The words (w_*) let the fast path fill several fields with one store. */
struct cs_event {
    uint64_t ts;      /* clock ticks at entry; on the fast path a coarse time (see cs_coarse_ticks) */
    union {
        struct {
            uint16_t api;     /* global API index */
            uint8_t via;
            uint8_t flags;
            int32_t result;
        };
        uint64_t w_call;
    };
    uint32_t seq;     /* per-thread call number, low bits */
    uint32_t shmem;   /* kernel launches: dynamic shared memory bytes */
    uint64_t arg;     /* role-specific: launch function, graph, communicator, alloc size ... */
    uint64_t stream;  /* launches */
    union {
        struct {
            uint16_t inside;  /* 1 + global index of the wrapped call this one was made inside; 0: none */
            uint8_t kind;     /* CS_LAUNCH_* */
            uint8_t spare;
            uint32_t dur;     /* ticks, saturated; 0 on the fast path */
        };
        uint64_t w_launch;
    };
    union {
        struct { uint32_t gx; uint16_t gy, gz, bx, by, bz, pad; } k;             /* grid, block */
        struct { uint64_t count; int32_t peer; uint8_t dtype; int8_t op; uint16_t pad; } n;  /* NCCL */
    };
};
_Static_assert(sizeof(struct cs_event) == 64, "an event is one cache line");

/* A thread's ring. Its head is in the thread (struct cs_thread), written by that thread only, beside
 * what the fast path reads anyway; tail is written by the ALL-mode writer only, on its own line. */
struct cs_ring {
    uint64_t mask;
    char pad0[56];
    _Atomic uint64_t tail;
    char pad1[56];
    struct cs_event ev[];
};

/* A library's calls made inside a wrapped call (cuBLAS's runtime asking the driver inside
 * cublasCreate) are the program's calls and are recorded; this many levels deep. */
#define CS_MAX_NEST 4

/* A thread's gate: zero lets a call take the fast path (and, on x86-64, one lets a call made
 * inside another take it). depth counts the wrapped calls the thread is inside, hide the shim's
 * own calls in progress, mode says why every call takes the full path (ALL mode, launch syncing,
 * no state yet). watch, beside it, says why a library call does (the hang watchdog needs its
 * entry time); driver calls are not watched, so it is not part of the gate they test. */
enum { CS_MODE_FULL = 1 };

struct cs_thread {
    union {
        uint32_t gate;
        struct { uint8_t depth, hide, mode, gate_spare; };
    };
    int current;                 /* global index of the outermost API the thread is inside (valid while depth) */
    struct cs_ring *ring;
    _Atomic uint64_t head;       /* the ring's next event; events before it are published */
    uint32_t ring_mask;          /* ring->mask, here so that the fast path finds its slot from the thread */
    uint8_t watch;               /* the hang watchdog runs: library calls take the full path */
    uint8_t watch_spare[3];
    /* A kernel launch on the fast path: the arguments that arrive in registers, kept for the
     * launch's record should it fail (the others are still in the caller's frame then); one per
     * level the fast path takes (an outermost call, and a call made inside one: the runtime's
     * cuLaunchKernel inside cudaLaunchKernel). */
    struct cs_fast_launch {
        union {
            struct { void *f; uint32_t grid[3], block[2]; };  /* cuLaunchKernel */
            struct { void *config, *ex_f; };                    /* cuLaunchKernelEx (assembly path) */
            uint64_t args[4];                                   /* fast=on_failure (assembly path) */
        };
    } launch[2];
    /* The assembly fast path (fast_asm.h), during the real call: the caller's return address and
     * register, kept here so that the call's stack arguments are the caller's own (no copy). */
    struct { void *ret, *rbx; } save[2];
#if defined(__aarch64__)
    /* cuLaunchKernel's block z and shared memory per level: registers on aarch64 (w6, w7), which
     * the real call clobbers; x86-64 passes them on the stack, where they stay. */
    uint32_t launch_tail[2][2];
#endif

    uint64_t enter_ts;           /* when it entered a watched call (ticks), for the hang watchdog */
    uint64_t hang_reported;      /* the enter_ts of the call last reported as hung */
    int tid;
    int lossless;                /* ALL mode: never overwrite unwritten events */
    int _Atomic dead;
    int _Atomic flushing;        /* ALL mode: the ring's waiting events are being written */
    void *flush_buf;             /* ALL mode: where they are gathered (calls_file.c) */
    uint64_t dropped;
    struct cs_event scratch;     /* target for a dropped event, so hooks can still write to it */
    struct cs_thread *next;      /* global list, never unlinked */
    /* Extra JSON fields a hook adds to the event being finished (no leading comma). */
    int extra_len;
    int force_write;
    char extra[1024];
    uint64_t calls[CS_API_TOTAL];
    uint64_t errors[CS_API_TOTAL];
};

/* cs_tls is never NULL: a thread without state points at cs_unborn, whose gate sends every call
 * to the full path (which makes the state). cs_self() is how code other than a wrapper asks. */
extern __thread struct cs_thread *cs_tls __attribute__((tls_model("initial-exec")));
extern struct cs_thread cs_unborn CS_HIDDEN;
static inline struct cs_thread *cs_self(void) { struct cs_thread *t = cs_tls; return t == &cs_unborn ? NULL : t; }
/* A coarse clock, read by the fast path instead of the TSC: advanced by calls that take the
 * precise time (synchronising, key, failing and full-path calls). */
extern uint64_t _Atomic cs_coarse_ticks CS_HIDDEN;
extern int cs_clock_is_tsc CS_HIDDEN;
extern int cs_disabled CS_HIDDEN;

struct cs_thread *cs_thread_slow(int idx);  /* thread.c: a thread's first call makes its state */
uint64_t cs_ticks_slow(void);               /* clock.c: the clock when it is not the TSC */

/* The per-thread state accessor of the full path: the only way a wrapper reaches thread state
 * there. Returns NULL when the shim is disabled, the shim itself is calling (cs_hide), or calls
 * nest too deep. */
static inline struct cs_thread *cs_enter(int idx)
{
    struct cs_thread *t = cs_tls;
    if (cs_unlikely(t == &cs_unborn) && !(t = cs_thread_slow(idx)))
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
    struct cs_thread *t = cs_self();
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

/* Advance the coarse clock to a precise time just taken; written only when it moved on by
 * about 100 us (or when a synchronisation asks), so threads rarely write the shared line. */
#define CS_COARSE_STEP (1ull << 18)
static inline void cs_coarse_note(uint64_t now, int force)
{
    uint64_t c = atomic_load_explicit(&cs_coarse_ticks, memory_order_relaxed);
    if (now > c && (force || now - c > CS_COARSE_STEP))
        atomic_store_explicit(&cs_coarse_ticks, now, memory_order_relaxed);
}

/* What the entry point kept of the failing call's arguments, at the level the call is at (an
 * outermost call, or one made inside another). */
static inline const struct cs_fast_launch *cs_fast_kept(const struct cs_thread *t) { return &t->launch[t->depth > 1]; }

/* The generated API tables (wrappers/gen): data every layer reads, and their result names. */
#define CS_API_DECL(a) extern struct cs_api cs_api_##a; const char *cs_##a##_result_name(int32_t r);
CS_API_LIST(CS_API_DECL)

#endif
