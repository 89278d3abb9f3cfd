/* needed_files.c: the loader's search replayed on files, for a load that failed. */
#ifndef CS_NEEDED_FILES_H
#define CS_NEEDED_FILES_H
#include <stddef.h>
/* Where the loader would find name for an object with this RUNPATH in directory origin
 * (LD_LIBRARY_PATH, the RUNPATH, the system directories; not ld.so.cache). 1 and out when found.
 * dangling (may be NULL): the first link by that name met on the way whose target is missing,
 * "PATH -> TARGET", empty when none. */
int cs_needed_search(const char *name, const char *runpath, const char *origin, char *out, size_t cap, char *dangling,
                     size_t dcap);
/* The objects in top's dependency tree that list missing in DT_NEEDED: 1, their paths in out
 * (", " between, four at most, breadth first) and the first one's RUNPATH in runpath (may be NULL). */
int cs_needed_requester(const char *top, const char *missing, char *out, size_t cap, char *runpath, size_t rcap);
#endif
