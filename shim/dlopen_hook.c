/* dlopen: noted on the way past, never changed. The exported entry (dl_trampoline.S) saves
 * the arguments, calls cs_dlopen_route with the caller's return address, and jumps to libc's
 * dlopen, so glibc still sees the program as the caller (whose RUNPATH a bare name is searched
 * in). Only CUDA-stack names are kept: enough to tell "a full path given to dlopen" from a
 * search, and which object asked. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "inventory.h"

#define REQUESTS 256
static struct request {
    char name[512];
    char caller[512];
    int _Atomic ready;
} requests[REQUESTS];
static unsigned _Atomic nrequests;

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void note(const char *file, void *ra)
{
    if (!file || !*file || cs_disabled || cs_own_thread) return;
    const char *b = base_of(file);
    if (!cs_is_cuda_library_name(b, strlen(b))) return;
    unsigned i = atomic_fetch_add(&nrequests, 1);
    if (i >= REQUESTS) return;  /* the first ones are what decide the inventory */
    struct request *r = &requests[i];
    snprintf(r->name, sizeof r->name, "%s", file);
    const char *who = cs_lm_name_of_addr(ra);  /* lock-free: never the loader lock here */
    snprintf(r->caller, sizeof r->caller, "%s", who && *who ? who : "the program");
    atomic_store(&r->ready, 1);
}

static void *no_dlopen(const char *file, int mode) { (void)file, (void)mode; return NULL; }

CS_HIDDEN void *cs_dlopen_route(const char *file, int mode, void *ra)
{
    (void)mode;
    static void *_Atomic real;
    void *f = atomic_load(&real);
    if (!f) {
        f = cs_elf_next("dlopen", (void *)cs_dlopen_route);
        if (!f) return (void *)no_dlopen;
        atomic_store(&real, f);
    }
    int e = errno;
    note(file, ra);
    errno = e;
    return f;
}

/* The request that opened path: 1 when found; *by_name when it was a bare name (searched). */
int cs_dlopen_request(const char *path, char *caller, size_t cap, int *by_name)
{
    unsigned n = atomic_load(&nrequests);
    if (n > REQUESTS) n = REQUESTS;
    for (unsigned i = 0; i < n; i++) {
        struct request *r = &requests[i];
        if (!atomic_load(&r->ready)) continue;
        int named = !strchr(r->name, '/');
        if (named ? strcmp(r->name, base_of(path)) : strcmp(r->name, path)) continue;
        snprintf(caller, cap, "%s", r->caller);
        *by_name = named;
        return 1;
    }
    return 0;
}
