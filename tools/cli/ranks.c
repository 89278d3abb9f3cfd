/* Many traces at once (the ranks of a job, the hosts of a cluster): group them by their stack
 * (what each loaded: libraries, versions, paths, kernel module) and by how they ended (crash,
 * hang, findings, failing calls), so that 2048 alike ranks read as one line and the odd ones out
 * come first. */
#include <stdlib.h>
#include <string.h>

#include "job.h"

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

static int cmp_int(const void *a, const void *b) { int x = *(const int *)a, y = *(const int *)b; return x < y ? -1 : x > y; }

/* "ranks 0-811, 813-2047 (2047)", or the labels of the first few processes and a count. */
void who_text(const struct job *j, const int *members, int count, char *out, size_t cap)
{
    int *ranks = malloc(sizeof *ranks * (size_t)(count ? count : 1)), all_ranked = 1;
    for (int i = 0; i < count; i++)
        if ((ranks[i] = j->traces[members[i]].rank) < 0) all_ranked = 0;
    size_t n = 0;
    out[0] = 0;
#define PUT(...) do { int w_ = snprintf(out + n, cap - n, __VA_ARGS__); if (w_ > 0) n += (size_t)w_ < cap - n ? (size_t)w_ : cap - n - 1; } while (0)
    if (all_ranked) {
        qsort(ranks, (size_t)count, sizeof *ranks, cmp_int);
        PUT("%s ", count == 1 ? "rank" : "ranks");
        int pieces = 0;
        for (int i = 0; i < count;) {
            int k = i;
            while (k + 1 < count && ranks[k + 1] <= ranks[k] + 1) k++;
            if (pieces == 12) { PUT(", ..."); break; }
            PUT("%s%d", pieces ? ", " : "", ranks[i]);
            if (ranks[k] != ranks[i]) PUT("-%d", ranks[k]);
            pieces++;
            i = k + 1;
        }
    } else {
        char label[512];
        for (int i = 0; i < count && i < 4; i++) {
            job_label(j, members[i], label, sizeof label);
            PUT("%s%s", i ? ", " : "", label);
        }
        if (count > 4) PUT(", ...");
    }
    PUT(" (%d)", count);
#undef PUT
    free(ranks);
}

#define SHOWN_IN_FULL 8  /* ways of ending shown in full; the rest one line each */

static int bigger_first(const void *a, const void *b)
{
    const struct job_group *x = *(const struct job_group *const *)a, *y = *(const struct job_group *const *)b;
    return x->count != y->count ? (x->count > y->count ? -1 : 1) : (x->members[0] < y->members[0] ? -1 : 1);
}

/* Groups by size, the biggest first; alike sizes in the order they were first seen. */
static const struct job_group *const *by_size(const struct job_group *const *g, int n)
{
    const struct job_group **s = malloc(sizeof *s * (size_t)(n ? n : 1));
    memcpy(s, g, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, bigger_first);
    return (const struct job_group *const *)s;
}

/* The traces of processes that never loaded the CUDA driver (a launcher such as torchrun or
 * mp.spawn's parent, a data loader) while others did: not ranks, so not compared (they would all
 * read as "no driver"). NULL when there are none; else "who" of them. */
char *driverless_who(const struct job *j, int *count)
{
    int *members = malloc(sizeof(int) * (size_t)(j->n > 0 ? j->n : 1)), m = 0;
    for (int k = 0; k < j->n; k++)
        if (!j->stacks[j->traces[k].stack].driver) members[m++] = k;
    *count = m;
    char *out = NULL;
    if (m && m < j->n) {
        out = malloc(1024);
        who_text(j, members, m, out, 1024);
    }
    free(members);
    return out;
}

/* The stacks, the odd ones out first, each with what differs from the most common one:
 * [{"who": "ranks 812, 1907 (2)", "differs": "driver version 12.2 (elsewhere: 13.0)"}, ...,
 *  {"who": "ranks 0-811, ... (2046)", "differs": ""}]; one element when all are alike. The
 * processes that never loaded the driver are left out (driverless_who). */
json_t *stack_groups(const struct job *j)
{
    json_t *out = json_array();
    if (j->n < 1) return out;
    int nodriver, ns = 0;
    free(driverless_who(j, &nodriver));
    const struct job_group **g = malloc(sizeof *g * j->stack_keys.count);
    const json_t **facts = malloc(sizeof *facts * j->stack_keys.count);
    for (uint32_t i = 0; i < j->stack_keys.count; i++) {
        if (nodriver && nodriver < j->n && !j->stacks[i].driver) continue;
        g[ns++] = &j->stacks[i].g;
    }
    const struct job_group *const *sorted = by_size(g, ns);
    for (int i = 0; i < ns; i++) facts[i] = ((const struct job_stack *)sorted[i])->facts;  /* g is the first member */
    const json_t *base = facts[0];
    char who[1024], line[4096];
    for (int i = 1; i <= ns; i++) {
        int gi = i < ns ? i : 0;  /* the most common last */
        const json_t *mine = facts[gi];
        size_t len = 0;
        line[0] = 0;
        const char *what;
        json_t *v;
        json_object_foreach((json_t *)mine, what, v) {
            const char *theirs = json_string_value(json_object_get(base, what));
            if (theirs && !strcmp(theirs, json_string_value(v))) continue;
            int w = snprintf(line + len, sizeof line - len, "%s%s %s (elsewhere: %s)", len ? "; " : "", what,
                             json_string_value(v), theirs ? theirs : "none");
            if (w < 0 || (size_t)w >= sizeof line - len) break;
            len += (size_t)w;
        }
        json_object_foreach((json_t *)base, what, v) {
            if (json_object_get(mine, what)) continue;
            int w = snprintf(line + len, sizeof line - len, "%sno %s (elsewhere: %s)", len ? "; " : "", what,
                             json_string_value(v));
            if (w < 0 || (size_t)w >= sizeof line - len) break;
            len += (size_t)w;
        }
        who_text(j, sorted[gi]->members, sorted[gi]->count, who, sizeof who);
        json_array_append_new(out, json_pack("{s:s, s:s, s:i}", "who", who, "differs", line, "count", sorted[gi]->count));
    }
    free((void *)sorted), free(g), free(facts);
    return out;
}

/* The ways the traces ended (same stack, crash, hang, findings, failing calls), most common
 * first: [{"who": ..., "first": index of the first trace, "count": N, "findings", "failing",
 * "crash": of the first}, ...]. */
json_t *ending_groups(const struct job *j)
{
    int ne = (int)j->ending_keys.count;
    const struct job_group **g = malloc(sizeof *g * (size_t)(ne ? ne : 1));
    for (int i = 0; i < ne; i++) g[i] = &j->endings[i].g;
    const struct job_group *const *sorted = by_size(g, ne);
    json_t *out = json_array();
    char who[1024];
    for (int i = 0; i < ne; i++) {
        const struct job_ending *e = (const struct job_ending *)sorted[i];
        who_text(j, e->g.members, e->g.count, who, sizeof who);
        json_array_append_new(out, json_pack("{s:s, s:i, s:i, s:i, s:i, s:b}", "who", who, "first", e->g.members[0],
                                             "count", e->g.count, "findings", e->findings, "failing", e->failing,
                                             "crash", e->crash));
    }
    free((void *)sorted), free(g);
    return out;
}

/* What differs between traces: [{"what", "values": [{"value", "traces": [labels]}]}] for each
 * fact with two values or more, in the order first seen (labels only with_labels). A fact's
 * first value is first seen in a stack's first member, so walking the stacks in the order they
 * were first seen gives the order the traces give. */
json_t *job_differences(const struct job *j, int with_labels)
{
    json_t *facts = json_object();  /* what -> value -> [stack indices] */
    for (uint32_t i = 0; i < j->stack_keys.count; i++) {
        const char *what;
        json_t *v;
        json_object_foreach(j->stacks[i].facts, what, v) {
            json_t *byval = json_object_get(facts, what);
            if (!byval) json_object_set_new(facts, what, byval = json_object());
            json_t *in = json_object_get(byval, json_string_value(v));
            if (!in) json_object_set_new(byval, json_string_value(v), in = json_array());
            json_array_append_new(in, json_integer(i));
        }
    }
    json_t *diffs = json_array();
    const char *what;
    json_t *byval;
    int *members = with_labels ? malloc(sizeof *members * (size_t)(j->n ? j->n : 1)) : NULL;
    json_object_foreach(facts, what, byval) {
        if (json_object_size(byval) < 2) continue;
        json_t *vals = json_array();
        const char *v;
        json_t *in;
        json_object_foreach(byval, v, in) {
            json_t *who = json_array();
            size_t x, m = 0;
            json_t *si;
            json_array_foreach(in, x, si) {
                const struct job_group *g = &j->stacks[json_integer_value(si)].g;
                for (int k = 0; with_labels && k < g->count; k++) members[m++] = g->members[k];
            }
            qsort(members, m, sizeof *members, cmp_int);
            for (size_t k = 0; k < m; k++) {
                char label[512];
                job_label(j, members[k], label, sizeof label);
                json_array_append_new(who, json_string(label));
            }
            json_array_append_new(vals, json_pack("{s:s, s:o}", "value", v, "traces", who));
        }
        json_array_append_new(diffs, json_pack("{s:s, s:o}", "what", what, "values", vals));
    }
    free(members);
    json_decref(facts);
    return diffs;
}

/* Several traces as text: the stacks compared first, then one full report per way of ending,
 * the first few in full (each read again). */
void report_many(struct job *j, void (*print_one)(const struct trace *, json_t *, json_t *))
{
    char title[64], line[6000];
    snprintf(title, sizeof title, "ACROSS %d TRACES", j->n);
    rule(stdout, title);
    json_t *stacks = stack_groups(j);
    size_t i;
    json_t *x;
    int nodriver;
    char *launchers = driverless_who(j, &nodriver);
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
    json_t *stuck = stuck_collectives(j);
    print_stuck_collectives(stuck);
    json_decref(stuck);
    json_t *ends = ending_groups(j);
    json_array_foreach(ends, i, x) {
        int first = (int)jint(x, "first", 0);
        if (i == SHOWN_IN_FULL) {
            printf("\n");
            rule(stdout, "NOT SHOWN IN FULL");
        }
        if (i >= SHOWN_IN_FULL) {
            snprintf(line, sizeof line, "%s: %lld findings, %lld kinds of failing call%s (cudashim report %s)", jstr(x, "who"),
                     jint(x, "findings", 0), jint(x, "failing", 0), json_is_true(json_object_get(x, "crash")) ? ", a crash" : "",
                     job_file(j, first));
            wrap(stdout, "  ", line, CLI_WIDTH);
            continue;
        }
        printf("\n%s\n\n", "----------------------------------------------------------------------------------------------------");
        if (jint(x, "count", 1) > 1) {
            snprintf(line, sizeof line, "%s loaded the same stack and ended the same way; the first of them:", jstr(x, "who"));
            wrap(stdout, "", line, CLI_WIDTH);
        }
        struct trace tmp;
        const struct trace *t = job_trace_at(j, first, &tmp);
        if (!t) continue;
        json_t *findings = report_findings(t), *groups = report_failures(t);
        print_one(t, findings, groups);
        json_decref(findings), json_decref(groups);
        job_trace_done(j, t, &tmp);
    }
    json_decref(ends);
}
