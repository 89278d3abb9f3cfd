/* cudashim report TRACE|DIR...: the page a person reads first. The crash, findings ranked with
 * their fixes, failing calls grouped with the first occurrence, loaded libraries; for several
 * traces, what differs between ranks and hosts. --json for machines. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int sev_rank(const char *s) { return !strcmp(s, "error") ? 0 : !strcmp(s, "warning") ? 1 : 2; }


static void argv_text(const struct trace *t, char *buf, size_t cap)
{
    size_t n = 0, i;
    json_t *a;
    buf[0] = 0;
    json_array_foreach(json_object_get(t->header, "argv"), i, a) {
        int w = snprintf(buf + n, cap - n, "%s%s", i ? " " : "", json_string_value(a) ? json_string_value(a) : "");
        if (w < 0 || (size_t)w >= cap - n) break;
        n += (size_t)w;
    }
}

/* --- findings, sorted errors first (stable within a severity) --------------------------------- */

json_t *report_findings(const struct trace *t)
{
    json_t *out = json_array();
    for (int s = 0; s < 3; s++) {
        size_t i;
        json_t *f;
        json_array_foreach(t->findings, i, f)
            if (sev_rank(jstr(f, "severity")) == s) json_array_append(out, f);
    }
    return out;
}

/* --- failing calls grouped by (api, result) --------------------------------------------------- */

json_t *report_failures(const struct trace *t)
{
    json_t *groups = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(t->calls, i, c) {
        if (!call_is_failure(c)) continue;
        size_t j;
        json_t *g, *found = NULL;
        json_array_foreach(groups, j, g)
            if (!strcmp(jstr(g, "api"), jstr(c, "api")) && jint(g, "result", 0) == jint(c, "result", 0)) found = g;
        if (found) continue;
        json_t *first = json_deep_copy(c);
        json_object_del(first, "type");
        json_array_append_new(groups, json_pack("{s:s, s:I, s:O, s:I, s:o}", "api", jstr(c, "api"), "result",
                                                (json_int_t)jint(c, "result", 0), "result_name",
                                                json_object_get(c, "result_name") ? json_object_get(c, "result_name")
                                                                                  : json_null(),
                                                "count", (json_int_t)0, "first", first));
    }
    /* Every failing call was counted as it was read, even those not held whole. */
    json_array_foreach(groups, i, c) {
        char key[256];
        snprintf(key, sizeof key, "%s\t%lld", jstr(c, "api"), jint(c, "result", 0));
        json_object_set_new(c, "count", json_integer(jint(t->failure_counts, key, 1)));
    }
    /* The summary counts failures that were not written (beyond CUDASHIM_MAX_ERRORS_PER_API). */
    json_t *errs = json_object_get(t->summary, "errors");
    json_array_foreach(groups, i, c) {
        long long total = jint(errs, jstr(c, "api"), 0), written = 0;
        size_t j;
        json_t *g;
        json_array_foreach(groups, j, g) if (!strcmp(jstr(g, "api"), jstr(c, "api"))) written += jint(g, "count", 0);
        if (total > written) json_object_set_new(c, "not_written", json_integer(total - written));
    }
    return groups;
}

/* --- one trace as text -------------------------------------------------------------------------- */

/* A C++ name as a person reads it, by libstdc++'s demangler when it is installed (looked up at
 * run time: the command needs no C++ library); the name as it is otherwise. */
static const char *demangled(const char *name)
{
    static char *(*demangle)(const char *, char *, size_t *, int *);
    static int tried;
    static char out[512];
    if (strncmp(name, "_Z", 2)) return name;
    if (!tried) {
        tried = 1;
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h) *(void **)&demangle = dlsym(h, "__cxa_demangle");
    }
    int status = -1;
    char *d = demangle ? demangle(name, NULL, NULL, &status) : NULL;
    if (!d || status) { free(d); return name; }
    snprintf(out, sizeof out, "%s", d);
    free(d);
    return out;
}

static void print_crash(const struct trace *t)
{
    json_t *c = t->crash;
    char line[2048], tmp[1024];
    rule(stdout, crash_survived(t) ? "FATAL SIGNAL, SURVIVED" : "CRASH");
    if (crash_survived(t))
        wrap(stdout, "  ", "The program's own handler took this signal and the process went on to exit normally; "
             "the record below is what the shim saw when it arrived.", CLI_WIDTH);
    snprintf(line, sizeof line, "%s%s%s (%s%s%s) on thread %lld%s%s", c_red(), jstr(c, "signal_name"), c_reset(),
             jstr(c, "code_name"), json_object_get(c, "addr") ? " at " : "",
             json_object_get(c, "addr") ? jstr(c, "addr") : "", jint(c, "tid", 0),
             *jstr(c, "inside_call") ? ", inside " : "", jstr(c, "inside_call"));
    printf("  %s\n", line);
    size_t i;
    json_t *f;
    const char *where = NULL;
    json_array_foreach(json_object_get(c, "frames"), i, f) {
        if (i >= 16) { printf("  ... %zu more frames in the trace\n", json_array_size(json_object_get(c, "frames")) - 16); break; }
        const char *lib = jstr(f, "lib");
        json_t *l = *lib ? trace_library_of(t, lib) : NULL;
        char sym[512];
        if (*jstr(f, "symbol")) snprintf(sym, sizeof sym, "%s+%lld", demangled(jstr(f, "symbol")), jint(f, "symbol_offset", 0));
        else snprintf(sym, sizeof sym, "%s", *jstr(f, "offset") ? jstr(f, "offset") : jstr(f, "pc"));
        char ver[96] = "";
        if (l && *jstr(l, "version")) snprintf(ver, sizeof ver, " %s", jstr(l, "version"));
        int cuda = json_is_true(json_object_get(f, "cuda_lib"));
        snprintf(line, sizeof line, "  #%-2zu %-40.40s %s%s%s", i, sym, *lib ? base(lib) : "?", ver,
                 cuda ? "  [CUDA]" : json_is_true(json_object_get(f, "cudashim")) ? "  [cudashim]" : "");
        printf("%s%s%s\n", cuda ? c_yellow() : "", line, cuda ? c_reset() : "");
        if (!where && *lib && !strstr(base(lib), "libc.so") && !json_is_true(json_object_get(f, "cudashim")))
            where = lib;
    }
    if (where) {
        json_t *l = trace_library_of(t, where);
        snprintf(line, sizeof line, "The innermost frame outside libc is in %s%s%s%s.", home_tilde(where, tmp, sizeof tmp),
                 l ? " (" : "", l ? jstr(l, "kind") : "", l ? ")" : "");
        wrap(stdout, "  ", line, CLI_WIDTH);
    }
    /* The Python stacks, as the interpreter's dumper wrote them: the program's own line first. */
    const char *py = jstr(c, "python");
    if (*py) {
        printf("  Python (most recent call first):\n");
        int lines = 0;
        for (const char *p = py; *p && lines < 24; lines++) {
            size_t n = strcspn(p, "\n");
            if (n && strncmp(p, "Current thread", 14) && strncmp(p, "Thread 0x", 9)) printf("    %.*s\n", (int)n, p);
            else if (n) lines--;
            p += n + (p[n] == '\n');
        }
    } else if (*jstr(c, "python_error")) {
        printf("  Python: %s\n", jstr(c, "python_error"));
    }
    json_t *tt = json_object_get(c, "this_thread");
    if (json_is_object(tt)) {
        char calls[1024] = "";
        size_t n = 0;
        json_array_foreach(json_object_get(tt, "calls"), i, f) {
            int w = snprintf(calls + n, sizeof calls - n, "%s%s=%lld", n ? ", " : "", jstr(f, "api"), jint(f, "result", 0));
            if (w < 0 || (size_t)w >= sizeof calls - n) break;
            n += (size_t)w;
        }
        snprintf(line, sizeof line, "Last calls on the crashing thread (oldest first): %s", n ? calls : "none");
        wrap(stdout, "  ", line, CLI_WIDTH);
    }
}

static void print_hangs(const struct trace *t)
{
    char title[64];
    snprintf(title, sizeof title, "HANGS (%zu reports)", json_array_size(t->hangs));
    rule(stdout, title);
    size_t i, j;
    json_t *h, *x;
    json_array_foreach(t->hangs, i, h) {
        if (i >= 3) { printf("  ... %zu more in the trace\n", json_array_size(t->hangs) - 3); break; }
        json_t *lines = hang_lines(t, h);
        json_array_foreach(lines, j, x) {
            int level = (int)jint(x, "level", 0);
            if (level == 0) printf("  %s%s%s\n", c_red(), jstr(x, "text"), c_reset());
            else wrap(stdout, level == 1 ? "    " : "      ", jstr(x, "text"), CLI_WIDTH);
        }
        json_decref(lines);
    }
}

static void print_findings(json_t *findings)
{
    size_t i;
    json_t *f;
    int err = 0, warn = 0, info = 0;
    json_array_foreach(findings, i, f) {
        int s = sev_rank(jstr(f, "severity"));
        err += s == 0, warn += s == 1, info += s == 2;
    }
    char title[128];
    snprintf(title, sizeof title, "FINDINGS (%d error%s, %d warning%s, %d info)", err, err == 1 ? "" : "s", warn,
             warn == 1 ? "" : "s", info);
    rule(stdout, title);
    if (!json_array_size(findings)) { printf("  none: nothing in this trace looks like a broken stack\n"); return; }
    json_array_foreach(findings, i, f) {
        int s = sev_rank(jstr(f, "severity"));
        printf("  %s%-7s%s %s\n", s == 0 ? c_red() : s == 1 ? c_yellow() : c_dim(), jstr(f, "severity"), c_reset(),
               jstr(f, "id"));
        char text[4096], fix[4096];
        wrap(stdout, "          ", home_tilde(jstr(f, "summary"), text, sizeof text), CLI_WIDTH);
        snprintf(fix, sizeof fix, "fix: %s", home_tilde(jstr(f, "fix"), text, sizeof text));
        wrap(stdout, "          ", fix, CLI_WIDTH);
        if (finding_title(jstr(f, "id"))) printf("          %smore: docs/diagnoses.md#%s%s\n", c_dim(), jstr(f, "id"), c_reset());
    }
}

static void print_failures(const struct trace *t, json_t *groups)
{
    char title[128];
    long long total = jint(t->summary, "total_errors", -1);
    if (total < 0) {
        total = 0;
        size_t i;
        json_t *g;
        json_array_foreach(groups, i, g) total += jint(g, "count", 0);
    }
    snprintf(title, sizeof title, "FAILING CALLS (%lld)", total);
    rule(stdout, title);
    if (!json_array_size(groups)) { printf("  none\n"); return; }
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g) {
        json_t *first = json_object_get(g, "first");
        double at = (double)(jint(first, "ts_ns", 0) - t->start_mono_ns) / 1e9;
        char line[1024], extra[512] = "";
        if (*jstr(first, "symbol")) snprintf(extra, sizeof extra, " symbol %s", jstr(first, "symbol"));
        if (*jstr(first, "note")) snprintf(extra, sizeof extra, " (%s)", jstr(first, "note"));
        snprintf(line, sizeof line, "%s -> %s (%lld) x%lld%s; first at +%.3fs on thread %lld via %s%s",
                 jstr(g, "api"), *jstr(g, "result_name") ? jstr(g, "result_name") : "?", jint(g, "result", 0),
                 jint(g, "count", 0) + jint(g, "not_written", 0),
                 jint(g, "not_written", 0) ? " (some counted, not written)" : "", at < 0 ? 0 : at,
                 jint(first, "tid", 0), jstr(first, "via"), extra);
        wrap(stdout, "  ", line, CLI_WIDTH);
    }
}

static int verbose;  /* --verbose: every loaded library, not only those that matter here */

/* A library worth its two lines by default: the stack's main pieces, and any a finding names. */
static int library_matters(json_t *l, json_t *findings)
{
    static const char *const main_kinds[] = { "driver", "cudart", "framework", "cudnn", "nccl", "cublas" };
    for (size_t k = 0; k < sizeof main_kinds / sizeof *main_kinds; k++)
        if (!strcmp(jstr(l, "kind"), main_kinds[k])) return 1;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        char *ev = json_dumps(json_object_get(f, "evidence"), JSON_COMPACT);
        int named = strstr(jstr(f, "summary"), jstr(l, "name")) || (ev && strstr(ev, jstr(l, "name")));
        free(ev);
        if (named) return 1;
    }
    return 0;
}

static void print_libraries(const struct trace *t, json_t *findings)
{
    rule(stdout, "LOADED LIBRARIES");
    if (!json_array_size(t->libraries)) { printf("  no CUDA-stack library was loaded\n"); return; }
    size_t i;
    json_t *l;
    char others[1024] = "";
    int nothers = 0;
    json_array_foreach(t->libraries, i, l) {
        if (!verbose && !library_matters(l, findings)) {
            size_t k = strlen(others);
            if (!strstr(others, jstr(l, "kind"))) snprintf(others + k, sizeof others - k, "%s%s", k ? ", " : "", jstr(l, "kind"));
            nothers++;
            continue;
        }
        char tmp[1024], ver[64];
        snprintf(ver, sizeof ver, "%s", *jstr(l, "version") ? jstr(l, "version") : *jstr(l, "file_version") ? jstr(l, "file_version") : "-");
        char line[2048];
        /* found in the system directories: said on the line itself, the usual case needs no second */
        int system = !strncmp(jstr(l, "found_via"), "system directory", 16) && !json_is_true(json_object_get(l, "compat"));
        snprintf(line, sizeof line, "%-16s %-10s %s%s", jstr(l, "kind"), ver, home_tilde(jstr(l, "path"), tmp, sizeof tmp),
                 system ? "  (system)" : "");
        printf("  %s\n", line);
        if (system) continue;
        char via[1200];
        snprintf(via, sizeof via, "found via %s%s", home_tilde(jstr(l, "found_via"), tmp, sizeof tmp),
                 json_is_true(json_object_get(l, "compat")) ? "; forward-compatibility copy" : "");
        wrap(stdout, "                              ", via, CLI_WIDTH);
    }
    if (nothers) {
        char line[1400];
        snprintf(line, sizeof line, "and %d more (%s): cudashim report --verbose lists them", nothers, others);
        wrap(stdout, "  ", line, CLI_WIDTH);
    }
    json_t *rt;
    json_array_foreach(t->runtimes, i, rt) {
        if (!json_is_true(json_object_get(rt, "static"))) continue;
        char tmp[1024];
        long long v = jint(rt, "cuda_version", 0);
        printf("  %-16s %-10s %s\n", "static cudart", "", home_tilde(jstr(rt, "caller"), tmp, sizeof tmp));
        printf("                              asks the driver for CUDA %lld.%lld\n", v / 1000, v % 1000 / 10);
    }
    json_t *s;
    json_array_foreach(t->systems, i, s)
        if (*jstr(s, "kernel_module")) printf("  %-16s %s\n", "kernel module", jstr(s, "kernel_module"));
}

static void print_trace(const struct trace *t, json_t *findings, json_t *groups)
{
    char args[2048], tmp[1024];
    argv_text(t, args, sizeof args);
    printf("%scudashim report%s: %s\n", c_bold(), c_reset(), args);
    char line[2048];
    snprintf(line, sizeof line, "%s; trace %s (format %lld, shim %s, %s mode)%s", trace_label(t),
             home_tilde(t->file, tmp, sizeof tmp), jint(t->header, "version", 0), jstr(t->header, "shim_version"),
             jstr(t->header, "mode"), t->cut_last_line ? "; the last line was cut (the process died writing it)" : "");
    wrap(stdout, "  ", line, CLI_WIDTH);
    if (t->summary)
        printf("  %lld calls, %lld failed, %lld dropped, %lld threads\n", jint(t->summary, "total_calls", 0),
               jint(t->summary, "total_errors", 0), jint(t->summary, "dropped", 0), jint(t->summary, "threads", 0));
    else if (!t->crash)
        printf("  no summary line: the process did not reach exit normally (killed, or exec'd)\n");
    json_t *lines = t->summary ? json_object_get(t->summary, "lines") : NULL;
    long long unwritable = jint(lines, "unwritable", 0), cut = jint(lines, "truncated", 0),
              suppressed = t->summary ? jint(t->summary, "suppressed", 0) : 0;
    if (unwritable || cut)
        printf("  INCOMPLETE TRACE: %lld lines could not be written (full disk, file-size limit, or a descriptor the "
               "program took over), %lld lines were cut to fit\n", unwritable, cut);
    if (suppressed)
        printf("  %lld calls were counted but not written (repeats beyond CUDASHIM_MAX_ERRORS_PER_API or "
               "CUDASHIM_MAX_KEY_CALLS_PER_API)\n", suppressed);
    if (t->part > 1) {
        char note[2048];
        snprintf(note, sizeof note, "this trace reached CUDASHIM_TRACE_MAX and went on in part %d: read here with its "
                 "previous part (%s); the calls before that are gone, the findings and libraries were written again",
                 t->part, t->prev_file ? t->prev_file : "missing");
        wrap(stdout, "  ", note, CLI_WIDTH);
    }
    if (t->crash) print_crash(t);
    json_t *replaced = json_object_get(t->handlers, "replaced");
    if (json_array_size(replaced)) {
        char line[256] = "The program replaced the shim's handler for";
        size_t i;
        json_t *sig;
        json_array_foreach(replaced, i, sig) {
            strncat(line, i ? ", " : " ", sizeof line - strlen(line) - 1);
            strncat(line, json_string_value(sig) ? json_string_value(sig) : "?", sizeof line - strlen(line) - 1);
        }
        strncat(line, ": a crash there leaves no record (its own handler decides).", sizeof line - strlen(line) - 1);
        wrap(stdout, "  ", line, CLI_WIDTH);
    }
    if (json_array_size(t->hangs)) print_hangs(t);
    print_findings(findings);
    print_failures(t, groups);
    print_gemm(t);
    print_libraries(t, findings);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim report [--json] [--verbose] TRACE|DIR...\n"
               "       cudashim report --summarize DIR...\n"
               "  The crash (if any), findings ranked with their fixes, failing calls grouped by API and\n"
               "  result, and the loaded libraries. Several traces (or a directory of them): each one,\n"
               "  then what differs between ranks and hosts (driver, NCCL, cuDNN versions, paths).\n"
               "  --json      one JSON object for machines\n"
               "  --verbose   every loaded library (by default: the driver, runtime, framework, cuDNN, NCCL,\n"
               "              cuBLAS and those a finding names)\n"
               "  --summarize write DIR/cudashim-summary.json for each directory of traces under DIR (a\n"
               "              node's): later reports read that one file instead of every trace beside it\n"
               "  Directories are read recursively (a job's DIR/node-*/).\n"
               "Exit status: 0 no error findings, 1 an error finding or a crash, 2 usage, 3 unreadable trace.\n");
}

/* --json, written as the traces are read: {"traces": [...], "differences", "stuck_collectives",
 * "error_count"}, laid out as jansson lays out the whole (one space per level). */
struct json_out { int count; };

static void put_indented(json_t *v, const char *indent)
{
    char *text = json_dumps(v, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    for (const char *p = text; *p; p++) {
        putchar(*p);
        if (*p == '\n') fputs(indent, stdout);
    }
    free(text);
}

static void json_trace(void *ctx, const struct trace *t, json_t *digest)
{
    struct json_out *o = ctx;
    (void)digest;
    json_t *findings = report_findings(t), *groups = report_failures(t);
    json_t *e = json_pack("{s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:b}", "file", t->file, "label", trace_label(t),
                          "header", t->header, "crash", t->crash ? t->crash : json_null(), "hangs", t->hangs, "findings",
                          findings, "failing_calls", groups, "libraries", t->libraries, "summary",
                          t->summary ? t->summary : json_null(), "cut_last_line", t->cut_last_line);
    fputs(o->count++ ? ",\n  " : "{\n \"traces\": [\n  ", stdout);
    put_indented(e, "  ");
    json_decref(e), json_decref(findings), json_decref(groups);
}

static void json_member(const char *key, json_t *v)
{
    printf(",\n \"%s\": ", key);
    put_indented(v, " ");
    json_decref(v);
}

int cmd_report(int argc, char **argv)
{
    int as_json = 0, npaths, rc, summarize_only = 0;
    char **paths;
    const struct cli_opt opts[] = { { "--json", &as_json, NULL }, { "--verbose", &verbose, NULL },
                                    { "--summarize", &summarize_only, NULL }, { NULL, NULL, NULL } };
    if ((rc = cli_parse("report", argc, argv, opts, usage, &paths, &npaths)) >= 0) return rc;
    if (summarize_only) {
        rc = summarize(npaths, paths);
        free(paths);
        return rc;
    }
    struct job j = { 0 };
    struct json_out o = { 0 };
    j.use_summaries = !as_json;  /* --json lists every trace whole */
    int bad = job_read(&j, npaths, paths, as_json ? json_trace : NULL, &o, as_json);
    free(paths);
    if (!j.n) { job_free(&j); return EXIT_BAD_TRACE; }
    int errors = j.errors;
    if (as_json) fputs("\n ]", stdout);
    if (j.n > 1) {
        json_t *d = job_differences(&j, as_json);
        errors += json_array_size(d) > 0;
        if (as_json) json_member("differences", d), json_member("stuck_collectives", stuck_collectives(&j));
        else json_decref(d), report_many(&j, print_trace);
    } else if (!as_json) {
        json_t *findings = report_findings(&j.first), *groups = report_failures(&j.first);
        print_trace(&j.first, findings, groups);
        json_decref(findings), json_decref(groups);
    }
    if (as_json) {
        json_member("error_count", json_integer(errors));
        printf("\n}\n");
    }
    job_free(&j);
    if (bad) return EXIT_BAD_TRACE;
    return errors ? EXIT_FINDINGS : EXIT_CLEAN;
}
