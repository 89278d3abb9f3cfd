/* The GEMM census (gemm_census.c): every GEMM the program issued through cuBLAS or cuBLASLt,
 * counted by what decides its speed (entry point, types, compute type, math mode, transposes,
 * alignment, the GPU, the cuBLASLt algorithm) and its shape. Always on: a call adds one count to a
 * fixed table with atomics, no allocation and no lock; the rules read a snapshot at exit. */
#ifndef CS_GEMM_CENSUS_H
#define CS_GEMM_CENSUS_H

#include <stddef.h>
#include <stdint.h>

struct cs_gemm_key {
    uint16_t api;                /* global API index of the entry point */
    uint8_t atype, btype, ctype; /* cudaDataType of A, B and C (D for cuBLASLt) */
    uint8_t compute;             /* cublasComputeType_t; CS_COMPUTE_IMPLIED where the name fixes it */
    uint8_t math;                /* the handle's cublasMath_t at the call; CS_MATH_UNKNOWN if never set */
    uint8_t trans;               /* transa | transb << 2 (cublasOperation_t: 0 N, 1 T, 2 C) */
    uint8_t aligned;             /* 1: A, B and C meet cuBLAS's 16-byte rule (rows, leading dimension, address) */
    uint8_t cc;                  /* the GPU's compute capability (90), 0: unknown */
    uint8_t algo;                /* cuBLASLt: 1 + the distinct algorithm's index, 0: none */
    uint8_t fast_accum;          /* cuBLASLt FP8: CUBLASLT_MATMUL_DESC_FAST_ACCUM set */
    uint32_t spare;
    int64_t m, n, k, batch;      /* 0 shape: the census was full, shapes merged by the rest of the key */
};

struct cs_gemm_row {
    struct cs_gemm_key key;
    uint64_t count, failed;
    double flops;                /* of the calls that succeeded */
};

#define CS_GEMM_SLOTS 1024       /* distinct (key, shape); past it a key's shapes are merged */
#define CS_GEMM_ALGOS 64         /* distinct cuBLASLt algorithms whose flags are read */

void cs_gemm_count(const struct cs_gemm_key *k, int failed);
/* The rows, equal keys merged, largest work first; returns how many (at most cap). */
int cs_gemm_snapshot(struct cs_gemm_row *out, int cap);
uint64_t cs_gemm_shapes_merged(void);   /* calls whose shape did not fit */

/* A cuBLAS handle's math mode, as cublasSetMathMode last set it. */
void cs_gemm_math_set(void *handle, unsigned mode);
unsigned cs_gemm_math_of(void *handle);

/* cuBLASLt descriptors as the program made them, by address, dropped on destroy. */
struct cs_lt_desc { uint8_t compute, scale, transa, transb, fast_accum, a_scale; };
struct cs_lt_layout { uint8_t type, order; uint64_t rows, cols; int64_t ld, batch; };
void cs_lt_desc_made(void *desc, unsigned compute, unsigned scale);
void cs_lt_desc_set(void *desc, unsigned attr, const void *buf, size_t size);
void cs_lt_layout_made(void *layout, unsigned type, uint64_t rows, uint64_t cols, int64_t ld);
void cs_lt_layout_set(void *layout, unsigned attr, const void *buf, size_t size);
void cs_lt_forget(void *descriptor);
int cs_lt_desc_get(const void *desc, struct cs_lt_desc *out);        /* 1: known */
int cs_lt_layout_get(const void *layout, struct cs_lt_layout *out);  /* 1: known */

/* A cuBLASLt algorithm (its 64 bytes): 1 + its index among the distinct ones, 0 if none fits.
 * Its numerical-implementation flags are read once, at exit, before cuBLASLt is unloaded. */
int cs_lt_algo_index(const void *algo);
/* Bit 0 of known: the flags were read. */
uint64_t cs_lt_algo_flags(int index, int *known);
typedef int (*cs_lt_algo_cap_fn)(const void *algo, unsigned attr, void *buf, size_t size, size_t *written);
void cs_lt_algos_inquire(cs_lt_algo_cap_fn cap);
int cs_lt_algos_pending(void);  /* algorithms seen whose flags are not read yet */

/* The census as trace lines ("gemm", docs/trace-format.md), written at exit. */
void cs_gemm_write_trace(void);

#endif
