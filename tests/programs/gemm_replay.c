/* GEMMs as PyTorch issues them (aten/src/ATen/cuda/CUDABlas.cpp), against the fake cuBLAS and
 * cuBLASLt (tests/programs/libs/fake_blas.c) and the fake driver: the GEMM census and its findings
 * (tests/t_33_gemm.sh). Each scenario prints what it issued; the exit status is 0 unless a call
 * that should succeed failed.
 *   gemm_replay SCENARIO [CALLS]
 * fp32        cublasSetMathMode(DEFAULT) before every cublasSgemm_v2 (torch.matmul on fp32, TF32 off)
 * tf32        the same with CUBLAS_TF32_TENSOR_OP_MATH (torch.set_float32_matmul_precision('high'))
 * bf16        cublasGemmEx on 16BF with compute 32F (autocast bf16), and a bf16 gemm_and_bias (cuBLASLt)
 * legacy      CUBLAS_TENSOR_OP_MATH on fp32 cublasSgemm_v2
 * lt-fma      an fp16 cuBLASLt GEMM with m = 50257 (an unpadded vocabulary): cuBLASLt picks FMA
 * lt-padded   the same with m = 50304
 * fp8         torch._scaled_mm: an FP8 cuBLASLt GEMM, TN, 4096^3; with argv[3] "nn" the NN layout
 * fp8-small   an FP8 GEMM beside nine times its work in bf16
 * trivial     a few small fp32 GEMMs (under a TFLOP in all) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t data[8]; } algo_t;
typedef struct { algo_t algo; size_t workspaceSize; int state; float wavesCount; int reserved[4]; } heuristic_t;

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) { fprintf(stderr, "missing %s\n", name); exit(2); }
    return p;
}

static void *blas, *lt, *handle, *lthandle;
static int failures;

static void check(int r, const char *what)
{
    if (r) { printf("%s -> %d\n", what, r); failures++; }
}

static void set_math(int mode) { check(((int (*)(void *, int))sym(blas, "cublasSetMathMode"))(handle, mode), "cublasSetMathMode"); }

static void sgemm(int m, int n, int k)
{
    float one = 1, zero = 0;
    int (*f)(void *, int, int, int, int, int, const float *, const void *, int, const void *, int, const float *, void *,
             int) = sym(blas, "cublasSgemm_v2");
    /* device pointers as PyTorch's allocator hands them: 512-byte aligned */
    check(f(handle, 0, 0, m, n, k, &one, (void *)0x7f0000000000, m, (void *)0x7f0010000000, k, &zero,
            (void *)0x7f0020000000, m), "cublasSgemm_v2");
}

static void gemm_ex(int type, int m, int n, int k)
{
    float one = 1, zero = 0;
    int (*f)(void *, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int, const void *,
             void *, int, int, int, int) = sym(blas, "cublasGemmEx");
    check(f(handle, 1, 0, m, n, k, &one, (void *)0x7f0000000000, type, k, (void *)0x7f0010000000, type, k, &zero,
            (void *)0x7f0020000000, type, m, 68 /* CUBLAS_COMPUTE_32F */, -1 /* CUBLAS_GEMM_DEFAULT */), "cublasGemmEx");
}

/* PyTorch's cuBLASLt call: descriptors and layouts made, the heuristic asked, the matmul run, all
 * destroyed again, every call. transa: 1 T. Returns the matmul's status (or the heuristic's). */
static int lt_gemm(int type, int out_type, int transa, int transb, uint64_t m, uint64_t n, uint64_t k, int fast_accum)
{
    int (*desc_create)(void **, int, int) = sym(lt, "cublasLtMatmulDescCreate");
    int (*desc_set)(void *, int, const void *, size_t) = sym(lt, "cublasLtMatmulDescSetAttribute");
    int (*desc_destroy)(void *) = sym(lt, "cublasLtMatmulDescDestroy");
    int (*layout_create)(void **, int, uint64_t, uint64_t, int64_t) = sym(lt, "cublasLtMatrixLayoutCreate");
    int (*layout_destroy)(void *) = sym(lt, "cublasLtMatrixLayoutDestroy");
    int (*pref_create)(void **) = sym(lt, "cublasLtMatmulPreferenceCreate");
    int (*pref_destroy)(void *) = sym(lt, "cublasLtMatmulPreferenceDestroy");
    int (*heuristic)(void *, void *, void *, void *, void *, void *, void *, int, heuristic_t *, int *) =
        sym(lt, "cublasLtMatmulAlgoGetHeuristic");
    int (*matmul)(void *, void *, const void *, const void *, void *, const void *, void *, const void *, const void *,
                  void *, void *, void *, const algo_t *, void *, size_t, void *) = sym(lt, "cublasLtMatmul");
    void *desc, *a, *b, *c, *pref;
    float one = 1, zero = 0;
    check(desc_create(&desc, 68, 0), "cublasLtMatmulDescCreate");
    check(desc_set(desc, 3, &transa, sizeof transa), "TRANSA");
    check(desc_set(desc, 4, &transb, sizeof transb), "TRANSB");
    if (fast_accum) {
        int8_t on = 1;
        check(desc_set(desc, 25, &on, 1), "FAST_ACCUM");
    }
    check(layout_create(&a, type, transa ? k : m, transa ? m : k, (int64_t)(transa ? k : m)), "layout A");
    check(layout_create(&b, type, transb ? n : k, transb ? k : n, (int64_t)(transb ? n : k)), "layout B");
    check(layout_create(&c, out_type, m, n, (int64_t)m), "layout C");
    check(pref_create(&pref), "preference");
    heuristic_t result;
    int returned = 0;
    int r = heuristic(lthandle, desc, a, b, c, c, pref, 1, &result, &returned);
    if (r == 0 && returned > 0)
        r = matmul(lthandle, desc, &one, (void *)0x7f0000000000, a, (void *)0x7f0010000000, b, &zero,
                   (void *)0x7f0020000000, c, (void *)0x7f0020000000, c, &result.algo, NULL, 0, NULL);
    pref_destroy(pref);
    layout_destroy(c), layout_destroy(b), layout_destroy(a);
    desc_destroy(desc);
    return r;
}

static void device(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!cuda) { fprintf(stderr, "no libcuda.so.1\n"); exit(2); }
    int dev = 0, major = 0, minor = 0;
    ((int (*)(unsigned))sym(cuda, "cuInit"))(0);
    ((int (*)(int *, int))sym(cuda, "cuDeviceGet"))(&dev, 0);
    int (*attr)(int *, int, int) = sym(cuda, "cuDeviceGetAttribute");
    int watchdog = 0;
    void *ctx = NULL;
    attr(&major, 75, dev), attr(&minor, 76, dev), attr(&watchdog, 17 /* KERNEL_EXEC_TIMEOUT */, dev);
    ((int (*)(void **, int))sym(cuda, "cuDevicePrimaryCtxRetain"))(&ctx, dev);  /* what a runtime does first */
    printf("device %d.%d%s\n", major, minor, watchdog ? ", display watchdog" : "");
}

int main(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : "fp32";
    int calls = argc > 2 ? atoi(argv[2]) : 20;
    device();
    if (!(blas = dlopen("libcublas.so.13", RTLD_NOW)) || !(lt = dlopen("libcublasLt.so.13", RTLD_NOW))) {
        fprintf(stderr, "no cuBLAS: %s\n", dlerror());
        return 2;
    }
    check(((int (*)(void **))sym(blas, "cublasCreate_v2"))(&handle), "cublasCreate_v2");
    check(((int (*)(void **))sym(lt, "cublasLtCreate"))(&lthandle), "cublasLtCreate");
    for (int i = 0; i < calls; i++) {
        if (!strcmp(s, "fp32") || !strcmp(s, "tf32") || !strcmp(s, "legacy")) {
            set_math(!strcmp(s, "tf32") ? 3 : !strcmp(s, "legacy") ? 1 : 0);
            sgemm(4096, 4096, 4096);
        } else if (!strcmp(s, "bf16")) {
            set_math(0);
            gemm_ex(14, 4096, 4096, 4096);
            check(lt_gemm(14, 14, 1, 0, 4096, 4096, 1024, 0), "cublasLtMatmul bf16");
        } else if (!strcmp(s, "lt-fma") || !strcmp(s, "lt-padded")) {
            check(lt_gemm(2, 2, 1, 0, !strcmp(s, "lt-fma") ? 50257 : 50304, 8192, 768, 0), "cublasLtMatmul fp16");
        } else if (!strcmp(s, "fp8")) {
            int nn = argc > 3 && !strcmp(argv[3], "nn");
            int r = lt_gemm(28, 14, nn ? 0 : 1, 0, 4096, 4096, 4096, 1);
            if (i == 0) printf("fp8 gemm -> %d\n", r);
        } else if (!strcmp(s, "fp8-small")) {
            check(lt_gemm(28, 14, 1, 0, 4096, 4096, 4096, 1), "cublasLtMatmul fp8");
            for (int j = 0; j < 9; j++) gemm_ex(14, 4096, 4096, 4096);
        } else if (!strcmp(s, "trivial")) {
            set_math(0);
            sgemm(256, 256, 256);
        } else {
            fprintf(stderr, "unknown scenario %s\n", s);
            return 2;
        }
    }
    printf("%s: %d calls, %d failures\n", s, calls, failures);
    return failures ? 1 : 0;
}
