/* Device code through the driver API, for the launch and image diagnoses. Usage:
 *   devcode IMAGE MODE   IMAGE: a .fatbin/.cubin/.ptx file, loaded with cuModuleLoadData
 *   MODE load      load the image, look up kernel addk, launch it (block 256)
 *        bigblock  ... and launch addk with a 2048-thread block (CUDA_ERROR_INVALID_VALUE)
 *        async     launch addk then mulk on stream 0x10, then cuStreamSynchronize(0x10)
 *        async2    the same, then cuCtxSynchronize_v2 (CUDA 13's, which cudaDeviceSynchronize calls)
 *        oom       allocate 1 MiB, then 1 TiB (CUDA_ERROR_OUT_OF_MEMORY on the fake)
 *        graph     cuGraphLaunch of graph 0x99 on stream 0x10
 *        reserve   cuMemAddressReserve of 96 GiB (an allocator's reservation; the test makes the fake refuse it)
 *        pinned    cuMemHostAlloc of 6 GiB (pin_memory; the test makes the fake refuse it)
 * Expected output: one line per call with its result; the tests read the trace's findings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
CUresult cuInit(unsigned);
CUresult cuDeviceGet(int *, int);
CUresult cuDeviceGetAttribute(int *, int, int);
CUresult cuModuleLoadData(void **, const void *);
CUresult cuModuleGetFunction(void **, void *, const char *);
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                        void **, void **);
CUresult cuStreamSynchronize(void *);
CUresult cuCtxSynchronize_v2(void *);
CUresult cuDevicePrimaryCtxRetain(void **, int);
CUresult cuCtxSetCurrent(void *);
CUresult cuMemAlloc_v2(unsigned long long *, size_t);
CUresult cuGraphLaunch(void *, void *);
CUresult cuMemAddressReserve(unsigned long long *, size_t, size_t, unsigned long long, unsigned long long);
CUresult cuMemHostAlloc(void **, size_t, unsigned);

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    static char image[1 << 20];
    size_t n = fread(image, 1, sizeof image - 1, f);
    fclose(f);
    image[n] = 0;
    const char *mode = argv[2];
    int dev = 0, major = 0, minor = 0;
    void *mod = NULL, *addk = NULL, *mulk = NULL, *stream = (void *)0x10;
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuDeviceGetAttribute(&major, 75, dev);
    cuDeviceGetAttribute(&minor, 76, dev);
    printf("device sm_%d%d\n", major, minor);
    void *ctx = NULL;  /* a real driver loads modules into the current context */
    if (!cuDevicePrimaryCtxRetain(&ctx, dev)) cuCtxSetCurrent(ctx);
    CUresult r = cuModuleLoadData(&mod, image);
    printf("cuModuleLoadData=%d\n", r);
    if (r) return 1;
    /* DEVCODE_ADDK: the name addk is looked up by (a C++ mangled one, for the demangler) */
    const char *addk_name = getenv("DEVCODE_ADDK") ? getenv("DEVCODE_ADDK") : "addk";
    r = cuModuleGetFunction(&addk, mod, addk_name);
    printf("cuModuleGetFunction(addk)=%d\n", r);
    if (r) return 1;
    cuModuleGetFunction(&mulk, mod, "mulk");
    if (!strcmp(mode, "load")) {
        printf("launch=%d\n", cuLaunchKernel(addk, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL));
    } else if (!strcmp(mode, "bigblock")) {
        printf("launch=%d\n", cuLaunchKernel(addk, 4, 1, 1, 2048, 1, 1, 0, NULL, NULL, NULL));
    } else if (!strcmp(mode, "async") || !strcmp(mode, "async2")) {
        printf("launch addk=%d\n", cuLaunchKernel(addk, 4, 1, 1, 256, 1, 1, 0, stream, NULL, NULL));
        printf("launch mulk=%d\n", cuLaunchKernel(mulk, 8, 1, 1, 128, 1, 1, 0, stream, NULL, NULL));
        if (mode[5]) printf("cuCtxSynchronize_v2=%d\n", cuCtxSynchronize_v2(NULL));
        else printf("cuStreamSynchronize=%d\n", cuStreamSynchronize(stream));
    } else if (!strcmp(mode, "oom")) {
        unsigned long long p = 0;
        printf("alloc 1 MiB=%d\n", cuMemAlloc_v2(&p, 1 << 20));
        printf("alloc 1 TiB=%d\n", cuMemAlloc_v2(&p, 1ull << 40));
    } else if (!strcmp(mode, "reserve")) {
        unsigned long long va = 0;
        printf("cuMemAddressReserve=%d\n", cuMemAddressReserve(&va, 96ull << 30, 0, 0, 0));
    } else if (!strcmp(mode, "pinned")) {
        void *host = NULL;
        printf("cuMemHostAlloc=%d\n", cuMemHostAlloc(&host, 6ull << 30, 0));
    } else if (!strcmp(mode, "graph")) {
        printf("cuGraphLaunch=%d\n", cuGraphLaunch((void *)0x99, stream));
    }
    return 0;
}
