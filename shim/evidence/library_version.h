/* Each loaded library's version, learned without calling what the program has not called
 * (library_version.c says how). */
#ifndef CS_LIBRARY_VERSION_H
#define CS_LIBRARY_VERSION_H

struct cs_library;

/* How sure a version is: from the files beside it, or from the library's own API. */
enum { CS_VERSION_NONE, CS_VERSION_FILE, CS_VERSION_API };

void cs_version_from_files(struct cs_library *l);        /* when the library is first seen */
int cs_version_update(struct cs_library *l, int asking); /* scanner: 1 if anything changed;
                                                            asking 2: at exit */
/* The kind's version function, and whether the scanner may call it (a constant). */
const char *cs_version_function(const char *kind, int *constant);

/* From hooks on program threads, lock-free: what the program's own call answered. fn is the
 * function called (it says which copy of the library), or NULL. */
void cs_version_seen_value(const char *kind, void *fn, long value);
void cs_version_seen_cuda(const char *kind, void *fn, int cuda);
void cs_version_seen_part(const char *kind, void *fn, int part, int value);  /* GetProperty: 0 major, 1 minor, 2 patch */

#endif
