/* cudashim bugreport TRACE|DIR...: one Markdown file to paste into a GitHub issue: the command,
 * findings, crash, failing calls, loaded libraries, and the loading environment. Everything goes
 * through redact_text() on the way out: secret-looking values, URL credentials, home
 * directories, and with --hide-hosts the host names. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "redact.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim bugreport [-o FILE] [--hide-hosts] TRACE|DIR...\n"
               "  Markdown for a bug report (default: stdout). Values of variables and options named like\n"
               "  *TOKEN*, *KEY*, *SECRET*, *PASSWORD*, and credentials in URLs, are replaced by [redacted];\n"
               "  home directories are written as ~. --hide-hosts replaces host names with host-1, host-2, ...\n");
}

static void md_argv(FILE *f, json_t *argv)
{
    size_t i;
    json_t *a;
    int hide_next = 0;
    fputs("`", f);
    json_array_foreach(argv, i, a) {
        const char *s = json_string_value(a) ? json_string_value(a) : "";
        if (i) fputc(' ', f);
        if (hide_next) { fputs("[redacted]", f); hide_next = 0; continue; }
        /* "--api-key VALUE": the flag names a secret and carries no '=' */
        if (s[0] == '-' && !strchr(s, '=') && redact_is_secret_name(s, strlen(s))) hide_next = 1;
        for (const char *p = s; *p; p++) fputc(*p == '`' ? '\'' : *p, f);
    }
    fputs("`", f);
}

static void md_trace(FILE *f, struct trace *t)
{
    fprintf(f, "### %s\n\n", trace_label(t));
    fputs("- **Command:** ", f);
    md_argv(f, json_object_get(t->header, "argv"));
    fprintf(f, "\n- **Trace:** `%s`, format %lld, shim %s, %s mode%s\n", t->file, jint(t->header, "version", 0),
            jstr(t->header, "shim_version"), jstr(t->header, "mode"), t->cut_last_line ? ", last line cut" : "");
    if (t->summary)
        fprintf(f, "- **Calls:** %lld, failed %lld, dropped %lld, threads %lld\n", jint(t->summary, "total_calls", 0),
                jint(t->summary, "total_errors", 0), jint(t->summary, "dropped", 0), jint(t->summary, "threads", 0));
    json_t *findings = report_findings(t), *groups = report_failures(t);
    size_t i;
    json_t *x;
    fputs("\n#### Findings\n\n", f);
    if (!json_array_size(findings)) fputs("None.\n", f);
    json_array_foreach(findings, i, x)
        fprintf(f, "- **%s `%s`**: %s  \n  Fix: %s\n", jstr(x, "severity"), jstr(x, "id"), jstr(x, "summary"), jstr(x, "fix"));
    if (t->crash) {
        json_t *c = t->crash;
        fprintf(f, "\n#### Crash\n\n%s (%s)%s%s on thread %lld\n\n```text\n", jstr(c, "signal_name"), jstr(c, "code_name"),
                *jstr(c, "inside_call") ? " inside " : "", jstr(c, "inside_call"), jint(c, "tid", 0));
        json_array_foreach(json_object_get(c, "frames"), i, x) {
            if (i >= 32) break;
            json_t *l = *jstr(x, "lib") ? trace_library_of(t, jstr(x, "lib")) : NULL;
            fprintf(f, "#%-2zu %s%s%lld %s%s%s\n", i, *jstr(x, "symbol") ? jstr(x, "symbol") : jstr(x, "offset"),
                    *jstr(x, "symbol") ? "+" : " ", *jstr(x, "symbol") ? jint(x, "symbol_offset", 0) : 0LL, jstr(x, "lib"),
                    l ? " " : "", l ? jstr(l, "version") : "");
        }
        fputs("```\n\nLast calls on the crashing thread: ", f);
        json_array_foreach(json_object_get(json_object_get(c, "this_thread"), "calls"), i, x)
            fprintf(f, "%s`%s`=%lld", i ? ", " : "", jstr(x, "api"), jint(x, "result", 0));
        fputs("\n", f);
    }
    fputs("\n#### Failing calls\n\n", f);
    if (!json_array_size(groups)) fputs("None.\n", f);
    else fputs("| call | result | count | first |\n|---|---|---|---|\n", f);
    json_array_foreach(groups, i, x) {
        json_t *first = json_object_get(x, "first");
        fprintf(f, "| `%s` | %s (%lld) | %lld | +%.3fs, thread %lld, via %s%s%s |\n", jstr(x, "api"), jstr(x, "result_name"),
                jint(x, "result", 0), jint(x, "count", 0) + jint(x, "not_written", 0),
                (double)(jint(first, "ts_ns", 0) - t->start_mono_ns) / 1e9, jint(first, "tid", 0), jstr(first, "via"),
                *jstr(first, "symbol") ? ", symbol " : "", jstr(first, "symbol"));
    }
    fputs("\n#### Loaded libraries\n\n", f);
    if (!json_array_size(t->libraries)) fputs("No CUDA-stack library was loaded.\n", f);
    else fputs("| kind | version | path | found via |\n|---|---|---|---|\n", f);
    json_array_foreach(t->libraries, i, x)
        fprintf(f, "| %s | %s | `%s` | %s |\n", jstr(x, "kind"), *jstr(x, "version") ? jstr(x, "version") : jstr(x, "file_version"),
                jstr(x, "path"), jstr(x, "found_via"));
    json_array_foreach(t->systems, i, x)
        if (*jstr(x, "kernel_module")) fprintf(f, "\nKernel module: %s\n", jstr(x, "kernel_module"));
    fputs("\n#### Environment that decides loading\n\n", f);
    json_t *env = json_object_get(t->header, "env");
    if (!json_object_size(env)) fputs("None of the recorded variables was set.\n", f);
    else fputs("| variable | value |\n|---|---|\n", f);
    const char *k;
    json_object_foreach(env, k, x) {
        const char *v = json_string_value(x) ? json_string_value(x) : "";
        fprintf(f, "| `%s` | `%s` |\n", k, redact_is_secret_name(k, strlen(k)) ? "[redacted]" : v);
    }
    fputs("\n", f);
    json_decref(findings), json_decref(groups);
}

int cmd_bugreport(int argc, char **argv)
{
    const char *out = NULL;
    int hide_hosts = 0, first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) { usage(stdout); return EXIT_CLEAN; }
        else if (!strcmp(argv[first], "-o") && first + 1 < argc) out = argv[++first];
        else if (!strcmp(argv[first], "--hide-hosts")) hide_hosts = 1;
        else { fprintf(stderr, "cudashim bugreport: unknown option %s\n", argv[first]); usage(stderr); return EXIT_USAGE; }
    }
    if (first >= argc) { usage(stderr); return EXIT_USAGE; }
    struct trace *ts;
    int n;
    int bad = traces_load(argc - first, argv + first, &ts, &n);
    if (!n) return EXIT_BAD_TRACE;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fputs("## cudashim report\n\n", m);
    fprintf(m, "%d process%s traced with cudashim %s. Produced by `cudashim bugreport`; secrets, credentials and home "
               "directories are redacted.\n\n", n, n == 1 ? "" : "es", jstr(ts[0].header, "shim_version"));
    if (n > 1) {
        json_t *d = report_differences(ts, n);
        fputs("### What differs between processes\n\n", m);
        if (!json_array_size(d)) fputs("Nothing: every process loaded the same driver, libraries and versions.\n\n", m);
        size_t i, j, k2;
        json_t *x, *v, *w;
        json_array_foreach(d, i, x) {
            fprintf(m, "- **%s**:", jstr(x, "what"));
            json_array_foreach(json_object_get(x, "values"), j, v) {
                fprintf(m, "%s `%s` on ", j ? ";" : "", jstr(v, "value"));
                json_array_foreach(json_object_get(v, "traces"), k2, w) fprintf(m, "%s%s", k2 ? ", " : "", json_string_value(w));
            }
            fputs("\n", m);
        }
        fputs("\n", m);
        json_decref(d);
    }
    for (int k = 0; k < n; k++) md_trace(m, &ts[k]);
    fclose(m);
    const char **hosts = calloc((size_t)n + 1, sizeof *hosts);
    int nh = 0;
    for (int k = 0; hide_hosts && k < n; k++) {
        const char *h = jstr(ts[k].header, "host");
        int dup = 0;
        for (int j = 0; j < nh; j++) dup |= !strcmp(hosts[j], h);
        if (!dup && *h) hosts[nh++] = h;
    }
    struct redact_opts ro = { hosts, nh };
    char *clean = redact_text(text, &ro);
    FILE *o = out ? fopen(out, "w") : stdout;
    if (!o) { perror(out); return EXIT_USAGE; }
    fputs(clean, o);
    if (out) { fclose(o); fprintf(stderr, "cudashim: wrote %s\n", out); }
    free(clean), free(text), free(hosts);
    for (int k = 0; k < n; k++) trace_free(&ts[k]);
    free(ts);
    return bad ? EXIT_BAD_TRACE : EXIT_CLEAN;
}
