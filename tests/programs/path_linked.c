/* Path 1: linked against libcuda.so.1 (-lcuda). Expected trace: cuInit, cuDriverGetVersion,
 * cuDeviceGetCount, cuDeviceGet, cuDeviceGetName all via "linked"; cuMemAlloc_v2 failing with
 * CUDA_ERROR_OUT_OF_MEMORY when asked for more than the device has. */
#include <stdint.h>
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
    int v = 0, n = 0, dev = -1;
    char name[64] = "";
    unsigned long long p = 0;
    printf("cuInit=%d\n", cuInit(0));
    printf("cuDriverGetVersion=%d v=%d\n", cuDriverGetVersion(&v), v);
    printf("cuDeviceGetCount=%d n=%d\n", cuDeviceGetCount(&n), n);
    printf("cuDeviceGet=%d dev=%d\n", cuDeviceGet(&dev, 0), dev);
    printf("cuDeviceGetName=%d name=%s\n", cuDeviceGetName(name, sizeof name, dev), name);
    printf("cuMemAlloc_v2(small)=%d\n", cuMemAlloc_v2(&p, 1 << 20));
    printf("cuMemAlloc_v2(huge)=%d\n", cuMemAlloc_v2(&p, (size_t)1 << 50));
    for (int i = 0; i < 100; i++) cuLaunchKernel((void *)1, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0);
    printf("cuLaunchKernel(2048 threads)=%d\n", cuLaunchKernel((void *)1, 1, 1, 1, 2048, 1, 1, 0, 0, 0, 0));
    return 3;
}
