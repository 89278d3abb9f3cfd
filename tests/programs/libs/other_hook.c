/* Another tool's dlsym hook (as HAMi or a profiler would install), to stack with ours.
 * It counts lookups and forwards to the next dlsym it finds through dlvsym. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static int lookups;
static void *(*next)(void *, const char *);
__attribute__((visibility("default"))) void *dlsym(void *h, const char *name)
{
    if (!next) next = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!next) next = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    lookups++;
    return next(h, name);
}
__attribute__((destructor)) static void report(void)
{
    if (getenv("OTHER_HOOK_REPORT")) fprintf(stderr, "other_hook: %d lookups\n", lookups);
}
