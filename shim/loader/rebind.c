/* Wrapped names are bound without exporting them: after the loader has bound an object, each of
 * its GOT entries (JUMP_SLOT, GLOB_DAT) that holds the real definition of a wrapped function is
 * pointed at that function's wrapper. The loader's decisions stay its own: a reference no
 * loaded library satisfies stays unsatisfied (a failed dlopen, a "symbol lookup error"), as
 * without the shim; an entry the loader bound elsewhere (another interposer, a framework's own
 * stub) is left alone.
 *
 * Runs on the program's thread right after its dlopen returns (dlopen_hook.c), in the shim's
 * constructor for the objects loaded at start-up, and whenever the loader may have added
 * objects the shim did not see open (a search it could not repeat, dlsym, the scanner). It
 * reads the link map without the loader lock and calls nothing in any CUDA library. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../process/locks.h"
#include "../process/process.h"
#include "../process/state.h"
#include "loader.h"

#if defined(__x86_64__)
#define CS_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define CS_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define CS_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define CS_R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

static struct cs_api *const apis[] = {
#define CS_API_PTR(a) &cs_api_##a,
    CS_API_LIST(CS_API_PTR)
};
#define NAPIS (sizeof apis / sizeof *apis)

/* Objects already bound: (entry, load address), since an entry is reused after a dlclose.
 * pending: references to wrapped names that nothing satisfied yet (lazy entries), looked at
 * again after each load. */
#define MAX_OBJECTS 4096
static struct done {
    const struct link_map *m;
    ElfW(Addr) addr;
    int pending;
    void **witness;  /* one entry we pointed at a wrapper: if it no longer holds it, the object was
                        closed and another (or the same) loaded in its place, with a fresh GOT */
    void *witness_value;
} done[MAX_OBJECTS];
static int ndone;
static int _Atomic needed = 1;

/* The constructor ran (and the shim is not disabled). Before it, a sanitizer runtime may still
 * be starting up (its own dlsym calls reach the router), and nothing of this file may run: the
 * routers read this plain variable before calling in. */
int cs_rebind_on;

void cs_rebind_needed(void) { atomic_store_explicit(&needed, 1, memory_order_release); }

#define ABS(m, p) ((uintptr_t)(p) < (m)->l_addr ? (uintptr_t)(p) + (m)->l_addr : (uintptr_t)(p))

struct object {
    const struct link_map *m;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const ElfW(Rela) *jmprel, *rela;
    const ElfW(Half) *versym;
    const ElfW(Verneed) *verneed;
    size_t njmprel, nrela;
    uintptr_t relro_start, relro_end;
    uintptr_t lo, hi;  /* its mapped range */
};

static int object_of(const struct link_map *m, struct object *o)
{
    memset(o, 0, sizeof *o);
    o->m = m;
    if (!m->l_ld) return 0;
    size_t pltrelsz = 0, relasz = 0;
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: o->symtab = (const void *)ABS(m, d->d_un.d_ptr); break;
        case DT_STRTAB: o->strtab = (const void *)ABS(m, d->d_un.d_ptr); break;
        case DT_JMPREL: o->jmprel = (const void *)ABS(m, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
        case DT_PLTREL: if (d->d_un.d_val != DT_RELA) return 0; break;
        case DT_RELA: o->rela = (const void *)ABS(m, d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        case DT_VERSYM: o->versym = (const void *)ABS(m, d->d_un.d_ptr); break;
        case DT_VERNEED: o->verneed = (const void *)ABS(m, d->d_un.d_ptr); break;
        }
    }
    if (!o->symtab || !o->strtab) return 0;
    o->njmprel = o->jmprel ? pltrelsz / sizeof(ElfW(Rela)) : 0;
    o->nrela = o->rela ? relasz / sizeof(ElfW(Rela)) : 0;
    return 1;
}

/* The RELRO range (read-only once relocated) and the object's extent, from its program headers. */
static int segments(struct object *o)
{
    const struct link_map *m = o->m;
    size_t n;
    const ElfW(Phdr) *ph = cs_lm_phdrs(m, &n);
    if (!ph) return 0;
    o->lo = (uintptr_t)-1;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = m->l_addr + ph[i].p_vaddr;
        if (ph[i].p_type == PT_GNU_RELRO) { o->relro_start = a; o->relro_end = a + ph[i].p_memsz; }
        if (ph[i].p_type == PT_LOAD) {
            if (a < o->lo) o->lo = a;
            if (a + ph[i].p_memsz > o->hi) o->hi = a + ph[i].p_memsz;
        }
    }
    return o->hi > o->lo;
}

/* Whether a name can be a wrapped API's, cheaply, before the tables are searched: cu*, cuda*,
 * cudnn*, cublas*; nccl* and pnccl*; the runtime's __cuda* launch entry points. */
static int wrapped_prefix(const char *name)
{
    return (name[0] == 'c' && name[1] == 'u') || !strncmp(name, "nccl", 4) || !strncmp(name, "pnccl", 5) ||
           !strncmp(name, "__cuda", 6);
}

/* Where the name lives among the wrapped APIs: the entry the program's own references go
 * through, for the copy whose definition the loader chose (an older major has its own). */
static void *wrapper_for(const char *name, void *bound)
{
    if (!wrapped_prefix(name)) return NULL;
    for (size_t a = 0; a < NAPIS; a++) {
        struct cs_api *api = apis[a];
        int idx = cs_api_find(api, name);
        if (idx < 0) continue;
        void *real = cs_real(api, idx);
        if (real == bound) return cs_rel(api->via[CS_VIA_LINKED], idx - api->base);
        for (int n = 0; n < api->nnodes; n++) {
            struct link_map *m = cs_lm_find_soname(api->nodes[n].soname);
            if (m && cs_elf_lookup(m, name) == bound) return cs_rel(api->nodes[n].linked, idx - api->base);
        }
        return NULL;
    }
    return NULL;
}

/* The API a name belongs to, or NULL. */
static struct cs_api *api_of_name(const char *name)
{
    for (size_t a = 0; a < NAPIS; a++)
        if (cs_api_find(apis[a], name) >= 0) return apis[a];
    return NULL;
}

/* References that the loaded copy of their library lacks, left lazy: the first call ends the
 * process with the loader's "symbol lookup error" (exit 127), where the shim cannot speak any
 * more. Said beforehand instead, as findings (by the scanner). */
#define MAX_UNBOUND 64
static struct unbound { char needer[512], symbol[128]; } unbound[MAX_UNBOUND];
static int _Atomic nunbound;

static void note_unbound(const struct link_map *m, const char *name)
{
    int n = atomic_load(&nunbound);
    if (n >= MAX_UNBOUND) return;
    for (int i = 0; i < n; i++)
        if (!strcmp(unbound[i].symbol, name)) return;
    struct unbound *u = &unbound[n];
    if (m->l_name && *m->l_name) snprintf(u->needer, sizeof u->needer, "%s", m->l_name);
    else cs_exe_path(u->needer, sizeof u->needer);
    snprintf(u->symbol, sizeof u->symbol, "%s", name);
    atomic_store(&nunbound, n + 1);
}

int cs_rebind_unbound(void) { return atomic_load(&nunbound); }

/* The i-th unsatisfied reference: who needs it, and the symbol. Entries are complete before
 * they are counted, and never change. */
void cs_rebind_unbound_at(int i, const char **needer, const char **symbol)
{
    *needer = unbound[i].needer;
    *symbol = unbound[i].symbol;
}

/* The file a versioned reference names (cudnnGetVersion@libcudnn.so.9 needs "libcudnn.so.9"),
 * or NULL for an unversioned one. */
static const char *required_file(const struct object *o, size_t sym)
{
    if (!o->versym || !o->verneed) return NULL;
    ElfW(Half) want = o->versym[sym] & 0x7fff;
    if (want < 2) return NULL;  /* local or global: no version */
    for (const ElfW(Verneed) *vn = o->verneed;; vn = (const void *)((const char *)vn + vn->vn_next)) {
        const ElfW(Vernaux) *va = (const void *)((const char *)vn + vn->vn_aux);
        for (unsigned i = 0; i < vn->vn_cnt; i++, va = (const void *)((const char *)va + va->vna_next))
            if (va->vna_other == want) return o->strtab + vn->vn_file;
        if (!vn->vn_next) return NULL;
    }
}

/* What the loader will bind a lazy reference to: the first definition in load order (in the
 * file a versioned reference names). */
static void *first_definition(const char *name, const char *file)
{
    struct link_map *self = cs_lm_self();
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next) {
        if (m == self) continue;
        if (file) {
            const char *so = cs_elf_soname(m);
            if (!so || strcmp(so, file)) continue;
        }
        void *p = cs_elf_lookup(m, name);
        if (p) return cs_lm_of_addr(p) == m ? p : NULL;  /* a library still being loaded: not yet */
    }
    return NULL;
}

static void store(const struct object *o, void **slot, void *value)
{
    uintptr_t a = (uintptr_t)slot;
    if (a >= o->relro_start && a < o->relro_end) {
        uintptr_t page = a & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
        if (mprotect((void *)page, sizeof(void *) + (a - page), PROT_READ | PROT_WRITE)) return;
        __atomic_store_n(slot, value, __ATOMIC_RELEASE);
        mprotect((void *)page, sizeof(void *) + (a - page), PROT_READ);
        return;
    }
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
}

/* One object's entries; returns how many references to wrapped names are still unsatisfied. */
static int bind_object(const struct object *o, struct done *d)
{
    int pending = 0;
    d->witness = NULL;
    for (int pass = 0; pass < 2; pass++) {
        const ElfW(Rela) *r = pass ? o->rela : o->jmprel;
        size_t n = pass ? o->nrela : o->njmprel;
        for (size_t i = 0; i < n; i++) {
            unsigned long type = ELF64_R_TYPE(r[i].r_info);
            if (type != CS_R_JUMP_SLOT && type != CS_R_GLOB_DAT) continue;
            const ElfW(Sym) *s = &o->symtab[ELF64_R_SYM(r[i].r_info)];
            const char *name = o->strtab + s->st_name;
            if (!wrapped_prefix(name)) continue;
            void **slot = (void **)(o->m->l_addr + r[i].r_offset);
            void *v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
            /* A lazy entry still points into the object's own PLT: bind it as the loader would. */
            int lazy = s->st_shndx == SHN_UNDEF && (uintptr_t)v >= o->lo && (uintptr_t)v < o->hi;
            void *bound = lazy ? first_definition(name, required_file(o, ELF64_R_SYM(r[i].r_info))) : v;
            if (!bound) {
                struct cs_api *api = api_of_name(name);
                if (!api) continue;
                pending++;
                /* Its library is loaded and lacks it (not merely not loaded yet); a reference
                 * bound at load time would have failed the load already. */
                if (lazy && cs_api_bind(api)) note_unbound(o->m, name);
                continue;
            }
            void *w = wrapper_for(name, bound);
            if (w && w != v) store(o, slot, w);
            if (w && !d->witness) { d->witness = slot; d->witness_value = w; }
        }
    }
    return pending;
}

static int wrapped_library_loaded(void)
{
    for (size_t a = 0; a < NAPIS; a++)
        if (cs_api_bind(apis[a])) return 1;
    return 0;
}

static int skip(const struct link_map *m)
{
    if (m == cs_lm_self()) return 1;
    const char *n = m->l_name ? m->l_name : "";
    return strstr(n, "/ld-linux") || strstr(n, "linux-vdso") || strstr(n, "linux-gate");
}

/* Under the loader's write lock (loader_lock.c): no object is unmapped while its dynamic
 * section and GOT are read and written. */
static void rebind_held(void *arg)
{
    (void)arg;
    if (!wrapped_library_loaded()) {
        /* Nothing to bind to yet: every object waits for the first wrapped library. */
        atomic_store(&needed, 0);
        return;
    }
    int hint = 0;  /* objects keep their order: the next one is usually the next entry */
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next) {
        if (skip(m)) continue;
        /* Known to the loader's object index: neither closed (a forked child reads without the
         * lock) nor still being loaded. */
        if (m != cs_lm_head() && (!m->l_addr || cs_lm_of_addr((void *)m->l_addr) != m)) continue;
        int k = hint < ndone && done[hint].m == m && done[hint].addr == m->l_addr ? hint : 0;
        if (k != hint || hint >= ndone)
            for (k = 0; k < ndone; k++)
                if (done[k].m == m && done[k].addr == m->l_addr) break;
        hint = k + 1;
        struct object o;
        if (k < ndone && !done[k].pending) {
            struct done *d = &done[k];
            if (!d->witness || !object_of(m, &o) || !segments(&o) || (uintptr_t)d->witness < o.lo ||
                (uintptr_t)d->witness >= o.hi || __atomic_load_n(d->witness, __ATOMIC_ACQUIRE) == d->witness_value)
                continue;
        } else if (!object_of(m, &o) || !segments(&o)) {
            continue;
        }
        struct done d = { m, m->l_addr, 0, NULL, NULL };
        d.pending = bind_object(&o, &d);
        if (k < ndone) done[k] = d;
        else if (ndone < MAX_OBJECTS) done[ndone++] = d;
    }
}

/* Binds every object not bound yet, and looks again at those still waiting for a definition. */
void cs_rebind(void)
{
    if (!cs_rebind_on || cs_likely(!atomic_load_explicit(&needed, memory_order_acquire))) return;
    if (!atomic_exchange_explicit(&needed, 0, memory_order_acq_rel)) return;
    cs_lock(CS_LOCK_REBIND);  /* then the fence, then the loader's own */
    cs_loader_held(rebind_held, NULL);
    cs_unlock(CS_LOCK_REBIND);
}

/* The objects loaded at start-up: bound before any of their constructors runs (the shim has
 * no dependency but libc, so its constructor runs first). */
__attribute__((constructor)) static void rebind_at_start(void)
{
    if (cs_env_disabled()) return;
    cs_rebind_on = 1;
    cs_rebind();
}
