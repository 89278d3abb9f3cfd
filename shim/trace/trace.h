/* The trace: its file and lines (writer.c), ALL mode's binary calls file (calls_file.c), a call's
 * record (record.c: the event into the thread's ring, a failing or key call's line). Findings
 * (findings.h) are written through it. */
#ifndef CS_TRACE_H
#define CS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "../process/state.h"

#define CS_VERSION "0.1.0"
#define CS_TRACE_FORMAT "cudashim-trace"
#define CS_TRACE_VERSION 2

/* The full path's record and publish (record.c): out of line, so that the thousands of wrapper
 * bodies stay small (the full path is the rare one: nested, hooked, key or ALL-mode calls). */
struct cs_event *cs_record(struct cs_thread *t, struct cs_api *api, int idx, int via, uint32_t result, uint64_t t0);
/* Publish the event; failing and key calls are written now (rare, off the hot path). */
void cs_finish(struct cs_thread *t, struct cs_api *api, struct cs_event *ev, int key);

uint32_t cs_missing(struct cs_api *api, int idx, int via);  /* a wrapped function no library defines */
extern const char cs_note_absent[];  /* what its record says */
/* Hooks add fields to the record of the call being finished (comma-separated, no leading comma). */
void cs_extra(struct cs_thread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cs_extra_str(struct cs_thread *t, const char *key, const char *val);

/* writer.c. What a failing call's line adds, a new part's repeats and the header's NCCL version
 * are filled in by the layers above (init.c). */
struct cs_writer_hooks {
    int (*nccl_version)(void);  /* for the header: NCCL's version when it is already loaded */
    void (*new_part)(void);     /* the trace went on in a new file: what must be said again */
    void (*failed_call)(struct cs_thread *t, struct cs_api *api, struct cs_event *ev);  /* before it is written */
};
extern struct cs_writer_hooks cs_writer_hooks;
void cs_emit(struct cs_thread *t, struct cs_api *api, struct cs_event *ev);  /* a failing or key call's line */
void cs_writer_start(void);
void cs_writer_after_fork(void);
void cs_writer_finish(void);
void cs_write_line(const char *line, size_t len);
size_t cs_format_event(char *buf, size_t cap, struct cs_api *api, const struct cs_event *ev, int tid,
                       const char *extra, int extra_len);
const char *cs_trace_path(void);
void cs_trace_open(void);  /* create the trace now if it is not yet */
void cs_trace_nccl_version(int v);  /* NCCL's version: in a "process" line unless the header had it */
int cs_trace_complete(void);  /* open, and every line so far written */
const char *cs_trace_rank(void);  /* RANK, SLURM_PROCID, ...; NULL when none */
extern uint64_t _Atomic cs_suppressed, cs_lines_written, cs_lines_unwritable, cs_lines_truncated;

/* calls_file.c: ALL mode's events, raw, in the trace's binary companion. Kernel names and opening
 * the trace are filled in by the layers above (init.c). */
struct cs_calls_hooks {
    int (*kernel_name)(void *f, char *out, size_t cap);  /* 1 when the function's name is known */
    void (*open_trace)(void);                           /* the trace (and so this file) is wanted now */
};
extern struct cs_calls_hooks cs_calls_hooks;
int cs_calls_open(const char *trace_path, char *name, size_t cap);  /* 1: open; name is its file name */
int cs_calls_make_room(struct cs_thread *t);  /* ALL mode, ring full: write it out; 0 when it cannot */
void cs_calls_flush_all(int wait);
void cs_calls_after_fork(void);

#endif
