/* Many traces at once (the ranks of a job, the hosts of a cluster): group them by their stack
 * (what each loaded: libraries, versions, paths, kernel module) and by how they ended (crash,
 * hang, findings, failing calls), so that 2048 alike ranks read as one line and the odd ones out
 * come first. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What a trace's stack is made of, as "what" -> "value" (e.g. "cudnn version" -> "9.19.0"). */
json_t *trace_facts(const struct trace *t)
{
    json_t *facts = json_object();
    size_t i;
    json_t *l;
    json_array_foreach(t->libraries, i, l) {
        const char *kind = jstr(l, "kind");
        if (!strcmp(kind, "framework") || !strcmp(kind, "cudnn-sublibrary")) continue;
        char what[128], v[160];
        snprintf(what, sizeof what, "%s version", kind);
        snprintf(v, sizeof v, "%s%s%s", jstr(l, "version"), *jstr(l, "file_version") ? " / " : "", jstr(l, "file_version"));
        if (*jstr(l, "version") || *jstr(l, "file_version")) json_object_set_new(facts, what, json_string(v));
        snprintf(what, sizeof what, "%s path", kind);
        if (*jstr(l, "path")) json_object_set_new(facts, what, json_string(jstr(l, "path")));
    }
    json_t *s;
    json_array_foreach(t->systems, i, s)
        if (*jstr(s, "kernel_module")) json_object_set_new(facts, "kernel module", json_string(jstr(s, "kernel_module")));
    /* The environment that decides loading and NCCL's choices; not the shim's own variables, nor
     * CUDA_VISIBLE_DEVICES (each rank has its own GPU). */
    const char *name;
    json_t *v;
    json_object_foreach(json_object_get(t->header, "env"), name, v) {
        if (!strncmp(name, "CUDASHIM_", 9) || !strcmp(name, "CUDA_VISIBLE_DEVICES") || !json_is_string(v)) continue;
        char what[128];
        snprintf(what, sizeof what, "%s", name);
        json_object_set_new(facts, what, json_string(json_string_value(v)));
    }
    return facts;
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

static int rank_of(const struct trace *t)
{
    json_t *r = json_object_get(t->header, "rank");
    if (!json_is_string(r)) return -1;
    char *end;
    long v = strtol(json_string_value(r), &end, 10);
    return *end || v < 0 ? -1 : (int)v;
}

static int cmp_int(const void *a, const void *b) { int x = *(const int *)a, y = *(const int *)b; return x < y ? -1 : x > y; }

/* "ranks 0-811, 813-2047 (2047)", or the labels of the first few processes and a count. */
void who_text(const struct trace *ts, const int *members, int count, char *out, size_t cap)
{
    int *ranks = malloc(sizeof *ranks * (size_t)(count ? count : 1)), all_ranked = 1;
    for (int i = 0; i < count; i++)
        if ((ranks[i] = rank_of(&ts[members[i]])) < 0) all_ranked = 0;
    size_t n = 0;
    out[0] = 0;
#define PUT(...) do { int w_ = snprintf(out + n, cap - n, __VA_ARGS__); if (w_ > 0) n += (size_t)w_ < cap - n ? (size_t)w_ : cap - n - 1; } while (0)
    if (all_ranked) {
        qsort(ranks, (size_t)count, sizeof *ranks, cmp_int);
        PUT("%s ", count == 1 ? "rank" : "ranks");
        int pieces = 0;
        for (int i = 0; i < count;) {
            int j = i;
            while (j + 1 < count && ranks[j + 1] <= ranks[j] + 1) j++;
            if (pieces == 12) { PUT(", ..."); break; }
            PUT("%s%d", pieces ? ", " : "", ranks[i]);
            if (ranks[j] != ranks[i]) PUT("-%d", ranks[j]);
            pieces++;
            i = j + 1;
        }
    } else {
        for (int i = 0; i < count && i < 4; i++) PUT("%s%s", i ? ", " : "", trace_label(&ts[members[i]]));
        if (count > 4) PUT(", ...");
    }
    PUT(" (%d)", count);
#undef PUT
    free(ranks);
}

struct group { char *key; int *members, count; };

#define SHOWN_IN_FULL 8  /* ways of ending shown in full; the rest one line each */

static int cmp_group(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    return x->count != y->count ? (x->count > y->count ? -1 : 1) : (x->members[0] < y->members[0] ? -1 : 1);
}

/* Traces grouped by key, biggest group first. */
static struct group *group_by(char **keys, int n, int *ngroups)
{
    struct group *g = calloc((size_t)n, sizeof *g);
    json_t *index = json_object();
    int ng = 0;
    for (int k = 0; k < n; k++) {
        json_t *at = json_object_get(index, keys[k]);
        int gi;
        if (at) gi = (int)json_integer_value(at);
        else {
            gi = ng++;
            json_object_set_new(index, keys[k], json_integer(gi));
            g[gi].key = keys[k];
            g[gi].members = malloc(sizeof(int) * (size_t)n);
        }
        g[gi].members[g[gi].count++] = k;
    }
    json_decref(index);
    qsort(g, (size_t)ng, sizeof *g, cmp_group);
    *ngroups = ng;
    return g;
}

static void free_groups(struct group *g, int ng)
{
    for (int i = 0; i < ng; i++) free(g[i].members);
    free(g);
}

static int loaded_driver(const struct trace *t)
{
    size_t i;
    json_t *l;
    json_array_foreach(t->libraries, i, l)
        if (!strcmp(jstr(l, "kind"), "driver") && *jstr(l, "path")) return 1;
    return 0;
}

/* The traces of processes that never loaded the CUDA driver (a launcher such as torchrun or
 * mp.spawn's parent, a data loader) while others did: not ranks, so not compared (they would all
 * read as "no driver"). NULL when there are none; else "who" of them. */
char *driverless_who(const struct trace *ts, int n, int *count)
{
    int *members = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)), m = 0;
    for (int k = 0; k < n; k++)
        if (!loaded_driver(&ts[k])) members[m++] = k;
    *count = m;
    char *out = NULL;
    if (m && m < n) {
        out = malloc(1024);
        who_text(ts, members, m, out, 1024);
    }
    free(members);
    return out;
}

/* The stacks, the odd ones out first, each with what differs from the most common one:
 * [{"who": "ranks 812, 1907 (2)", "differs": "driver version 12.2 (elsewhere: 13.0)"}, ...,
 *  {"who": "ranks 0-811, ... (2046)", "differs": ""}]; one element when all are alike. The
 * processes that never loaded the driver are left out (driverless_who). */
json_t *stack_groups(const struct trace *ts, int n)
{
    if (n < 1) return json_array();
    json_t **facts = malloc(sizeof *facts * (size_t)n);
    char **keys = malloc(sizeof *keys * (size_t)n);
    int *at = malloc(sizeof(int) * (size_t)n), m = 0;  /* the traces compared: those that loaded the driver */
    int nodriver;
    free(driverless_who(ts, n, &nodriver));
    for (int k = 0; k < n; k++) {
        if (nodriver && nodriver < n && !loaded_driver(&ts[k])) continue;
        facts[m] = trace_facts(&ts[k]);
        keys[m] = json_dumps(facts[m], JSON_COMPACT | JSON_SORT_KEYS);
        at[m++] = k;
    }
    int ng;
    struct group *g = group_by(keys, m, &ng);
    json_t *out = json_array();
    json_t *base = facts[g[0].members[0]];
    char who[1024], line[4096];
    for (int i = 1; i <= ng; i++) {
        int gi = i < ng ? i : 0;  /* the most common last */
        json_t *mine = facts[g[gi].members[0]];
        size_t len = 0;
        line[0] = 0;
        const char *what;
        json_t *v;
        json_object_foreach(mine, what, v) {
            const char *theirs = json_string_value(json_object_get(base, what));
            if (theirs && !strcmp(theirs, json_string_value(v))) continue;
            int w = snprintf(line + len, sizeof line - len, "%s%s %s (elsewhere: %s)", len ? "; " : "", what,
                             json_string_value(v), theirs ? theirs : "none");
            if (w < 0 || (size_t)w >= sizeof line - len) break;
            len += (size_t)w;
        }
        json_object_foreach(base, what, v) {
            if (json_object_get(mine, what)) continue;
            int w = snprintf(line + len, sizeof line - len, "%sno %s (elsewhere: %s)", len ? "; " : "", what,
                             json_string_value(v));
            if (w < 0 || (size_t)w >= sizeof line - len) break;
            len += (size_t)w;
        }
        for (int j = 0; j < g[gi].count; j++) g[gi].members[j] = at[g[gi].members[j]];  /* trace indices */
        who_text(ts, g[gi].members, g[gi].count, who, sizeof who);
        json_array_append_new(out, json_pack("{s:s, s:s, s:i}", "who", who, "differs", line, "count", g[gi].count));
    }
    free_groups(g, ng);
    for (int k = 0; k < m; k++) { json_decref(facts[k]); free(keys[k]); }
    free(facts), free(keys), free(at);
    return out;
}

/* The ways the traces ended (same stack, crash, hang, findings, failing calls), most common
 * first: [{"who": ..., "first": index of the first trace, "count": N}, ...]. */
json_t *ending_groups(const struct trace *ts, int n, json_t **findings, json_t **groups)
{
    char **keys = malloc(sizeof *keys * (size_t)n);
    for (int k = 0; k < n; k++) {
        json_t *f = trace_facts(&ts[k]);
        char *stack = json_dumps(f, JSON_COMPACT | JSON_SORT_KEYS), *o = outcome_key(&ts[k], findings[k], groups[k]);
        size_t len = strlen(stack) + strlen(o) + 2;
        keys[k] = malloc(len);
        snprintf(keys[k], len, "%s\n%s", stack, o);
        free(stack), free(o);
        json_decref(f);
    }
    int ng;
    struct group *g = group_by(keys, n, &ng);
    json_t *out = json_array();
    char who[1024];
    for (int i = 0; i < ng; i++) {
        who_text(ts, g[i].members, g[i].count, who, sizeof who);
        json_array_append_new(out, json_pack("{s:s, s:i, s:i}", "who", who, "first", g[i].members[0], "count", g[i].count));
    }
    free_groups(g, ng);
    for (int k = 0; k < n; k++) free(keys[k]);
    free(keys);
    return out;
}

/* Several traces as text: the stacks compared first, then one full report per way of ending,
 * the first few in full. */
void report_many(struct trace *ts, int n, json_t **findings, json_t **groups,
                 void (*print_one)(const struct trace *, json_t *, json_t *))
{
    char title[64], line[6000];
    snprintf(title, sizeof title, "ACROSS %d TRACES", n);
    rule(stdout, title);
    json_t *stacks = stack_groups(ts, n);
    size_t i;
    json_t *x;
    int nodriver;
    char *launchers = driverless_who(ts, n, &nodriver);
    if (launchers) {
        snprintf(line, sizeof line, "%s never loaded the CUDA driver (a launcher such as torchrun, or a helper "
                 "process): not compared", launchers);
        wrap(stdout, "  ", line, CLI_WIDTH);
        free(launchers);
    }
    if (json_array_size(stacks) == 1) printf("  every trace that used CUDA loaded the same driver, libraries and versions\n");
    else {
        printf("  %s%zu different stacks: a partially upgraded cluster looks like this. The odd ones out first:%s\n",
               c_red(), json_array_size(stacks), c_reset());
        json_array_foreach(stacks, i, x) {
            if (*jstr(x, "differs")) snprintf(line, sizeof line, "%s: %s", jstr(x, "who"), jstr(x, "differs"));
            else snprintf(line, sizeof line, "%s: the most common stack", jstr(x, "who"));
            wrap(stdout, "  ", line, CLI_WIDTH);
        }
    }
    json_decref(stacks);
    json_t *stuck = stuck_collectives(ts, n);
    print_stuck_collectives(stuck);
    json_decref(stuck);
    json_t *ends = ending_groups(ts, n, findings, groups);
    json_array_foreach(ends, i, x) {
        int first = (int)jint(x, "first", 0);
        if (i == SHOWN_IN_FULL) {
            printf("\n");
            rule(stdout, "NOT SHOWN IN FULL");
        }
        if (i >= SHOWN_IN_FULL) {
            snprintf(line, sizeof line, "%s: %zu findings, %zu kinds of failing call%s (cudashim report %s)", jstr(x, "who"),
                     json_array_size(findings[first]), json_array_size(groups[first]),
                     ts[first].crash ? ", a crash" : "", ts[first].file);
            wrap(stdout, "  ", line, CLI_WIDTH);
            continue;
        }
        printf("\n%s\n\n", "----------------------------------------------------------------------------------------------------");
        if (jint(x, "count", 1) > 1) {
            snprintf(line, sizeof line, "%s loaded the same stack and ended the same way; the first of them:", jstr(x, "who"));
            wrap(stdout, "", line, CLI_WIDTH);
        }
        print_one(&ts[first], findings[first], groups[first]);
    }
    json_decref(ends);
}
