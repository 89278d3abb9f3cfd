/* GEMMs as the program issued them (evidence/gemm_census.h): cuBLAS's GEMM entry points, the
 * handle's math mode, cuBLASLt's descriptors, layouts, heuristics and matmuls. PyTorch sets the
 * math mode before every GEMM and makes and destroys its cuBLASLt descriptors around every call,
 * so each of these hooks runs millions of times: no allocation, no lock, no line written. */
#include <stdint.h>

#include "../base/gemm_math.h"
#include "../evidence/gemm_census.h"
#include "../evidence/inventory.h"
#include "../loader/loader.h"
#include "../process/state.h"
#include "../trace/trace.h"
#include "../../wrappers/gen/hooks.h"  /* the hooks' signatures, from the API tables */

static int aligned3(unsigned at, int64_t arows, int64_t lda, const void *A, unsigned bt, int64_t brows, int64_t ldb,
                    const void *B, unsigned ct, int64_t crows, int64_t ldc, const void *C)
{
    return cs_gemm_operand_aligned(at, arows, lda, (uintptr_t)A) && cs_gemm_operand_aligned(bt, brows, ldb, (uintptr_t)B) &&
           cs_gemm_operand_aligned(ct, crows, ldc, (uintptr_t)C);
}

/* One cuBLAS-API GEMM. Batched calls hand arrays of pointers: their addresses are not read (they
 * are in device memory), so only the dimensions and leading dimensions decide alignment there. */
static void gemm(struct cs_event *ev, void *handle, uint32_t ta, uint32_t tb, int64_t m, int64_t n, int64_t k, unsigned at,
                 unsigned bt, unsigned ct, unsigned compute, const void *A, int64_t lda, const void *B, int64_t ldb,
                 const void *C, int64_t ldc, int64_t batch)
{
    struct cs_gemm_key key = { 0 };
    key.api = (uint16_t)ev->api;
    key.atype = (uint8_t)at, key.btype = (uint8_t)bt, key.ctype = (uint8_t)ct;
    key.compute = (uint8_t)compute;
    key.math = (uint8_t)cs_gemm_math_of(handle);
    key.trans = (uint8_t)((ta & 3) | (tb & 3) << 2);
    key.aligned = (uint8_t)aligned3(at, ta == 0 ? m : k, lda, A, bt, tb == 0 ? k : n, ldb, B, ct, m, ldc, C);
    key.cc = (uint8_t)cs_device_cc_seen();
    key.m = m, key.n = n, key.k = k, key.batch = batch;
    cs_gemm_count(&key, ev->result != 0);
}

#define S CS_R_32F
#define D CS_R_64F
#define I CS_COMPUTE_IMPLIED

void cs_hook_cublasSgemm_v2(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb, int32_t m,
                            int32_t n, int32_t k, void *alpha, void *A, int32_t lda, void *B, int32_t ldb, void *beta,
                            void *C, int32_t ldc)
{
    (void)t, (void)alpha, (void)beta;
    gemm(ev, h, ta, tb, m, n, k, S, S, S, I, A, lda, B, ldb, C, ldc, 1);
}

void cs_hook_cublasSgemm_v2_64(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb, int64_t m,
                               int64_t n, int64_t k, void *alpha, void *A, int64_t lda, void *B, int64_t ldb, void *beta,
                               void *C, int64_t ldc)
{
    (void)t, (void)alpha, (void)beta;
    gemm(ev, h, ta, tb, m, n, k, S, S, S, I, A, lda, B, ldb, C, ldc, 1);
}

void cs_hook_cublasDgemm_v2(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb, int32_t m,
                            int32_t n, int32_t k, void *alpha, void *A, int32_t lda, void *B, int32_t ldb, void *beta,
                            void *C, int32_t ldc)
{
    (void)t, (void)alpha, (void)beta;
    gemm(ev, h, ta, tb, m, n, k, D, D, D, I, A, lda, B, ldb, C, ldc, 1);
}

void cs_hook_cublasSgemmStridedBatched(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb,
                                       int32_t m, int32_t n, int32_t k, void *alpha, void *A, int32_t lda, int64_t sa,
                                       void *B, int32_t ldb, int64_t sb, void *beta, void *C, int32_t ldc, int64_t sc,
                                       int32_t batch)
{
    (void)t, (void)alpha, (void)beta, (void)sa, (void)sb, (void)sc;
    gemm(ev, h, ta, tb, m, n, k, S, S, S, I, A, lda, B, ldb, C, ldc, batch);
}

void cs_hook_cublasSgemmStridedBatched_64(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb,
                                          int64_t m, int64_t n, int64_t k, void *alpha, void *A, int64_t lda, int64_t sa,
                                          void *B, int64_t ldb, int64_t sb, void *beta, void *C, int64_t ldc, int64_t sc,
                                          int64_t batch)
{
    (void)t, (void)alpha, (void)beta, (void)sa, (void)sb, (void)sc;
    gemm(ev, h, ta, tb, m, n, k, S, S, S, I, A, lda, B, ldb, C, ldc, batch);
}

void cs_hook_cublasSgemmBatched(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb, int32_t m,
                                int32_t n, int32_t k, void *alpha, void *A, int32_t lda, void *B, int32_t ldb, void *beta,
                                void *C, int32_t ldc, int32_t batch)
{
    (void)t, (void)alpha, (void)beta, (void)A, (void)B, (void)C;
    gemm(ev, h, ta, tb, m, n, k, S, S, S, I, NULL, lda, NULL, ldb, NULL, ldc, batch);
}

void cs_hook_cublasSgemmEx(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb, int32_t m,
                           int32_t n, int32_t k, void *alpha, void *A, uint32_t at, int32_t lda, void *B, uint32_t bt,
                           int32_t ldb, void *beta, void *C, uint32_t ct, int32_t ldc)
{
    (void)t, (void)alpha, (void)beta;
    gemm(ev, h, ta, tb, m, n, k, at, bt, ct, I, A, lda, B, ldb, C, ldc, 1);
}

void cs_hook_cublasGemmEx(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb, int32_t m,
                          int32_t n, int32_t k, void *alpha, void *A, uint32_t at, int32_t lda, void *B, uint32_t bt,
                          int32_t ldb, void *beta, void *C, uint32_t ct, int32_t ldc, uint32_t compute, int32_t algo)
{
    (void)t, (void)alpha, (void)beta, (void)algo;
    gemm(ev, h, ta, tb, m, n, k, at, bt, ct, compute, A, lda, B, ldb, C, ldc, 1);
}

void cs_hook_cublasGemmEx_64(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb, int64_t m,
                             int64_t n, int64_t k, void *alpha, void *A, uint32_t at, int64_t lda, void *B, uint32_t bt,
                             int64_t ldb, void *beta, void *C, uint32_t ct, int64_t ldc, uint32_t compute, int32_t algo)
{
    (void)t, (void)alpha, (void)beta, (void)algo;
    gemm(ev, h, ta, tb, m, n, k, at, bt, ct, compute, A, lda, B, ldb, C, ldc, 1);
}

void cs_hook_cublasGemmStridedBatchedEx(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb,
                                        int32_t m, int32_t n, int32_t k, void *alpha, void *A, uint32_t at, int32_t lda,
                                        int64_t sa, void *B, uint32_t bt, int32_t ldb, int64_t sb, void *beta, void *C,
                                        uint32_t ct, int32_t ldc, int64_t sc, int32_t batch, uint32_t compute, int32_t algo)
{
    (void)t, (void)alpha, (void)beta, (void)sa, (void)sb, (void)sc, (void)algo;
    gemm(ev, h, ta, tb, m, n, k, at, bt, ct, compute, A, lda, B, ldb, C, ldc, batch);
}

void cs_hook_cublasGemmStridedBatchedEx_64(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb,
                                           int64_t m, int64_t n, int64_t k, void *alpha, void *A, uint32_t at, int64_t lda,
                                           int64_t sa, void *B, uint32_t bt, int64_t ldb, int64_t sb, void *beta, void *C,
                                           uint32_t ct, int64_t ldc, int64_t sc, int64_t batch, uint32_t compute,
                                           int32_t algo)
{
    (void)t, (void)alpha, (void)beta, (void)sa, (void)sb, (void)sc, (void)algo;
    gemm(ev, h, ta, tb, m, n, k, at, bt, ct, compute, A, lda, B, ldb, C, ldc, batch);
}

void cs_hook_cublasGemmBatchedEx(struct cs_thread *t, struct cs_event *ev, void *h, uint32_t ta, uint32_t tb, int32_t m,
                                 int32_t n, int32_t k, void *alpha, void *A, uint32_t at, int32_t lda, void *B, uint32_t bt,
                                 int32_t ldb, void *beta, void *C, uint32_t ct, int32_t ldc, int32_t batch,
                                 uint32_t compute, int32_t algo)
{
    (void)t, (void)alpha, (void)beta, (void)algo, (void)A, (void)B, (void)C;
    gemm(ev, h, ta, tb, m, n, k, at, bt, ct, compute, NULL, lda, NULL, ldb, NULL, ldc, batch);
}

#undef S
#undef D
#undef I

/* PyTorch calls it before every GEMM: a line only when it fails, the mode kept for the census. */
void cs_hook_cublasSetMathMode(struct cs_thread *t, struct cs_event *ev, void *handle, uint32_t mode)
{
    if (ev->result == 0) {
        cs_gemm_math_set(handle, mode);
        return;
    }
    cs_extra(t, "\"math_mode\":%u", mode);
    cs_extra_str(t, "math_mode_name", cs_math_mode_name(mode));
}

/* --- cuBLASLt ------------------------------------------------------------------------------ */

void cs_hook_cublasLtMatmulDescCreate(struct cs_thread *t, struct cs_event *ev, void *out, uint32_t compute, uint32_t scale)
{
    (void)t;
    if (ev->result == 0 && out) cs_lt_desc_made(*(void **)out, compute, scale);
}

void cs_hook_cublasLtMatmulDescInit_internal(struct cs_thread *t, struct cs_event *ev, void *desc, uint64_t size,
                                             uint32_t compute, uint32_t scale)
{
    (void)t, (void)size;
    if (ev->result == 0) cs_lt_desc_made(desc, compute, scale);
}

void cs_hook_cublasLtMatmulDescSetAttribute(struct cs_thread *t, struct cs_event *ev, void *desc, uint32_t attr,
                                            void *buf, uint64_t size)
{
    (void)t;
    if (ev->result == 0) cs_lt_desc_set(desc, attr, buf, size);
}

void cs_hook_cublasLtMatrixLayoutCreate(struct cs_thread *t, struct cs_event *ev, void *out, uint32_t type, uint64_t rows,
                                        uint64_t cols, int64_t ld)
{
    (void)t;
    if (ev->result == 0 && out) cs_lt_layout_made(*(void **)out, type, rows, cols, ld);
}

void cs_hook_cublasLtMatrixLayoutInit_internal(struct cs_thread *t, struct cs_event *ev, void *layout, uint64_t size,
                                               uint32_t type, uint64_t rows, uint64_t cols, int64_t ld)
{
    (void)t, (void)size;
    if (ev->result == 0) cs_lt_layout_made(layout, type, rows, cols, ld);
}

void cs_hook_cublasLtMatrixLayoutSetAttribute(struct cs_thread *t, struct cs_event *ev, void *layout, uint32_t attr,
                                              void *buf, uint64_t size)
{
    (void)t;
    if (ev->result == 0) cs_lt_layout_set(layout, attr, buf, size);
}

/* Forgotten before the memory can be reused for another descriptor: the real call has already
 * freed it, and a new one at the same address is made (and cached) only after this returns. */
void cs_hook_cublasLtForget(struct cs_thread *t, struct cs_event *ev, void *descriptor)
{
    (void)t, (void)ev;
    cs_lt_forget(descriptor);
}

/* A cuBLASLt GEMM's key from its descriptor and layouts; 0 when the descriptor was made before
 * the shim saw it (its facts unknown, nothing counted). */
static int lt_key(struct cs_gemm_key *key, int api, const void *desc, const void *Ad, const void *Bd, const void *Dd,
                  const void *A, const void *B, const void *Dp)
{
    struct cs_lt_desc d;
    struct cs_lt_layout a, b, o;
    if (!cs_lt_desc_get(desc, &d) || !cs_lt_layout_get(Ad, &a) || !cs_lt_layout_get(Bd, &b) || !cs_lt_layout_get(Dd, &o))
        return 0;
    *key = (struct cs_gemm_key){ 0 };
    key->api = (uint16_t)api;
    key->atype = a.type, key->btype = b.type, key->ctype = o.type;
    key->compute = d.compute;
    key->math = CS_MATH_UNKNOWN;  /* cuBLASLt has no math mode: its compute type says it all */
    key->trans = (uint8_t)((d.transa & 3) | (d.transb & 3) << 2);
    key->m = d.transa ? (int64_t)a.cols : (int64_t)a.rows;
    key->k = d.transa ? (int64_t)a.rows : (int64_t)a.cols;
    key->n = (int64_t)o.cols;
    key->batch = a.batch > 0 ? a.batch : 1;
    /* column-major layouts only: cuBLAS's 16-byte rule is stated for them */
    key->aligned = (uint8_t)(a.order == 0 && b.order == 0 && o.order == 0 &&
                             aligned3(a.type, (int64_t)a.rows, a.ld, A, b.type, (int64_t)b.rows, b.ld, B, o.type,
                                      (int64_t)o.rows, o.ld, Dp));
    key->fast_accum = d.fast_accum;
    key->cc = (uint8_t)cs_device_cc_seen();
    return 1;
}

void cs_hook_cublasLtMatmul(struct cs_thread *t, struct cs_event *ev, void *lt, void *desc, void *alpha, void *A, void *Ad,
                            void *B, void *Bd, void *beta, void *C, void *Cd, void *Dp, void *Dd, void *algo, void *ws,
                            uint64_t wss, void *stream)
{
    (void)lt, (void)alpha, (void)beta, (void)C, (void)Cd, (void)ws, (void)wss, (void)stream;
    /* cuBLAS reaches cuBLASLt's public cublasLtMatmul for some of its own GEMMs: those are counted
     * once, at the cuBLAS entry point the program called */
    if (t->depth > 1) return;
    struct cs_gemm_key key;
    if (!lt_key(&key, ev->api, desc, Ad, Bd, Dd, A, B, Dp)) return;
    int a = cs_lt_algo_index(algo);
    if (a < 0) {
        a = -a;
        cs_scan_request();  /* a new algorithm: the scanner reads its flags, off this thread */
    }
    key.algo = (uint8_t)a;
    cs_gemm_count(&key, ev->result != 0);
}

/* A heuristic that found nothing is the request refused (FP8 where it cannot run); one that found
 * algorithms is counted by the matmul that follows, not here. */
void cs_hook_cublasLtMatmulAlgoGetHeuristic(struct cs_thread *t, struct cs_event *ev, void *lt, void *desc, void *Ad,
                                            void *Bd, void *Cd, void *Dd, void *pref, int32_t requested, void *results,
                                            void *returned)
{
    (void)lt, (void)Cd, (void)pref, (void)requested, (void)results;
    if (t->depth > 1) return;  /* inside a cuBLAS call: its GEMM is counted there */
    if (ev->result == 0 && returned && *(int *)returned > 0) return;
    struct cs_gemm_key key;
    if (lt_key(&key, ev->api, desc, Ad, Bd, Dd, NULL, NULL, NULL)) cs_gemm_count(&key, 1);
}
