/* Device code and kernels (devcode.c), launches (launches.c), memory (memory.c). */
#ifndef CS_DEVCODE_H
#define CS_DEVCODE_H

#include <stddef.h>
#include <stdint.h>
#include "../base/fatbin.h"
#include "../process/state.h"

/* The kernel's name (demangled when possible) and its module's image entries. 1 when known. */
int cs_kernel_name(void *handle, char *out, size_t cap, const struct cs_entry **e, int *n);
void cs_kernel_name_cached(void *handle, char *out, size_t cap);
void cs_devcode_note_cc(int cc);
void cs_devcode_launch_failed(struct cs_thread *t, int result, void *f);
void cs_devcode_drop(void);  /* a forked child whose DEVCODE lock was held elsewhere */

/* launches.c */
void cs_async_error(struct cs_thread *t, struct cs_event *ev, void *stream, int stream_known);
int cs_launch_extra(const struct cs_thread *t, const struct cs_event *ev, char *out, size_t cap);
void cs_put_launch(struct cs_thread *t, struct cs_event *ev);   /* cs_launch_extra into the call's fields */
void cs_launch_failed(struct cs_thread *t, struct cs_event *ev);
/* CUlaunchConfig: grid x/y/z, block x/y/z, sharedMemBytes (unsigned ints), then hStream. */
struct cs_launch_config { unsigned g[3], b[3], shmem; void *stream; };
/* A launch that failed on the fast path: its arguments from what the entry point kept. */
void cs_fast_launch_failed(struct cs_thread *t, struct cs_event *ev, uint32_t bz, uint32_t shmem);
void cs_fast_launch_ex_failed(struct cs_thread *t, struct cs_event *ev);
int cs_kernel_name_known(void *handle, char *out, size_t cap);
/* Visit the launches still in every thread's side ring, newest first per thread; stop when visit
 * returns non-zero. Reads only: the watchdog uses it too. */
void cs_recent_launches(int (*visit)(const struct cs_thread *, const struct cs_event *, void *), void *arg);

/* memory.c */
void cs_memory_drop(void);   /* a forked child whose MEMORY lock was held elsewhere */

#endif
