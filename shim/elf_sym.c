/* Find a symbol's default-version definition in the loaded objects by reading their ELF dynamic
 * section. This is how the shim gets the real dlsym and dlvsym: it defines both itself, so
 * asking the dynamic linker (dlsym, dlvsym, even a versioned reference) would find its own. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <string.h>

#include "internal.h"

struct query {
    const char *symbol;
    const void *self;   /* an address inside the shim: only objects after it are searched */
    int past_self;
    void *found;
};

static uint32_t gnu_hash_count(const uint32_t *h)
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

static int is_skipped(struct dl_phdr_info *info, const void *addr)
{
    if (!addr) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (uintptr_t)addr >= lo && (uintptr_t)addr < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    struct query *q = data;
    (void)size;
    if (is_skipped(info, q->self)) {
        q->past_self = 1;
        return 0;
    }
    if (!q->past_self || !info->dlpi_name || !*info->dlpi_name || strstr(info->dlpi_name, "linux-vdso"))
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Half) *versym = NULL;
    const uint32_t *gnu = NULL, *sysv = NULL;
    /* glibc relocates these d_ptr entries to absolute addresses for loaded objects. */
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const void *)d->d_un.d_ptr; break;
        case DT_STRTAB: strtab = (const void *)d->d_un.d_ptr; break;
        case DT_VERSYM: versym = (const void *)d->d_un.d_ptr; break;
        case DT_GNU_HASH: gnu = (const void *)d->d_un.d_ptr; break;
        case DT_HASH: sysv = (const void *)d->d_un.d_ptr; break;
        }
    }
    if (!symtab || !strtab || (!gnu && !sysv)) return 0;
#define CS_ABS(p) ((uintptr_t)(p) < info->dlpi_addr ? (void *)((uintptr_t)(p) + info->dlpi_addr) : (void *)(p))
    symtab = CS_ABS(symtab), strtab = CS_ABS(strtab), gnu = gnu ? CS_ABS(gnu) : NULL;
    sysv = sysv ? CS_ABS(sysv) : NULL, versym = versym ? CS_ABS(versym) : NULL;
    uint32_t n = sysv ? sysv[1] : gnu_hash_count(gnu);
    for (uint32_t i = 1; i < n; i++) {
        const ElfW(Sym) *s = &symtab[i];
        if (s->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s->st_info) != STT_FUNC) continue;
        if (strcmp(strtab + s->st_name, q->symbol)) continue;
        if (versym && (versym[i] & 0x8000)) continue;  /* hidden: not the default version */
        q->found = (void *)(info->dlpi_addr + s->st_value);
        return 1;
    }
    return 0;
}

/* The definition RTLD_NEXT would find from the shim: the first object after ours, in load
 * order, that defines the symbol. That is libc, or another tool's hook stacked after us. */
void *cs_elf_next(const char *symbol, const void *self)
{
    struct query q = { symbol, self, 0, NULL };
    dl_iterate_phdr(visit, &q);
    return q.found;
}
