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
#include "strtab.h"

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

/* A trace's series, [[metric, extra labels, value], ...], under its own labels (base). */
static void add(json_t *series, int m, const char *extra, long long v)
{
    json_array_append_new(series, json_pack("[s, s, I]", metrics[m].name, extra, (json_int_t)v));
}

/* label="value", for an extra label */
static void kv(char *out, size_t cap, const char *name, const char *value)
{
    char v[512];
    put_value(v, sizeof v, value);
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "%s%s=\"%s\"", n ? "," : "", name, v);
}

json_t *prometheus_series(const struct trace *t)
{
    char base[1024] = "", extra[1024];
    json_t *series = json_array();
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
    add(series, M_PROCESS, extra, 1);
    size_t i;
    json_t *e;
    json_array_foreach(t->findings, i, e) {
        extra[0] = 0;
        kv(extra, sizeof extra, "id", jstr(e, "id"));
        kv(extra, sizeof extra, "severity", jstr(e, "severity"));
        add(series, M_FINDING, extra, 1);
    }
    json_array_foreach(t->libraries, i, e) {
        extra[0] = 0;
        const char *kind = jstr(e, "kind");
        if (!strcmp(kind, "driver")) {
            kv(extra, sizeof extra, "version", *jstr(e, "file_version") ? jstr(e, "file_version") : "unknown");
            kv(extra, sizeof extra, "cuda", *jstr(e, "version") ? jstr(e, "version") : "unknown");
            add(series, M_DRIVER, extra, 1);
            continue;
        }
        kv(extra, sizeof extra, "kind", kind);
        kv(extra, sizeof extra, "soname", *jstr(e, "soname") ? jstr(e, "soname") : jstr(e, "name"));
        kv(extra, sizeof extra, "version", *jstr(e, "version") ? jstr(e, "version") : "unknown");
        add(series, M_LIBRARY, extra, 1);
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
        add(series, M_FAILED, extra, json_integer_value(count));
    }
    if (t->crash) {
        extra[0] = 0;
        kv(extra, sizeof extra, "signal", jstr(t->crash, "signal_name"));
        add(series, M_CRASH, extra, 1);
    }
    if (json_array_size(t->hangs)) add(series, M_HANG, "", (long long)json_array_size(t->hangs));
    return json_pack("{s:s, s:o}", "base", base, "series", series);
}

/* The series of many traces: a label set's values add up (processes of one host without a
 * rank). Label sets are interned, a series is three numbers: 131,072 ranks' metrics in tens of
 * megabytes, in the order they were first seen. */
struct series { uint32_t base, extra, metric; long long value; };
static struct {
    struct strtab bases, extras;
    struct series *s;
    uint32_t n, cap, *slot, nslots;  /* slot: index + 1, 0 when empty */
} all;

static uint32_t *slot_of(uint32_t metric, uint32_t base, uint32_t extra)
{
    uint32_t key[3] = { metric, base, extra }, mask = all.nslots - 1;
    uint32_t i = (uint32_t)strtab_hash(key, sizeof key) & mask;
    for (; all.slot[i]; i = (i + 1) & mask) {
        const struct series *x = &all.s[all.slot[i] - 1];
        if (x->metric == metric && x->base == base && x->extra == extra) break;
    }
    return &all.slot[i];
}

static void add_series(uint32_t metric, const char *base, const char *extra, long long v)
{
    if ((all.n + 1) * 2 > all.nslots) {
        free(all.slot);
        all.nslots = all.nslots ? all.nslots * 2 : 4096;
        if (!(all.slot = calloc(all.nslots, sizeof *all.slot))) abort();
        for (uint32_t k = 0; k < all.n; k++) *slot_of(all.s[k].metric, all.s[k].base, all.s[k].extra) = k + 1;
    }
    uint32_t b = strtab_id(&all.bases, base), e = strtab_id(&all.extras, extra), *at = slot_of(metric, b, e);
    if (*at) { all.s[*at - 1].value += v; return; }
    if (all.n == all.cap && !(all.s = realloc(all.s, sizeof *all.s * (all.cap = all.cap ? all.cap * 2 : 4096)))) abort();
    all.s[all.n] = (struct series){ b, e, metric, v };
    *at = ++all.n;
}

void prometheus_add(json_t *digest)
{
    json_t *p = json_object_get(digest, "prometheus"), *x;
    size_t i;
    json_array_foreach(json_object_get(p, "series"), i, x) {
        const char *name = json_string_value(json_array_get(x, 0)), *extra = json_string_value(json_array_get(x, 1));
        for (uint32_t m = 0; name && extra && m < M_COUNT; m++)
            if (!strcmp(metrics[m].name, name)) add_series(m, jstr(p, "base"), extra, json_integer_value(json_array_get(x, 2)));
    }
}

int prometheus_write(const char *out, int bad)
{
    char tmp[4096];
    FILE *f = stdout;
    if (out) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%d", out, (int)getpid());  /* same directory: rename is atomic */
        if (!(f = fopen(tmp, "w"))) { perror(tmp); return EXIT_BAD_TRACE; }
    }
    for (uint32_t m = 0; m < M_COUNT; m++) {
        int any = 0;
        for (uint32_t k = 0; k < all.n && !any; k++) any = all.s[k].metric == m;
        if (!any && m != M_PROCESS) continue;
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", metrics[m].name, metrics[m].help, metrics[m].name, metrics[m].type);
        for (uint32_t k = 0; k < all.n; k++) {
            if (all.s[k].metric != m) continue;
            const char *base = strtab_str(&all.bases, all.s[k].base), *extra = strtab_str(&all.extras, all.s[k].extra);
            int labels = *base || *extra;
            fprintf(f, "%s%s%s%s%s%s %lld\n", metrics[m].name, labels ? "{" : "", base, *base && *extra ? "," : "", extra,
                    labels ? "}" : "", all.s[k].value);
        }
    }
    strtab_free(&all.bases), strtab_free(&all.extras), free(all.s), free(all.slot);
    memset(&all, 0, sizeof all);
    if (out) {
        int failed = fflush(f) != 0 || ferror(f);
        failed |= fclose(f) != 0;
        if (failed || rename(tmp, out)) { perror(out); unlink(tmp); return EXIT_BAD_TRACE; }
    }
    return bad ? EXIT_BAD_TRACE : EXIT_CLEAN;
}
