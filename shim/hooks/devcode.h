/* Device code and kernels (devcode.c), launches (launches.c), memory (memory.c). */
#ifndef CS_DEVCODE_H
#define CS_DEVCODE_H

#include <stddef.h>
#include <stdint.h>
#include "../base/fatbin.h"
#include "../process/state.h"

/* What explains a failing load, kernel lookup or launch, collected before anything is written:
 * the kernel, its module's image and where that came from (one lookup of the maps, the driver
 * asked for a name it has not seen), then the image rule's explanation. The caller writes the
 * record's fields from it once. */
#define CS_MOD_ENTRIES 24
struct cs_devcode_facts {
    char kernel[256];                   /* demangled; the handle ("0x...") when not known */
    int known;                          /* the kernel's name is known */
    char origin[256];                   /* the file its module's image came from; "" when unknown */
    struct cs_entry e[CS_MOD_ENTRIES];  /* the image, as parsed */
    int n;                              /* 0: the image was not seen */
    char diagnosis[2048];               /* cs_devcode_explain's; "" when not an image error */
};
int cs_kernel_facts(void *handle, struct cs_devcode_facts *f);  /* 1 when the name is known */
void cs_devcode_explain(const struct cs_thread *t, int result, const char *where, struct cs_devcode_facts *f);

/* The kernel's name (demangled when possible; the handle when not known): 1 when known. */
int cs_kernel_name(void *handle, char *out, size_t cap);
void cs_kernel_name_cached(void *handle, char *out, size_t cap);  /* the maps only (the watchdog) */
int cs_kernel_name_known(void *handle, char *out, size_t cap);     /* the maps only, demangled */
void cs_devcode_note_cc(int cc);
void cs_devcode_drop(void);  /* a forked child whose DEVCODE lock was held elsewhere */

/* launches.c */
void cs_async_error(struct cs_thread *t, struct cs_event *ev, void *stream, int stream_known);
void cs_put_launch(struct cs_thread *t, struct cs_event *ev);   /* what a launch was given, into the call's fields */
void cs_launch_failed(struct cs_thread *t, struct cs_event *ev);
/* CUlaunchConfig: grid x/y/z, block x/y/z, sharedMemBytes (unsigned ints), then hStream. */
struct cs_launch_config { unsigned g[3], b[3], shmem; void *stream; };
/* A launch that failed on the fast path: its arguments from what the entry point kept. */
void cs_fast_launch_failed(struct cs_thread *t, struct cs_event *ev, uint32_t bz, uint32_t shmem);
void cs_fast_launch_ex_failed(struct cs_thread *t, struct cs_event *ev);
/* Visit the launches still in every thread's side ring, newest first per thread; stop when visit
 * returns non-zero. Reads only: the watchdog uses it too. */
void cs_recent_launches(int (*visit)(const struct cs_thread *, const struct cs_event *, void *), void *arg);

/* memory.c */
void cs_memory_drop(void);   /* a forked child whose MEMORY lock was held elsewhere */

void cs_memory_live(uint64_t *bytes, uint64_t *count);  /* memory.c: what this process holds on the device */
#endif
