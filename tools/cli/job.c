/* job.h: many traces read one at a time into groups. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"

static void grow(void **p, int n, int *cap, size_t size)
{
    if (n < *cap) return;
    *cap = *cap ? *cap * 2 : 64;
    if (!(*p = realloc(*p, size * (size_t)*cap))) abort();
}

static void join_group(struct job_group *g, int trace)
{
    grow((void **)&g->members, g->count, &g->cap, sizeof *g->members);
    g->members[g->count++] = trace;
}

static int rank_number(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 0 && v <= 0x7fffffff ? (int)v : -1;
}

/* Grows an array indexed by a table's ids to hold id: the new elements zeroed. */
static void *slot(void *arr, uint32_t id, uint32_t count_before, size_t size)
{
    if (id < count_before) return arr;
    /* capacities are powers of two: grow when id reaches one */
    if (!(id & (id - 1)) || !id) {
        size_t cap = id ? (size_t)id * 2 : 1;
        if (!(arr = realloc(arr, size * cap))) abort();
    }
    memset((char *)arr + size * id, 0, size);
    return arr;
}

static void add_hang(struct job *j, int trace, json_t *hang)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(hang, "nccl"), i, e) {
        uint32_t before = j->comm_hashes.count, id = strtab_id(&j->comm_hashes, jstr(e, "hash"));
        j->comms = slot(j->comms, id, before, sizeof *j->comms);
        struct job_comm *c = &j->comms[id];
        if (id >= before) c->nranks = jint(e, "nranks", 0);
        grow((void **)&c->m, c->n, &c->cap, sizeof *c->m);
        json_t *sec = json_object_get(hang, "seconds");
        c->m[c->n++] = (struct job_member){ trace, (int)jint(e, "rank", -1), jint(e, "ops", 0), jint(e, "count", 0),
                                            strtab_id(&j->text, jstr(e, "api")), strtab_id(&j->text, jstr(e, "datatype")),
                                            strtab_id(&j->text, jstr(hang, "inside")),
                                            json_is_number(sec) ? json_number_value(sec) : 0.0 };
    }
}

void job_add(struct job *j, json_t *d)
{
    grow((void **)&j->traces, j->n, &j->cap, sizeof *j->traces);
    int k = j->n++;
    struct job_trace *t = &j->traces[k];
    json_t *rank = json_object_get(d, "rank");
    t->file = strtab_id(&j->text, jstr(d, "file"));
    t->host = strtab_id(&j->text, jstr(d, "host"));
    t->rank_text = json_is_string(rank) ? strtab_id(&j->text, json_string_value(rank)) : STRTAB_NONE;
    t->rank = json_is_string(rank) ? rank_number(json_string_value(rank)) : -1;
    t->pid = jint(d, "pid", 0);
    if (*jstr(d, "host")) strtab_id(&j->hosts, jstr(d, "host"));
    json_t *facts = json_object_get(d, "facts");
    char *stack = json_dumps(facts, JSON_COMPACT | JSON_SORT_KEYS);
    uint32_t before = j->stack_keys.count;
    t->stack = strtab_id(&j->stack_keys, stack);
    j->stacks = slot(j->stacks, t->stack, before, sizeof *j->stacks);
    struct job_stack *s = &j->stacks[t->stack];
    if (t->stack >= before) {
        s->facts = json_incref(facts);
        s->driver = json_object_get(facts, "driver path") != NULL;  /* as trace_facts says a loaded driver */
    }
    join_group(&s->g, k);
    size_t len = strlen(stack) + strlen(jstr(d, "outcome")) + 2;
    char *ending = malloc(len);
    snprintf(ending, len, "%s\n%s", stack, jstr(d, "outcome"));
    before = j->ending_keys.count;
    t->ending = strtab_id(&j->ending_keys, ending);
    j->endings = slot(j->endings, t->ending, before, sizeof *j->endings);
    struct job_ending *e = &j->endings[t->ending];
    if (t->ending >= before)
        e->findings = (int)jint(d, "findings", 0), e->failing = (int)jint(d, "failing", 0),
        e->crash = json_is_true(json_object_get(d, "crash"));
    join_group(&e->g, k);
    free(stack), free(ending);
    j->errors += (int)jint(d, "errors", 0);
    json_t *hang = json_object_get(d, "hang");
    if (hang) add_hang(j, k, hang);
}

/* Traces are read and digested on worker threads (jansson values are not shared between
 * threads), at most WINDOW ahead of the one added, and added in order: the same groups, and the
 * same "first", as reading them one by one. */
#define WINDOW 64
#define MAX_READERS 8

struct slot {
    int ready, failed;
    struct trace t;
    json_t *digest;
    char err[1024];
};

struct readers {
    const struct sources *src;
    int metrics;
    pthread_mutex_t lock;
    pthread_cond_t ready, space;
    int next, added;           /* the next source to claim; the sources added so far */
    struct slot slots[WINDOW];
};

/* keep: the trace goes on to job_read whole; else only its digest does, and the thread that
 * read it frees it (a free on another thread's malloc arena waits for that arena). */
static void read_one(const char *path, int metrics, int keep, struct slot *s)
{
    if (trace_load(path, &s->t, s->err, sizeof s->err)) {
        trace_free(&s->t);
        s->failed = 1;
        return;
    }
    s->failed = 0;
    s->digest = trace_digest(&s->t, metrics);
    if (!keep) trace_free(&s->t), memset(&s->t, 0, sizeof s->t);
}

static void *reader(void *arg)
{
    struct readers *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        while (r->next < r->src->n && (r->src->s[r->next].summary >= 0 || r->next >= r->added + WINDOW)) {
            if (r->src->s[r->next].summary >= 0) { r->next++; continue; }  /* summaries are read in order, by job_read */
            pthread_cond_wait(&r->space, &r->lock);
        }
        if (r->next >= r->src->n) { pthread_mutex_unlock(&r->lock); return NULL; }
        int i = r->next++;
        pthread_mutex_unlock(&r->lock);
        struct slot *s = &r->slots[i % WINDOW];
        read_one(r->src->s[i].path, r->metrics, i == 0, s);  /* the first is kept whole (job.first) */
        pthread_mutex_lock(&r->lock);
        s->ready = 1;
        pthread_cond_broadcast(&r->ready);
        pthread_mutex_unlock(&r->lock);
    }
}

static int readers_wanted(int sources)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cpus < 1 ? 1 : cpus > MAX_READERS ? MAX_READERS : (int)cpus;
    return sources < 64 ? 0 : n;  /* a few traces: read here, as before */
}

int job_read(struct job *j, int argc, char **argv, void (*each)(void *, const struct trace *, json_t *), void *ctx,
             int each_needs_trace)
{
    struct sources src;
    int bad = sources_collect(argc, argv, j->use_summaries, &src) != 0, cached = -1;
    json_t *summary = NULL;  /* the summary of the last record read: a directory's records come together */
    struct readers *r = calloc(1, sizeof *r);
    r->src = &src;
    r->metrics = j->want_metrics;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->ready, NULL);
    pthread_cond_init(&r->space, NULL);
    pthread_t threads[MAX_READERS];
    int nthreads = 0, wanted = each_needs_trace ? 0 : readers_wanted(src.n);
    json_object_seed(0);  /* before any thread makes an object */
    while (nthreads < wanted && !pthread_create(&threads[nthreads], NULL, reader, r)) nthreads++;
    for (int i = 0; i < src.n; i++) {
        const struct source *s = &src.s[i];
        json_t *d = NULL;
        struct trace t;
        int whole = s->summary < 0, failed = 0;
        char err[1024];
        if (whole) {
            struct slot *sl = &r->slots[i % WINDOW];
            if (nthreads) {
                pthread_mutex_lock(&r->lock);
                while (!sl->ready) pthread_cond_wait(&r->ready, &r->lock);
                pthread_mutex_unlock(&r->lock);
            } else {
                read_one(s->path, j->want_metrics, 1, sl);
            }
            t = sl->t, d = sl->digest, failed = sl->failed;
            snprintf(err, sizeof err, "%s", sl->err);
            memset(sl, 0, sizeof *sl);
        }
        pthread_mutex_lock(&r->lock);
        r->added = i + 1;
        pthread_cond_broadcast(&r->space);
        pthread_mutex_unlock(&r->lock);
        if (failed) {
            fprintf(stderr, "cudashim: %s\n", err);
            bad = 1;
            continue;
        }
        if (!whole) {
            if (cached != s->summary) {
                json_decref(summary);
                summary = summary_load(src.summary_dirs[s->summary]);
                cached = s->summary;
            }
            d = summary ? summary_record(summary, s->record, src.summary_dirs[s->summary])
                        : json_pack("{s:s, s:s}", "file", s->path, "error", "its summary could not be read again");
            if (json_object_get(d, "error")) {
                fprintf(stderr, "cudashim: %s\n", jstr(d, "error"));
                json_decref(d);
                bad = 1;
                continue;
            }
        }
        if (each) each(ctx, whole && t.file ? &t : NULL, d);
        job_add(j, d);
        json_decref(d);
        if (whole && t.file && !j->have_first) j->first = t, j->have_first = 1;
        else if (whole) trace_free(&t);
        if (!j->have_first && j->n == 1) {  /* the first trace came from a summary, or was not kept: read it whole */
            if (!trace_load(job_file(j, 0), &j->first, err, sizeof err)) j->have_first = 1;
            else trace_free(&j->first), memset(&j->first, 0, sizeof j->first);
        }
    }
    for (int k = 0; k < nthreads; k++) pthread_join(threads[k], NULL);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->ready), pthread_cond_destroy(&r->space);
    free(r);
    json_decref(summary);
    sources_free(&src);
    return bad ? -1 : 0;
}

const char *job_file(const struct job *j, int k) { return strtab_str(&j->text, j->traces[k].file); }

void job_label(const struct job *j, int k, char *out, size_t cap)
{
    const struct job_trace *t = &j->traces[k];
    int ranked = t->rank_text != STRTAB_NONE;
    snprintf(out, cap, "%s pid %lld%s%s", strtab_str(&j->text, t->host), t->pid, ranked ? " rank " : "",
             ranked ? strtab_str(&j->text, t->rank_text) : "");
}

const struct trace *job_trace_at(struct job *j, int k, struct trace *tmp)
{
    if (j->have_first && !strcmp(j->first.file, job_file(j, k))) return &j->first;
    char err[1024];
    if (!trace_load(job_file(j, k), tmp, err, sizeof err)) return tmp;
    fprintf(stderr, "cudashim: %s (read again to be shown)\n", err);
    trace_free(tmp);
    return NULL;
}

void job_trace_done(const struct job *j, const struct trace *t, struct trace *tmp)
{
    if (t == tmp && t != &j->first) trace_free(tmp);
}

void job_free(struct job *j)
{
    for (uint32_t i = 0; i < j->stack_keys.count; i++) free(j->stacks[i].g.members), json_decref(j->stacks[i].facts);
    for (uint32_t i = 0; i < j->ending_keys.count; i++) free(j->endings[i].g.members);
    for (uint32_t i = 0; i < j->comm_hashes.count; i++) free(j->comms[i].m);
    free(j->stacks), free(j->endings), free(j->comms), free(j->traces);
    strtab_free(&j->text), strtab_free(&j->hosts), strtab_free(&j->stack_keys), strtab_free(&j->ending_keys);
    strtab_free(&j->comm_hashes);
    if (j->have_first) trace_free(&j->first);
    memset(j, 0, sizeof *j);
}
