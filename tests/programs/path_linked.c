/* Path 1: linked against libcuda.so.1 (-lcuda).
 * Expected trace (default mode): cuInit, cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet and
 * cuDeviceGetName as key calls; cuMemAlloc_v2 failing with CUDA_ERROR_OUT_OF_MEMORY; one
 * cuLaunchKernel failing with CUDA_ERROR_INVALID_VALUE (2048 threads per block); all via "linked".
 * The program's own output, errno and exit status (3) must not change under the shim. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

typedef int CUresult;
CUresult cuInit(unsigned);
CUresult cuDriverGetVersion(int *);
CUresult cuDeviceGetCount(int *);
CUresult cuDeviceGet(int *, int);
CUresult cuDeviceGetName(char *, int, int);
CUresult cuMemAlloc_v2(unsigned long long *, size_t);
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                        void **, void **);

int main(void)
{
    int v = 0, n = 0, dev = -1, r;
    char name[64] = "";
    unsigned long long p = 0;
    errno = 1234;
    r = cuInit(0);
    printf("cuInit=%d errno=%d\n", r, errno);
    r = cuDriverGetVersion(&v);
    printf("cuDriverGetVersion=%d v=%d\n", r, v);
    r = cuDeviceGetCount(&n);
    printf("cuDeviceGetCount=%d n=%d\n", r, n);
    r = cuDeviceGet(&dev, 0);
    printf("cuDeviceGet=%d dev=%d\n", r, dev);
    r = cuDeviceGetName(name, sizeof name, dev);
    printf("cuDeviceGetName=%d name=%s\n", r, name);
    printf("cuMemAlloc_v2(small)=%d\n", cuMemAlloc_v2(&p, 1 << 20));
    errno = 77;
    r = cuMemAlloc_v2(&p, (size_t)1 << 50);
    printf("cuMemAlloc_v2(huge)=%d errno=%d\n", r, errno);
    for (int i = 0; i < 100; i++) cuLaunchKernel((void *)1, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0);
    printf("cuLaunchKernel(2048 threads)=%d\n", cuLaunchKernel((void *)1, 1, 1, 1, 2048, 1, 1, 0, 0, 0, 0));
    return 3;
}
