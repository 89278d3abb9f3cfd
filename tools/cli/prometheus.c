/* cudashim export --prometheus: the traces as Prometheus metrics in the text exposition format,
 * for node_exporter's textfile collector (docs/prometheus.md). Labels are bounded: host, job
 * (CUDASHIM_JOB in the trace's environment) and rank where the trace knows them, and the values
 * of a finite vocabulary (finding ids, severities, library kinds and versions, API and result
 * names, signal names); never a path or a pid. Processes of one host without a rank add up: a
 * counter is their sum, an info metric the number of processes that have it. Written atomically
 * (a temporary file, then rename) as the textfile collector requires. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const struct metric { const char *name, *type, *help; } metrics[] = {
#define CS_METRIC(id, name, type, help) { name, type, help },
#include "../../shim/lifecycle/metrics_table.h"
#undef CS_METRIC
};
enum {
#define CS_METRIC(id, name, type, help) M_##id,
#include "../../shim/lifecycle/metrics_table.h"
#undef CS_METRIC
    M_COUNT
};

/* One series per metric and label set: json object "labels" -> value, per metric. */
static json_t *series[M_COUNT];

/* A label value as the format wants it: backslash, quote and newline escaped. */
static void put_value(char *out, size_t cap, const char *v)
{
    size_t n = 0;
    for (; v && *v && n + 3 < cap; v++) {
        if (*v == '\\' || *v == '"') out[n++] = '\\', out[n++] = *v;
        else if (*v == '\n') out[n++] = '\\', out[n++] = 'n';
        else out[n++] = *v;
    }
    out[n] = 0;
}

static void add(int m, const char *base, const char *extra, long long v)
{
    char key[2048];
    snprintf(key, sizeof key, "%s%s%s", base, *base && *extra ? "," : "", extra);
    json_object_set_new(series[m], key, json_integer(jint(series[m], key, 0) + v));
}

/* label="value", for an extra label */
static void kv(char *out, size_t cap, const char *name, const char *value)
{
    char v[512];
    put_value(v, sizeof v, value);
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "%s%s=\"%s\"", n ? "," : "", name, v);
}

static void export_trace(const struct trace *t)
{
    char base[1024] = "", extra[1024];
    const char *host = jstr(t->header, "host");
    json_t *env = json_object_get(t->header, "env");
    const char *job = json_string_value(json_object_get(env, "CUDASHIM_JOB"));
    json_t *rank = json_object_get(t->header, "rank");
    if (*host) kv(base, sizeof base, "host", host);
    if (job && *job) kv(base, sizeof base, "job", job);
    if (json_is_string(rank) && *json_string_value(rank)) kv(base, sizeof base, "rank", json_string_value(rank));
    else if (json_is_integer(rank)) {
        char r[24];
        snprintf(r, sizeof r, "%lld", (long long)json_integer_value(rank));
        kv(base, sizeof base, "rank", r);
    }
    extra[0] = 0;
    kv(extra, sizeof extra, "shim_version", jstr(t->header, "shim_version"));
    kv(extra, sizeof extra, "mode", jstr(t->header, "mode"));
    add(M_PROCESS, base, extra, 1);
    size_t i;
    json_t *e;
    json_array_foreach(t->findings, i, e) {
        extra[0] = 0;
        kv(extra, sizeof extra, "id", jstr(e, "id"));
        kv(extra, sizeof extra, "severity", jstr(e, "severity"));
        add(M_FINDING, base, extra, 1);
    }
    json_array_foreach(t->libraries, i, e) {
        extra[0] = 0;
        const char *kind = jstr(e, "kind");
        if (!strcmp(kind, "driver")) {
            kv(extra, sizeof extra, "version", *jstr(e, "file_version") ? jstr(e, "file_version") : "unknown");
            kv(extra, sizeof extra, "cuda", *jstr(e, "version") ? jstr(e, "version") : "unknown");
            add(M_DRIVER, base, extra, 1);
            continue;
        }
        kv(extra, sizeof extra, "kind", kind);
        kv(extra, sizeof extra, "soname", *jstr(e, "soname") ? jstr(e, "soname") : jstr(e, "name"));
        kv(extra, sizeof extra, "version", *jstr(e, "version") ? jstr(e, "version") : "unknown");
        add(M_LIBRARY, base, extra, 1);
    }
    const char *key;
    json_t *count;
    json_object_foreach(t->failure_counts, key, count) {  /* "API<tab>result" */
        char api[256];
        const char *tab = strchr(key, '\t');
        snprintf(api, sizeof api, "%.*s", tab ? (int)(tab - key) : (int)strlen(key), key);
        extra[0] = 0;
        kv(extra, sizeof extra, "api", api);
        kv(extra, sizeof extra, "result", tab ? tab + 1 : "");
        add(M_FAILED, base, extra, json_integer_value(count));
    }
    if (t->crash) {
        extra[0] = 0;
        kv(extra, sizeof extra, "signal", jstr(t->crash, "signal_name"));
        add(M_CRASH, base, extra, 1);
    }
    if (json_array_size(t->hangs)) add(M_HANG, base, "", (long long)json_array_size(t->hangs));
}

int export_prometheus(struct trace *ts, int n, const char *out, int bad)
{
    for (int m = 0; m < M_COUNT; m++) series[m] = json_object();
    for (int k = 0; k < n; k++) export_trace(&ts[k]);
    char tmp[4096];
    FILE *f = stdout;
    if (out) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", out, (int)getpid());  /* same directory: rename is atomic */
        if (!(f = fopen(tmp, "w"))) { perror(tmp); return EXIT_BAD_TRACE; }
    }
    for (int m = 0; m < M_COUNT; m++) {
        if (!json_object_size(series[m]) && m != M_PROCESS) continue;
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", metrics[m].name, metrics[m].help, metrics[m].name, metrics[m].type);
        const char *key;
        json_t *v;
        json_object_foreach(series[m], key, v)
            fprintf(f, "%s%s%s%s %lld\n", metrics[m].name, *key ? "{" : "", key, *key ? "}" : "", (long long)json_integer_value(v));
        json_decref(series[m]);
    }
    if (out) {
        int failed = fflush(f) != 0 || ferror(f);
        failed |= fclose(f) != 0;
        if (failed || rename(tmp, out)) { perror(out); unlink(tmp); return EXIT_BAD_TRACE; }
    }
    return bad ? EXIT_BAD_TRACE : EXIT_CLEAN;
}
