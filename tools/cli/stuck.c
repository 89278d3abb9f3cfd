/* A stuck NCCL job, read across its ranks' traces. Each rank's last hang report lists its
 * communicators (matched across ranks by the unique id's hash) and how many operations the rank
 * made on each. The rank that made fewer than its peers is the one they wait for; a rank with no
 * report finished, crashed or left no trace here; ranks at the same count but on different
 * operations are out of step; ranks all in the same operation point at the transport. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct member {
    int trace, rank;
    long long ops, count;
    const char *api, *dtype, *inside;
    double seconds;
};

struct communicator {
    const char *hash;
    long long nranks;
    struct member *m;
    int n;
};

static json_t *last_hang(const struct trace *t)
{
    size_t k = json_array_size(t->hangs);
    return k ? json_array_get(t->hangs, k - 1) : NULL;
}

static struct communicator *find(struct communicator **cs, int *nc, const char *hash, long long nranks)
{
    for (int i = 0; i < *nc; i++)
        if (!strcmp((*cs)[i].hash, hash)) return &(*cs)[i];
    *cs = realloc(*cs, sizeof **cs * (size_t)(*nc + 1));
    (*cs)[*nc] = (struct communicator){ hash, nranks, NULL, 0 };
    return &(*cs)[(*nc)++];
}

static void add_member(struct communicator *c, int trace, json_t *entry, json_t *hang)
{
    json_t *ops = json_object_get(entry, "last_ops");
    json_t *last = json_array_size(ops) ? json_array_get(ops, json_array_size(ops) - 1) : NULL;
    json_t *sec = json_object_get(hang, "seconds");
    c->m = realloc(c->m, sizeof *c->m * (size_t)(c->n + 1));
    c->m[c->n++] = (struct member){ trace, (int)jint(entry, "rank", -1), jint(entry, "ops_total", 0),
                                    last ? jint(last, "count", 0) : 0, last ? jstr(last, "api") : "",
                                    last ? jstr(last, "datatype") : "", jstr(hang, "inside"),
                                    json_is_number(sec) ? json_number_value(sec) : 0.0 };
}

/* "ranks 1, 5" from the members that pass keep (NULL: all). */
static void rank_list(const struct communicator *c, int (*keep)(const struct member *, long long), long long arg,
                      char *out, size_t cap)
{
    size_t w = 0;
    int k = 0;
    out[0] = 0;
    for (int i = 0; i < c->n; i++)
        if (!keep || keep(&c->m[i], arg)) {
            int x = snprintf(out + w, cap - w, "%s%d", k++ ? ", " : "", c->m[i].rank);
            if (x > 0 && (size_t)x < cap - w) w += (size_t)x;
        }
}

static int behind(const struct member *m, long long most) { return m->ops < most; }

static void operation_text(const struct member *m, char *out, size_t cap)
{
    if (*m->api) snprintf(out, cap, "%s of %lld %s", m->api, m->count, m->dtype);
    else snprintf(out, cap, "no operation");
}

static json_t *judge(const struct trace *ts, const struct communicator *c)
{
    long long most = 0;
    for (int i = 0; i < c->n; i++) if (c->m[i].ops > most) most = c->m[i].ops;
    const struct member *ahead = NULL, *worst = NULL;  /* worst: the rank furthest behind */
    int nbehind = 0, out_of_step = 0;
    for (int i = 0; i < c->n; i++) {
        if (c->m[i].ops == most && !ahead) ahead = &c->m[i];
        if (c->m[i].ops < most && (nbehind++, !worst || c->m[i].ops < worst->ops)) worst = &c->m[i];
    }
    for (int i = 0; i < c->n; i++)
        if (c->m[i].ops == most && ahead && (strcmp(c->m[i].api, ahead->api) || c->m[i].count != ahead->count ||
                                             strcmp(c->m[i].dtype, ahead->dtype)))
            out_of_step = 1;
    /* Ranks of the communicator that sent no report. */
    char missing[512] = "";
    size_t w = 0;
    int nmissing = 0;
    json_t *missing_json = json_array();
    for (long long r = 0; r < c->nranks && r < 65536; r++) {
        int seen = 0;
        for (int i = 0; i < c->n && !seen; i++) seen = c->m[i].rank == r;
        if (seen) continue;
        json_array_append_new(missing_json, json_integer(r));
        if (nmissing++ < 16) {
            int x = snprintf(missing + w, sizeof missing - w, "%s%lld", w ? ", " : "", r);
            if (x > 0 && (size_t)x < sizeof missing - w) w += (size_t)x;
        }
    }
    if (nmissing > 16) snprintf(missing + w, sizeof missing - w, " and %d more", nmissing - 16);
    char text[2048], who[512], op[256], file[1024];
    operation_text(ahead, op, sizeof op);
    json_t *behind_json = json_array();
    for (int i = 0; i < c->n; i++)
        if (c->m[i].ops < most)
            json_array_append_new(behind_json, json_pack("{s:i, s:I, s:s, s:s}", "rank", c->m[i].rank, "operations",
                                                         (json_int_t)c->m[i].ops, "inside", c->m[i].inside, "trace",
                                                         ts[c->m[i].trace].file));
    if (nbehind) {
        rank_list(c, behind, most, who, sizeof who);
        snprintf(text, sizeof text,
                 "communicator %s (%lld ranks): rank%s %s made fewer operations (%s%lld) than the others (%lld, the "
                 "last %s): %s the one the others wait for. Rank %d was inside %s for %.0f s (%s).",
                 c->hash, c->nranks, nbehind > 1 ? "s" : "", who, nbehind > 1 ? "as few as " : "", worst->ops, most, op,
                 nbehind > 1 ? "these are" : "it is", worst->rank, *worst->inside ? worst->inside : "-", worst->seconds,
                 home_tilde(ts[worst->trace].file, file, sizeof file));
    } else if (nmissing) {
        snprintf(text, sizeof text,
                 "communicator %s (%lld ranks): %s made %lld operations (the last %s); rank%s %s sent no hang report "
                 "(finished, crashed, or their traces are not here): look at %s first.",
                 c->hash, c->nranks, c->n > 1 ? "every rank that reported" : "the rank that reported", most, op,
                 nmissing > 1 ? "s" : "", missing, nmissing > 1 ? "them" : "it");
    } else if (out_of_step) {
        size_t tw = (size_t)snprintf(text, sizeof text, "communicator %s (%lld ranks): every rank made %lld operations, "
                                     "but not the same last one:", c->hash, c->nranks, most);
        for (int i = 0; i < c->n && tw < sizeof text; i++) {
            operation_text(&c->m[i], op, sizeof op);
            int x = snprintf(text + tw, sizeof text - tw, "%s rank %d %s", i ? "," : "", c->m[i].rank, op);
            if (x > 0) tw += (size_t)x;
        }
        if (tw < sizeof text)
            snprintf(text + tw, sizeof text - tw, ": the program issues its collectives in a different order (or "
                     "with different sizes) on different ranks.");
    } else {
        snprintf(text, sizeof text,
                 "communicator %s (%lld ranks): every rank made %lld operations and waits in the same one (%s): none "
                 "is behind, so the transport is the suspect. Rerun with NCCL_DEBUG=INFO, and bisect with "
                 "NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1 or NCCL_IB_DISABLE=1.",
                 c->hash, c->nranks, most, op);
    }
    return json_pack("{s:s, s:I, s:i, s:I, s:o, s:o, s:b, s:s}", "communicator", c->hash, "nranks", (json_int_t)c->nranks,
                     "ranks_reporting", c->n, "operations", (json_int_t)most, "behind", behind_json, "missing",
                     missing_json, "out_of_step", out_of_step, "text", text);
}

json_t *stuck_collectives(const struct trace *ts, int n)
{
    struct communicator *cs = NULL;
    int nc = 0;
    for (int k = 0; k < n; k++) {
        json_t *hang = last_hang(&ts[k]), *entry;
        size_t i;
        if (!hang) continue;
        json_array_foreach(json_object_get(hang, "nccl"), i, entry) {
            const char *hash = jstr(entry, "unique_id_hash");
            if (*hash) add_member(find(&cs, &nc, hash, jint(entry, "nranks", 0)), k, entry, hang);
        }
    }
    json_t *out = json_array();
    for (int i = 0; i < nc; i++) {
        if (cs[i].nranks > 1) json_array_append_new(out, judge(ts, &cs[i]));
        free(cs[i].m);
    }
    free(cs);
    return out;
}

void print_stuck_collectives(json_t *stuck)
{
    if (!json_array_size(stuck)) return;
    rule(stdout, "STUCK NCCL COMMUNICATORS (from the ranks' hang reports)");
    size_t i;
    json_t *s;
    json_array_foreach(stuck, i, s) wrap(stdout, "  ", jstr(s, "text"), CLI_WIDTH);
}
