/* GEMMs as cuBLAS and cuBLASLt describe them (gemm_math.c): data and compute types by name, the
 * precision a GEMM runs in (what decides whether Tensor Cores can take it), its work in FLOPs.
 * Pure, shared by the shim's census and rules and by the cudashim command's GEMM section. */
#ifndef CS_GEMM_MATH_H
#define CS_GEMM_MATH_H

#include <stdint.h>

/* cudaDataType (library_types.h) values the census meets */
enum { CS_R_32F = 0, CS_R_64F = 1, CS_R_16F = 2, CS_R_8I = 3, CS_R_16BF = 14, CS_R_8F_E4M3 = 28, CS_R_8F_E5M2 = 29 };
/* cublasComputeType_t (cublas_api.h); CS_COMPUTE_IMPLIED: an entry point whose name fixes it (cublasSgemm) */
enum { CS_COMPUTE_16F = 64, CS_COMPUTE_16F_PEDANTIC = 65, CS_COMPUTE_32F = 68, CS_COMPUTE_32F_PEDANTIC = 69,
       CS_COMPUTE_64F = 70, CS_COMPUTE_64F_PEDANTIC = 71, CS_COMPUTE_32I = 72, CS_COMPUTE_32I_PEDANTIC = 73,
       CS_COMPUTE_32F_FAST_16F = 74, CS_COMPUTE_32F_FAST_16BF = 75, CS_COMPUTE_32F_FAST_TF32 = 77,
       CS_COMPUTE_32F_EMULATED_16BFX9 = 78, CS_COMPUTE_64F_EMULATED_FIXEDPOINT = 79 };
/* cublasMath_t (cublasSetMathMode) */
enum { CS_MATH_DEFAULT = 0, CS_MATH_TENSOR_OP = 1, CS_MATH_PEDANTIC = 2, CS_MATH_TF32 = 3, CS_MATH_BF16X9 = 4,
       CS_MATH_MASK = 15 };
#define CS_MATH_UNKNOWN 255  /* no cublasSetMathMode seen for the handle: the library's default */

/* The precision a GEMM's multiply runs in, from its types, compute type and the handle's math mode. */
enum cs_precision {
    CS_P_FP32,         /* strict single precision: CUDA cores only */
    CS_P_TF32,         /* fp32 data on TF32 Tensor Cores (math mode 3 or compute 32F_FAST_TF32) */
    CS_P_FP32_AS_FP16, /* fp32 data converted to fp16 (CUBLAS_TENSOR_OP_MATH or 32F_FAST_16F) */
    CS_P_FP32_AS_BF16, /* fp32 data as bf16 (32F_FAST_16BF) or its bf16x9 emulation */
    CS_P_FP32_PEDANTIC,
    CS_P_FP16, CS_P_BF16, CS_P_FP8, CS_P_INT8, CS_P_FP64, CS_P_OTHER,
    CS_P_COUNT
};

const char *cs_data_type_name(unsigned t);     /* "16BF"; "?" for one the census does not name */
const char *cs_compute_type_name(unsigned c);  /* "32F_FAST_TF32"; "implied" for CS_COMPUTE_IMPLIED */
const char *cs_math_mode_name(unsigned m);     /* "TF32_TENSOR_OP_MATH"; "unset" for CS_MATH_UNKNOWN */
const char *cs_precision_name(enum cs_precision p);  /* "fp32", "tf32", ... (the trace's and report's words) */
enum cs_precision cs_precision_from_name(const char *name);  /* CS_P_COUNT: not a name */
enum cs_precision cs_gemm_precision(unsigned atype, unsigned compute, unsigned math);
int cs_precision_is_reduced(enum cs_precision p);  /* runs on Tensor Cores by design (tf32, 16-bit, fp8, int8) */
int cs_data_type_size(unsigned t);             /* bytes per element; 0: unknown */
/* cuBLAS's "Tensor Core Usage" rule for one operand: rows of op(X) times the element size, the
 * leading dimension times it, and the address, each a multiple of 16 bytes. */
int cs_gemm_operand_aligned(unsigned type, int64_t rows, int64_t ld, uintptr_t address);
double cs_gemm_flops(int64_t m, int64_t n, int64_t k, int64_t batch);  /* 2*m*n*k*batch */
void cs_gemm_work_text(char *out, unsigned long cap, double flops);     /* "2.7 TFLOP" */
/* FP8 on this GPU (compute capability 89 = 8.9): 0 none, 1 TN layouts only (Ada, Hopper, GeForce
 * Blackwell), 2 any layout (data-centre Blackwell, 10.x). */
int cs_fp8_support(int cc);

/* What this GPU's Tensor Cores take, for `cudashim check`: "TF32, bf16, fp16; FP8 in TN layouts only". */
const char *cs_tensor_core_text(int cc);

#define CS_COMPUTE_IMPLIED 0
#endif
