/* strtab.h: an arena of strings and an open-addressing index over it (load factor <= 1/2). */
#include <stdlib.h>
#include <string.h>

#include "strtab.h"

uint64_t strtab_hash(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void *grow(void *p, size_t size)
{
    void *q = realloc(p, size);
    if (!q) abort();  /* the command, not the preload: out of memory ends it */
    return q;
}

static uint32_t lookup(const struct strtab *t, const char *s, uint32_t *at)
{
    uint32_t mask = t->nslots - 1, i = (uint32_t)strtab_hash(s, strlen(s)) & mask;
    for (; t->slot[i]; i = (i + 1) & mask)
        if (!strcmp(strtab_str(t, t->slot[i] - 1), s)) break;
    *at = i;
    return t->slot[i] ? t->slot[i] - 1 : STRTAB_NONE;
}

uint32_t strtab_find(const struct strtab *t, const char *s)
{
    uint32_t at;
    return t->nslots ? lookup(t, s, &at) : STRTAB_NONE;
}

static void rehash(struct strtab *t)
{
    uint32_t n = t->nslots ? t->nslots * 2 : 1024;
    free(t->slot);
    t->slot = calloc(n, sizeof *t->slot);
    if (!t->slot) abort();
    t->nslots = n;
    for (uint32_t id = 0; id < t->count; id++) {
        uint32_t at;
        lookup(t, strtab_str(t, id), &at);
        t->slot[at] = id + 1;
    }
}

uint32_t strtab_id(struct strtab *t, const char *s)
{
    if (!t->nslots || (t->count + 1) * 2 > t->nslots) rehash(t);
    uint32_t at, id = lookup(t, s, &at);
    if (id != STRTAB_NONE) return id;
    size_t len = strlen(s) + 1;
    if (t->used + len > t->cap) {
        while (t->used + len > t->cap) t->cap = t->cap ? t->cap * 2 : 65536;
        t->arena = grow(t->arena, t->cap);
    }
    if (t->count == t->offsets_cap) {
        t->offsets_cap = t->offsets_cap ? t->offsets_cap * 2 : 1024;
        t->offset = grow(t->offset, sizeof *t->offset * t->offsets_cap);
    }
    memcpy(t->arena + t->used, s, len);
    t->offset[t->count] = (uint32_t)t->used;
    t->used += len;
    t->slot[at] = t->count + 1;
    return t->count++;
}

void strtab_free(struct strtab *t)
{
    free(t->arena), free(t->offset), free(t->slot);
    memset(t, 0, sizeof *t);
}
