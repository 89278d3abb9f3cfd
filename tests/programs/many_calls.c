/* cuInit, one driver lookup above the driver's CUDA version (a finding early on), then N
 * successful cuDeviceGet calls (a key call: a line each), or with "current" N cuCtxGetCurrent
 * calls (in ALL mode, events of the binary file): a trace that grows (CUDASHIM_TRACE_MAX).
 * Prints "done N". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int cuInit(unsigned flags);
int cuDeviceGet(int *dev, int ordinal);
int cuCtxGetCurrent(void **ctx);
int cuGetProcAddress_v2(const char *symbol, void **fn, int version, unsigned long long flags, int *status);
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, dev, status;
    void *fn;
    cuInit(0);
    cuGetProcAddress_v2("cuCtxCreate_v4", &fn, 13000, 0, &status);
    if (argc > 2 && !strcmp(argv[2], "current"))
        for (int i = 0; i < n; i++) cuCtxGetCurrent(&fn);
    else
        for (int i = 0; i < n; i++) cuDeviceGet(&dev, 0);
    printf("done %d\n", n);
    return 0;
}
