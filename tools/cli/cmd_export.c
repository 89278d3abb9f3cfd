/* cudashim export --jsonl TRACE|DIR... [-o FILE]: each trace as JSON Lines, ALL mode's binary
 * calls made into the call lines the shim writes for them, in time order among the others.
 *
 * cudashim export --chrome TRACE|DIR... [-o FILE]: Chrome Trace Event JSON (Perfetto,
 * chrome://tracing), one timeline for any number of processes or ranks. Each process is a pid
 * with its command and rank as its name, each thread a named track; each call a complete event
 * ("X") with its fields in args; failing calls are coloured and also marked with an instant
 * event; findings and crashes are instant events. Times are microseconds from the earliest
 * event of all the traces (the processes' clocks are aligned through their wall-clock start),
 * written with nanosecond precision and no more; events are sorted by time.
 *
 * Streams: the traces are read once for the compact call records (trace.c), and each call's line
 * is read again from its offset only while it is written. */
#include <stdlib.h>
#include <string.h>

#include "job.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim export --chrome|--jsonl|--prometheus TRACE|DIR... [-o FILE]\n"
               "  --chrome: Chrome Trace Event JSON, for https://ui.perfetto.dev or chrome://tracing (default: stdout).\n"
               "  --jsonl: the trace as JSON Lines, every call a line (an ALL-mode trace keeps its successful\n"
               "  calls in a binary file beside it, NAME.calls: they become lines here).\n"
               "  Several traces (the ranks of a job) make one timeline, a process each. In default mode a\n"
               "  trace holds only failing and key calls; record with `cudashim run --all` for a full timeline.\n"
               "  --prometheus: metrics in Prometheus's text format for node_exporter's textfile collector\n"
               "  (findings, driver and libraries, failing calls, crashes, hangs; labels host, job, rank),\n"
               "  written atomically to FILE (docs/prometheus.md).\n");
}

enum { EV_CALL, EV_FINDING, EV_CRASH };
struct event { long long t_ns; int trace, kind; size_t rec; };

static int by_time(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->t_ns != y->t_ns) return x->t_ns < y->t_ns ? -1 : 1;
    if (x->trace != y->trace) return x->trace < y->trace ? -1 : 1;
    return x->rec < y->rec ? -1 : x->rec > y->rec;
}

/* A process's monotonic time on the common wall-clock axis. */
static long long wall(const struct trace *t, long long mono_ns)
{
    return t->start_unix_ns ? t->start_unix_ns + (mono_ns - t->start_mono_ns) : mono_ns;
}

struct out { FILE *f; int first; long long base; };

static void put_event(struct out *o, json_t *e)
{
    char *s = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fprintf(o->f, "%s\n%s", o->first ? "" : ",", s);
    o->first = 0;
    free(s);
}

/* Microseconds from the base, to the nanosecond: a string of digits, not 17 of them. */
static json_t *us(const struct out *o, long long wall_ns)
{
    long long d = wall_ns - o->base;
    if (d < 0) d = 0;
    return json_real((double)(d / 1000) + (double)(d % 1000) / 1000.0);
}

/* A name written into JSON by hand: identifier characters only (a damaged trace cannot break
 * the document). */
static void plain(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.')
            out[n++] = *s;
    out[n] = 0;
}

/* A finding (at the time it was written) or a crash, as an instant event on its process. */
static void put_marker(struct out *o, const struct trace *t, json_int_t pid, const struct event *v)
{
    char name[256];
    json_t *e;
    if (v->kind == EV_FINDING) {
        json_t *x = json_array_get(t->findings, v->rec);
        snprintf(name, sizeof name, "%s: %s", jstr(x, "severity"), jstr(x, "id"));
        e = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:{s:s, s:s}}", "name", name, "cat", "finding", "ph", "i", "ts",
                      us(o, v->t_ns), "pid", pid, "tid", (json_int_t)0, "s", "p", "args", "summary", jstr(x, "summary"),
                      "fix", jstr(x, "fix"));
    } else {
        snprintf(name, sizeof name, "CRASH %s", jstr(t->crash, "signal_name"));
        e = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:s, s:O}", "name", name, "cat", "crash", "ph", "i", "ts",
                      us(o, v->t_ns), "pid", pid, "tid", (json_int_t)jint(t->crash, "tid", 0), "s", "p", "cname", "terrible",
                      "args", t->crash);
    }
    put_event(o, e);
    json_decref(e);
}

/* The binary calls, by time (ties: in file order). */
static const struct trace *sorting;
static int by_rec_time(const void *a, const void *b)
{
    const struct call_rec *x = &sorting->recs[*(const size_t *)a], *y = &sorting->recs[*(const size_t *)b];
    if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static long long line_ts(const char *line)
{
    const char *p = strncmp(line, "{\"type\":\"call\",", 15) ? NULL : strstr(line, "\"ts_ns\":");
    return p ? strtoll(p + 8, NULL, 10) : -1;
}

static int export_jsonl(struct trace *ts, int n, const char *out, int bad)
{
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) { perror(out); return EXIT_USAGE; }
    char *line = NULL;
    size_t lcap = 0;
    for (int k = 0; k < n; k++) {
        struct trace *t = &ts[k];
        size_t nb = 0, next = 0;
        size_t *bin = malloc(sizeof *bin * (t->nrecs + 1));
        for (size_t r = 0; r < t->nrecs; r++)
            if (t->recs[r].part >= CALLS_PREV) bin[nb++] = r;
        sorting = t;
        qsort(bin, nb, sizeof *bin, by_rec_time);
        const char *files[2] = { t->prev_file, t->file };
        for (int fi = 0; fi < 2; fi++) {
            FILE *in = files[fi] ? fopen(files[fi], "r") : NULL;
            if (!in) continue;
            ssize_t got;
            while ((got = getline(&line, &lcap, in)) > 0) {
                long long at = line_ts(line);
                int last = !strncmp(line, "{\"type\":\"summary\",", 18) && fi == 1;
                while (next < nb && (last || (at >= 0 && t->recs[bin[next]].ts_ns < at))) {
                    json_t *c = calls_line(t, &t->recs[bin[next++]]);
                    char *s = c ? json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                    if (s) fprintf(f, "%s\n", s);
                    free(s), json_decref(c);
                }
                fwrite(line, 1, (size_t)got, f);
                if (line[got - 1] != '\n') fputc('\n', f);
            }
            fclose(in);
        }
        for (; next < nb; next++) {  /* no summary: the process did not exit */
            json_t *c = calls_line(t, &t->recs[bin[next]]);
            char *s = c ? json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
            if (s) fprintf(f, "%s\n", s);
            free(s), json_decref(c);
        }
        free(bin);
    }
    free(line);
    if (out) fclose(f);
    for (int k = 0; k < n; k++) trace_free(&ts[k]);
    free(ts);
    return bad ? EXIT_BAD_TRACE : EXIT_CLEAN;
}

static void add_series(void *ctx, const struct trace *t, json_t *digest)
{
    (void)ctx, (void)t;
    prometheus_add(digest);
}

int cmd_export(int argc, char **argv)
{
    const char *out = NULL;
    int chrome = 0, jsonl = 0, prometheus = 0, npaths, rc;
    char **paths;
    const struct cli_opt opts[] = { { "--chrome", &chrome, NULL }, { "--jsonl", &jsonl, NULL },
                                    { "--prometheus", &prometheus, NULL }, { "-o", NULL, &out }, { NULL, NULL, NULL } };
    if ((rc = cli_parse("export", argc, argv, opts, usage, &paths, &npaths)) >= 0) return rc;
    if (chrome + jsonl + prometheus != 1) {
        fprintf(stderr, "cudashim export: say which format, --chrome, --jsonl or --prometheus\n");
        free(paths);
        return EXIT_USAGE;
    }
    if (prometheus) {  /* one trace at a time: a job's ranks in bounded memory */
        struct job j = { 0 };
        j.use_summaries = j.want_metrics = 1;
        int bad = job_read(&j, npaths, paths, add_series, NULL, 0);
        free(paths);
        int n = j.n;
        job_free(&j);
        return n ? prometheus_write(out, bad) : EXIT_BAD_TRACE;
    }
    trace_keep_all_calls = 1;
    struct trace *ts;
    int n;
    int bad = traces_load(npaths, paths, &ts, &n);
    free(paths);
    if (!n) return EXIT_BAD_TRACE;
    if (jsonl) return export_jsonl(ts, n, out, bad);

    /* Every call of every trace, on one axis, sorted. */
    size_t total = 0;
    for (int k = 0; k < n; k++) total += ts[k].nrecs + json_array_size(ts[k].findings) + 1;
    struct event *ev = malloc(sizeof *ev * (total + 1));
    size_t m = 0;
    long long base = 0;
    int have_base = 0;
    for (int k = 0; k < n; k++) {
        long long start = wall(&ts[k], ts[k].start_mono_ns);
        if (!have_base || start < base) base = start, have_base = 1;
        for (size_t r = 0; r < ts[k].nrecs; r++) {
            ev[m] = (struct event){ wall(&ts[k], ts[k].recs[r].ts_ns), k, EV_CALL, r };
            if (ev[m].t_ns < base) base = ev[m].t_ns;
            m++;
        }
        for (size_t r = 0; r < json_array_size(ts[k].findings); r++)
            ev[m++] = (struct event){ wall(&ts[k], jint(json_array_get(ts[k].findings, r), "ts_ns", ts[k].start_mono_ns)),
                                      k, EV_FINDING, r };
        if (ts[k].crash)
            ev[m++] = (struct event){ wall(&ts[k], jint(ts[k].crash, "mono_ns", ts[k].start_mono_ns)), k, EV_CRASH, 0 };
    }
    qsort(ev, m, sizeof *ev, by_time);

    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) { perror(out); free(ev); return EXIT_USAGE; }
    struct out o = { f, 1, base };
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
    /* One pid per process: its own, or its place in the list when two hosts share one. */
    json_int_t *pids = malloc(sizeof *pids * (size_t)n);
    for (int k = 0; k < n; k++) {
        pids[k] = jint(ts[k].header, "pid", k + 1);
        for (int j = 0; j < k; j++)
            if (pids[j] == pids[k]) pids[k] = 1000000 + k;
        char pname[1024];
        json_t *argv0 = json_array_get(json_object_get(ts[k].header, "argv"), 0);
        snprintf(pname, sizeof pname, "%s (%s)", json_is_string(argv0) ? json_string_value(argv0) : "process", trace_label(&ts[k]));
        json_t *e = json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "process_name", "ph", "M", "pid", pids[k], "tid",
                              (json_int_t)0, "args", "name", pname);
        put_event(&o, e);
        json_decref(e);
        json_t *seen = json_object();
        for (size_t r = 0; r < ts[k].nrecs; r++) {
            char key[32];
            snprintf(key, sizeof key, "%d", ts[k].recs[r].tid);
            if (json_object_get(seen, key)) continue;
            json_object_set_new(seen, key, json_true());
            char tname[64];
            snprintf(tname, sizeof tname, "thread %d", ts[k].recs[r].tid);
            e = json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "thread_name", "ph", "M", "pid", pids[k], "tid",
                          (json_int_t)ts[k].recs[r].tid, "args", "name", tname);
            put_event(&o, e);
            json_decref(e);
        }
        json_decref(seen);
    }
    /* Each trace's file and its older part (FILE.prev), opened when first needed. */
    FILE **files = calloc((size_t)n * 2, sizeof *files);
    long *at = calloc((size_t)n * 2, sizeof *at);  /* where each file is read up to: no seek when in order */
    char *line = NULL;
    size_t lcap = 0;
    for (size_t i = 0; i < m; i++) {
        struct trace *t = &ts[ev[i].trace];
        if (ev[i].kind != EV_CALL) {
            put_marker(&o, t, pids[ev[i].trace], &ev[i]);
            continue;
        }
        const struct call_rec *r = &t->recs[ev[i].rec];
        json_t *args;
        if (r->part >= CALLS_PREV) {
            args = calls_line(t, r);
        } else {
            int fi = ev[i].trace * 2 + (r->part && t->prev_file);
            FILE **in = &files[fi];
            if (!*in && !(*in = fopen(fi & 1 ? t->prev_file : t->file, "r"))) continue;
            if (at[fi] != r->offset && fseek(*in, r->offset, SEEK_SET)) continue;
            ssize_t got = getline(&line, &lcap, *in);
            at[fi] = got > 0 ? r->offset + got : -1;
            if (got <= 0) continue;
            args = json_loads(line, 0, NULL);
        }
        if (!args) continue;
        char lib[32], api[128];
        plain(lib, sizeof lib, jstr(args, "lib"));
        plain(api, sizeof api, r->api);
        json_object_del(args, "type"), json_object_del(args, "ts_ns"), json_object_del(args, "dur_ns");
        json_object_del(args, "tid"), json_object_del(args, "api");
        int failed = result_is_failure(r->api, lib, r->result);
        if (failed) json_object_set_new(args, "failed", json_true());
        /* Written by hand, not packed and dumped: a million of these is the whole cost. */
        char *a = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
        long long d = ev[i].t_ns - o.base;
        if (d < 0) d = 0;
        fprintf(f, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,"
                   "\"pid\":%lld,\"tid\":%d%s,\"args\":%s}", o.first ? "" : ",", api, lib, d / 1000, d % 1000,
                r->dur_ns / 1000, r->dur_ns % 1000, (long long)pids[ev[i].trace], r->tid,
                failed ? ",\"cname\":\"terrible\"" : "", a ? a : "{}");
        o.first = 0;
        free(a);
        if (failed) {
            char name[256];
            snprintf(name, sizeof name, "FAILED %s: %s", r->api, *jstr(args, "result_name") ? jstr(args, "result_name") : "?");
            json_t *e = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:s}", "name", name, "cat", "failure", "ph", "i", "ts",
                                  us(&o, ev[i].t_ns), "pid", pids[ev[i].trace], "tid", (json_int_t)r->tid, "s", "t", "cname",
                                  "terrible");
            put_event(&o, e);
            json_decref(e);
        }
        json_decref(args);
    }
    free(line);
    for (int k = 0; k < n * 2; k++)
        if (files[k]) fclose(files[k]);
    fputs("\n],\"otherData\":{\"source\":\"cudashim\"}}\n", f);
    if (out) fclose(f);
    free(files), free(at), free(pids), free(ev);
    for (int k = 0; k < n; k++) trace_free(&ts[k]);
    free(ts);
    return bad ? EXIT_BAD_TRACE : EXIT_CLEAN;
}
