/* The dlsym and dlvsym hooks.
 *
 * glibc decides what RTLD_NEXT and RTLD_DEFAULT mean from the caller's return address, so the
 * hooks must not become the caller. The exported entry points (dl_trampoline.S) save the
 * arguments, ask cs_dlsym_route() where to go, and jump there: the real dlsym itself (a true
 * tail call: the program's caller is what glibc sees) for everything except a driver name
 * looked up in an explicit handle or RTLD_DEFAULT, whose answers do not depend on the caller
 * and which cs_dlsym_substitute() answers by calling the real dlsym first. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <string.h>

#include "internal.h"
#include "inventory.h"

static struct cs_api *const apis[] = {
#define CS_API_PTR(a) &cs_api_##a,
    CS_API_LIST(CS_API_PTR)
};

/* Which API a name belongs to, and its index: exact match only, never a prefix. */
static int find_wrapped(const char *name, struct cs_api **api)
{
    /* cu*, cudnn*, cublas*, nccl*, pnccl*: one cheap test before any search */
    if (!name || !((name[0] == 'c' && name[1] == 'u') || (name[0] == 'n' && name[1] == 'c') ||
                   (name[0] == 'p' && name[1] == 'n')))
        return -1;
    for (size_t i = 0; i < sizeof apis / sizeof *apis; i++) {
        int idx = cs_api_find(apis[i], name);
        if (idx >= 0) {
            *api = apis[i];
            return idx;
        }
    }
    return -1;
}

/* Given the real answer for a wrapped name, hand out our wrapper only when the answer is the
 * wrapped library's own definition; anything else (a framework's stub, another library's
 * symbol of the same name) goes back untouched. */
static void *substitute(struct cs_api *api, int idx, void *p, void *handle, const char *name,
                        void *(*lookup_next)(const char *, const char *), const char *version)
{
    int i = idx - api->base;
    if (handle == RTLD_NEXT)  /* only when the library is not loaded: see wants_substitution() */
        return p;
    if (p == api->via[CS_VIA_LINKED][i]) {
        /* A global-scope lookup (RTLD_DEFAULT, or the handle of dlopen(NULL) that Python's
         * ctypes.CDLL(None) uses) found our exported wrapper. Without the shim the caller would
         * have got the next definition: give that (NULL when the library is not loaded), or
         * our dlsym-reached wrapper when it is the library's own function. */
        void *next = lookup_next(name, version);
        return next && cs_api_bind(api) && next == atomic_load(&api->real[i]) ? api->via[CS_VIA_DLSYM][i] : next;
    }
    if (!p) {
        /* A CUDA library's handle without the function: the caller expects a newer copy. */
        if (handle != RTLD_DEFAULT && cs_init()) cs_diagnose_dlsym_miss(handle, name);
        return p;
    }
    if (!cs_api_bind(api))
        return p;
    if (p != atomic_load(&api->real[i])) cs_api_rebind(api, p);
    return p == atomic_load(&api->real[i]) ? api->via[CS_VIA_DLSYM][i] : p;
}

static void *next_dlsym(const char *name, const char *version)
{
    (void)version;
    return cs_real_dlsym()(RTLD_NEXT, name);
}

static void *next_dlvsym(const char *name, const char *version)
{
    return cs_real_dlvsym()(RTLD_NEXT, name, version);
}

CS_HIDDEN void *cs_dlsym_substitute(void *handle, const char *name)
{
    struct cs_api *api = NULL;
    int idx = find_wrapped(name, &api);
    void *p = cs_real_dlsym()(handle, name);
    return idx < 0 ? p : substitute(api, idx, p, handle, name, next_dlsym, NULL);
}

CS_HIDDEN void *cs_dlvsym_substitute(void *handle, const char *name, const char *version)
{
    struct cs_api *api = NULL;
    int idx = find_wrapped(name, &api);
    void *p = cs_real_dlvsym()(handle, name, version);
    return idx < 0 ? p : substitute(api, idx, p, handle, name, next_dlvsym, version);
}

static int wants_substitution(void *handle, const char *name)
{
    struct cs_api *api;
    if (cs_disabled || (cs_tls && cs_tls->hide))  /* the shim's own lookups */
        return 0;
    if (find_wrapped(name, &api) < 0)
        return 0;
    /* RTLD_NEXT depends on the caller: forward it untouched, except when the wrapped library is
     * not loaded at all, where the answer is "whatever comes after the shim" (never our own
     * wrapper, which would hand the program a function it could not have found). */
    if (handle == RTLD_NEXT)
        return !cs_api_bind(api);
    return 1;
}

/* Only if libc's own dlsym cannot be found (never seen): answer "not found" rather than jump to 0. */
static void *no_dlsym(void *handle, const char *name) { (void)handle, (void)name; return NULL; }
static void *no_dlvsym(void *handle, const char *name, const char *v) { (void)handle, (void)name, (void)v; return NULL; }

CS_HIDDEN void *cs_dlsym_route(void *handle, const char *name)
{
    void *real = (void *)cs_real_dlsym();
    if (cs_unlikely(!real)) return (void *)no_dlsym;
    return wants_substitution(handle, name) ? (void *)cs_dlsym_substitute : real;
}

CS_HIDDEN void *cs_dlvsym_route(void *handle, const char *name)
{
    void *real = (void *)cs_real_dlvsym();
    if (cs_unlikely(!real)) return (void *)no_dlvsym;
    return wants_substitution(handle, name) ? (void *)cs_dlvsym_substitute : real;
}

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "dl_trampoline.S has no entry points for this architecture yet"
#endif
