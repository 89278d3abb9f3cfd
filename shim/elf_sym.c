/* Find a symbol's default-version definition in the loaded objects by reading their ELF dynamic
 * section. This is how the shim gets the real dlsym and dlvsym: it defines both itself, so
 * asking the dynamic linker (dlsym, dlvsym, even a versioned reference) would find its own. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>


#include "internal.h"

#include <dlfcn.h>

/* Runs before anything else in the process may be ready (a sanitizer runtime looks up its
 * own functions through dlsym during its start-up), so it stays uninstrumented and calls
 * nothing but dladdr1. */
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

/* The default-version definition of symbol in one loaded object, or NULL. */
CS_EARLY static void *lookup_in(const struct link_map *m, const char *symbol)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Half) *versym = NULL;
    const uint32_t *gnu = NULL, *sysv = NULL;
    if (!m->l_ld) return NULL;
    /* glibc relocates these d_ptr entries to absolute addresses for most objects; not all. */
#define CS_ABS(p) ((uintptr_t)(p) < m->l_addr ? (void *)((uintptr_t)(p) + m->l_addr) : (void *)(p))
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = CS_ABS(d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = CS_ABS(d->d_un.d_ptr); break;
        case DT_VERSYM: versym = CS_ABS(d->d_un.d_ptr); break;
        case DT_GNU_HASH: gnu = CS_ABS(d->d_un.d_ptr); break;
        case DT_HASH: sysv = CS_ABS(d->d_un.d_ptr); break;
        }
    }
    if (!symtab || !strtab || (!gnu && !sysv)) return NULL;
    uint32_t n = sysv ? sysv[1] : gnu_hash_count(gnu);
    for (uint32_t i = 1; i < n; i++) {
        const ElfW(Sym) *s = &symtab[i];
        if (s->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s->st_info) != STT_FUNC) continue;
        if (!same(strtab + s->st_name, symbol)) continue;
        if (versym && (versym[i] & 0x8000)) continue;  /* hidden: not the default version */
        return (void *)(m->l_addr + s->st_value);
    }
    return NULL;
}

/* The definition RTLD_NEXT would find from the shim: the first object after ours, in load
 * order, that defines the symbol. That is libc, or another tool's hook stacked after us. */
CS_EARLY void *cs_elf_next(const char *symbol, const void *self)
{
    Dl_info info;
    struct link_map *m = NULL;
    if (!dladdr1(self, &info, (void **)&m, RTLD_DL_LINKMAP) || !m)
        return NULL;
    for (m = m->l_next; m; m = m->l_next) {
        void *p = lookup_in(m, symbol);
        if (p) return p;
    }
    return NULL;
}
