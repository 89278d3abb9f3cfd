/* The real functions: libc's dlsym/dlvsym, each wrapped library's handle, and each wrapped
 * function's real address, always resolved from that explicit handle (never RTLD_NEXT or
 * RTLD_DEFAULT, where another interposer or a framework's own cu* stubs could answer). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../process/state.h"
#include "loader.h"

static cs_dlsym_fn _Atomic real_dlsym;
static cs_dlvsym_fn _Atomic real_dlvsym;

static struct cs_api *const apis[] = {
#define CS_API_PTR(a) &cs_api_##a,
    CS_API_LIST(CS_API_PTR)
};
#define NAPIS (sizeof apis / sizeof *apis)

static void *libc_fn(const char *name)
{
    return cs_elf_next(name, (void *)libc_fn);
}

cs_dlsym_fn cs_real_dlsym(void)
{
    cs_dlsym_fn f = atomic_load_explicit(&real_dlsym, memory_order_acquire);
    if (cs_unlikely(!f)) {
        f = (cs_dlsym_fn)libc_fn("dlsym");
        atomic_store_explicit(&real_dlsym, f, memory_order_release);
    }
    return f;
}

cs_dlvsym_fn cs_real_dlvsym(void)
{
    cs_dlvsym_fn f = atomic_load_explicit(&real_dlvsym, memory_order_acquire);
    if (cs_unlikely(!f)) {
        f = (cs_dlvsym_fn)libc_fn("dlvsym");
        atomic_store_explicit(&real_dlvsym, f, memory_order_release);
    }
    return f;
}

struct cs_api *cs_api_of(int idx)
{
    for (size_t i = 0; i < NAPIS; i++)
        if (idx >= apis[i]->base && idx < apis[i]->base + apis[i]->count)
            return apis[i];
    return NULL;
}

const char *cs_api_name(int idx)
{
    struct cs_api *a = cs_api_of(idx);
    return a ? cs_fn_name(a, idx - a->base) : "?";
}

int cs_api_find(struct cs_api *api, const char *name)
{
    int lo = 0, hi = api->count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(name, cs_fn_name(api, mid));
        if (!c) return api->base + mid;
        if (c < 0) hi = mid - 1; else lo = mid + 1;
    }
    return -1;
}

/* Real address -> exported name, for mapping what cuGetProcAddress returns. */
struct cs_ptr_index {
    int n;
    struct { void *p; int idx; } e[];
};

static int by_ptr(const void *a, const void *b)
{
    void *x = *(void *const *)a, *y = *(void *const *)b;
    return x < y ? -1 : x > y;
}

/* The wrapped library's entry in the link map, found by soname without the loader lock:
 * never loads anything the program has not loaded itself. The soname lists the majors we
 * know, newest first ("libcudnn.so.9:libcudnn.so.8"). */
static struct link_map *library_map(struct cs_api *api)
{
    struct link_map *m = atomic_load(&api->handle);
    for (const char *s = api->soname; !m && s && *s;) {
        const char *end = strchrnul(s, ':');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(end - s), s);
        m = cs_lm_find_soname(name);
        s = *end ? end + 1 : end;
    }
    if (m) {
        void *expected = NULL;
        if (atomic_compare_exchange_strong(&api->handle, &expected, (void *)m))
            atomic_store(&api->bound_addr, m->l_addr);
        m = atomic_load(&api->handle);
    }
    return m;
}

static uintptr_t old_addr(struct cs_api *api) { return atomic_load(&api->bound_addr); }

/* One pass over a library copy's dynamic symbols: each wrapped function's address (fresh[], by
 * API slot) and the index by address that cuGetProcAddress answers are mapped back with. */
struct collect_pass { struct cs_api *api; struct cs_ptr_index *ix; void **fresh; };

static void collect_one(const char *name, void *p, void *arg)
{
    struct collect_pass *c = arg;
    int idx = cs_api_find(c->api, name);
    if (idx < 0) return;
    c->fresh[idx - c->api->base] = p;
    if (c->ix->n < c->api->count) {
        c->ix->e[c->ix->n].p = p;
        c->ix->e[c->ix->n++].idx = idx;
    }
}

static size_t index_size(const struct cs_api *api)
{
    return sizeof(struct cs_ptr_index) + (size_t)api->count * sizeof(((struct cs_ptr_index *)0)->e[0]);
}

/* NULL when memory is short; *fresh is freed by the caller (release_fresh). */
static struct cs_ptr_index *collect(struct cs_api *api, const struct link_map *m, void ***fresh)
{
    struct cs_ptr_index *ix = mmap(NULL, index_size(api), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ix == MAP_FAILED) return NULL;
    void **f = mmap(NULL, (size_t)api->count * sizeof(void *), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (f == MAP_FAILED) { munmap(ix, index_size(api)); return NULL; }
    struct collect_pass c = { api, ix, f };
    cs_elf_each_function(m, collect_one, &c);
    qsort(ix->e, (size_t)ix->n, sizeof ix->e[0], by_ptr);
    *fresh = f;
    return ix;
}

static void release_fresh(struct cs_api *api, void **fresh) { munmap(fresh, (size_t)api->count * sizeof(void *)); }

/* Resolve every function of an API once its library is loaded, and index them by address:
 * one pass over the library's own dynamic symbols. */
int cs_api_bind(struct cs_api *api)
{
    if (atomic_load(&api->by_ptr))
        return 1;
    struct link_map *m = library_map(api);
    if (!m)
        return 0;
    void **fresh;
    struct cs_ptr_index *ix = collect(api, m, &fresh);
    if (!ix)
        return 0;
    for (int i = 0; i < api->count; i++) {
        void *expected = NULL;  /* a slot already resolved (the next definition) stays */
        atomic_compare_exchange_strong(&api->real[i], &expected, fresh[i] ? fresh[i] : CS_REAL_MISSING);
    }
    release_fresh(api, fresh);
    struct cs_ptr_index *expected = NULL;
    if (!atomic_compare_exchange_strong(&api->by_ptr, &expected, ix))
        munmap(ix, index_size(api));
    return 1;
}

/* The program dlsym'd a wrapped name and got a definition that is not the one we bound: the
 * library was unloaded and loaded again at another address (cudart closes libcuda when the
 * driver is too old; cuBLAS's runtime opens it again). Bind to the live copy. Runs inside the
 * program's dlsym, where the loader is the program's to call. */
int cs_api_rebind(struct cs_api *api, void *p)
{
    struct link_map *m = cs_lm_of_addr(p);
    struct link_map *old = atomic_load(&api->handle);
    if (!m || m == old) return 0;
    const char *so = cs_elf_soname(m);
    if (!so || !strstr(api->soname, so)) return 0;
    /* Another copy loaded beside the bound one (two runtime majors in one process): that copy's
     * functions are handed out untouched, never swapped for wrappers that call the other copy. */
    for (struct link_map *l = cs_lm_head(); l; l = l->l_next)
        if (l == old && l->l_addr == old_addr(api)) return 0;
    void **fresh;
    struct cs_ptr_index *ix = collect(api, m, &fresh);
    if (!ix) return 0;
    for (int i = 0; i < api->count; i++) atomic_store(&api->real[i], fresh[i] ? fresh[i] : CS_REAL_MISSING);
    if (api->call)  /* the assembly fast path's cached copies: resolved again at their next call */
        for (int i = 0; i < api->count; i++)
            if (api->unresolved[i]) atomic_store(&api->call[i], cs_rel(api->unresolved, i));
    release_fresh(api, fresh);
    atomic_store(&api->handle, (void *)m);
    atomic_store(&api->bound_addr, m->l_addr);
    atomic_store(&api->by_ptr, ix);  /* the old index is left mapped: a reader may still hold it */
    return 1;
}

/* Several names can share an address (aliases); prefer the one that starts with the name asked for. */
int cs_api_index_of_ptr(struct cs_api *api, void *p, const char *hint)
{
    struct cs_ptr_index *ix = atomic_load(&api->by_ptr);
    if (!ix) return -1;
    int lo = 0, hi = ix->n - 1, at = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (ix->e[mid].p == p) { at = mid; break; }
        if ((uintptr_t)ix->e[mid].p < (uintptr_t)p) lo = mid + 1; else hi = mid - 1;
    }
    if (at < 0) return -1;
    while (at > 0 && ix->e[at - 1].p == p) at--;
    int best = ix->e[at].idx;
    for (int i = at; i < ix->n && ix->e[i].p == p; i++) {
        const char *n = cs_fn_name(api, ix->e[i].idx - api->base);
        if (hint && !strncmp(n, hint, strlen(hint))) { best = ix->e[i].idx; break; }
    }
    return best;
}

/* The library's own definition when it is loaded and has the function. Otherwise the next
 * definition after the shim, which is what the program would have called without it: a
 * framework that links NCCL or cuDNN statically and exports their names, a test's mock driver,
 * a stub. Only when there is none does a wrapper answer "not found" (a call that could not have
 * been linked without the shim). */
void *cs_real_resolve(struct cs_api *api, int idx)
{
    void *_Atomic *slot = &api->real[idx - api->base];
    void *p = atomic_load(slot);
    if (!p && cs_api_bind(api)) p = atomic_load(slot);
    if (p && p != CS_REAL_MISSING) return p;
    void *next = cs_elf_next(cs_fn_name(api, idx - api->base), (void *)cs_real_resolve);
    void *expected = p;
    if (next) {
        atomic_compare_exchange_strong(slot, &expected, next);
        return atomic_load(slot);
    }
    /* Nothing yet: remembered as absent only once the library is bound (it may load later). */
    if (p == CS_REAL_MISSING) atomic_compare_exchange_strong(slot, &expected, CS_REAL_ABSENT);
    return CS_REAL_ABSENT;
}

void *cs_real_in(struct cs_api *api, int idx, const char *soname, void *_Atomic *slot)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (cs_likely(p)) return p;
    struct link_map *m = cs_lm_find_soname(soname);
    if (m) p = cs_elf_lookup(m, cs_fn_name(api, idx - api->base));
    if (p) {
        atomic_store_explicit(slot, p, memory_order_release);
        return p;
    }
    return cs_real(api, idx);  /* that major is not loaded: whatever the API resolves to */
}
