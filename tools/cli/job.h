/* A job's traces, read one at a time and kept as groups: memory grows with the number of
 * distinct stacks and endings, plus a few words per trace (its name, host, rank and groups),
 * never with a trace's contents. The commands that read many traces (report, bugreport,
 * export --prometheus) go through here; a representative trace is read again when printed. */
#ifndef CS_JOB_H
#define CS_JOB_H

#include "cli.h"
#include "strtab.h"

struct job_trace {
    uint32_t file, host, rank_text;  /* in job.text; rank_text STRTAB_NONE without a rank */
    int rank;                        /* the rank as a number; -1 when it is none */
    long long pid;
    uint32_t stack, ending;          /* indices into job.stacks, job.endings */
};

struct job_group {
    int *members, count, cap;        /* trace indices, in reading order */
};

struct job_stack {
    struct job_group g;
    json_t *facts;                   /* the first member's, in its order (trace_facts) */
    int driver;                      /* it loaded the CUDA driver */
};

struct job_ending {
    struct job_group g;
    int findings, failing, crash;    /* of its first member, for the one-line form */
};

/* One rank's last hang report on a communicator (stuck.c). */
struct job_member {
    int trace, rank;
    long long ops, count;
    uint32_t api, dtype, inside;     /* in job.text */
    double seconds;
};

struct job_comm {
    long long nranks;
    struct job_member *m;
    int n, cap;
};

struct job {
    struct strtab text;              /* files, hosts, ranks, API names */
    struct strtab hosts;             /* hosts in the order first seen (bugreport --hide-hosts) */
    struct strtab stack_keys, ending_keys, comm_hashes;  /* ids are indices into the arrays below */
    struct job_trace *traces;
    int n, cap;
    struct job_stack *stacks;
    struct job_ending *endings;
    struct job_comm *comms;
    int errors;                      /* error findings, crashes not survived, hangs: summed */
    struct trace first;              /* the first trace read, whole */
    int have_first;
    int use_summaries;               /* set before job_read: a node's fresh summary stands for its traces */
    int want_metrics;                /* set before job_read: digests carry their Prometheus series */
};

/* Reads every trace of the operands (files, directories read recursively, summaries) in order
 * of their paths, on several threads unless each_needs_trace. each, when set, sees every
 * digest, with the trace itself when each_needs_trace and it was read (NULL when a summary
 * stood for it). Prints what it could not read; -1 then, else 0. */
int job_read(struct job *j, int argc, char **argv, void (*each)(void *ctx, const struct trace *t, json_t *digest),
             void *ctx, int each_needs_trace);
void job_add(struct job *j, json_t *digest);
void job_free(struct job *j);

const char *job_file(const struct job *j, int trace);
void job_label(const struct job *j, int trace, char *out, size_t cap);  /* "host pid 123 rank 0" */
/* Trace number k whole: the first trace as kept, any other read again into *tmp. NULL when it
 * cannot be read (said on stderr). */
const struct trace *job_trace_at(struct job *j, int k, struct trace *tmp);
void job_trace_done(const struct job *j, const struct trace *t, struct trace *tmp);

/* ranks.c */
void who_text(const struct job *j, const int *members, int count, char *out, size_t cap);
json_t *stack_groups(const struct job *j);          /* [{who, differs, count}], the most common last */
char *driverless_who(const struct job *j, int *count);  /* processes that never loaded the driver */
json_t *ending_groups(const struct job *j);         /* [{who, first, count, findings, failing, crash}] */
json_t *job_differences(const struct job *j, int with_labels);  /* what differs between traces */
void report_many(struct job *j, void (*print_one)(const struct trace *, json_t *, json_t *));
/* stuck.c */
json_t *stuck_collectives(const struct job *j);     /* [{communicator, nranks, behind, missing, text, ...}] */
void print_stuck_collectives(json_t *stuck);
/* sources.c: the operands as a list of traces, sorted by path */
struct source {
    char *path;
    int summary, record;             /* a summary's record (summary_dirs[summary]), or -1: a trace file */
};
struct sources {
    struct source *s;
    int n, cap;
    char **summary_dirs;
    int nsummaries;
};
int sources_collect(int argc, char **argv, int use_summaries, struct sources *s);  /* -1: an operand was bad */
char *path_join(const char *dir, const char *name);  /* "DIR/NAME", DIR's trailing slashes dropped (malloc'd) */
void sources_free(struct sources *s);
/* summary.c */
#define SUMMARY_NAME "cudashim-summary.json"
int summarize(int argc, char **argv);
json_t *summary_load(const char *dir);              /* DIR's summary, NULL when none (a bad one is said) */
int summary_fresh(json_t *summary, const char *dir, const struct strtab *names);  /* it lists exactly these traces, unchanged */
json_t *summary_record(json_t *summary, int record, const char *dir);  /* a digest, or {"file", "error"} */               /* cudashim report --summarize DIR...: an exit status */

#endif
