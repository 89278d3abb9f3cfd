/* A stuck NCCL job, read across its ranks' traces. Each rank's last hang report lists its
 * communicators (matched across ranks by the unique id's hash) and how many operations the rank
 * made on each. The rank that made fewer than its peers is the one they wait for; a rank with no
 * report finished, crashed or left no trace here; ranks at the same count but on different
 * operations are out of step; ranks all in the same operation point at the transport. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

#define MISSING_CHECKED (1 << 24)  /* ranks of a communicator checked for a report: more than any job has */

/* "ranks 1, 5" from the members that pass keep (NULL: all). */
static void rank_list(const struct job_comm *c, int (*keep)(const struct job_member *, long long), long long arg,
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

static int behind(const struct job_member *m, long long most) { return m->ops < most; }

static void operation_text(const struct job *j, const struct job_member *m, char *out, size_t cap)
{
    const char *api = strtab_str(&j->text, m->api);
    if (*api) snprintf(out, cap, "%s of %lld %s", api, m->count, strtab_str(&j->text, m->dtype));
    else snprintf(out, cap, "no operation");
}

static json_t *judge(const struct job *j, const char *hash, const struct job_comm *c)
{
    long long most = 0;
    for (int i = 0; i < c->n; i++) if (c->m[i].ops > most) most = c->m[i].ops;
    const struct job_member *ahead = NULL, *worst = NULL;  /* worst: the rank furthest behind */
    int nbehind = 0, out_of_step = 0;
    for (int i = 0; i < c->n; i++) {
        if (c->m[i].ops == most && !ahead) ahead = &c->m[i];
        if (c->m[i].ops < most && (nbehind++, !worst || c->m[i].ops < worst->ops)) worst = &c->m[i];
    }
    for (int i = 0; i < c->n; i++)
        if (c->m[i].ops == most && ahead && (c->m[i].api != ahead->api || c->m[i].count != ahead->count ||
                                             c->m[i].dtype != ahead->dtype))
            out_of_step = 1;
    /* Ranks of the communicator that sent no report. */
    char missing[512] = "";
    size_t w = 0;
    int nmissing = 0;
    json_t *missing_json = json_array();
    long long span = c->nranks < MISSING_CHECKED ? c->nranks : MISSING_CHECKED;
    unsigned char *seen = calloc((size_t)(span > 0 ? span : 1) / 8 + 1, 1);
    for (int i = 0; i < c->n; i++)
        if (c->m[i].rank >= 0 && c->m[i].rank < span) seen[c->m[i].rank / 8] |= (unsigned char)(1u << (c->m[i].rank % 8));
    for (long long r = 0; r < span; r++) {
        if (seen[r / 8] & (1u << (r % 8))) continue;
        json_array_append_new(missing_json, json_integer(r));
        if (nmissing++ < 16) {
            int x = snprintf(missing + w, sizeof missing - w, "%s%lld", w ? ", " : "", r);
            if (x > 0 && (size_t)x < sizeof missing - w) w += (size_t)x;
        }
    }
    free(seen);
    if (nmissing > 16) snprintf(missing + w, sizeof missing - w, " and %d more", nmissing - 16);
    char text[2048], who[512], op[256], file[1024];
    operation_text(j, ahead, op, sizeof op);
    json_t *behind_json = json_array();
    for (int i = 0; i < c->n; i++)
        if (c->m[i].ops < most)
            json_array_append_new(behind_json, json_pack("{s:i, s:I, s:s, s:s}", "rank", c->m[i].rank, "operations",
                                                         (json_int_t)c->m[i].ops, "inside", strtab_str(&j->text, c->m[i].inside),
                                                         "trace", job_file(j, c->m[i].trace)));
    if (nbehind) {
        const char *inside = strtab_str(&j->text, worst->inside);
        rank_list(c, behind, most, who, sizeof who);
        snprintf(text, sizeof text,
                 "communicator %s (%lld ranks): rank%s %s made fewer operations (%s%lld) than the others (%lld, the "
                 "last %s): %s the one the others wait for. Rank %d was inside %s for %.0f s (%s).",
                 hash, c->nranks, nbehind > 1 ? "s" : "", who, nbehind > 1 ? "as few as " : "", worst->ops, most, op,
                 nbehind > 1 ? "these are" : "it is", worst->rank, *inside ? inside : "-", worst->seconds, home_tilde(job_file(j, worst->trace), file, sizeof file));
    } else if (nmissing) {
        snprintf(text, sizeof text,
                 "communicator %s (%lld ranks): %s made %lld operations (the last %s); rank%s %s sent no hang report "
                 "(finished, crashed, or their traces are not here): look at %s first.",
                 hash, c->nranks, c->n > 1 ? "every rank that reported" : "the rank that reported", most, op,
                 nmissing > 1 ? "s" : "", missing, nmissing > 1 ? "them" : "it");
    } else if (out_of_step) {
        size_t tw = (size_t)snprintf(text, sizeof text, "communicator %s (%lld ranks): every rank made %lld operations, "
                                     "but not the same last one:", hash, c->nranks, most);
        for (int i = 0; i < c->n && tw < sizeof text; i++) {
            operation_text(j, &c->m[i], op, sizeof op);
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
                 hash, c->nranks, most, op);
    }
    return json_pack("{s:s, s:I, s:i, s:I, s:o, s:o, s:b, s:s}", "communicator", hash, "nranks", (json_int_t)c->nranks,
                     "ranks_reporting", c->n, "operations", (json_int_t)most, "behind", behind_json, "missing",
                     missing_json, "out_of_step", out_of_step, "text", text);
}

json_t *stuck_collectives(const struct job *j)
{
    json_t *out = json_array();
    for (uint32_t i = 0; i < j->comm_hashes.count; i++)
        if (j->comms[i].nranks > 1) json_array_append_new(out, judge(j, strtab_str(&j->comm_hashes, i), &j->comms[i]));
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
