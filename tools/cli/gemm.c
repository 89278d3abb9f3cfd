/* The GEMM census of a trace (its "gemm" lines): shares of work by precision and the largest
 * GEMMs, for the report's GEMM section and for diff's comparison of two runs. */
#include <stdio.h>
#include <string.h>

#include "../../shim/base/gemm_math.h"
#include "cli.h"

static double flops_of(json_t *g)
{
    json_t *v = json_object_get(g, "flops");
    return json_is_number(v) ? json_number_value(v) : 0;
}

double gemm_shares(const struct trace *t, double shares[], long long *calls)
{
    double total = 0;
    memset(shares, 0, sizeof(double) * CS_P_COUNT);
    if (calls) *calls = 0;
    size_t i;
    json_t *g;
    json_array_foreach(t->gemms, i, g) {
        enum cs_precision p = cs_precision_from_name(jstr(g, "precision"));
        if (p == CS_P_COUNT) p = CS_P_OTHER;
        shares[p] += flops_of(g);
        total += flops_of(g);
        if (calls) *calls += jint(g, "count", 0);
    }
    if (total > 0)
        for (int p = 0; p < CS_P_COUNT; p++) shares[p] /= total;
    return total;
}

/* "bf16 90%, fp8 10%": the precisions by share, largest first, those under 0.5% left out */
void gemm_shares_text(char *out, size_t cap, const double shares[])
{
    int done[CS_P_COUNT] = { 0 };
    size_t len = 0;
    out[0] = 0;
    for (;;) {
        int best = -1;
        for (int p = 0; p < CS_P_COUNT; p++)
            if (!done[p] && shares[p] >= 0.005 && (best < 0 || shares[p] > shares[best])) best = p;
        if (best < 0) break;
        done[best] = 1;
        len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s%s %.0f%%", len ? ", " : "",
                                cs_precision_name((enum cs_precision)best), 100 * shares[best]);
        if (len >= cap) break;
    }
}

static void shape_text(char *out, size_t cap, json_t *g)
{
    if (json_is_true(json_object_get(g, "shapes_merged"))) snprintf(out, cap, "shapes merged");
    else if (jint(g, "batch", 1) > 1)
        snprintf(out, cap, "m=%lld n=%lld k=%lld batch=%lld", jint(g, "m", 0), jint(g, "n", 0), jint(g, "k", 0),
                 jint(g, "batch", 1));
    else snprintf(out, cap, "m=%lld n=%lld k=%lld", jint(g, "m", 0), jint(g, "n", 0), jint(g, "k", 0));
}

void print_gemm(const struct trace *t)
{
    if (!json_array_size(t->gemms)) return;
    double shares[CS_P_COUNT];
    long long calls;
    double total = gemm_shares(t, shares, &calls);
    char work[32], by[256], shape[96], line[512];
    cs_gemm_work_text(work, sizeof work, total);
    gemm_shares_text(by, sizeof by, shares);
    rule(stdout, "GEMM WORK");
    printf("  %s in %lld calls: %s\n", work, calls, by[0] ? by : "none succeeded");
    size_t i;
    json_t *g;
    json_array_foreach(t->gemms, i, g) {
        if (i == 5) {
            printf("  ... %zu more kinds of GEMM in the trace's gemm lines\n", json_array_size(t->gemms) - 5);
            break;
        }
        shape_text(shape, sizeof shape, g);
        cs_gemm_work_text(work, sizeof work, flops_of(g));
        json_t *tc = json_object_get(g, "tensor_cores");
        snprintf(line, sizeof line, "%s %s %s%s, %s%s, %lld calls%s, %s (%.0f%%)%s", jstr(g, "api"), jstr(g, "precision"),
                 jstr(g, "transa"), jstr(g, "transb"), shape,
                 json_is_false(json_object_get(g, "aligned")) ? ", not 16-byte aligned" : "", jint(g, "count", 0),
                 jint(g, "failed", 0) ? ", some refused" : "", work, total > 0 ? 100 * flops_of(g) / total : 0.0,
                 json_is_false(tc) ? ", no Tensor Cores (FMA kernel)" : json_is_true(tc) ? ", Tensor Cores" : "");
        wrap(stdout, "    ", line, CLI_WIDTH);
    }
}
