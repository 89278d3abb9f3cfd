/* Path 4: the CUDA runtime (shared libcudart.so.13, or static with -DSTATIC builds) bootstraps
 * through dlopen + dlsym("cuGetProcAddress_v2") and then resolves every driver function with it.
 * Path 5: cudaGetDriverEntryPointByVersion goes through the same resolver. */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void)
{
    int n = -1, dv = -1, rv = -1;
    cudaError_t e = cudaDriverGetVersion(&dv);
    printf("cudaDriverGetVersion=%d (%s) v=%d\n", e, cudaGetErrorName(e), dv);
    e = cudaRuntimeGetVersion(&rv);
    printf("cudaRuntimeGetVersion=%d v=%d\n", e, rv);
    e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount=%d (%s) n=%d\n", e, cudaGetErrorName(e), n);
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    e = cudaGetDriverEntryPointByVersion("cuDriverGetVersion", &fn, 12000, cudaEnableDefault, &q);
    printf("cudaGetDriverEntryPointByVersion=%d status=%d found=%d\n", e, (int)q, fn != NULL);
    if (fn) {
        int v = 0;
        int r = ((int (*)(int *))fn)(&v);
        printf("entry point call=%d v=%d\n", r, v);
    }
    return 0;
}
