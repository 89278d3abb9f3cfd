/* GEMMs that ran slower than the GPU allows, or were asked for where they cannot run: the census
 * (evidence/gemm_census.h) read at exit. Shares are of FLOPs, not of calls; a run whose GEMM work
 * is trivial gets nothing but a refused request. A precision the program chose is an info line
 * with the gain it leaves; a request the GPU or library cannot run is an error. */
#include <stdio.h>
#include <string.h>

#include "../base/gemm_math.h"
#include "../base/json.h"
#include "../trace/findings.h"
#include "rules.h"

static const char *op(unsigned t) { return t == 0 ? "N" : t == 1 ? "T" : "C"; }

static const char *api_name_of(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r)
{
    const char *n = g->api_name ? g->api_name(r->key.api) : NULL;
    return n ? n : "a GEMM";
}

static int row_cc(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r) { return r->key.cc ? r->key.cc : g->cc; }

static enum cs_precision row_precision(const struct cs_gemm_row *r)
{
    return cs_gemm_precision(r->key.atype, r->key.compute, r->key.math);
}

static void shape_text(char *out, size_t cap, const struct cs_gemm_row *r)
{
    const struct cs_gemm_key *k = &r->key;
    if (!k->m && !k->n && !k->k) snprintf(out, cap, "shapes merged");
    else if (k->batch > 1)
        snprintf(out, cap, "m=%lld n=%lld k=%lld batch=%lld", (long long)k->m, (long long)k->n, (long long)k->k,
                 (long long)k->batch);
    else snprintf(out, cap, "m=%lld n=%lld k=%lld", (long long)k->m, (long long)k->n, (long long)k->k);
}

/* The largest row matching a test, NULL if none. Rows come largest work first. */
typedef int (*row_test)(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r);
static const struct cs_gemm_row *largest(const struct cs_gemm_evidence *g, row_test test)
{
    for (int i = 0; i < g->n; i++)
        if (test(g, &g->rows[i])) return &g->rows[i];
    return NULL;
}

static double work_of(const struct cs_gemm_evidence *g, row_test test, uint64_t *calls)
{
    double w = 0;
    if (calls) *calls = 0;
    for (int i = 0; i < g->n; i++)
        if (test(g, &g->rows[i])) {
            w += g->rows[i].flops;
            if (calls) *calls += g->rows[i].count;
        }
    return w;
}

static int any(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r) { (void)g, (void)r; return 1; }
static int strict_fp32(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r)
{
    return row_precision(r) == CS_P_FP32 && row_cc(g, r) >= 80;
}
static int reduced(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r)
{
    (void)g;
    return cs_precision_is_reduced(row_precision(r));
}
static int fp32_as_fp16_legacy(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r)
{
    return r->key.atype == CS_R_32F && (r->key.compute == CS_COMPUTE_IMPLIED || r->key.compute == CS_COMPUTE_32F) &&
           r->key.math != CS_MATH_UNKNOWN && (r->key.math & CS_MATH_MASK) == CS_MATH_TENSOR_OP && row_cc(g, r) >= 80;
}
static int fp8(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r) { (void)g; return row_precision(r) == CS_P_FP8; }
static int fma_kernel(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r)
{
    int a = r->key.algo;
    if (!a || a > CS_GEMM_ALGOS || !g->algo_known || !g->algo_known[a]) return 0;
    enum cs_precision p = row_precision(r);
    return (g->algo_flags[a] & 0xfe) == 0 && (p == CS_P_FP16 || p == CS_P_BF16 || p == CS_P_TF32 || p == CS_P_FP8);
}

#define TRIVIAL_WORK 1e12  /* below a TFLOP of GEMMs, their speed cannot be what the user waits for */

static void rule_fp32_no_tf32(const struct cs_gemm_evidence *g, double total)
{
    uint64_t calls;
    double w = work_of(g, strict_fp32, &calls);
    if (w < 0.5 * total) return;
    const struct cs_gemm_row *top = largest(g, strict_fp32);
    int cc = row_cc(g, top);
    int forced = g->tf32_override && !strcmp(g->tf32_override, "0");
    char wt[32], shape[96], summary[1400], ev_json[600], key[16], fix[900];
    cs_gemm_work_text(wt, sizeof wt, w), shape_text(shape, sizeof shape, top);
    snprintf(summary, sizeof summary,
             "found %.0f%% of the GEMM work (%s in %llu calls) running as strict fp32 on a GPU of compute capability "
             "%d.%d, whose TF32 Tensor Cores would take it: %s; the largest is %s (%s, math mode %s). Strict fp32 runs "
             "on the CUDA cores, about 8x slower than TF32 on an A100 (19.5 vs 156 TFLOPS) and 7x on an H100",
             100.0 * w / total, wt, (unsigned long long)calls, cc / 10, cc % 10,
             forced ? "NVIDIA_TF32_OVERRIDE=0 in the environment turns TF32 off in every NVIDIA library, whatever the "
                      "framework asks"
                    : "the handle's math mode does not allow TF32 (PyTorch keeps TF32 off for matmuls by default since "
                      "1.12: it sets CUBLAS_DEFAULT_MATH before every GEMM)",
             shape, api_name_of(g, top), cs_math_mode_name(top->key.math));
    snprintf(fix, sizeof fix, "%s",
             forced ? "Unset NVIDIA_TF32_OVERRIDE (or set it to 1) if TF32's 10-bit mantissa is acceptable; otherwise "
                      "this is the precision you chose."
                    : "If TF32's 10-bit mantissa is acceptable: PyTorch torch.set_float32_matmul_precision('high') (or "
                      "torch.backends.cuda.matmul.allow_tf32 = True); or train under torch.autocast('cuda', "
                      "dtype=torch.bfloat16). TensorFlow enables TF32 by default; JAX: "
                      "jax.config.update('jax_default_matmul_precision', 'tensorfloat32').");
    snprintf(ev_json, sizeof ev_json,
             "{\"share\":%.3f,\"flops\":%.0f,\"calls\":%llu,\"compute_capability\":%d,\"nvidia_tf32_override\":%s,"
             "\"m\":%lld,\"n\":%lld,\"k\":%lld}",
             w / total, w, (unsigned long long)calls, cc, forced ? "\"0\"" : "null", (long long)top->key.m,
             (long long)top->key.n, (long long)top->key.k);
    snprintf(key, sizeof key, "%d", cc);
    cs_finding(CS_F_GEMM_FP32_NO_TF32, CS_INFO, key, summary, fix, ev_json);
}

static int pre_ampere_fp32(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r)
{
    int cc = row_cc(g, r);
    return row_precision(r) == CS_P_FP32 && cc >= 70 && cc < 80;
}

static void rule_no_reduced_precision(const struct cs_gemm_evidence *g, double total)
{
    if (work_of(g, reduced, NULL) > 0) return;
    uint64_t calls;
    double w = work_of(g, pre_ampere_fp32, &calls);
    if (w < 0.5 * total) return;
    const struct cs_gemm_row *top = largest(g, pre_ampere_fp32);
    int cc = row_cc(g, top);
    char wt[32], summary[1000], ev_json[300], key[16];
    cs_gemm_work_text(wt, sizeof wt, w);
    snprintf(summary, sizeof summary,
             "found no GEMM in reduced precision: %.0f%% of the GEMM work (%s in %llu calls) ran in fp32 on a GPU of "
             "compute capability %d.%d, which has fp16 Tensor Cores but none for fp32 (no TF32 before 8.0); mixed "
             "precision is off",
             100.0 * w / total, wt, (unsigned long long)calls, cc / 10, cc % 10);
    snprintf(ev_json, sizeof ev_json, "{\"share\":%.3f,\"flops\":%.0f,\"calls\":%llu,\"compute_capability\":%d}",
             w / total, w, (unsigned long long)calls, cc);
    snprintf(key, sizeof key, "%d", cc);
    cs_finding(CS_F_GEMM_NO_REDUCED_PRECISION, CS_INFO, key, summary,
               "Train under mixed precision: PyTorch torch.autocast('cuda', dtype=torch.float16) with a "
               "torch.amp.GradScaler (bf16 needs compute capability 8.0); TensorFlow "
               "tf.keras.mixed_precision.set_global_policy('mixed_float16'). fp16 Tensor Cores are about 8x the fp32 "
               "rate on a V100 (125 vs 15.7 TFLOPS).",
               ev_json);
}

static void rule_legacy_tensor_op(const struct cs_gemm_evidence *g, double total)
{
    uint64_t calls;
    double w = work_of(g, fp32_as_fp16_legacy, &calls);
    if (w < 0.1 * total) return;
    const struct cs_gemm_row *top = largest(g, fp32_as_fp16_legacy);
    char wt[32], summary[1000], ev_json[300];
    cs_gemm_work_text(wt, sizeof wt, w);
    snprintf(summary, sizeof summary,
             "found %.0f%% of the GEMM work (%s in %llu calls) on fp32 data under CUBLAS_TENSOR_OP_MATH, which is "
             "deprecated and on fp32 data means CUBLAS_COMPUTE_32F_FAST_16F: inputs are rounded to fp16 (5-bit "
             "exponent: values above 65504 overflow), not TF32, on a GPU of compute capability %d.%d",
             100.0 * w / total, wt, (unsigned long long)calls, row_cc(g, top) / 10, row_cc(g, top) % 10);
    snprintf(ev_json, sizeof ev_json, "{\"share\":%.3f,\"flops\":%.0f,\"calls\":%llu,\"math_mode\":1}", w / total, w,
             (unsigned long long)calls);
    cs_finding(CS_F_GEMM_LEGACY_TENSOR_OP_MATH, CS_WARNING, "1", summary,
               "Call cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH) for TF32 (fp32 range, 10-bit mantissa), or "
               "CUBLAS_DEFAULT_MATH for strict fp32; CUBLAS_TENSOR_OP_MATH will be removed from cuBLAS.",
               ev_json);
}

static void rule_fma_kernel(const struct cs_gemm_evidence *g, double total)
{
    uint64_t calls;
    double w = work_of(g, fma_kernel, &calls);
    if (w < 0.1 * total) return;
    const struct cs_gemm_row *top = largest(g, fma_kernel);
    const struct cs_gemm_key *k = &top->key;
    char wt[32], shape[96], summary[1400], ev_json[600], cause[400];
    cs_gemm_work_text(wt, sizeof wt, w), shape_text(shape, sizeof shape, top);
    int size = cs_data_type_size(k->atype);
    int mult = size ? 16 / size : 8;
    if (!k->aligned)
        snprintf(cause, sizeof cause,
                 "its operands break cuBLAS's 16-byte rule (rows, leading dimensions and addresses each a multiple of "
                 "16 bytes, %d elements of %s): cuBLASLt could only pick kernels that accept them",
                 mult, cs_data_type_name(k->atype));
    else if ((k->m % mult) || (k->n % mult) || (k->k % mult))
        snprintf(cause, sizeof cause, "a dimension is not a multiple of %d elements", mult);
    else snprintf(cause, sizeof cause, "cuBLASLt's heuristic chose it for this shape (or the preference's alignment "
                                       "limit excluded the Tensor Core kernels)");
    snprintf(summary, sizeof summary,
             "found %.0f%% of the GEMM work (%s in %llu calls) in %s on cuBLASLt kernels that do not use Tensor Cores "
             "(the algorithm's own flags say FMA); the largest is %s, transa=%s transb=%s: %s",
             100.0 * w / total, wt, (unsigned long long)calls, cs_precision_name(row_precision(top)), shape,
             op(k->trans & 3), op(k->trans >> 2 & 3), cause);
    snprintf(ev_json, sizeof ev_json,
             "{\"share\":%.3f,\"flops\":%.0f,\"calls\":%llu,\"m\":%lld,\"n\":%lld,\"k\":%lld,\"aligned\":%s,"
             "\"impl_flags\":%llu}",
             w / total, w, (unsigned long long)calls, (long long)k->m, (long long)k->n, (long long)k->k,
             k->aligned ? "true" : "false", (unsigned long long)g->algo_flags[k->algo]);
    cs_finding(CS_F_GEMM_FMA_KERNEL, CS_WARNING, shape, summary,
               "Pad the dimensions to multiples of 8 (16-bit types) or 16 (8-bit), e.g. a vocabulary of 50257 to 50304; "
               "make sliced tensors contiguous (.contiguous()) so that addresses and leading dimensions are 16-byte "
               "aligned.",
               ev_json);
}

/* Why a refused FP8 request could not run, most basic first. */
static void fp8_refusal(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r, char *why, size_t cap,
                        char *key, size_t kcap)
{
    const struct cs_gemm_key *k = &r->key;
    int cc = row_cc(g, r), support = cs_fp8_support(cc);
    int tn = (k->trans & 3) == 1 && (k->trans >> 2 & 3) == 0;
    if (!cc) {
        snprintf(why, cap, "the GPU's compute capability was not seen; FP8 needs 8.9 or newer");
        snprintf(key, kcap, "gpu");
    } else if (!support) {
        snprintf(why, cap,
                 "the GPU has compute capability %d.%d and no FP8 Tensor Cores (FP8 needs 8.9: Ada, Hopper, Blackwell)",
                 cc / 10, cc % 10);
        snprintf(key, kcap, "gpu");
    } else if (cc == 89 && g->cublaslt_version && g->cublaslt_version < 120103) {
        snprintf(why, cap, "cuBLASLt %d.%d.%d has no FP8 on Ada (compute capability 8.9): it needs 12.1.3 (CUDA 12.1 "
                           "Update 1) or newer",
                 g->cublaslt_version / 10000, g->cublaslt_version / 100 % 100, g->cublaslt_version % 100);
        snprintf(key, kcap, "cublaslt");
    } else if (support == 1 && !tn) {
        snprintf(why, cap,
                 "the layout is transa=%s transb=%s: FP8 on compute capability %d.%d takes only TN (A transposed, B "
                 "not); data-centre Blackwell (10.x) takes the others",
                 op(k->trans & 3), op(k->trans >> 2 & 3), cc / 10, cc % 10);
        snprintf(key, kcap, "layout");
    } else if ((k->m % 16) || (k->n % 16) || (k->k % 16) || !k->aligned) {
        snprintf(why, cap, "its dimensions (m=%lld n=%lld k=%lld) or leading dimensions are not multiples of 16, or a "
                           "pointer is not 16-byte aligned: FP8 requires all of them",
                 (long long)k->m, (long long)k->n, (long long)k->k);
        snprintf(key, kcap, "alignment");
    } else {
        snprintf(why, cap, "cuBLASLt refused it (FP8 also needs compute type CUBLAS_COMPUTE_32F and scale type "
                           "CUDA_R_32F; row-wise scaling is refused on 8.9 and 12.x)");
        snprintf(key, kcap, "other");
    }
}

static int fp8_refused(const struct cs_gemm_evidence *g, const struct cs_gemm_row *r)
{
    return fp8(g, r) && r->failed > 0;
}

static void rule_fp8_cannot_run(const struct cs_gemm_evidence *g)
{
    const struct cs_gemm_row *r = largest(g, fp8_refused);
    if (!r) return;
    uint64_t refused = 0;
    for (int i = 0; i < g->n; i++)
        if (fp8_refused(g, &g->rows[i])) refused += g->rows[i].failed;
    char why[600], key[24], shape[96], summary[1400], ev_json[600];
    fp8_refusal(g, r, why, sizeof why, key, sizeof key);
    shape_text(shape, sizeof shape, r);
    snprintf(summary, sizeof summary,
             "found %llu FP8 GEMM request%s refused by cuBLASLt (%s, %s): %s; the framework then fails or falls back to "
             "a slower path, so FP8 brings no speed here",
             (unsigned long long)refused, refused == 1 ? "" : "s", api_name_of(g, r), shape, why);
    snprintf(ev_json, sizeof ev_json,
             "{\"refused\":%llu,\"compute_capability\":%d,\"transa\":\"%s\",\"transb\":\"%s\",\"m\":%lld,\"n\":%lld,"
             "\"k\":%lld,\"cublaslt_version\":%d}",
             (unsigned long long)refused, row_cc(g, r), op(r->key.trans & 3), op(r->key.trans >> 2 & 3),
             (long long)r->key.m, (long long)r->key.n, (long long)r->key.k, g->cublaslt_version);
    const char *fix = !strcmp(key, "gpu") ? "Use bf16 (torch.autocast('cuda', dtype=torch.bfloat16)) on this GPU, or run the FP8 "
                                            "recipe on Ada, Hopper or Blackwell."
                      : !strcmp(key, "cublaslt") ? "Install cuBLAS 12.1.3 or newer (CUDA 12.1 Update 1+), e.g. the "
                                                   "nvidia-cublas-cu12 wheel of the framework's CUDA line."
                      : !strcmp(key, "layout") ? "Give cuBLASLt A transposed and B not (TN): transpose the operands "
                                                 "(torch._scaled_mm wants A row-major, B column-major)."
                      : !strcmp(key, "alignment") ? "Pad the FP8 GEMM's dimensions to multiples of 16 (Transformer "
                                                    "Engine pads to 16) and keep the tensors contiguous."
                                                  : "Set CUBLASLT_LOG_LEVEL=5 to see cuBLASLt's reason, and check the "
                                                    "compute and scale types.";
    cs_finding(CS_F_FP8_CANNOT_RUN, CS_ERROR, key, summary, fix, ev_json);
}

static void rule_fp8_small_share(const struct cs_gemm_evidence *g, double total)
{
    double w = work_of(g, fp8, NULL);
    if (w <= 0 || w >= 0.3 * total) return;
    double share = w / total;
    double bound = 1.0 / ((1.0 - share) + share / 2.0);  /* FP8 at twice the 16-bit rate, the rest unchanged */
    const struct cs_gemm_row *top = NULL;
    for (int i = 0; i < g->n && !top; i++)
        if (!fp8(g, &g->rows[i])) top = &g->rows[i];
    char wt[32], shape[96], summary[1200], ev_json[300];
    cs_gemm_work_text(wt, sizeof wt, total);
    shape_text(shape, sizeof shape, top);
    snprintf(summary, sizeof summary,
             "found FP8 covering %.0f%% of the GEMM work (of %s): the rest runs in %s, the largest %s, so FP8 can speed "
             "the GEMMs up by at most %.2fx (if FP8 runs twice as fast as 16-bit)",
             100.0 * share, wt, cs_precision_name(row_precision(top)), shape, bound);
    snprintf(ev_json, sizeof ev_json, "{\"share\":%.3f,\"fp8_flops\":%.0f,\"flops\":%.0f,\"bound\":%.3f}", share, w,
             total, bound);
    cs_finding(CS_F_FP8_SMALL_SHARE, CS_INFO, "share", summary,
               "Put the large GEMMs under the FP8 recipe too (Transformer Engine: te.Linear layers inside "
               "te.fp8_autocast; the attention projections and the MLP); the output layer and small GEMMs usually "
               "stay in bf16.",
               ev_json);
}

void cs_rule_gemm(const struct cs_gemm_evidence *g)
{
    if (!g->n) return;
    rule_fp8_cannot_run(g);  /* a refused request is an error whatever the amount of work */
    double total = work_of(g, any, NULL);
    if (total < TRIVIAL_WORK) return;
    rule_fp32_no_tf32(g, total);
    rule_no_reduced_precision(g, total);
    rule_legacy_tensor_op(g, total);
    rule_fma_kernel(g, total);
    rule_fp8_small_share(g, total);
}
