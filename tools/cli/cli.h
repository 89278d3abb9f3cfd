/* The cudashim command: shared declarations for the subcommands. Traces are read with jansson
 * (a real JSON parser: Debian's libjansson-dev; chosen over cJSON for its error positions,
 * 64-bit integers and reference-counted values that the multi-trace merges rely on). */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <jansson.h>
#include <stdio.h>

#define CLI_WIDTH 100
#define TRACE_FORMAT "cudashim-trace"
#define TRACE_VERSION_MAX 2   /* every version up to this one is read */

/* Exit statuses (docs/cudashim.1). */
enum { EXIT_CLEAN = 0, EXIT_FINDINGS = 1, EXIT_USAGE = 2, EXIT_BAD_TRACE = 3 };

/* One call, compact: every call of a trace is kept this way (diff and export need them all);
 * the line itself is read again from its offset when it is shown. */
struct call_rec {
    const char *api;         /* interned in trace.names */
    long long ts_ns, dur_ns;
    long offset;             /* of its line in the file */
    int result, tid;
    int part;                /* 0: the file itself; 1: its older part, FILE.prev (CUDASHIM_TRACE_MAX);
                                CALLS_FILE, CALLS_PREV: an event of the binary companion (ALL mode) */
};
enum { CALLS_PREV = 2, CALLS_FILE = 3 };

struct trace {
    char *file;
    char *prev_file;         /* FILE.prev when the trace was continued in FILE, else NULL */
    json_t *header, *summary, *crash, *handlers;
    json_t *findings, *libraries, *runtimes, *systems, *hangs, *gemms;  /* arrays, in file order */
    /* The calls worth holding whole (failing ones, at most CALLS_KEPT_PER_GROUP per API and
     * result; device facts; driver lookups that found nothing), and the count of every failing
     * call per "API<tab>result": memory stays bounded however long the trace. */
    json_t *calls, *failure_counts;
    struct call_rec *recs;   /* every call (when trace_keep_all_calls is set) */
    size_t nrecs;
    json_t *names;
    json_t *api_names, *kernel_names;  /* the binary companion's: "index" -> [lib, api]; "0xhandle" -> name */
    FILE *calls_in[2];       /* the companion and its older part, opened when a call is first read */
    int cut_last_line;       /* the process died while writing its last line */
    int part;                /* the newest part's number when the trace was continued (1: never) */
    long long start_mono_ns, start_unix_ns;
};

#define CALLS_KEPT_PER_GROUP 64
extern int trace_keep_all_calls;  /* set by diff and export before loading */

/* trace.c */
int trace_load(const char *path, struct trace *t, char *err, size_t cap);
json_t *trace_read_call(const struct trace *t, const struct call_rec *r);  /* the whole line, or NULL */
int call_is_failure(json_t *c);  /* a non-zero result that is not an answer */
int result_is_failure(const char *api, const char *lib, long long result);  /* the same, from its fields */
/* Expand files and directories (every *.jsonl inside, recursively) into traces, all held at
 * once (diff and export --chrome need every call); prints errors itself. Reports over many
 * traces read them one at a time instead (job.h). */
int traces_load(int argc, char **argv, struct trace **out, int *n);
void trace_free(struct trace *t);
void trace_add_binary_call(struct trace *t, const char *api, long long ts_ns, long long dur_ns, long offset, int result,
                           int tid, int part);

/* gemm.c: the GEMM census (gemm lines) */
double gemm_shares(const struct trace *t, double shares[], long long *calls);  /* total FLOPs; shares by enum cs_precision */
void gemm_shares_text(char *out, size_t cap, const double shares[]);
void print_gemm(const struct trace *t);

/* calls.c: ALL mode's binary companion */
int calls_load(struct trace *t, char *err, size_t cap);  /* names always; events when trace_keep_all_calls */
json_t *calls_line(const struct trace *t, const struct call_rec *r);  /* the call's line, as the shim writes one */
const char *jstr(json_t *o, const char *key);        /* "" when absent */
long long jint(json_t *o, const char *key, long long dflt);
const char *trace_label(const struct trace *t);      /* "host pid 123 rank 0" */
json_t *trace_library_of(const struct trace *t, const char *path);

/* text.c */
extern int cli_color;
void cli_color_init(void);
const char *c_red(void), *c_yellow(void), *c_bold(void), *c_dim(void), *c_reset(void);
void wrap(FILE *f, const char *prefix, const char *text, int width);
const char *home_tilde(const char *text, char *buf, size_t cap);  /* ~ for the home directory at the start of each path in text */
void rule(FILE *f, const char *title);
const char *finding_title(const char *id);  /* shim/trace/findings_table.h */

/* cmd_report.c, shared with bugreport */
json_t *report_findings(const struct trace *t);      /* errors first */
json_t *report_failures(const struct trace *t);      /* grouped by (api, result) */

/* digest.c: what a report over many traces keeps of each (job.h, summary.c) */
json_t *trace_digest(const struct trace *t, int metrics);  /* metrics: with its Prometheus series */
int crash_survived(const struct trace *t);           /* the program's own handler took the signal and went on */
/* hangs.c: a hang report in words: [{level 0..2, text}] */
json_t *hang_lines(const struct trace *t, json_t *hang);
/* ranks.c */
json_t *trace_facts(const struct trace *t);          /* "cudnn version" -> "9.19.0", ... */

/* args.c: an option is a flag (flag set to 1) or takes a value (value set); the list ends with
 * a NULL name. Returns -1 when the command goes on (operands allocated: free them), else the
 * exit status (help printed, or a usage error said). */
struct cli_opt { const char *name; int *flag; const char **value; };
int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts, void (*usage)(FILE *),
              char ***operands, int *n);

/* capture.c: argv[0] run (PATH searched) with stdout into buf, stderr to /dev/null, ended after
 * timeout_s; its exit status, 128+signal, or -1 when it could not be started */
int capture_output(char *const argv[], unsigned timeout_s, char *buf, size_t cap);

/* subcommands */
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_bugreport(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_preload_hook(int argc, char **argv);
/* prometheus.c: a trace's series, then many traces' series added up and written */
json_t *prometheus_series(const struct trace *t);    /* {"base": labels, "series": [[metric, labels, value]]} */
void prometheus_add(json_t *digest);
int prometheus_write(const char *out, int bad);      /* an exit status */

#endif
