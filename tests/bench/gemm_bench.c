/* GEMM calls for the census's cost (run-bench.sh counts instructions with callgrind): PyTorch's
 * per-GEMM sequences against the fake cuBLAS and cuBLASLt (tests/programs/libs/fake_blas.c),
 * linked as PyTorch links them.
 *   gemm_bench sgemm N   cublasSetMathMode + cublasSgemm_v2, N times (loop: run_sgemm)
 *   gemm_bench lt N      a cuBLASLt GEMM as PyTorch's gemm_and_bias makes it: a descriptor, three
 *                        layouts, a preference, the heuristic, the matmul, all destroyed (run_lt) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t data[8]; } algo_t;
typedef struct { algo_t algo; size_t workspaceSize; int state; float wavesCount; int reserved[4]; } heuristic_t;
int cublasCreate_v2(void **);
int cublasSetMathMode(void *, int);
int cublasSgemm_v2(void *, int, int, int, int, int, const float *, const void *, int, const void *, int, const float *,
                   void *, int);
int cublasLtCreate(void **);
int cublasLtMatmulDescCreate(void **, int, int);
int cublasLtMatmulDescSetAttribute(void *, int, const void *, size_t);
int cublasLtMatmulDescDestroy(void *);
int cublasLtMatrixLayoutCreate(void **, int, uint64_t, uint64_t, int64_t);
int cublasLtMatrixLayoutDestroy(void *);
int cublasLtMatmulPreferenceCreate(void **);
int cublasLtMatmulPreferenceDestroy(void *);
int cublasLtMatmulAlgoGetHeuristic(void *, void *, void *, void *, void *, void *, void *, int, heuristic_t *, int *);
int cublasLtMatmul(void *, void *, const void *, const void *, void *, const void *, void *, const void *, const void *,
                   void *, void *, void *, const algo_t *, void *, size_t, void *);

static void *h, *lt;

__attribute__((noinline)) void run_sgemm(int n)
{
    float one = 1, zero = 0;
    for (int i = 0; i < n; i++) {
        cublasSetMathMode(h, 0);
        cublasSgemm_v2(h, 0, 0, 4096, 4096, 4096, &one, (void *)0x7f0000000000, 4096, (void *)0x7f0010000000, 4096,
                       &zero, (void *)0x7f0020000000, 4096);
    }
}

__attribute__((noinline)) void run_lt(int n)
{
    float one = 1, zero = 0;
    int t = 1, nt = 0;
    for (int i = 0; i < n; i++) {
        void *d, *a, *b, *c, *p;
        heuristic_t r;
        int got = 0;
        cublasLtMatmulDescCreate(&d, 68, 0);
        cublasLtMatmulDescSetAttribute(d, 3, &t, sizeof t);
        cublasLtMatmulDescSetAttribute(d, 4, &nt, sizeof nt);
        cublasLtMatrixLayoutCreate(&a, 14, 1024, 4096, 1024);
        cublasLtMatrixLayoutCreate(&b, 14, 1024, 4096, 1024);
        cublasLtMatrixLayoutCreate(&c, 14, 4096, 4096, 4096);
        cublasLtMatmulPreferenceCreate(&p);
        cublasLtMatmulAlgoGetHeuristic(lt, d, a, b, c, c, p, 1, &r, &got);
        cublasLtMatmul(lt, d, &one, (void *)0x7f0000000000, a, (void *)0x7f0010000000, b, &zero, (void *)0x7f0020000000,
                       c, (void *)0x7f0020000000, c, &r.algo, NULL, 0, NULL);
        cublasLtMatmulPreferenceDestroy(p);
        cublasLtMatrixLayoutDestroy(c), cublasLtMatrixLayoutDestroy(b), cublasLtMatrixLayoutDestroy(a);
        cublasLtMatmulDescDestroy(d);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    cublasCreate_v2(&h), cublasLtCreate(&lt);
    if (!strcmp(argv[1], "sgemm")) run_sgemm(atoi(argv[2]));
    else run_lt(atoi(argv[2]));
    return 0;
}
