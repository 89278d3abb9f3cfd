/* cudashim export --chrome TRACE [-o FILE]: Chrome Trace Event JSON (Perfetto, chrome://tracing).
 * Each thread is a track; each call a complete event ("X") with its result in args; failing
 * calls are coloured and also marked with an instant event; findings and the crash are global
 * instant events. Times are microseconds from the trace's start. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim export --chrome TRACE [-o FILE]\n"
               "  Chrome Trace Event JSON, for https://ui.perfetto.dev or chrome://tracing (default: stdout).\n"
               "  In default mode a trace holds only failing and key calls; record with `cudashim run --all`\n"
               "  for a full timeline.\n");
}

static double us(const struct trace *t, long long ns) { return (double)(ns - t->start_mono_ns) / 1000.0; }

int cmd_export(int argc, char **argv)
{
    const char *out = NULL, *file = NULL;
    int chrome = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--chrome")) chrome = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return EXIT_CLEAN; }
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] == '-') { fprintf(stderr, "cudashim export: unknown option %s\n", argv[i]); return EXIT_USAGE; }
        else if (!file) file = argv[i];
        else { usage(stderr); return EXIT_USAGE; }
    }
    if (!chrome || !file) { usage(stderr); return EXIT_USAGE; }
    struct trace t;
    char err[1024];
    if (trace_load(file, &t, err, sizeof err)) { fprintf(stderr, "cudashim export: %s\n", err); trace_free(&t); return EXIT_BAD_TRACE; }
    json_int_t pid = jint(t.header, "pid", 0);
    json_t *ev = json_array();
    char pname[512];
    json_t *argv0 = json_array_get(json_object_get(t.header, "argv"), 0);
    snprintf(pname, sizeof pname, "%s %s", json_is_string(argv0) ? json_string_value(argv0) : "process", trace_label(&t));
    json_array_append_new(ev, json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "process_name", "ph", "M", "pid", pid,
                                        "tid", (json_int_t)0, "args", "name", pname));
    json_t *tids = json_object();
    size_t i;
    json_t *c;
    json_array_foreach(t.calls, i, c) {
        json_int_t tid = jint(c, "tid", 0);
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)tid);
        if (!json_object_get(tids, key)) {
            json_object_set_new(tids, key, json_true());
            char tname[64];
            snprintf(tname, sizeof tname, "thread %lld", (long long)tid);
            json_array_append_new(ev, json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "thread_name", "ph", "M",
                                                "pid", pid, "tid", tid, "args", "name", tname));
        }
        json_t *args = json_deep_copy(c);
        json_object_del(args, "type"), json_object_del(args, "ts_ns"), json_object_del(args, "dur_ns");
        json_object_del(args, "tid"), json_object_del(args, "api");
        long long r = jint(c, "result", 0);
        int failed = r != 0 && !(r == 500 && !strncmp(jstr(c, "api"), "cuGetProcAddress", 16)) && r != 600;
        if (failed) json_object_set_new(args, "failed", json_true());
        json_t *e = json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:I, s:o}", "name", jstr(c, "api"), "cat", jstr(c, "lib"),
                              "ph", "X", "ts", us(&t, jint(c, "ts_ns", 0)), "dur", (double)jint(c, "dur_ns", 0) / 1000.0,
                              "pid", pid, "tid", tid, "args", args);
        if (failed) json_object_set_new(e, "cname", json_string("terrible"));
        json_array_append_new(ev, e);
        if (failed) {
            char name[256];
            snprintf(name, sizeof name, "FAILED %s: %s", jstr(c, "api"), *jstr(c, "result_name") ? jstr(c, "result_name") : "?");
            json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:s, s:s}", "name", name, "cat", "failure",
                                                "ph", "i", "ts", us(&t, jint(c, "ts_ns", 0)), "pid", pid, "tid", tid,
                                                "s", "t", "cname", "terrible"));
        }
    }
    json_t *f;
    json_array_foreach(t.findings, i, f) {
        char name[256];
        snprintf(name, sizeof name, "%s: %s", jstr(f, "severity"), jstr(f, "id"));
        json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:s, s:{s:s, s:s}}", "name", name, "cat",
                                            "finding", "ph", "i", "ts", 0.0, "pid", pid, "tid", (json_int_t)0, "s", "g",
                                            "args", "summary", jstr(f, "summary"), "fix", jstr(f, "fix")));
    }
    if (t.crash) {
        char name[128];
        snprintf(name, sizeof name, "CRASH %s", jstr(t.crash, "signal_name"));
        json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:s, s:s, s:O}", "name", name, "cat", "crash",
                                            "ph", "i", "ts", us(&t, jint(t.crash, "mono_ns", 0)), "pid", pid, "tid",
                                            (json_int_t)jint(t.crash, "tid", 0), "s", "g", "cname", "terrible", "args", t.crash));
    }
    json_t *doc = json_pack("{s:o, s:s, s:{s:s, s:O}}", "traceEvents", ev, "displayTimeUnit", "ns", "otherData", "source",
                            "cudashim", "header", t.header);
    FILE *o = out ? fopen(out, "w") : stdout;
    if (!o) { perror(out); json_decref(doc), json_decref(tids), trace_free(&t); return EXIT_USAGE; }
    json_dumpf(doc, o, JSON_COMPACT);
    fputc('\n', o);
    if (out) fclose(o);
    json_decref(doc), json_decref(tids);
    trace_free(&t);
    return EXIT_CLEAN;
}
