/* Holding the loader's list of objects still while the shim reads it.
 *
 * The shim reads the link map, the objects' dynamic sections and their GOTs without calling
 * the loader. A dlclose on another thread unmaps an object and frees its entry while holding
 * the loader's write lock (the lock dl_iterate_phdr takes, not the one dlopen and dlsym take),
 * so work done inside a dl_iterate_phdr callback sees every object either whole or gone.
 *
 * What runs under it must not call dlopen, dlsym, dladdr or dlclose: they take the other
 * lock, which a dlclose holds while it waits for this one. It is also fenced from fork (the
 * FENCE lock, taken by fork's prepare handler): glibc makes the child's dlopen lock anew, not
 * this one, so a child forked while another thread held it would wait for ever. Nothing else
 * may be done under the fence: a thread inside dlopen can be waiting for it (a constructor's
 * dlsym reaches the shim), so its holder must never wait for the loader's dlopen lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../process/locks.h"
#include "loader.h"

/* A forked child may hold the loader's write lock for ever: glibc does not make it anew, and
 * the thread that held it at the fork (a dlopen or dlclose) did not come along. Nor can the
 * child read the link map without it: its own dlclose may unmap what it reads. So the child's
 * scanner thread first takes that lock once (cs_loader_probe); until it has, nobody reads the
 * link map (a program thread waits 100 ms for it at most, then reads nothing). A scanner that
 * waits for ever there holds no lock of the shim's. */
static uint32_t _Atomic unproven;
static int _Atomic fence_phase;

void cs_loader_after_fork(void)
{
    atomic_store(&unproven, 1);
    atomic_store(&fence_phase, 0);
}

static int nothing(struct dl_phdr_info *info, size_t size, void *arg) { (void)info, (void)size, (void)arg; return 1; }

void cs_loader_probe(void)
{
    if (!atomic_load(&unproven)) return;
    dl_iterate_phdr(nothing, NULL);
    atomic_store(&unproven, 0);
    syscall(SYS_futex, &unproven, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
}

static int usable(void)
{
    if (!atomic_load(&unproven)) return 1;
    /* the child's scanner, started by its fork handler, probes first */
    struct timespec slice = { 0, 10000000 };
    for (int i = 0; i < 10 && atomic_load(&unproven); i++)
        syscall(SYS_futex, &unproven, FUTEX_WAIT_PRIVATE, 1, &slice, NULL, 0);
    return !atomic_load(&unproven);
}

/* Where the fence's holder is, for a fork's prepare handler: WAITING for the loader's lock (which
 * only a thread inside the loader holds: the forking thread itself, when the fork comes from a
 * signal handler that interrupted a dlopen or dlclose), or INSIDE it (reading memory: it waits on
 * nothing, and a fork must wait for it, however slow a page fault on a loaded disk makes it). */
enum { OUTSIDE, WAITING, INSIDE };

struct iteration { int (*cb)(struct dl_phdr_info *, size_t, void *); void *arg; };

static int inside(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct iteration *it = arg;
    atomic_store_explicit(&fence_phase, INSIDE, memory_order_release);
    return it->cb(info, size, it->arg);
}

void cs_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    if (!usable()) return;
    cs_lock(CS_LOCK_FENCE);
    struct iteration it = { cb, arg };
    atomic_store_explicit(&fence_phase, WAITING, memory_order_release);
    dl_iterate_phdr(inside, &it);
    atomic_store_explicit(&fence_phase, OUTSIDE, memory_order_release);
    cs_unlock(CS_LOCK_FENCE);
}

/* fork.c's prepare handler, after every other lock: the fence, so that no child is forked while
 * another thread holds the loader's write lock through the shim (glibc does not make that lock
 * anew in the child, whose next dlopen would wait for it for ever). Its holder is waited for as
 * long as it is inside the loader's lock (FENCE_INSIDE_MS at most: nothing there waits, so only
 * a machine that has stopped runs past it); while it still waits for that lock, only as long as
 * another thread could reasonably hold it (FENCE_WAITING_MS), since the holder may be the forking
 * thread. A holder that was in neither phase (between taking the fence and its first step) is
 * given the same time as one waiting. */
#define FENCE_INSIDE_MS 10000
#define FENCE_WAITING_MS 1000
#define FENCE_STEP_MS 10

void cs_loader_fence_prepare(void)
{
    int waited_waiting = 0, waited_inside = 0;
    while (!cs_locks_prepare_one(CS_LOCK_FENCE, FENCE_STEP_MS)) {
        if (atomic_load_explicit(&fence_phase, memory_order_acquire) == INSIDE) {
            if ((waited_inside += FENCE_STEP_MS) >= FENCE_INSIDE_MS) return;
        } else if ((waited_waiting += FENCE_STEP_MS) >= FENCE_WAITING_MS) {
            return;
        }
    }
}

struct held { void (*fn)(void *); void *arg; };

static int run_once(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size;
    struct held *h = arg;
    h->fn(h->arg);
    return 1;  /* once: the callback's only use is the lock it runs under */
}

void cs_loader_held(void (*fn)(void *), void *arg)
{
    struct held h = { fn, arg };
    cs_loader_iterate(run_once, &h);
}
