/* cudashim bugreport TRACE|DIR...: one Markdown file to paste into a GitHub issue: the command,
 * findings, crash, failing calls, loaded libraries, and the loading environment. Everything goes
 * through redact_text() on the way out: secret-looking values, URL credentials, home
 * directories, and with --hide-hosts the host names. */
#include <stdlib.h>
#include <string.h>

#include "job.h"
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

static void md_trace(FILE *f, const struct trace *t)
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
    if (json_array_size(t->hangs)) {
        /* The last report: the longest the stuck call had been stuck. */
        json_t *lines = hang_lines(t, json_array_get(t->hangs, json_array_size(t->hangs) - 1));
        fprintf(f, "\n#### Hang (%zu reports, the last one)\n\n", json_array_size(t->hangs));
        json_array_foreach(lines, i, x)
            fprintf(f, "%*s- %s\n", 2 * (int)jint(x, "level", 0), "", jstr(x, "text"));
        json_decref(lines);
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

/* The machine, as collect_env would tell it: from the trace's header, its kernel-module line
 * and the device queries the program made. */
static void md_system(FILE *f, const struct trace *t)
{
    json_t *sys = json_object_get(t->header, "system");
    fputs("### System\n\n", f);
    if (*jstr(sys, "os")) fprintf(f, "- **OS:** %s, kernel %s (%s), glibc %s\n", jstr(sys, "os"), jstr(sys, "kernel"),
                                  jstr(sys, "machine"), jstr(sys, "glibc"));
    if (*jstr(sys, "python")) fprintf(f, "- **Python:** %s\n", jstr(sys, "python"));
    size_t i;
    json_t *x;
    json_array_foreach(t->systems, i, x)
        if (*jstr(x, "kernel_module")) fprintf(f, "- **NVIDIA kernel module:** %s\n", jstr(x, "kernel_module"));
    json_array_foreach(t->libraries, i, x)
        if (!strcmp(jstr(x, "kind"), "driver"))
            fprintf(f, "- **Driver (user space):** CUDA %s, `%s`%s%s\n", *jstr(x, "version") ? jstr(x, "version") : "?",
                    jstr(x, "path"), *jstr(x, "file_version") ? ", " : "", jstr(x, "file_version"));
    const char *gpu = "", *cc = "";
    json_array_foreach(t->calls, i, x) {
        if (!*gpu && *jstr(x, "name") && !strncmp(jstr(x, "api"), "cuDeviceGetName", 15)) gpu = jstr(x, "name");
        if (!*cc && *jstr(x, "compute_capability")) cc = jstr(x, "compute_capability");
    }
    if (*gpu || *cc) fprintf(f, "- **GPU:** %s%s%s\n", *gpu ? gpu : "?", *cc ? ", compute capability " : "", cc);
    json_array_foreach(t->libraries, i, x)
        if (!strcmp(jstr(x, "kind"), "framework"))
            fprintf(f, "- **Framework:** %s%s`%s`\n", jstr(x, "version"), *jstr(x, "version") ? " " : "", jstr(x, "path"));
    fputs("\n", f);
}

#define BUGREPORT_MAX 60000  /* a GitHub issue body holds 65,536 characters */
#define SHOWN_IN_FULL 8

int cmd_bugreport(int argc, char **argv)
{
    const char *out = NULL;
    int hide_hosts = 0, npaths, rc0;
    char **paths;
    const struct cli_opt opts[] = { { "-o", NULL, &out }, { "--hide-hosts", &hide_hosts, NULL }, { NULL, NULL, NULL } };
    if ((rc0 = cli_parse("bugreport", argc, argv, opts, usage, &paths, &npaths)) >= 0) return rc0;
    struct job j = { 0 };
    j.use_summaries = 1;
    int bad = job_read(&j, npaths, paths, NULL, NULL, 0);
    free(paths);
    if (!j.n || !j.have_first) { job_free(&j); return EXIT_BAD_TRACE; }
    int n = j.n;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fputs("## cudashim report\n\n", m);
    fprintf(m, "%d process%s traced with cudashim %s. Produced by `cudashim bugreport`; secrets, credentials and home "
               "directories are redacted.\n\n", n, n == 1 ? "" : "es", jstr(j.first.header, "shim_version"));
    md_system(m, &j.first);
    size_t i;
    json_t *x;
    if (n > 1) {
        json_t *stacks = stack_groups(&j);
        fputs("### What differs between processes\n\n", m);
        int nodriver;
        char *launchers = driverless_who(&j, &nodriver);
        if (launchers) fprintf(m, "Not compared: %s never loaded the CUDA driver (a launcher or helper process).\n\n", launchers);
        free(launchers);
        if (json_array_size(stacks) == 1) fputs("Nothing: every process that used CUDA loaded the same driver, libraries and versions.\n", m);
        json_array_foreach(stacks, i, x) {
            if (json_array_size(stacks) == 1) break;
            if (*jstr(x, "differs")) fprintf(m, "- **%s**: %s\n", jstr(x, "who"), jstr(x, "differs"));
            else fprintf(m, "- **%s**: the most common stack\n", jstr(x, "who"));
        }
        fputs("\n", m);
        json_decref(stacks);
        json_t *stuck = stuck_collectives(&j);
        if (json_array_size(stuck)) fputs("### Stuck NCCL communicators\n\n", m);
        json_array_foreach(stuck, i, x) fprintf(m, "- %s\n", jstr(x, "text"));
        if (json_array_size(stuck)) fputs("\n", m);
        json_decref(stuck);
    }
    /* One section per way the processes ended (same stack, same findings, same failing calls). */
    json_t *ends = ending_groups(&j);
    json_array_foreach(ends, i, x) {
        int first = (int)jint(x, "first", 0);
        if (i == SHOWN_IN_FULL) fputs("### Not shown in full\n\n", m);
        if (i >= SHOWN_IN_FULL) {
            fprintf(m, "- **%s**: %lld findings, %lld kinds of failing call%s (`%s`)\n", jstr(x, "who"),
                    jint(x, "findings", 0), jint(x, "failing", 0), json_is_true(json_object_get(x, "crash")) ? ", a crash" : "",
                    job_file(&j, first));
            continue;
        }
        if (n > 1 && jint(x, "count", 1) > 1)
            fprintf(m, "*%s loaded the same stack and ended the same way; the first of them:*\n\n", jstr(x, "who"));
        struct trace tmp;
        const struct trace *t = job_trace_at(&j, first, &tmp);
        if (t) md_trace(m, t);
        job_trace_done(&j, t, &tmp);
    }
    json_decref(ends);
    fclose(m);
    const char **hosts = calloc((size_t)j.hosts.count + 1, sizeof *hosts);
    int nh = 0;
    for (uint32_t k = 0; hide_hosts && k < j.hosts.count; k++) hosts[nh++] = strtab_str(&j.hosts, k);
    struct redact_opts ro = { hosts, nh };
    char *clean = redact_text(text, &ro);
    int rc = bad ? EXIT_BAD_TRACE : EXIT_CLEAN;
    size_t total = strlen(clean);
    if (total > BUGREPORT_MAX) {
        /* Too long for an issue body: the whole report goes to a file to attach, and the body is
         * cut at a section boundary with a note that says so. */
        char full[4096];
        snprintf(full, sizeof full, "%s", out ? out : "cudashim-bugreport");
        size_t fl = strlen(full);
        snprintf(full + fl, sizeof full - fl, "%s", fl > 3 && !strcmp(full + fl - 3, ".md") ? "" : ".md");
        fl = strlen(full);
        if (fl > 3) full[fl - 3] = 0;
        strncat(full, ".full.md", sizeof full - strlen(full) - 1);
        FILE *ff = fopen(full, "w");
        if (ff) { fputs(clean, ff); fclose(ff); fprintf(stderr, "cudashim: wrote %s (the whole report, to attach)\n", full); }
        size_t cut = BUGREPORT_MAX - 400;
        while (cut > 0 && strncmp(clean + cut, "\n### ", 5)) cut--;
        snprintf(clean + cut, total + 1 - cut,
                 "\n\n---\n*Cut at %d characters for an issue body: the whole report (%zu characters) is in `%s`; attach "
                 "it.*\n", BUGREPORT_MAX, total, full);
    }
    FILE *o = out ? fopen(out, "w") : stdout;
    if (!o) { perror(out); rc = EXIT_USAGE; }
    else {
        fputs(clean, o);
        if (out) { fclose(o); fprintf(stderr, "cudashim: wrote %s\n", out); }
    }
    free(clean), free(text), free(hosts);
    job_free(&j);
    return rc;
}
