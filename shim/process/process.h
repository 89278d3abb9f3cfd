/* The process's basics, below everything else: the CUDASHIM_* configuration, the clock, the
 * threads' states and their events, the crash flag. */
#ifndef CS_PROCESS_H
#define CS_PROCESS_H

#include <stdint.h>
#include <sys/types.h>

#include "state.h"

/* config.c */
enum cs_var_type { CS_BOOL, CS_STRING, CS_COUNT, CS_ENUM, CS_SECONDS, CS_BYTES };
enum {
#define CS_VAR(name, type, def, doc) CS_CFG_##name,
#include "config_table.h"
#undef CS_VAR
    CS_CFG_COUNT
};
struct cs_var {
    const char *name;   /* without the CUDASHIM_ prefix */
    enum cs_var_type type;
    const char *def;
    const char *doc;
};
extern const struct cs_var cs_vars[CS_CFG_COUNT];
struct cs_config {
    int disable, group_readable, trace_all, summary, stderr_on, crash_handler, crash_selftest, expect_gpu;
    uint64_t ring_size, max_errors_per_api, max_key_calls_per_api;
    uint64_t trace_max;  /* bytes per trace part; 0: no limit */
    double hang_timeout_s, exit_timeout_s;
    const char *trace_file, *trace_dir, *clock, *unwinder, *driver_version_file, *sync_launches, *hang_timeout;
    const char *prometheus_dir, *job;
};
extern struct cs_config cs_cfg;
void cs_config_load(void);
int cs_parse_bool(const char *s, int *out);  /* 1 when s is a boolean; *out its value */
int cs_env_disabled(void);                   /* CUDASHIM_DISABLE is set true: read before cs_config_load */
int cs_config_value_ok(int var, const char *s);
/* CUDASHIM_* come from the environment, else from the root-owned CS_CONFIG_FILE (a node's
 * defaults); in a privileged process (AT_SECURE: setuid, setgid, file capabilities) from that
 * file only, never from the environment its caller chose. */
#define CS_CONFIG_FILE "/etc/cudashim.conf"
int cs_secure(void);
const char *cs_setting(const char *name);  /* "CUDASHIM_X": its value, or NULL */

/* files.c: every file the shim creates (O_EXCL, never through a link, cs_file_mode(), in a
 * directory cs_dir_refusal() accepts); -1 with errno, and *why set when the shim refused it. */
int cs_file_mode(void);
const char *cs_dir_refusal(const char *dir);  /* NULL: the shim may create files there; else why not */
int cs_create_file(const char *path, int flags, const char **why);
void cs_file_name_part(char *out, size_t cap, const char *v);  /* v as one plain file-name component */
/* A small file's start (/proc, /sys), NUL-terminated, in one read: its length, or -1 (no stdio,
 * no allocation: safe in a hook). */
long cs_read_small(const char *path, char *buf, size_t cap);

/* clock.c */
void cs_clock_init(const char *mode);
uint64_t cs_ticks_to_ns(uint64_t ticks);
uint64_t cs_dur_to_ns(uint64_t ticks);
const char *cs_clock_name(void);
void cs_clock_mapping(uint64_t *ticks0, uint64_t *ns0, double *ns_per_tick);  /* as cs_ticks_to_ns converts */

/* thread.c: what a thread's start, first call and exit do is filled in by the layers above
 * (init.c) when the shim is loaded. */
struct cs_thread_events {
    int (*start)(void);                                /* the shim's start: 1 when ready */
    void (*first_call)(struct cs_thread *t, int idx);  /* after a thread's state is made */
    void (*created)(void);                             /* on the new thread */
    void (*exiting)(void);                             /* on the exiting thread */
};
extern struct cs_thread_events cs_thread_events;
extern __thread int cs_own_thread __attribute__((tls_model("initial-exec")));
struct cs_thread *cs_thread_list(void);
void cs_thread_after_fork(struct cs_thread *self);
/* A thread of the shim's own, started with every signal but the faults blocked (stack_size 0:
 * the default); pthread_create's result. */
int cs_thread_spawn(pthread_t *thread, size_t stack_size, void *(*fn)(void *));

/* crash_flag.c: a crash record is being written (the writers stop taking their locks). */
extern int _Atomic cs_crash_active;

#endif
