/* dlopen: noted on the way past, never changed. The exported entry (dl_trampoline.S) saves
 * the arguments, calls cs_dlopen_route with the caller's return address, and jumps to libc's
 * dlopen, so glibc still sees the program as the caller (whose RUNPATH a bare name is searched
 * in). Only CUDA-stack names are kept: enough to tell "a full path given to dlopen" from a
 * search, and which object asked. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../base/library_names.h"
#include "../process/process.h"
#include "../process/state.h"
#include "loader.h"

#define REQUESTS 256
static struct request {
    char name[512];
    char caller[512];
    int _Atomic ready;
} requests[REQUESTS];
static unsigned _Atomic nrequests;


/* The program's last dlopen, whatever it named: a load that fails for want of a CUDA library
 * deep in its dependencies (a framework's extension) is traced from here (needed_files.c). */
static char last_dlopen[PATH_MAX];
const char *cs_dlopen_last(void) { return last_dlopen; }

static void note(const char *file, void *ra)
{
    if (!file || !*file || cs_disabled || cs_own_thread) return;
    if (cs_lm_of_addr(ra) == cs_lm_self()) return;  /* the shim's own (the crash unwinder) */
    snprintf(last_dlopen, sizeof last_dlopen, "%s", file);
    const char *b = cs_base_name(file);
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

static void *_Atomic real_dlopen;

/* Opened from the shim, then bound at once: used only where the shim as the caller changes
 * nothing the loader decides (dlopen_as_program). */
/* The shim wakes when the first CUDA library is loaded, not at the first call: a crash in a
 * library's constructor or an extension's import after an upgrade (before any CUDA call) then
 * gets its record, with what is loaded. A program that never loads one never sees the shim. */
static void wake_if_cuda_loaded(void)
{
    static int _Atomic awake;
    if (atomic_load_explicit(&awake, memory_order_relaxed) || cs_disabled || !cs_thread_events.start) return;
    for (const struct link_map *m = cs_lm_head(); m; m = m->l_next) {
        const char *b = m->l_name ? cs_base_name(m->l_name) : "";
        if (*b && cs_is_cuda_library_name(b, strlen(b))) {
            atomic_store(&awake, 1);
            cs_thread_events.start();
            return;
        }
    }
}

static void *dlopen_and_bind(const char *file, int mode)
{
    void *h = ((void *(*)(const char *, int))atomic_load(&real_dlopen))(file, mode);
    if (h) {
        int e = errno;
        cs_rebind_needed();
        cs_rebind();
        wake_if_cuda_loaded();
        /* A CUDA library is in the inventory before the program's next step: cudart closes
         * libcuda again within microseconds when the driver is too old, before the scanner
         * thread may have run at all. Inside the program's own loader call, like the dlsym and
         * dlerror hooks: no library is asked anything. */
        const char *b = cs_base_name(file);
        if (!cs_disabled && cs_is_cuda_library_name(b, strlen(b))) cs_scan_sync();
        errno = e;
    }
    return h;
}

/* glibc searches a bare name from the calling object: its RPATH (and its loaders' and the
 * program's), then LD_LIBRARY_PATH, its RUNPATH, the cache, the system directories. With the
 * shim as the caller the search is the same when the caller has no RUNPATH and no loaded
 * object has an RPATH; a path with a slash is not searched at all ($ORIGIN aside). */
static int same_search_from_shim(const char *file, void *ra)
{
    if (!file || strchr(file, '$')) return 0;
    if (strchr(file, '/')) return 1;
    struct link_map *caller = cs_lm_of_addr(ra);
    if (!caller || cs_elf_dyn_str(caller, DT_RUNPATH, 0)) return 0;
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next)
        if (cs_elf_dyn_str(m, DT_RPATH, 0)) return 0;
    return 1;
}

CS_HIDDEN void *cs_dlopen_route(const char *file, int mode, void *ra)
{
    void *f = atomic_load(&real_dlopen);
    if (!f) {
        f = cs_elf_next("dlopen", (void *)cs_dlopen_route);
        if (!f) return (void *)no_dlopen;
        atomic_store(&real_dlopen, f);
    }
    int e = errno;
    note(file, ra);
    void *to = f;
    if (cs_rebind_on && !cs_own_thread && !(mode & RTLD_NOLOAD)) {  /* the shim's own opens load nothing */
        cs_rebind();
        if (same_search_from_shim(file, ra)) to = (void *)dlopen_and_bind;
        else cs_rebind_needed();  /* bound by the next dlopen, dlsym or scan */
    }
    errno = e;
    return to;
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
        if (named ? strcmp(r->name, cs_base_name(path)) : strcmp(r->name, path)) continue;
        snprintf(caller, cap, "%s", r->caller);
        *by_name = named;
        return 1;
    }
    return 0;
}
