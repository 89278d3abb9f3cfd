/* Holding the loader's list of objects still while the shim reads it.
 *
 * The shim reads the link map, the objects' dynamic sections and their GOTs without calling
 * the loader. A dlclose on another thread unmaps an object and frees its entry while holding
 * the loader's write lock (the lock dl_iterate_phdr takes, not the one dlopen and dlsym take),
 * so work done inside a dl_iterate_phdr callback sees every object either whole or gone.
 *
 * What runs under it must not call dlopen, dlsym, dladdr or dlclose: they take the other
 * lock, which a dlclose holds while it waits for this one. It is also fenced from fork (the
 * guard below, taken by fork's prepare handler): glibc makes the child's dlopen lock anew, not
 * this one, so a child forked while another thread held it would wait for ever. Nothing else
 * may be done under the guard: a thread inside dlopen can be waiting for it (a constructor's
 * dlsym reaches the shim), so its holder must never wait for the loader's dlopen lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

static pthread_mutex_t guard = PTHREAD_MUTEX_INITIALIZER;

static void prepare(void) { pthread_mutex_lock(&guard); }
static void parent(void) { pthread_mutex_unlock(&guard); }
/* A forked child may hold the loader's write lock for ever: glibc does not make it anew, and
 * the thread that held it at the fork (a dlclose) did not come along. The child reads the link
 * map without it, as a hook does, skipping objects the loader no longer knows. */
static int _Atomic in_child;

/* Made anew: only the forking thread came along, and it took the guard in prepare. */
static void child(void)
{
    pthread_mutex_init(&guard, NULL);
    atomic_store(&in_child, 1);
}

static int lock_free_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next) {
        struct dl_phdr_info info;
        memset(&info, 0, sizeof info);
        size_t n;
        info.dlpi_addr = m->l_addr;
        info.dlpi_name = m->l_name;
        info.dlpi_phdr = cs_lm_phdrs(m, &n);  /* NULL: closed, or not yet loaded */
        if (!info.dlpi_phdr) continue;
        info.dlpi_phnum = (ElfW(Half))n;
        int r = cb(&info, offsetof(struct dl_phdr_info, dlpi_adds), arg);
        if (r) return r;
    }
    return 0;
}

void cs_loader_fence_install(void) { pthread_atfork(prepare, parent, child); }

void cs_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    if (atomic_load(&in_child)) { lock_free_iterate(cb, arg); return; }
    pthread_mutex_lock(&guard);
    dl_iterate_phdr(cb, arg);
    pthread_mutex_unlock(&guard);
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
