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
#include <link.h>
#include <string.h>

#include "../base/library_names.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../diagnose/diagnose.h"
#include "../lifecycle/lifecycle.h"

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

/* glibc's handles are link-map entries: one of a CUDA-stack library's, read without the lock. */
static int cuda_library_handle(void *handle)
{
    if (!handle || handle == RTLD_DEFAULT || handle == RTLD_NEXT) return 0;
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next) {
        if ((void *)m != handle) continue;
        const char *n = m->l_name ? m->l_name : "", *b = strrchr(n, '/');
        b = b ? b + 1 : n;
        return cs_is_cuda_library_name(b, strlen(b));
    }
    return 0;
}

/* Given the real answer for a wrapped name, hand out our wrapper only when the answer is the
 * wrapped library's own definition; anything else (a framework's stub, another library's
 * symbol of the same name, a miss) goes back untouched. RTLD_NEXT too: the shim exports no
 * API name, so another tool stacked before it reaches the library itself, through us. */
static void *substitute(struct cs_api *api, int idx, void *p, void *handle, const char *name)
{
    int i = idx - api->base;
    if (!p) {
        /* A CUDA library's handle without the function: the caller expects a newer copy. The
         * lookup is made again after the diagnosis, so that dlerror() says what it said. */
        if (cuda_library_handle(handle) && cs_init()) {
            cs_diagnose_dlsym_miss(handle, name);
            p = cs_real_dlsym()(handle, name);
        }
        return p;
    }
    if (!cs_api_bind(api))
        return p;
    if (p != atomic_load(&api->real[i])) cs_api_rebind(api, p);
    return p == atomic_load(&api->real[i]) ? cs_rel(api->via[CS_VIA_DLSYM], i) : p;
}

CS_HIDDEN void *cs_dlsym_substitute(void *handle, const char *name)
{
    struct cs_api *api = NULL;
    int idx = find_wrapped(name, &api);
    void *p = cs_real_dlsym()(handle, name);
    return idx < 0 ? p : substitute(api, idx, p, handle, name);
}

CS_HIDDEN void *cs_dlvsym_substitute(void *handle, const char *name, const char *version)
{
    struct cs_api *api = NULL;
    int idx = find_wrapped(name, &api);
    void *p = cs_real_dlvsym()(handle, name, version);
    return idx < 0 ? p : substitute(api, idx, p, handle, name);
}

static int wants_substitution(void *handle, const char *name)
{
    struct cs_api *api;
    if (cs_disabled || (cs_self() && cs_self()->hide))  /* the shim's own lookups */
        return 0;
    (void)handle;
    return find_wrapped(name, &api) >= 0;
}

/* Only if libc's own dlsym cannot be found (never seen): answer "not found" rather than jump to 0. */
static void *no_dlsym(void *handle, const char *name) { (void)handle, (void)name; return NULL; }
static void *no_dlvsym(void *handle, const char *name, const char *v) { (void)handle, (void)name, (void)v; return NULL; }

CS_HIDDEN void *cs_dlsym_route(void *handle, const char *name)
{
    if (cs_rebind_on) cs_rebind();  /* objects a dlopen loaded where the shim could not follow at once */
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
