/* The loaded objects, read without the loader lock: the link-map list from _r_debug, each
 * object's dynamic symbols from its own ELF tables, and the object that holds an address from
 * glibc's lock-free _dl_find_object.
 *
 * Why not dlopen(RTLD_NOLOAD)/dlsym/dladdr/dl_iterate_phdr: they take the loader lock, and a
 * hook runs on a program thread; a fork from another thread while we hold that lock leaves the
 * child's loader locked forever. This is also how the shim gets the real dlsym and dlvsym: it
 * defines both itself, so asking the dynamic linker would find its own.
 *
 * The walk reads a list the loader changes only under its lock; objects are appended (safe to
 * read concurrently) and removed only by a dlclose that unloads them, which the program cannot
 * do to a library it is calling at that moment. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "loader.h"

extern struct r_debug _r_debug;
extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));

/* Runs before anything else in the process may be ready (a sanitizer runtime looks up its
 * own functions through dlsym during its start-up), so it stays uninstrumented and calls
 * nothing at all. */
#define CS_EARLY __attribute__((no_sanitize("address", "undefined")))

CS_EARLY static uint32_t gnu_hash_count(const uint32_t *h)
{
    uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
    const uint32_t *buckets = h + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last) last = buckets[i];
    if (last < symoffset) return symoffset;
    while (!(chain[last - symoffset] & 1)) last++;
    return last + 1;
}

CS_EARLY static int same(const char *a, const char *b)
{
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

struct dyn_tables {
    const ElfW(Sym) *symtab;
    const char *strtab;
    const ElfW(Half) *versym;
    const char *soname;
    uint32_t nsyms;
};

CS_EARLY static int tables(const struct link_map *m, struct dyn_tables *t)
{
    const uint32_t *gnu = NULL, *sysv = NULL;
    uintptr_t soname_off = (uintptr_t)-1;
    memset(t, 0, sizeof *t);
    if (!m || !m->l_ld) return 0;
    /* glibc relocates these d_ptr entries to absolute addresses for most objects; not all. */
#define CS_ABS(p) ((uintptr_t)(p) < m->l_addr ? (void *)((uintptr_t)(p) + m->l_addr) : (void *)(p))
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: t->symtab = CS_ABS(d->d_un.d_ptr); break;
        case DT_STRTAB: t->strtab = CS_ABS(d->d_un.d_ptr); break;
        case DT_VERSYM: t->versym = CS_ABS(d->d_un.d_ptr); break;
        case DT_GNU_HASH: gnu = CS_ABS(d->d_un.d_ptr); break;
        case DT_HASH: sysv = CS_ABS(d->d_un.d_ptr); break;
        case DT_SONAME: soname_off = d->d_un.d_val; break;
        }
    }
#undef CS_ABS
    if (!t->symtab || !t->strtab || (!gnu && !sysv)) return 0;
    t->nsyms = sysv ? sysv[1] : gnu_hash_count(gnu);
    if (soname_off != (uintptr_t)-1) t->soname = t->strtab + soname_off;
    return 1;
}

CS_EARLY static int defined_default(const struct dyn_tables *t, uint32_t i)
{
    const ElfW(Sym) *s = &t->symtab[i];
    int type = ELF64_ST_TYPE(s->st_info);
    if (s->st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC)) return 0;
    return !(t->versym && (t->versym[i] & 0x8000));  /* hidden: not the default version */
}

/* The default-version definition of symbol in one loaded object, or NULL. */
CS_EARLY void *cs_elf_lookup(const struct link_map *m, const char *symbol)
{
    struct dyn_tables t;
    if (!tables(m, &t)) return NULL;
    for (uint32_t i = 1; i < t.nsyms; i++)
        if (defined_default(&t, i) && ELF64_ST_TYPE(t.symtab[i].st_info) == STT_FUNC &&
            same(t.strtab + t.symtab[i].st_name, symbol))
            return (void *)(m->l_addr + t.symtab[i].st_value);
    return NULL;
}

void cs_elf_each_function(const struct link_map *m, void (*fn)(const char *, void *, void *), void *arg)
{
    struct dyn_tables t;
    if (!tables(m, &t)) return;
    for (uint32_t i = 1; i < t.nsyms; i++)
        if (defined_default(&t, i) && ELF64_ST_TYPE(t.symtab[i].st_info) == STT_FUNC)
            fn(t.strtab + t.symtab[i].st_name, (void *)(m->l_addr + t.symtab[i].st_value), arg);
}

/* The exported function whose body holds addr (its start and size), and the offset into it: for
 * a crash's frames. NULL when addr is in no exported function (a local one has no dynamic symbol). */
/* The defined data object of that name in one loaded object (a variable: Py_Version), or NULL. */
const void *cs_elf_lookup_data(const struct link_map *m, const char *symbol)
{
    struct dyn_tables t;
    if (!tables(m, &t)) return NULL;
    for (uint32_t i = 1; i < t.nsyms; i++) {
        const ElfW(Sym) *s = &t.symtab[i];
        if (s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_OBJECT && same(t.strtab + s->st_name, symbol))
            return (const void *)(m->l_addr + s->st_value);
    }
    return NULL;
}

const char *cs_elf_function_at(const struct link_map *m, const void *addr, uint64_t *offset)
{
    struct dyn_tables t;
    if (!tables(m, &t)) return NULL;
    uint64_t a = (uint64_t)addr - m->l_addr;
    for (uint32_t i = 1; i < t.nsyms; i++) {
        const ElfW(Sym) *s = &t.symtab[i];
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF || !s->st_size) continue;
        if (a >= s->st_value && a < s->st_value + s->st_size) {
            *offset = a - s->st_value;
            return t.strtab + s->st_name;
        }
    }
    return NULL;
}

const char *cs_elf_soname(const struct link_map *m)
{
    struct dyn_tables t;
    return tables(m, &t) ? t.soname : NULL;
}

CS_EARLY struct link_map *cs_lm_head(void) { return _r_debug.r_map; }

/* The shim's own entry: the one whose dynamic section is ours. */
CS_EARLY struct link_map *cs_lm_self(void)
{
    static struct link_map *self;
    if (self) return self;
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next)
        if (m->l_ld == _DYNAMIC) return self = m;
    return NULL;
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A loaded object by soname (or file name), first in load order. */
struct link_map *cs_lm_find_soname(const char *soname)
{
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next) {
        const char *so = cs_elf_soname(m);
        if ((so && !strcmp(so, soname)) || (m->l_name && !strcmp(base(m->l_name), soname))) return m;
    }
    return NULL;
}

/* glibc 2.35's lock-free address lookup, found by reading libc's symbols (a link-time
 * reference would stop the shim from loading on an older glibc). */
struct cs_dl_find_object {
    unsigned long long flags;
    void *map_start, *map_end;
    struct link_map *link_map;
    void *eh_frame;
    unsigned long long reserved[7];
};
typedef int (*find_object_fn)(void *, struct cs_dl_find_object *);

static find_object_fn find_object(void)
{
    static find_object_fn _Atomic fn;
    static int _Atomic looked;
    find_object_fn f = atomic_load_explicit(&fn, memory_order_acquire);
    if (f || atomic_load(&looked)) return f;
    f = (find_object_fn)cs_elf_default("_dl_find_object");
    atomic_store_explicit(&fn, f, memory_order_release);
    atomic_store(&looked, 1);
    return f;
}

/* The loaded object that holds addr, or NULL (also where glibc lacks _dl_find_object: callers
 * then say less, rather than take the loader lock). */
struct link_map *cs_lm_of_addr(const void *addr)
{
    find_object_fn f = find_object();
    struct cs_dl_find_object r;
    if (!addr || !f || f((void *)addr, &r) != 0) return NULL;
    return r.link_map;
}

/* The file name of the object that holds addr ("" for the program itself). */
const char *cs_lm_name_of_addr(const void *addr)
{
    struct link_map *m = cs_lm_of_addr(addr);
    return m && m->l_name ? m->l_name : NULL;
}

/* The definition RTLD_DEFAULT would find (the first object in load order that defines the
 * symbol), without dlsym's loader lock. */
CS_EARLY void *cs_elf_default(const char *symbol)
{
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next) {
        void *p = cs_elf_lookup(m, symbol);
        if (p) return p;
    }
    return NULL;
}

/* The definition RTLD_NEXT would find from the shim: the first object after ours, in load
 * order, that defines the symbol. That is libc, or another tool's hook stacked after us. */
CS_EARLY void *cs_elf_next(const char *symbol, const void *self)
{
    (void)self;
    struct link_map *m = cs_lm_self();
    if (!m) return NULL;
    for (m = m->l_next; m; m = m->l_next) {
        void *p = cs_elf_lookup(m, symbol);
        if (p) return p;
    }
    return NULL;
}

/* The nth string entry of a dynamic tag (DT_NEEDED, DT_RUNPATH, DT_RPATH), or NULL. */
const char *cs_elf_dyn_str(const struct link_map *m, long tag, int nth)
{
    struct dyn_tables t;
    if (!tables(m, &t)) return NULL;
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++)
        if (d->d_tag == tag && nth-- == 0) return t.strtab + d->d_un.d_val;
    return NULL;
}

/* The program's own path: its link-map entry has an empty name. */
void cs_exe_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    out[n > 0 ? n : 0] = 0;
}

/* An object's program headers, without the loader lock: the program's from the auxiliary vector,
 * a library's from its ELF header, mapped at its load address. NULL for an object the loader's
 * index does not hold at that address (closed, or not yet relocated). */
const void *cs_lm_phdrs(const struct link_map *m, size_t *count)
{
    *count = 0;
    if (m == cs_lm_head()) {
        *count = getauxval(AT_PHNUM);
        return (const void *)getauxval(AT_PHDR);
    }
    if (!m->l_addr || cs_lm_of_addr((void *)m->l_addr) != m) return NULL;
    const ElfW(Ehdr) *e = (const void *)m->l_addr;
    if (memcmp(e->e_ident, ELFMAG, SELFMAG) || e->e_phentsize != sizeof(ElfW(Phdr))) return NULL;
    *count = e->e_phnum;
    return (const void *)(m->l_addr + e->e_phoff);
}
