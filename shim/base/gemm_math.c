/* GEMM types, precisions and work (gemm_math.h). The enumerations' values are cuBLAS 13's ABI
 * (cublas_api.h, library_types.h); tests/unit/rules_test.c checks them against the toolkit's
 * headers where it is installed. */
#include <stdio.h>
#include <string.h>

#include "gemm_math.h"

const char *cs_data_type_name(unsigned t)
{
    switch (t) {
    case CS_R_32F: return "32F";
    case CS_R_64F: return "64F";
    case CS_R_16F: return "16F";
    case CS_R_8I: return "8I";
    case CS_R_16BF: return "16BF";
    case CS_R_8F_E4M3: return "8F_E4M3";
    case CS_R_8F_E5M2: return "8F_E5M2";
    case 10: return "32I";
    case 4: return "32C";
    case 5: return "64C";
    case 30: return "8F_UE8M0";
    case 33: return "4F_E2M1";
    }
    return "?";
}

const char *cs_compute_type_name(unsigned c)
{
    static const char *const names[] = { "16F", "16F_PEDANTIC", NULL, NULL, "32F", "32F_PEDANTIC", "64F",
                                         "64F_PEDANTIC", "32I", "32I_PEDANTIC", "32F_FAST_16F", "32F_FAST_16BF",
                                         NULL, "32F_FAST_TF32", "32F_EMULATED_16BFX9", "64F_EMULATED_FIXEDPOINT" };
    if (c == CS_COMPUTE_IMPLIED) return "implied";
    if (c >= 64 && c < 64 + sizeof names / sizeof *names && names[c - 64]) return names[c - 64];
    return "?";
}

const char *cs_math_mode_name(unsigned m)
{
    static const char *const names[] = { "DEFAULT_MATH", "TENSOR_OP_MATH", "PEDANTIC_MATH", "TF32_TENSOR_OP_MATH",
                                         "FP32_EMULATED_BF16X9_MATH" };
    if (m == CS_MATH_UNKNOWN) return "unset";
    return (m & CS_MATH_MASK) < sizeof names / sizeof *names ? names[m & CS_MATH_MASK] : "?";
}

static const char *const precision_names[CS_P_COUNT] = {
    [CS_P_FP32] = "fp32", [CS_P_TF32] = "tf32", [CS_P_FP32_AS_FP16] = "fp32-as-fp16",
    [CS_P_FP32_AS_BF16] = "fp32-as-bf16", [CS_P_FP32_PEDANTIC] = "fp32-pedantic", [CS_P_FP16] = "fp16",
    [CS_P_BF16] = "bf16", [CS_P_FP8] = "fp8", [CS_P_INT8] = "int8", [CS_P_FP64] = "fp64", [CS_P_OTHER] = "other",
};

const char *cs_precision_name(enum cs_precision p) { return p < CS_P_COUNT ? precision_names[p] : "other"; }

enum cs_precision cs_precision_from_name(const char *name)
{
    for (int p = 0; p < CS_P_COUNT; p++)
        if (name && !strcmp(name, precision_names[p])) return (enum cs_precision)p;
    return CS_P_COUNT;
}

enum cs_precision cs_gemm_precision(unsigned atype, unsigned compute, unsigned math)
{
    switch (atype) {
    case CS_R_16F: return CS_P_FP16;
    case CS_R_16BF: return CS_P_BF16;
    case CS_R_8F_E4M3: case CS_R_8F_E5M2: return CS_P_FP8;
    case CS_R_8I: return CS_P_INT8;
    case CS_R_64F: return CS_P_FP64;
    case CS_R_32F: break;
    default: return CS_P_OTHER;
    }
    switch (compute) {  /* an explicit compute type decides; the handle's math mode only for 32F */
    case CS_COMPUTE_32F_FAST_TF32: return CS_P_TF32;
    case CS_COMPUTE_32F_FAST_16F: return CS_P_FP32_AS_FP16;
    case CS_COMPUTE_32F_FAST_16BF: case CS_COMPUTE_32F_EMULATED_16BFX9: return CS_P_FP32_AS_BF16;
    case CS_COMPUTE_32F_PEDANTIC: return CS_P_FP32_PEDANTIC;
    case CS_COMPUTE_32F: case CS_COMPUTE_IMPLIED: break;
    default: return CS_P_OTHER;
    }
    if (math == CS_MATH_UNKNOWN) return CS_P_FP32;  /* cuBLAS's default math keeps fp32 strict */
    switch (math & CS_MATH_MASK) {
    case CS_MATH_TF32: return CS_P_TF32;
    case CS_MATH_TENSOR_OP: return CS_P_FP32_AS_FP16;  /* deprecated: "same effect as 32F_FAST_16F" */
    case CS_MATH_PEDANTIC: return CS_P_FP32_PEDANTIC;
    case CS_MATH_BF16X9: return CS_P_FP32_AS_BF16;
    }
    return CS_P_FP32;
}

int cs_precision_is_reduced(enum cs_precision p)
{
    return p == CS_P_TF32 || p == CS_P_FP32_AS_FP16 || p == CS_P_FP32_AS_BF16 || p == CS_P_FP16 || p == CS_P_BF16 ||
           p == CS_P_FP8 || p == CS_P_INT8;
}

int cs_data_type_size(unsigned t)
{
    switch (t) {
    case CS_R_32F: case 10: return 4;
    case CS_R_64F: case 4: return 8;
    case 5: return 16;
    case CS_R_16F: case CS_R_16BF: return 2;
    case CS_R_8I: case CS_R_8F_E4M3: case CS_R_8F_E5M2: case 30: return 1;
    }
    return 0;
}

int cs_gemm_operand_aligned(unsigned type, int64_t rows, int64_t ld, uintptr_t address)
{
    int64_t s = cs_data_type_size(type);
    if (!s) return 1;  /* nothing to say about a type the census does not size */
    return (rows * s) % 16 == 0 && (ld * s) % 16 == 0 && address % 16 == 0;
}

double cs_gemm_flops(int64_t m, int64_t n, int64_t k, int64_t batch)
{
    if (m < 0 || n < 0 || k < 0) return 0;
    return 2.0 * (double)m * (double)n * (double)k * (double)(batch > 0 ? batch : 1);
}

int cs_fp8_support(int cc)
{
    if (cc >= 100 && cc < 120) return 2;
    return cc >= 89 ? 1 : 0;
}

const char *cs_tensor_core_text(int cc)
{
    if (cc >= 100 && cc < 120) return "Tensor Cores for TF32, bf16, fp16 and FP8 (any layout)";
    if (cc >= 89) return "Tensor Cores for TF32, bf16, fp16 and FP8 (TN layouts only)";
    if (cc >= 80) return "Tensor Cores for TF32, bf16 and fp16; no FP8";
    if (cc >= 70) return "Tensor Cores for fp16 only: no TF32, bf16 or FP8";
    return cc > 0 ? "no Tensor Cores" : "compute capability unknown";
}

void cs_gemm_work_text(char *out, unsigned long cap, double flops)
{
    if (flops >= 1e15) snprintf(out, cap, "%.1f PFLOP", flops / 1e15);
    else if (flops >= 1e12) snprintf(out, cap, "%.1f TFLOP", flops / 1e12);
    else if (flops >= 1e9) snprintf(out, cap, "%.1f GFLOP", flops / 1e9);
    else snprintf(out, cap, "%.0f FLOP", flops);
}
