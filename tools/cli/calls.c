/* An ALL-mode trace's binary companion (NAME.calls, and NAME.calls.prev when it was continued):
 * every call the trace's lines do not already hold, as the shim copied them from its rings
 * (shim/trace/calls_format.h, docs/trace-format.md). Read in two passes, names first (they may come
 * after the events that use them), then the events into the trace's compact call records; a
 * call's line is made from its event when it is shown (calls_line), the same line the shim
 * writes for a call. A cut last chunk (the process died while writing it) is tolerated. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../shim/trace/calls_format.h"
#include "cli.h"

const char *cs_nccl_dtype(int d);  /* shim/base/nccl_names.c */
const char *cs_nccl_redop(int op);

enum { F_WRITTEN = 1, F_PENDING = 8 };  /* the event's flags (shim/process/state.h) */
enum { K_KERNEL = 1, K_GRAPH = 2, K_NCCL = 3 };
static const char *const via_names[] = { "linked", "dlsym", "cuGetProcAddress" };

static char *calls_path(const struct trace *t, int part)
{
    const char *name = jstr(t->header, "calls_file");
    if (!*name || strchr(name, '/')) return NULL;  /* beside the trace, never elsewhere */
    const char *slash = strrchr(t->file, '/');
    int dir = slash ? (int)(slash - t->file + 1) : 0;
    char *p = malloc((size_t)dir + strlen(name) + 8);
    sprintf(p, "%.*s%s%s", dir, t->file, name, part == CALLS_PREV ? ".prev" : "");
    return p;
}

/* "a IDX LIB NAME" and "k HANDLE NAME" lines. */
static void read_names(struct trace *t, char *text, size_t len)
{
    text[len] = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        char *f[4] = { line, NULL, NULL, NULL };
        for (int i = 1; i < 4 && f[i - 1]; i++) {
            f[i] = strchr(f[i - 1], '\t');
            if (f[i]) *f[i]++ = 0;
        }
        if (!strcmp(f[0], "a") && f[3]) {
            json_object_set_new(t->api_names, f[1], json_pack("[s,s]", f[2], f[3]));
        } else if (!strcmp(f[0], "k") && f[2]) {
            json_object_set_new(t->kernel_names, f[1], json_string(f[2]));
        }
    }
}

static long long to_ns(const struct cs_calls_chunk *c, uint64_t ticks)
{
    return (long long)c->ref_ns + (long long)((double)(int64_t)(ticks - c->ref_ticks) * c->ns_per_tick);
}

/* One file: names (pass 0) or events (pass 1). */
static int read_file(struct trace *t, int part, int pass, char *err, size_t cap)
{
    char *path = calls_path(t, part);
    if (!path) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int missing = errno == ENOENT;
        if (!missing || part == CALLS_FILE) snprintf(err, cap, "%s: %s", path, strerror(errno));
        free(path);
        return missing && part == CALLS_PREV ? 0 : -1;
    }
    struct cs_calls_file_header h;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, CS_CALLS_MAGIC, 8) || h.event_bytes != CS_CALLS_EVENT_BYTES ||
        h.header_bytes < sizeof h) {
        snprintf(err, cap, "%s: not a cudashim calls file", path);
        fclose(f), free(path);
        return -1;
    }
    if (h.version > CS_CALLS_VERSION) {
        snprintf(err, cap, "%s: calls file version %u; this cudashim reads 1 to %d (upgrade it)", path, h.version,
                 CS_CALLS_VERSION);
        fclose(f), free(path);
        return -1;
    }
    long off = (long)h.header_bytes;
    fseek(f, off, SEEK_SET);
    struct cs_calls_chunk c;
    static char names[1 << 17];
    while (fread(&c, sizeof c, 1, f) == 1) {
        off += (long)sizeof c;
        if (c.type == CS_CALLS_NAMES && c.bytes < sizeof names) {
            if (fread(names, 1, c.bytes, f) != c.bytes) break;
            if (pass == 0) read_names(t, names, c.bytes);
        } else if (c.type == CS_CALLS_EVENTS && c.bytes == (uint64_t)c.count * CS_CALLS_EVENT_BYTES) {
            if (pass == 0) {
                if (fseek(f, (long)c.bytes, SEEK_CUR)) break;
            } else {
                for (uint32_t i = 0; i < c.count; i++) {
                    struct cs_calls_event e;
                    if (fread(&e, sizeof e, 1, f) != 1) { c.count = i; break; }
                    long at = off + (long)i * CS_CALLS_EVENT_BYTES;
                    if (e.flags & (F_WRITTEN | F_PENDING)) continue;  /* a line of the trace holds it */
                    char idx[16];
                    snprintf(idx, sizeof idx, "%u", e.api);
                    json_t *nm = json_object_get(t->api_names, idx);
                    trace_add_binary_call(t, nm ? json_string_value(json_array_get(nm, 1)) : "?", to_ns(&c, e.ts),
                                          (long long)((double)e.dur * c.ns_per_tick), at, e.result, (int)c.tid, part);
                }
            }
        } else {
            break;  /* a chunk this cudashim does not know, or a cut one: the rest cannot be framed */
        }
        off += (long)c.bytes;
        if (fseek(f, off, SEEK_SET)) break;
    }
    fclose(f), free(path);
    return 0;
}

int calls_load(struct trace *t, char *err, size_t cap)
{
    if (!*jstr(t->header, "calls_file")) return 0;
    if (!t->api_names) t->api_names = json_object(), t->kernel_names = json_object();
    for (int pass = 0; pass < 2; pass++)
        for (int part = CALLS_PREV; part <= CALLS_FILE; part++) {
            if (pass == 1 && !trace_keep_all_calls) return 0;
            if (read_file(t, part, pass, err, cap)) return -1;
        }
    return 0;
}

static json_t *hex(uint64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "0x%" PRIx64, v);
    return json_string(s);
}

/* The line the shim writes for a call (shim/trace/writer.c cs_format_event, launches.c). */
json_t *calls_line(const struct trace *t, const struct call_rec *r)
{
    FILE **in = &((struct trace *)t)->calls_in[r->part == CALLS_FILE];
    if (!*in) {
        char *path = calls_path(t, r->part);
        *in = path ? fopen(path, "rb") : NULL;
        free(path);
    }
    struct cs_calls_event e;
    if (!*in || fseek(*in, r->offset, SEEK_SET) || fread(&e, sizeof e, 1, *in) != 1) return NULL;
    char idx[16];
    snprintf(idx, sizeof idx, "%u", e.api);
    json_t *nm = json_object_get(t->api_names, idx);
    json_t *c = json_object();
    json_object_set_new(c, "type", json_string("call"));
    json_object_set_new(c, "api", json_string(r->api));
    json_object_set_new(c, "lib", json_string(nm ? json_string_value(json_array_get(nm, 0)) : "?"));
    json_object_set_new(c, "via", json_string(via_names[e.via < 3 ? e.via : 0]));
    json_object_set_new(c, "result", json_integer(e.result));
    json_object_set_new(c, "result_name", json_null());
    json_object_set_new(c, "tid", json_integer(r->tid));
    json_object_set_new(c, "ts_ns", json_integer(r->ts_ns));
    json_object_set_new(c, "dur_ns", json_integer(r->dur_ns));
    json_object_set_new(c, "seq", json_integer(e.seq));
    if (e.inside) {
        snprintf(idx, sizeof idx, "%u", e.inside - 1);
        json_t *in = json_object_get(t->api_names, idx);
        json_object_set_new(c, "inside", json_string(in ? json_string_value(json_array_get(in, 1)) : "?"));
    }
    if (e.kind == K_NCCL) {
        json_object_set_new(c, "comm", hex(e.arg));
        json_object_set_new(c, "count", json_integer((json_int_t)e.n.count));
        json_object_set_new(c, "datatype", json_string(cs_nccl_dtype(e.n.dtype)));
        const char *op = cs_nccl_redop(e.n.op);
        if (op) json_object_set_new(c, "op", json_string(op));
        if (e.n.peer >= 0) json_object_set_new(c, "peer", json_integer(e.n.peer));
        json_object_set_new(c, "stream", hex(e.stream));
    } else if (e.kind == K_GRAPH || e.kind == K_KERNEL) {
        if (e.kind == K_GRAPH) {
            json_object_set_new(c, "graph", hex(e.arg));
        } else {
            char h[24];
            snprintf(h, sizeof h, "0x%" PRIx64, e.arg);
            json_t *k = json_object_get(t->kernel_names, h);
            json_object_set_new(c, "kernel", k ? json_incref(k) : json_string(h));
            if (e.k.bx) {
                json_object_set_new(c, "grid", json_pack("[I,I,I]", (json_int_t)e.k.gx, (json_int_t)e.k.gy, (json_int_t)e.k.gz));
                json_object_set_new(c, "block", json_pack("[I,I,I]", (json_int_t)e.k.bx, (json_int_t)e.k.by, (json_int_t)e.k.bz));
                json_object_set_new(c, "shared_mem", json_integer(e.shmem));
            }
        }
        json_object_set_new(c, "stream", hex(e.stream));
    }
    return c;
}
