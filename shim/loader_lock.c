/* Holding the loader's list of objects still while the shim reads it.
 *
 * The shim reads the link map, the objects' dynamic sections and their GOTs without calling
 * the loader. A dlclose on another thread unmaps an object and frees its entry while holding
 * the loader's write lock (the lock dl_iterate_phdr takes, not the one dlopen and dlsym take),
 * so work done inside a dl_iterate_phdr callback sees every object either whole or gone.
 *
 * What runs under it must not call dlopen, dlsym, dladdr or dlclose: they take the other
 * lock, which a dlclose holds while it waits for this one. Loader work is also fenced from
 * fork (the guard below, taken by fork's prepare handler), so that no child starts with the
 * loader's write lock held by a thread that did not come along. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <pthread.h>

#include "internal.h"

/* Recursive: the scanner holds it across a scan that also rebinds. */
static pthread_mutex_t guard = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static void prepare(void) { pthread_mutex_lock(&guard); }
static void parent(void) { pthread_mutex_unlock(&guard); }
/* Made anew: the child's thread is not the owner the parent's locking recorded. */
static void child(void)
{
    static const pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    guard = fresh;
}

void cs_loader_fence_install(void) { pthread_atfork(prepare, parent, child); }
void cs_loader_fence_enter(void) { pthread_mutex_lock(&guard); }
void cs_loader_fence_leave(void) { pthread_mutex_unlock(&guard); }

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
    cs_loader_fence_enter();
    dl_iterate_phdr(run_once, &h);
    cs_loader_fence_leave();
}
