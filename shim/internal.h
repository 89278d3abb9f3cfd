/* Declarations shared by the shim's modules (not the hot path: see wrap.h). */
#ifndef CS_INTERNAL_H
#define CS_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "locks.h"
#include "wrap.h"

#define CS_VERSION "0.1.0"
#define CS_TRACE_FORMAT "cudashim-trace"
#define CS_TRACE_VERSION 2

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
    int disable, trace_all, summary, stderr_on, crash_handler, crash_selftest, expect_gpu;
    uint64_t ring_size, max_errors_per_api, max_key_calls_per_api;
    uint64_t trace_max;  /* bytes per trace part; 0: no limit */
    double hang_timeout_s;
    const char *trace_file, *trace_dir, *clock, *unwinder, *driver_version_file, *sync_launches, *hang_timeout;
    const char *prometheus_dir, *job;
};
extern struct cs_config cs_cfg;
void cs_config_load(void);
int cs_parse_bool(const char *s, int *out);  /* 1 when s is a boolean; *out its value */
int cs_env_disabled(void);                   /* CUDASHIM_DISABLE is set true: read before cs_config_load */
int cs_config_value_ok(int var, const char *s);

/* clock.c */
void cs_clock_init(const char *mode);
uint64_t cs_ticks_to_ns(uint64_t ticks);
uint64_t cs_dur_to_ns(uint64_t ticks);
const char *cs_clock_name(void);
void cs_clock_mapping(uint64_t *ticks0, uint64_t *ns0, double *ns_per_tick);  /* as cs_ticks_to_ns converts */

/* init.c: lazy, idempotent bootstrap */
int cs_init(void);          /* 1 when ready */
void cs_init_after_fork(void);
extern pid_t cs_pid;

/* thread.c */
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

/* real.c: real dl* functions and library handles */
typedef void *(*cs_dlsym_fn)(void *, const char *);
typedef void *(*cs_dlvsym_fn)(void *, const char *, const char *);
cs_dlsym_fn cs_real_dlsym(void);
cs_dlvsym_fn cs_real_dlvsym(void);
int cs_api_bind(struct cs_api *api);
int cs_api_rebind(struct cs_api *api, void *p);  /* the library was loaded again elsewhere */
int cs_api_find(struct cs_api *api, const char *name);  /* global index or -1 */
int cs_api_index_of_ptr(struct cs_api *api, void *p, const char *hint);
struct cs_api *cs_api_of(int idx);
const char *cs_api_name(int idx);

/* elf_sym.c: the loaded objects, read without the loader lock */
struct link_map;
void *cs_elf_next(const char *symbol, const void *self);
void *cs_elf_lookup(const struct link_map *m, const char *symbol);
void cs_elf_each_function(const struct link_map *m, void (*fn)(const char *, void *, void *), void *arg);
const char *cs_elf_function_at(const struct link_map *m, const void *addr, uint64_t *offset);
const void *cs_elf_lookup_data(const struct link_map *m, const char *symbol);
const char *cs_elf_soname(const struct link_map *m);
struct link_map *cs_lm_head(void);
struct link_map *cs_lm_self(void);
struct link_map *cs_lm_find_soname(const char *soname);
struct link_map *cs_lm_of_addr(const void *addr);
const char *cs_lm_name_of_addr(const void *addr);
const void *cs_lm_phdrs(const struct link_map *m, size_t *count);  /* its program headers, or NULL */
void cs_exe_path(char *out, size_t cap);
const char *cs_elf_dyn_str(const struct link_map *m, long tag, int nth);

/* diagnose_libs.c: a failing library call whose cause the shim can name */
void cs_diagnose_library_failure(struct cs_thread *t, struct cs_api *api, const struct cs_event *ev, const char *library_said);

/* rebind.c: the loader's bindings of wrapped names pointed at the wrappers */
void cs_rebind(void);          /* binds objects loaded since the last time; cheap when none */
void cs_rebind_needed(void);   /* the loader may have added objects */
extern int cs_rebind_on;       /* the shim's constructor ran (and the shim is not disabled) */
int cs_rebind_unbound(void);   /* how many lazy references the loaded libraries lack */
void cs_rebind_unbound_at(int i, const char **needer, const char **symbol);

/* dlopen_hook.c: what the program asked the loader to open, and from where */
int cs_dlopen_request(const char *path, char *caller, size_t cap, int *by_name);

/* writer.c */
struct cs_writer_hooks {
    int (*nccl_version)(void);  /* for the header: NCCL's version when it is already loaded */
    void (*new_part)(void);     /* the trace went on in a new file: what must be said again */
    void (*failed_call)(struct cs_thread *t, struct cs_api *api, struct cs_event *ev);  /* before it is written */
};
extern struct cs_writer_hooks cs_writer_hooks;
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

/* calls_file.c: ALL mode's events, raw, in the trace's binary companion */
struct cs_calls_hooks {
    int (*kernel_name)(void *f, char *out, size_t cap);  /* 1 when the function's name is known */
    void (*open_trace)(void);                           /* the trace (and so this file) is wanted now */
};
extern struct cs_calls_hooks cs_calls_hooks;
int cs_calls_open(const char *trace_path, char *name, size_t cap);  /* 1: open; name is its file name */
void cs_calls_flush_all(int wait);
void cs_calls_after_fork(void);

/* json.c: bounded, allocation-free JSON text */
struct cs_buf { char *p; size_t len, cap; };
void cs_put(struct cs_buf *b, const char *s);
void cs_putn(struct cs_buf *b, const char *s, size_t n);
void cs_put_str(struct cs_buf *b, const char *s);      /* quoted and escaped */
void cs_put_u64(struct cs_buf *b, uint64_t v);  /* 2^63 and above as a decimal string */
const char *cs_num(char tmp[24], uint64_t v);     /* the same, as text for a format */
void cs_put_i64(struct cs_buf *b, int64_t v);
void cs_put_hex(struct cs_buf *b, uint64_t v);
void cs_extra(struct cs_thread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cs_extra_str(struct cs_thread *t, const char *key, const char *val);
extern const char cs_note_absent[];  /* a wrapped function no loaded library defines */

/* crash.c */
extern int _Atomic cs_crash_active;
void cs_crash_install(void);
/* signal_hook.c / crash.c: libc's sigaction, and the program's dispositions kept while the
 * shim's crash handler holds a fatal signal (1: kept; old says what the program would see). */
struct sigaction;
int cs_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int cs_crash_keeps(int sig, const struct sigaction *act, struct sigaction *old);
extern int (*cs_signal_keeper)(int, const struct sigaction *, struct sigaction *);  /* cs_crash_keeps once installed */
void cs_crash_thread_init(void);
void cs_crash_thread_exit(void);
void cs_crash_exit_note(void);

/* driver_ask.c: the shim's own driver calls, counted apart */
extern uint64_t _Atomic cs_own_calls[CS_API_TOTAL];
void cs_own_count(int idx);
int cs_ask_ctx_device(int *dev);
int cs_ask_attribute(int *v, int attr, int dev);
int cs_ask_driver_version(int *v);
int cs_ask_func_name(const char **name, void *f);
int cs_ask_stream_sync(void *stream);
int cs_ask_mem_info(size_t *free_b, size_t *total_b);

/* watchdog.c */
void cs_watchdog_start(void);
void cs_watchdog_after_fork(void);

/* library_names.c: pure string work */
int cs_is_cuda_library_name(const char *base, size_t len);  /* libcudart.so.13, libnccl.so.2, ... */
const char *cs_base_name(const char *path);

/* loader_lock.c: the link map held still (no dlopen, dlsym, dladdr or dlclose inside), fenced
 * from fork */
struct dl_phdr_info;
void cs_loader_after_fork(void);
const char *cs_dlopen_last(void);  /* dlopen_hook.c: the program's last dlopen's file name */
void cs_loader_probe(void);  /* the scanner, first: the loader's lock is usable (a forked child) */
void cs_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
void cs_loader_held(void (*fn)(void *), void *arg);

/* scanner.c: the only code that takes the loader lock or asks a library for its version */
void cs_scanner_install(void (*scan_work)(int ask));
void cs_scanner_after_fork(void);
void cs_scan_request(void);  /* lock-free, from any hook */
void cs_scan_wait(int ms);   /* request, and wait for it (bounded) */
void cs_scan_sync(void);     /* from the dlsym/dlerror hooks: no library is asked anything */
void cs_scan_final(void);    /* at exit */
void cs_crash_prepare(void); /* crash.c: what the handler needs loaded, done by the scanner */

/* summary.c */
void cs_summary_write(void);
void cs_summary_counts(uint64_t calls[], uint64_t errors[]);  /* every thread's, per API */
const char *cs_trace_rank(void);  /* writer.c: RANK, SLURM_PROCID, ...; NULL when none */
void cs_prometheus_write(void);  /* prometheus.c: CUDASHIM_PROMETHEUS_DIR's file, at exit */

#endif
