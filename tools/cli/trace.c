/* Reading traces: one JSON object per line. A cut last line (a crashed process) is tolerated
 * and noted; any other line that is not JSON is an error naming file:line. Every trace format
 * version up to TRACE_VERSION_MAX is read (2 added ALL mode's binary companion, calls.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "job.h"

const char *jstr(json_t *o, const char *key)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : "";
}

long long jint(json_t *o, const char *key, long long dflt)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

int trace_keep_all_calls;

int result_is_failure(const char *api, const char *lib, long long r)
{
    if (!r || (r == 600 && !strcmp(lib, "cuda"))) return 0;             /* CUDA_ERROR_NOT_READY: an answer */
    if (!strncmp(api, "cuGetProcAddress", 16) && r == 500) return 0;   /* "no such function": an answer */
    return 1;
}

int call_is_failure(json_t *c) { return result_is_failure(jstr(c, "api"), jstr(c, "lib"), jint(c, "result", 0)); }

static void add(json_t **arr, json_t *e);

/* A call line: counted if it failed, held whole if it is worth showing, and kept compact. */
static _Thread_local int loading_part;  /* which file of the trace is being read (traces are read on several threads) */

static void add_rec(struct trace *t, const char *api, long long ts, long long dur, long offset, int result, int tid)
{
    json_t *interned = json_object_get(t->names, api);
    if (!interned) json_object_set_new(t->names, api, interned = json_string(api));
    if (t->nrecs % 65536 == 0) t->recs = realloc(t->recs, sizeof *t->recs * (t->nrecs + 65536));
    t->recs[t->nrecs++] = (struct call_rec){ json_string_value(interned), ts, dur, offset, result, tid, loading_part };
}

void trace_add_binary_call(struct trace *t, const char *api, long long ts_ns, long long dur_ns, long offset, int result,
                           int tid, int part)
{
    int saved = loading_part;
    loading_part = part;
    add_rec(t, api, ts_ns, dur_ns, offset, result, tid);
    loading_part = saved;
}

static void add_call(struct trace *t, json_t *e, long offset)
{
    int failed = call_is_failure(e), keep = 0;
    if (failed) {
        char key[256];
        snprintf(key, sizeof key, "%s\t%lld", jstr(e, "api"), jint(e, "result", 0));
        long long n = jint(t->failure_counts, key, 0);
        json_object_set_new(t->failure_counts, key, json_integer(n + 1));
        keep = n < CALLS_KEPT_PER_GROUP;
    } else if (*jstr(e, "symbol") && (jint(e, "result", 0) || (*jstr(e, "status") && strcmp(jstr(e, "status"), "CU_GET_PROC_ADDRESS_SUCCESS")))) {
        keep = json_array_size(t->calls) < 100000;  /* a lookup that found nothing */
    } else if (*jstr(e, "name") || *jstr(e, "compute_capability")) {
        keep = json_array_size(t->calls) < 100000;  /* what the device is */
    }
    if (keep) json_array_append(t->calls, e);
    if (trace_keep_all_calls)
        add_rec(t, jstr(e, "api"), jint(e, "ts_ns", 0), jint(e, "dur_ns", 0), offset, (int)jint(e, "result", 0),
                (int)jint(e, "tid", 0));
}

/* The few fields of a call line that every call needs, without parsing the line: the writer
 * puts them in this form ("api":"name", "ts_ns":N, ...). 0 when a field is not found (the line
 * is then parsed whole). */
static int field_ll(const char *line, const char *key, long long *v)
{
    const char *p = strstr(line, key);
    if (!p) return 0;
    char *end;
    *v = strtoll(p + strlen(key), &end, 10);
    return end != p + strlen(key);
}

/* The kinds of line, from the shim's table (shim/trace/trace_records.h). A type this build does not
 * know is ignored, as the format promises. */
enum record {
#define CS_RECORD(type, keys) REC_##type,
#include "../../shim/trace/trace_records.h"
#undef CS_RECORD
    REC_UNKNOWN
};

static enum record record_of(const char *type)
{
    static const char *const names[] = {
#define CS_RECORD(type, keys) #type,
#include "../../shim/trace/trace_records.h"
#undef CS_RECORD
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i], type)) return (enum record)i;
    return REC_UNKNOWN;
}

static int quick_call(struct trace *t, const char *line, long offset)
{
    const char *a = strstr(line, "\"api\":\"");
    long long ts, dur = 0, result, tid = 0;
    if (!a || !field_ll(line, "\"ts_ns\":", &ts) || !field_ll(line, "\"result\":", &result) || result) return 0;
    if (strstr(line, "\"symbol\":") || strstr(line, "\"name\":") || strstr(line, "\"compute_capability\":")) return 0;
    field_ll(line, "\"dur_ns\":", &dur);
    field_ll(line, "\"tid\":", &tid);
    if (!trace_keep_all_calls) return 1;
    a += 7;
    const char *q = strchr(a, '"');
    if (!q || q - a > 200) return 0;
    char api[256];
    memcpy(api, a, (size_t)(q - a));
    api[q - a] = 0;
    add_rec(t, api, ts, dur, offset, 0, (int)tid);
    return 1;
}

json_t *trace_read_call(const struct trace *t, const struct call_rec *r)
{
    if (r->part >= CALLS_PREV) return calls_line(t, r);
    FILE *f = fopen(r->part && t->prev_file ? t->prev_file : t->file, "r");
    if (!f) return NULL;
    char *line = NULL;
    size_t cap = 0;
    json_t *e = NULL;
    if (!fseek(f, r->offset, SEEK_SET) && getline(&line, &cap, f) > 0) e = json_loads(line, 0, NULL);
    free(line);
    fclose(f);
    return e;
}

/* A library's line may come again once its version is known: the last one per path counts. */
static void add_library(struct trace *t, json_t *e)
{
    const char *path = json_string_value(json_object_get(e, "path"));
    size_t i;
    json_t *old;
    if (path && t->libraries)
        json_array_foreach(t->libraries, i, old) {
            const char *p = json_string_value(json_object_get(old, "path"));
            if (p && !strcmp(p, path)) { json_array_set(t->libraries, i, e); return; }
        }
    add(&t->libraries, e);
}

/* A trace continued in a new part says its findings again: each once. A finding said again with
 * the same id and key (its cause learned more) replaces the earlier one, in its place. */
static void add_finding(struct trace *t, json_t *e)
{
    size_t i;
    json_t *old;
    const char *key = json_object_get(e, "key") ? jstr(e, "key") : NULL;
    json_array_foreach(t->findings, i, old) {
        if (strcmp(jstr(old, "id"), jstr(e, "id"))) continue;
        if (!strcmp(jstr(old, "summary"), jstr(e, "summary"))) return;
        if (key && json_object_get(old, "key") && !strcmp(jstr(old, "key"), key)) {
            json_incref(e);
            json_array_set_new(t->findings, i, e);
            return;
        }
    }
    add(&t->findings, e);
}

static void add(json_t **arr, json_t *e)
{
    if (!*arr) *arr = json_array();
    json_array_append(*arr, e);
}

static int load_file(const char *path, struct trace *t, char *err, size_t cap);

/* A trace, and its older part FILE.prev first when it was continued (CUDASHIM_TRACE_MAX). */
int trace_load(const char *path, struct trace *t, char *err, size_t cap)
{
    memset(t, 0, sizeof *t);
    t->file = strdup(path);
    t->calls = json_array(), t->findings = json_array(), t->libraries = json_array();
    t->failure_counts = json_object(), t->names = json_object();
    t->runtimes = json_array(), t->systems = json_array(), t->hangs = json_array(), t->gemms = json_array();
    char prev[4096];
    snprintf(prev, sizeof prev, "%s.prev", path);
    struct stat st;
    if (!stat(prev, &st) && S_ISREG(st.st_mode)) {
        t->prev_file = strdup(prev);
        loading_part = 1;
        if (load_file(prev, t, err, cap)) return -1;
        t->cut_last_line = 0;  /* the older part was closed whole */
    }
    loading_part = 0;
    if (load_file(path, t, err, cap)) return -1;
    return calls_load(t, err, cap);
}

static int load_file(const char *path, struct trace *t, char *err, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, cap, "%s: %s", path, strerror(errno)); return -1; }
    setvbuf(f, NULL, _IOFBF, 1 << 16);  /* a rank's trace in one read, not sixteen */
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int lineno = 0, pending_error = 0;
    char pending[512] = "";
    long offset = 0, next = 0;
    struct stat st;
    long long size = fstat(fileno(f), &st) ? 0 : (long long)st.st_size;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int tty = isatty(2), shown = 0;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        offset = next;
        next += len;
        if (tty && !(lineno & 0xffff)) {  /* progress, for inputs that take more than a second */
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - t0.tv_sec >= 1) {
                fprintf(stderr, "\rcudashim: reading %s: %lld of %lld MB", path, (long long)next >> 20, size >> 20);
                shown = 1;
            }
        }
        if (pending_error) {  /* a bad line followed by more lines: not a cut last line */
            snprintf(err, cap, "%s", pending);
            free(line), fclose(f);
            return -1;
        }
        int complete = len > 0 && line[len - 1] == '\n';
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (!len) continue;
        /* A successful call, the bulk of an ALL-mode trace: its few fields, without a parse. */
        if (t->header && complete && !strncmp(line, "{\"type\":\"call\",", 15) && quick_call(t, line, offset)) continue;
        json_error_t je;
        json_t *e = json_loadb(line, (size_t)len, 0, &je);
        if (!e || !json_is_object(e)) {
            snprintf(pending, sizeof pending, "%s:%d: not a trace line (%s)", path, lineno,
                     e ? "not a JSON object" : je.text);
            json_decref(e);
            if (!complete || lineno > 1) { pending_error = 1; continue; }
            snprintf(err, cap, "%s", pending);
            free(line), fclose(f);
            return -1;
        }
        const char *type = jstr(e, "type");
        if (lineno == 1 && strcmp(type, "header")) {
            snprintf(err, cap, "%s:1: not a cudashim trace (the first line is not a header)", path);
            json_decref(e), free(line), fclose(f);
            return -1;
        }
        switch (record_of(type)) {
        case REC_header:
            if (strcmp(jstr(e, "format"), TRACE_FORMAT)) {
                snprintf(err, cap, "%s:%d: format \"%s\" is not %s", path, lineno, jstr(e, "format"), TRACE_FORMAT);
                json_decref(e), free(line), fclose(f);
                return -1;
            }
            if (jint(e, "version", 0) > TRACE_VERSION_MAX || jint(e, "version", 0) < 1) {
                snprintf(err, cap, "%s:%d: trace format version %lld; this cudashim reads 1 to %d (upgrade it)", path,
                         lineno, jint(e, "version", 0), TRACE_VERSION_MAX);
                json_decref(e), free(line), fclose(f);
                return -1;
            }
            if (!t->header) t->header = json_incref(e);
            t->start_mono_ns = jint(e, "start_mono_ns", 0);
            t->start_unix_ns = jint(e, "start_unix_ns", 0);
            break;
        case REC_call: add_call(t, e, offset); break;
        case REC_finding: add_finding(t, e); break;
        case REC_continued: if (jint(e, "part", 1) > t->part) t->part = (int)jint(e, "part", 1); break;
        case REC_library: add_library(t, e); break;
        case REC_runtime: add(&t->runtimes, e); break;
        case REC_system: add(&t->systems, e); break;
        case REC_hang: add(&t->hangs, e); break;
        case REC_gemm: add(&t->gemms, e); break;
        case REC_process:
            if (t->header) {  /* facts learnt after the header was written (NCCL's version): merged into it */
                const char *k;
                json_t *v;
                json_object_foreach(e, k, v) if (strcmp(k, "type")) json_object_set(t->header, k, v);
            }
            break;
        case REC_summary: json_decref(t->summary); t->summary = json_incref(e); break;
        case REC_crash: if (!t->crash) t->crash = json_incref(e); break;
        case REC_signal_handlers: json_decref(t->handlers); t->handlers = json_incref(e); break;
        case REC_UNKNOWN: break;
        }
        json_decref(e);
    }
    free(line);
    fclose(f);
    if (shown) fprintf(stderr, "\r%*s\r", 100, "");
    if (pending_error) t->cut_last_line = 1;
    if (!t->header) { snprintf(err, cap, "%s: empty trace", path); return -1; }
    return 0;
}

void trace_free(struct trace *t)
{
    free(t->file), free(t->prev_file);
    json_decref(t->header), json_decref(t->summary), json_decref(t->crash), json_decref(t->handlers);
    json_decref(t->calls), json_decref(t->findings), json_decref(t->libraries), json_decref(t->runtimes);
    json_decref(t->systems), json_decref(t->hangs), json_decref(t->gemms);
    json_decref(t->failure_counts), json_decref(t->names);
    json_decref(t->api_names), json_decref(t->kernel_names);
    for (int i = 0; i < 2; i++) if (t->calls_in[i]) fclose(t->calls_in[i]);
    free(t->recs);
}

int traces_load(int argc, char **argv, struct trace **out, int *n)
{
    struct sources src;
    int bad = sources_collect(argc, argv, 0, &src) != 0;
    *out = calloc((size_t)src.n + 1, sizeof **out);
    *n = 0;
    for (int i = 0; i < src.n; i++) {
        char err[1024];
        if (trace_load(src.s[i].path, &(*out)[*n], err, sizeof err)) {
            fprintf(stderr, "cudashim: %s\n", err);
            trace_free(&(*out)[*n]);
            bad = 1;
        } else {
            (*n)++;
        }
    }
    sources_free(&src);
    return bad ? -1 : 0;
}

const char *trace_label(const struct trace *t)
{
    static char buf[512];
    json_t *rank = json_object_get(t->header, "rank");
    snprintf(buf, sizeof buf, "%s pid %lld%s%s", jstr(t->header, "host"), jint(t->header, "pid", 0),
             json_is_string(rank) ? " rank " : "", json_is_string(rank) ? json_string_value(rank) : "");
    return buf;
}

json_t *trace_library_of(const struct trace *t, const char *path)
{
    size_t i;
    json_t *l;
    json_array_foreach(t->libraries, i, l)
        if (!strcmp(jstr(l, "path"), path) || !strcmp(jstr(l, "name"), path)) return l;
    return NULL;
}
