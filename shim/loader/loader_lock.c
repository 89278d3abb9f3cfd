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

void cs_loader_after_fork(void) { atomic_store(&unproven, 1); }

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

void cs_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    if (!usable()) return;
    cs_lock(CS_LOCK_FENCE);
    dl_iterate_phdr(cb, arg);
    cs_unlock(CS_LOCK_FENCE);
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
