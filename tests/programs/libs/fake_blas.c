/* A fake cuBLAS (-DFAKE_CUBLAS, libcublas.so.13) and cuBLASLt (-DFAKE_CUBLASLT, libcublasLt.so.13)
 * with the real ABI of the entry points the GEMM census hooks (cublas_api.h, cublasLt.h of CUDA
 * 13): no GPU, no arithmetic, only the decisions the real libraries make that the census sees.
 * cuBLASLt's heuristic refuses FP8 as NVIDIA documents it (compute capability below 8.9 from
 * FAKE_CUDA_CC; a layout other than TN below 10.0; dimensions not multiples of 16) and picks an
 * FMA algorithm for a 16-bit GEMM whose dimensions are not multiples of 8, a Tensor Core (HMMA)
 * one otherwise; its algorithm answers CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS accordingly. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FAKE_CUBLAS
int cublasCreate_v2(void **handle) { static int h; *handle = &h; return 0; }
int cublasDestroy_v2(void *handle) { (void)handle; return 0; }
int cublasSetMathMode(void *handle, int mode) { (void)handle; return mode < 0 || mode > 31 ? 7 : 0; }
int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *A, int lda,
                   const float *B, int ldb, const float *beta, float *C, int ldc)
{
    (void)h, (void)ta, (void)tb, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    return m < 0 || n < 0 || k < 0 ? 7 : 0;
}
int cublasSgemmStridedBatched(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *A, int lda,
                              long long sa, const float *B, int ldb, long long sb, const float *beta, float *C, int ldc,
                              long long sc, int batch)
{
    (void)h, (void)ta, (void)tb, (void)alpha, (void)A, (void)lda, (void)sa, (void)B, (void)ldb, (void)sb, (void)beta,
        (void)C, (void)ldc, (void)sc;
    return m < 0 || n < 0 || k < 0 || batch < 0 ? 7 : 0;
}
int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at, int lda,
                 const void *B, int bt, int ldb, const void *beta, void *C, int ct, int ldc, int compute, int algo)
{
    (void)h, (void)ta, (void)tb, (void)alpha, (void)A, (void)at, (void)lda, (void)B, (void)bt, (void)ldb, (void)beta,
        (void)C, (void)ct, (void)ldc, (void)algo;
    return m < 0 || n < 0 || k < 0 || compute < 64 ? 7 : 0;
}
int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at,
                               int lda, long long sa, const void *B, int bt, int ldb, long long sb, const void *beta,
                               void *C, int ct, int ldc, long long sc, int batch, int compute, int algo)
{
    (void)h, (void)ta, (void)tb, (void)alpha, (void)A, (void)at, (void)lda, (void)sa, (void)B, (void)bt, (void)ldb,
        (void)sb, (void)beta, (void)C, (void)ct, (void)ldc, (void)sc, (void)algo;
    return m < 0 || n < 0 || k < 0 || batch < 0 || compute < 64 ? 7 : 0;
}
#endif

#ifdef FAKE_CUBLASLT
struct desc { int compute, scale, transa, transb; };
struct layout { int type; uint64_t rows, cols; int64_t ld; };
typedef struct { uint64_t data[8]; } algo_t;
typedef struct { algo_t algo; size_t workspaceSize; int state; float wavesCount; int reserved[4]; } heuristic_t;

size_t cublasLtGetVersion(void) { return 130100; }
int cublasLtCreate(void **h) { static int x; *h = &x; return 0; }
int cublasLtDestroy(void *h) { (void)h; return 0; }
int cublasLtMatmulDescCreate(struct desc **d, int compute, int scale)
{
    if (!(*d = calloc(1, sizeof **d))) return 3;
    (*d)->compute = compute, (*d)->scale = scale;
    return 0;
}
int cublasLtMatmulDescDestroy(struct desc *d) { free(d); return 0; }
int cublasLtMatmulDescSetAttribute(struct desc *d, int attr, const void *buf, size_t size)
{
    if (!d || !buf) return 7;
    int v = size >= 4 ? *(const int *)buf : size == 1 ? *(const int8_t *)buf : 0;
    if (attr == 0) d->compute = v;
    else if (attr == 1) d->scale = v;
    else if (attr == 3) d->transa = v;
    else if (attr == 4) d->transb = v;
    return 0;
}
int cublasLtMatrixLayoutCreate(struct layout **l, int type, uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!(*l = calloc(1, sizeof **l))) return 3;
    (*l)->type = type, (*l)->rows = rows, (*l)->cols = cols, (*l)->ld = ld;
    return 0;
}
int cublasLtMatrixLayoutDestroy(struct layout *l) { free(l); return 0; }
int cublasLtMatrixLayoutSetAttribute(struct layout *l, int attr, const void *buf, size_t size)
{
    (void)l, (void)attr, (void)buf, (void)size;
    return 0;
}
int cublasLtMatmulPreferenceCreate(void **p) { static int x; *p = &x; return 0; }
int cublasLtMatmulPreferenceDestroy(void *p) { (void)p; return 0; }

static int cc(void)
{
    int a = 9, b = 0;
    const char *s = getenv("FAKE_CUDA_CC");
    if (s) sscanf(s, "%d.%d", &a, &b);
    return a * 10 + b;
}

/* 15 (NOT_SUPPORTED) for an FP8 GEMM this GPU or layout cannot take, else 0; *fma for the algorithm. */
static int decide(const struct desc *d, const struct layout *a, const struct layout *b, const struct layout *o, int *fma)
{
    int fp8 = a->type == 28 || a->type == 29;
    uint64_t m = d->transa ? a->cols : a->rows, k = d->transa ? a->rows : a->cols, n = o->cols;
    (void)b;
    if (fp8) {
        int c = cc();
        if (c < 89) return 15;
        if ((c < 100 || c >= 120) && !(d->transa == 1 && d->transb == 0)) return 15;
        if (m % 16 || n % 16 || k % 16) return 7;
    }
    *fma = (m % 8) || (n % 8) || (k % 8);
    return 0;
}

int cublasLtMatmulAlgoGetHeuristic(void *h, struct desc *d, struct layout *a, struct layout *b, struct layout *c,
                                   struct layout *o, void *pref, int requested, heuristic_t *results, int *returned)
{
    (void)h, (void)c, (void)pref;
    int fma = 0, s = decide(d, a, b, o, &fma);
    *returned = 0;
    if (s) return s;
    if (requested < 1) return 7;
    memset(results, 0, sizeof *results);
    results[0].algo.data[0] = fma ? 0x11 : 0x22;  /* an algorithm id of cuBLASLt's: the flags below follow it */
    results[0].algo.data[1] = (uint64_t)a->type;
    *returned = 1;
    return 0;
}

int cublasLtMatmulAlgoCapGetAttribute(const algo_t *algo, int attr, void *buf, size_t size, size_t *written)
{
    if (attr != 15 || size < 8) return 7;
    uint64_t f = algo->data[0] == 0x11 ? 0x1 /* FMA */ : 0x2 /* HMMA */;
    memcpy(buf, &f, 8);
    if (written) *written = 8;
    return 0;
}

int cublasLtMatmul(void *h, struct desc *d, const void *alpha, const void *A, struct layout *Ad, const void *B,
                   struct layout *Bd, const void *beta, const void *C, struct layout *Cd, void *D, struct layout *Dd,
                   const algo_t *algo, void *ws, size_t wss, void *stream)
{
    (void)h, (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)Cd, (void)D, (void)algo, (void)ws, (void)wss,
        (void)stream;
    int fma = 0;
    return decide(d, Ad, Bd, Dd, &fma);
}
#endif
