/* cudashim diff GOOD BAD: a trace from the working stack against one from the upgraded stack.
 * The libraries whose version or path changed (or that appeared or went), the symbols that are
 * now missing, the findings that are new, and the first call whose result differs, with the
 * calls around it. Calls are matched by (API, n-th occurrence), so extra calls in one run do
 * not shift the comparison; GOOD's calls are indexed by that identity, so the work is linear in
 * the two traces. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../shim/base/gemm_math.h"
#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim diff [--json] GOOD BAD\n"
               "  GOOD: a trace from the stack that worked; BAD: from the upgraded stack that does not.\n"
               "  Exit status: 0 when nothing that matters differs, 1 when something does.\n");
}

static json_t *lib_by_kind(const struct trace *t, const char *kind, const char *name)
{
    size_t i;
    json_t *l, *best = NULL;
    json_array_foreach(t->libraries, i, l) {
        if (strcmp(jstr(l, "kind"), kind)) continue;
        if (!strcmp(jstr(l, "name"), name)) return l;
        if (!best) best = l;
    }
    return best;
}

static const char *ver(json_t *l)
{
    return *jstr(l, "version") ? jstr(l, "version") : *jstr(l, "file_version") ? jstr(l, "file_version") : "?";
}

/* Missing symbols: failed driver lookups and missing-symbol findings, by symbol. */
static json_t *missing_symbols(const struct trace *t)
{
    json_t *m = json_object();
    size_t i;
    json_t *c;
    json_array_foreach(t->calls, i, c)
        if (!strncmp(jstr(c, "api"), "cuGetProcAddress", 16) && *jstr(c, "symbol") &&
            (jint(c, "result", 0) || strcmp(jstr(c, "status"), "CU_GET_PROC_ADDRESS_SUCCESS")))
            json_object_set_new(m, jstr(c, "symbol"), json_string(jstr(c, "caller")));
    json_array_foreach(t->findings, i, c)
        if (!strcmp(jstr(c, "id"), "missing-symbol")) {
            json_t *ev = json_object_get(c, "evidence");
            if (*jstr(ev, "symbol")) json_object_set_new(m, jstr(ev, "symbol"), json_string(jstr(c, "summary")));
        }
    return m;
}

static int cmp_ts(const void *a, const void *b)
{
    const struct call_rec *x = *(const struct call_rec *const *)a, *y = *(const struct call_rec *const *)b;
    return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns ? 1 : (x->offset > y->offset) - (x->offset < y->offset);
}

static const struct call_rec **sorted_calls(const struct trace *t)
{
    const struct call_rec **v = malloc(sizeof *v * (t->nrecs + 1));
    for (size_t i = 0; i < t->nrecs; i++) v[i] = &t->recs[i];
    qsort(v, t->nrecs, sizeof *v, cmp_ts);
    return v;
}

static void print_call(const char *tag, const struct trace *t, json_t *c)
{
    printf("    %-4s %-28s -> %s (%lld)%s%s  at +%.3fs\n", tag, jstr(c, "api"),
           *jstr(c, "result_name") ? jstr(c, "result_name") : "?", jint(c, "result", 0),
           *jstr(c, "symbol") ? " symbol " : "", jstr(c, "symbol"),
           (double)(jint(c, "ts_ns", 0) - t->start_mono_ns) / 1e9);
}

int cmd_diff(int argc, char **argv)
{
    const char *files[2];
    int nf = 0, as_json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return EXIT_CLEAN; }
        else if (!strcmp(argv[i], "--json")) as_json = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "cudashim diff: unknown option %s\n", argv[i]); return EXIT_USAGE; }
        else if (nf < 2) files[nf++] = argv[i];
        else { usage(stderr); return EXIT_USAGE; }
    }
    if (nf != 2) { usage(stderr); return EXIT_USAGE; }
    for (int k = 0; k < 2; k++) {
        struct stat st;
        if (!stat(files[k], &st) && S_ISDIR(st.st_mode)) {
            fprintf(stderr, "cudashim diff: %s is a directory; diff compares two trace files (cudashim report %s "
                            "lists the traces in it)\n", files[k], files[k]);
            return EXIT_USAGE;
        }
    }
    struct trace g, b;
    char err[1024];
    trace_keep_all_calls = 1;
    if (trace_load(files[0], &g, err, sizeof err)) { fprintf(stderr, "cudashim diff: %s\n", err); return EXIT_BAD_TRACE; }
    if (trace_load(files[1], &b, err, sizeof err)) { fprintf(stderr, "cudashim diff: %s\n", err); trace_free(&g); return EXIT_BAD_TRACE; }
    json_t *out = json_pack("{s:[], s:[], s:[], s:n}", "libraries", "missing_symbols", "new_findings", "first_divergence");
    json_t *libs = json_object_get(out, "libraries");

    /* Libraries: changed, appeared, gone. */
    size_t i;
    json_t *l;
    json_array_foreach(b.libraries, i, l) {
        json_t *o = lib_by_kind(&g, jstr(l, "kind"), jstr(l, "name"));
        if (!o)
            json_array_append_new(libs, json_pack("{s:s, s:s, s:s, s:s}", "change", "new", "kind", jstr(l, "kind"), "bad_path",
                                                  jstr(l, "path"), "bad_version", ver(l)));
        else if (strcmp(ver(o), ver(l)) || strcmp(jstr(o, "path"), jstr(l, "path")))
            json_array_append_new(libs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "change", "changed", "kind",
                                                  jstr(l, "kind"), "good_version", ver(o), "bad_version", ver(l), "good_path",
                                                  jstr(o, "path"), "bad_path", jstr(l, "path"), "good_found_via",
                                                  jstr(o, "found_via"), "bad_found_via", jstr(l, "found_via")));
    }
    json_array_foreach(g.libraries, i, l)
        if (!lib_by_kind(&b, jstr(l, "kind"), jstr(l, "name")))
            json_array_append_new(libs, json_pack("{s:s, s:s, s:s, s:s}", "change", "gone", "kind", jstr(l, "kind"),
                                                  "good_path", jstr(l, "path"), "good_version", ver(l)));
    /* Symbols missing now and not before. */
    json_t *mg = missing_symbols(&g), *mb = missing_symbols(&b);
    const char *sym;
    json_t *why;
    json_object_foreach(mb, sym, why)
        if (!json_object_get(mg, sym))
            json_array_append_new(json_object_get(out, "missing_symbols"), json_pack("{s:s, s:O}", "symbol", sym, "where", why));
    json_decref(mg), json_decref(mb);
    /* Findings that are new. */
    json_t *f, *good_findings = json_object();
    char key[8192];
    json_array_foreach(g.findings, i, f) {
        snprintf(key, sizeof key, "%s\n%s", jstr(f, "id"), jstr(f, "summary"));
        json_object_set_new(good_findings, key, json_true());
    }
    json_array_foreach(b.findings, i, f) {
        snprintf(key, sizeof key, "%s\n%s", jstr(f, "id"), jstr(f, "summary"));
        if (!json_object_get(good_findings, key)) json_array_append(json_object_get(out, "new_findings"), f);
    }
    json_decref(good_findings);
    /* The first call (in BAD's time order) whose result differs from GOOD's same occurrence. */
    size_t ng = g.nrecs, nb = b.nrecs;
    const struct call_rec **cg = sorted_calls(&g), **cb = sorted_calls(&b);
    /* GOOD's calls indexed by identity (API, n-th occurrence): one pass over each trace. */
    json_t *by_api = json_object();
    for (size_t x = 0; x < ng; x++) {
        json_t *list = json_object_get(by_api, cg[x]->api);
        if (!list) json_object_set_new(by_api, cg[x]->api, list = json_array());
        json_array_append_new(list, json_integer((json_int_t)x));
    }
    json_t *seen_b = json_object();
    long div = -1, gmatch = -1;
    for (size_t k = 0; k < nb && div < 0; k++) {
        const char *api = cb[k]->api;
        long long nth = jint(seen_b, api, 0);
        json_object_set_new(seen_b, api, json_integer(nth + 1));
        json_t *at = json_array_get(json_object_get(by_api, api), (size_t)nth);
        if (at) {
            size_t x = (size_t)json_integer_value(at);
            if (cg[x]->result != cb[k]->result) div = (long)k, gmatch = (long)x;
        } else if (cb[k]->result != 0) {
            div = (long)k;  /* GOOD never made this call */
        }
    }
    json_decref(seen_b);
    json_decref(by_api);
    if (div >= 0) {
        json_t *ctx = json_array();
        for (long k = div - 3 < 0 ? 0 : div - 3; k < div; k++) {
            json_t *c = trace_read_call(&b, cb[k]);
            if (c) json_array_append_new(ctx, c);
        }
        json_t *bad_call = trace_read_call(&b, cb[div]), *good_call = gmatch >= 0 ? trace_read_call(&g, cg[gmatch]) : NULL;
        json_object_set_new(out, "first_divergence", json_pack("{s:o, s:o, s:o}", "bad", bad_call ? bad_call : json_null(),
                                                               "good", good_call ? good_call : json_null(), "before", ctx));
    }
    /* GEMM work by precision: an upgrade that runs but is no faster shows here (TF32 lost, FP8 refused). */
    double gs[CS_P_COUNT], bs[CS_P_COUNT];
    double gtotal = gemm_shares(&g, gs, NULL), btotal = gemm_shares(&b, bs, NULL);
    int gemm_moved = 0;
    if (gtotal > 0 || btotal > 0) {
        json_t *gj = json_object(), *bj = json_object();
        for (int p = 0; p < CS_P_COUNT; p++) {
            if (gs[p] > 0) json_object_set_new(gj, cs_precision_name((enum cs_precision)p), json_real(gs[p]));
            if (bs[p] > 0) json_object_set_new(bj, cs_precision_name((enum cs_precision)p), json_real(bs[p]));
            if (gs[p] - bs[p] > 0.1 || bs[p] - gs[p] > 0.1) gemm_moved = 1;
        }
        json_object_set_new(out, "gemm", json_pack("{s:f, s:f, s:o, s:o}", "good_flops", gtotal, "bad_flops", btotal,
                                                   "good_shares", gj, "bad_shares", bj));
    }
    int differs = gemm_moved || json_array_size(libs) || json_array_size(json_object_get(out, "missing_symbols")) ||
                  json_array_size(json_object_get(out, "new_findings")) || div >= 0;
    if (as_json) {
        json_dumpf(out, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        printf("\n");
    } else {
        char tmp[1024], tmp2[1024], line[4096];
        printf("%scudashim diff%s: %s (good) -> %s (bad)\n", c_bold(), c_reset(), home_tilde(g.file, tmp, sizeof tmp),
               home_tilde(b.file, tmp2, sizeof tmp2));
        rule(stdout, "LIBRARIES");
        if (!json_array_size(libs)) printf("  the same libraries, versions and paths\n");
        json_array_foreach(libs, i, l) {
            const char *ch = jstr(l, "change");
            if (!strcmp(ch, "changed") && !strcmp(jstr(l, "good_path"), jstr(l, "bad_path")))
                snprintf(line, sizeof line, "%s: %s -> %s at %s", jstr(l, "kind"), jstr(l, "good_version"),
                         jstr(l, "bad_version"), home_tilde(jstr(l, "bad_path"), tmp, sizeof tmp));
            else if (!strcmp(ch, "changed"))
                snprintf(line, sizeof line, "%s: %s -> %s; %s -> %s (now via %s)", jstr(l, "kind"), jstr(l, "good_version"),
                         jstr(l, "bad_version"), home_tilde(jstr(l, "good_path"), tmp, sizeof tmp),
                         home_tilde(jstr(l, "bad_path"), tmp2, sizeof tmp2), jstr(l, "bad_found_via"));
            else if (!strcmp(ch, "new"))
                snprintf(line, sizeof line, "%s: new in the bad run: %s %s", jstr(l, "kind"), jstr(l, "bad_version"),
                         home_tilde(jstr(l, "bad_path"), tmp, sizeof tmp));
            else
                snprintf(line, sizeof line, "%s: gone in the bad run (was %s %s)", jstr(l, "kind"), jstr(l, "good_version"),
                         home_tilde(jstr(l, "good_path"), tmp, sizeof tmp));
            wrap(stdout, "  ", line, CLI_WIDTH);
        }
        rule(stdout, "SYMBOLS MISSING NOW");
        json_t *ms = json_object_get(out, "missing_symbols");
        if (!json_array_size(ms)) printf("  none\n");
        json_array_foreach(ms, i, l) {
            snprintf(line, sizeof line, "%s (%s)", jstr(l, "symbol"), json_string_value(json_object_get(l, "where")));
            wrap(stdout, "  ", line, CLI_WIDTH);
        }
        rule(stdout, "NEW FINDINGS");
        json_t *nfd = json_object_get(out, "new_findings");
        if (!json_array_size(nfd)) printf("  none\n");
        json_array_foreach(nfd, i, f) {
            snprintf(line, sizeof line, "%s %s: %s", jstr(f, "severity"), jstr(f, "id"), jstr(f, "summary"));
            wrap(stdout, "  ", line, CLI_WIDTH);
        }
        if (gtotal > 0 || btotal > 0) {
            char gw[32], bw[32], gt[256], bt[256];
            cs_gemm_work_text(gw, sizeof gw, gtotal), cs_gemm_work_text(bw, sizeof bw, btotal);
            gemm_shares_text(gt, sizeof gt, gs), gemm_shares_text(bt, sizeof bt, bs);
            rule(stdout, "GEMM WORK BY PRECISION");
            printf("  good: %s: %s\n  bad:  %s: %s\n", gw, gt[0] ? gt : "none", bw, bt[0] ? bt : "none");
            if (gemm_moved) printf("  the precision of the GEMM work changed: see the findings for why\n");
        }
        rule(stdout, "FIRST CALL WHOSE RESULT DIFFERS");
        json_t *d = json_object_get(out, "first_divergence");
        if (json_is_null(d)) printf("  none: every call the bad run recorded returned what it did in the good run\n");
        else {
            json_t *x;
            json_array_foreach(json_object_get(d, "before"), i, x) print_call("   ", &b, x);
            print_call("bad", &b, json_object_get(d, "bad"));
            if (!json_is_null(json_object_get(d, "good"))) print_call("good", &g, json_object_get(d, "good"));
            else printf("    (the good run did not record this call)\n");
        }
    }
    free((void *)cg), free((void *)cb);
    json_decref(out);
    trace_free(&g), trace_free(&b);
    return differs ? EXIT_FINDINGS : EXIT_CLEAN;
}
