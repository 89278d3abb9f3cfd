/* A node's summary: DIR/cudashim-summary.json, the digests (digest.c) of the traces in DIR, so
 * that a report over a job reads one small file per node instead of every rank's trace. Written
 * by `cudashim report --summarize DIR` (atomically: a temporary file, then rename); trusted only
 * while it lists exactly the traces beside it with their sizes and times unchanged. Stacks and
 * endings are written once and named by index, as a node's ranks mostly share them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job.h"

#define SUMMARY_FORMAT "cudashim-summary"
#define SUMMARY_VERSION 1

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int file_stamp(const char *path, long long *size, long long *mtime_ns)
{
    struct stat st;
    if (stat(path, &st)) return -1;
    *size = (long long)st.st_size;
    *mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    return 0;
}

json_t *summary_load(const char *dir)
{
    char *p = path_join(dir, SUMMARY_NAME);
    json_error_t je;
    json_t *s = NULL;
    if (!access(p, F_OK)) {
        s = json_load_file(p, 0, &je);
        if (!s || strcmp(jstr(s, "format"), SUMMARY_FORMAT) || jint(s, "version", 0) != SUMMARY_VERSION ||
            !json_is_array(json_object_get(s, "traces"))) {
            fprintf(stderr, "cudashim: %s: %s: reading the traces instead\n", p,
                    s ? "not a summary this cudashim reads" : je.text);
            json_decref(s);
            s = NULL;
        }
    }
    free(p);
    return s;
}

int summary_fresh(json_t *summary, const char *dir, const struct strtab *names)
{
    json_t *traces = json_object_get(summary, "traces"), *r;
    if (json_array_size(traces) != names->count) return 0;
    size_t i;
    json_array_foreach(traces, i, r) {
        const char *file = jstr(r, "file");
        if (strchr(file, '/') || strtab_find(names, file) == STRTAB_NONE) return 0;
        char *p = path_join(dir, file);
        long long size, mtime;
        int same = !file_stamp(p, &size, &mtime) && size == jint(r, "size", -1) && mtime == jint(r, "mtime_ns", -1);
        free(p);
        if (!same) return 0;
    }
    return 1;
}

json_t *summary_record(json_t *summary, int record, const char *dir)
{
    json_t *r = json_deep_copy(json_array_get(json_object_get(summary, "traces"), (size_t)record));
    char *p = path_join(dir, jstr(r, "file"));
    json_object_set_new(r, "file", json_string(p));
    free(p);
    if (json_object_get(r, "error")) return r;
    json_t *facts = json_array_get(json_object_get(summary, "stacks"), (size_t)jint(r, "stack", -1));
    json_t *outcome = json_array_get(json_object_get(summary, "outcomes"), (size_t)jint(r, "outcome", -1));
    if (!json_is_object(facts) || !json_is_string(outcome)) {
        json_object_set_new(r, "error", json_sprintf("%s/%s: record %d names no stack or ending", dir, SUMMARY_NAME, record));
        return r;
    }
    json_object_set(r, "facts", facts);
    json_object_set(r, "outcome", outcome);
    json_object_del(r, "stack");
    return r;
}

/* The index of value in list (by its compact form), added when new. */
static int index_of(json_t *list, json_t *keys, json_t *value, const char *key)
{
    json_t *at = json_object_get(keys, key);
    if (at) return (int)json_integer_value(at);
    int k = (int)json_array_size(list);
    json_array_append(list, value);
    json_object_set_new(keys, key, json_integer(k));
    return k;
}

/* One directory's own traces into its summary. 0 written, -1 not. */
static int summarize_dir(const char *dir, const struct sources *src, int from, int to)
{
    json_t *stacks = json_array(), *outcomes = json_array(), *keys = json_object(), *okeys = json_object();
    json_t *traces = json_array();
    for (int i = from; i < to; i++) {
        const char *path = src->s[i].path;
        long long size = -1, mtime = -1;
        file_stamp(path, &size, &mtime);
        struct trace t;
        char err[1024];
        json_t *r;
        if (trace_load(path, &t, err, sizeof err)) {
            r = json_pack("{s:s, s:s}", "file", base_name(path), "error", err);
        } else {
            r = trace_digest(&t, 1);
            json_object_set_new(r, "file", json_string(base_name(path)));
            json_t *facts = json_object_get(r, "facts");
            char *fk = json_dumps(facts, JSON_COMPACT | JSON_SORT_KEYS);
            json_object_set_new(r, "stack", json_integer(index_of(stacks, keys, facts, fk)));
            json_object_set_new(r, "outcome", json_integer(index_of(outcomes, okeys, json_object_get(r, "outcome"),
                                                                     jstr(r, "outcome"))));
            json_object_del(r, "facts");
            free(fk);
        }
        trace_free(&t);
        json_object_set_new(r, "size", json_integer(size));
        json_object_set_new(r, "mtime_ns", json_integer(mtime));
        json_array_append_new(traces, r);
    }
    json_t *s = json_pack("{s:s, s:i, s:s, s:o, s:o, s:o}", "format", SUMMARY_FORMAT, "version", SUMMARY_VERSION,
                          "written_by", "cudashim report --summarize", "stacks", stacks, "outcomes", outcomes, "traces",
                          traces);
    json_decref(keys), json_decref(okeys);
    char *out = path_join(dir, SUMMARY_NAME), *tmp;
    if (asprintf(&tmp, "%s.tmp.%d", out, (int)getpid()) < 0) abort();
    int rc = json_dump_file(s, tmp, JSON_COMPACT) || rename(tmp, out) ? -1 : 0;
    if (rc) { fprintf(stderr, "cudashim: cannot write %s: %s\n", out, strerror(errno)); unlink(tmp); }
    else fprintf(stderr, "cudashim: wrote %s (%d traces)\n", out, to - from);
    free(out), free(tmp);
    json_decref(s);
    return rc;
}

static size_t dir_len(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? (size_t)(s - path) : 0;
}

/* By directory, then by name: a directory's own traces together, though a subdirectory's
 * paths sort between them ("a/b.jsonl" < "a/b/c.jsonl" < "a/c.jsonl"). */
static int by_dir(const void *x, const void *y)
{
    const char *a = ((const struct source *)x)->path, *b = ((const struct source *)y)->path;
    size_t la = dir_len(a), lb = dir_len(b);
    int c = strncmp(a, b, la < lb ? la : lb);
    if (c) return c;
    if (la != lb) return la < lb ? -1 : 1;
    return strcmp(a + la, b + la);
}

int summarize(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        struct stat st;
        if (!stat(argv[i], &st) && !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "cudashim report --summarize: %s is not a directory (a summary stands for a directory's traces)\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    struct sources src;
    int bad = sources_collect(argc, argv, 0, &src) != 0, written = 0;
    qsort(src.s, (size_t)src.n, sizeof *src.s, by_dir);
    for (int i = 0; i < src.n;) {
        size_t dl = dir_len(src.s[i].path);
        int j = i + 1;
        while (j < src.n && dir_len(src.s[j].path) == dl && !strncmp(src.s[j].path, src.s[i].path, dl)) j++;
        char *dir = dl ? strndup(src.s[i].path, dl) : strdup("/");
        if (summarize_dir(dir, &src, i, j)) bad = 1;
        else written++;
        free(dir);
        i = j;
    }
    sources_free(&src);
    if (!written && !bad) fprintf(stderr, "cudashim: no traces to summarize\n");
    return bad ? EXIT_BAD_TRACE : EXIT_CLEAN;
}
