/* Device code and kernels (devcode.c), launches (launches.c), memory (memory.c). */
#ifndef CS_DEVCODE_H
#define CS_DEVCODE_H

#include <stddef.h>
#include "fatbin.h"
#include "wrap.h"

/* The kernel's name (demangled when possible) and its module's image entries. 1 when known. */
int cs_kernel_name(void *handle, char *out, size_t cap, const struct cs_entry **e, int *n);
void cs_kernel_name_cached(void *handle, char *out, size_t cap);
void cs_devcode_note_cc(int cc);
void cs_devcode_launch_failed(struct cs_thread *t, int result, void *f);

/* launches.c */
void cs_async_error(struct cs_thread *t, struct cs_event *ev, void *stream, int stream_known);
int cs_launch_extra(const struct cs_thread *t, const struct cs_event *ev, char *out, size_t cap);
void cs_put_launch(struct cs_thread *t, struct cs_event *ev);   /* cs_launch_extra into the call's fields */
void cs_launch_failed(struct cs_thread *t, struct cs_event *ev);
int cs_kernel_name_known(void *handle, char *out, size_t cap);
/* Visit the launches still in every thread's side ring, newest first per thread; stop when visit
 * returns non-zero. Reads only: the watchdog uses it too. */
void cs_recent_launches(int (*visit)(const struct cs_thread *, const struct cs_event *, void *), void *arg);
void cs_launches_init(void);

#endif
