/* Interned strings: each distinct string stored once in one arena and named by a 32-bit id, so
 * that 131,072 ranks' hosts, files and label sets cost their bytes and four more each, not a
 * JSON value apiece. Ids count up from 0 in the order strings were first seen. */
#ifndef CS_STRTAB_H
#define CS_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#define STRTAB_NONE UINT32_MAX

struct strtab {
    char *arena;
    size_t used, cap;
    uint32_t *offset;   /* by id: where its string starts in the arena */
    uint32_t count, offsets_cap;
    uint32_t *slot;     /* open addressing: id + 1, 0 when empty */
    uint32_t nslots;
};

uint32_t strtab_id(struct strtab *t, const char *s);         /* the string's id, added when new */
uint32_t strtab_find(const struct strtab *t, const char *s); /* STRTAB_NONE when absent */
/* The string of an id; valid until the next string is added. */
static inline const char *strtab_str(const struct strtab *t, uint32_t id) { return t->arena + t->offset[id]; }
void strtab_free(struct strtab *t);
uint64_t strtab_hash(const void *data, size_t len);          /* FNV-1a, shared with other tables */

#endif
