/* A trace's digest: the little that a report over many traces needs of each one (who it is,
 * its stack, how it ended, its errors, its last hang's communicators, its metrics), as one
 * small JSON object. Reports over a job read each trace, keep its digest and drop the trace;
 * a node's summary file (summary.c) is a list of these. docs/trace-format.md describes it. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int crash_survived(const struct trace *t)
{
    return t->crash && t->summary && jint(t->handlers, "survived_crash_records", 0) > 0;
}

/* How a trace ended: crash, hang, the findings' ids and the failing calls, as one comparable key. */
static char *outcome_key(const struct trace *t, json_t *findings, json_t *groups)
{
    json_t *k = json_pack("{s:b, s:b, s:[], s:[]}", "crash", t->crash != NULL, "hang", json_array_size(t->hangs) > 0,
                          "findings", "calls");
    size_t i;
    json_t *x;
    json_array_foreach(findings, i, x)
        json_array_append_new(json_object_get(k, "findings"), json_sprintf("%s %s", jstr(x, "id"), jstr(x, "severity")));
    json_array_foreach(groups, i, x)
        json_array_append_new(json_object_get(k, "calls"), json_sprintf("%s=%s", jstr(x, "api"), jstr(x, "result_name")));
    char *s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(k);
    return s;
}

/* The last hang report's communicators, as stuck.c compares them across ranks. */
static json_t *hang_digest(const struct trace *t)
{
    size_t k = json_array_size(t->hangs), i;
    if (!k) return NULL;
    json_t *hang = json_array_get(t->hangs, k - 1), *entry, *sec = json_object_get(hang, "seconds");
    json_t *out = json_pack("{s:s, s:f, s:[]}", "inside", jstr(hang, "inside"), "seconds",
                            json_is_number(sec) ? json_number_value(sec) : 0.0, "nccl");
    json_array_foreach(json_object_get(hang, "nccl"), i, entry) {
        const char *hash = jstr(entry, "unique_id_hash");
        if (!*hash) continue;
        json_t *ops = json_object_get(entry, "last_ops");
        json_t *last = json_array_size(ops) ? json_array_get(ops, json_array_size(ops) - 1) : NULL;
        json_array_append_new(json_object_get(out, "nccl"),
                              json_pack("{s:s, s:I, s:I, s:I, s:s, s:I, s:s}", "hash", hash, "nranks",
                                        (json_int_t)jint(entry, "nranks", 0), "rank", (json_int_t)jint(entry, "rank", -1),
                                        "ops", (json_int_t)jint(entry, "ops_total", 0), "api", last ? jstr(last, "api") : "",
                                        "count", (json_int_t)(last ? jint(last, "count", 0) : 0), "datatype",
                                        last ? jstr(last, "datatype") : ""));
    }
    return out;
}

json_t *trace_digest(const struct trace *t, int metrics)
{
    json_t *findings = report_findings(t), *groups = report_failures(t);
    int errors = 0;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) errors += !strcmp(jstr(f, "severity"), "error");
    errors += (t->crash && !crash_survived(t)) || json_array_size(t->hangs) > 0;
    char *outcome = outcome_key(t, findings, groups);
    json_t *d = json_pack("{s:s, s:s, s:I, s:o, s:s, s:i, s:I, s:I, s:b}", "file", t->file, "host", jstr(t->header, "host"),
                          "pid", (json_int_t)jint(t->header, "pid", 0), "facts", trace_facts(t), "outcome", outcome,
                          "errors", errors, "findings", (json_int_t)json_array_size(findings), "failing",
                          (json_int_t)json_array_size(groups), "crash", t->crash != NULL);
    json_t *rank = json_object_get(t->header, "rank");
    if (json_is_string(rank)) json_object_set(d, "rank", rank);
    json_t *hang = hang_digest(t);
    if (hang) json_object_set_new(d, "hang", hang);
    if (metrics) json_object_set_new(d, "prometheus", prometheus_series(t));
    free(outcome);
    json_decref(findings), json_decref(groups);
    return d;
}
