/* Path 3: dlopen("libcuda.so.1") + dlsym(handle, ...), as PyTorch's lazy loaders, XLA and Triton
 * do. Expected: every call traced with via "dlsym"; results as without the shim.
 * Optional argument N: repeat the calls N times (coverage test). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*ver)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
    int (*get)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
    int (*attr)(int *, int, int) = (int (*)(int *, int, int))dlsym(h, "cuDeviceGetAttribute");
    if (!init || !ver || !get || !attr) { printf("dlsym failed\n"); return 2; }
    printf("not exported: %s\n", dlsym(h, "cuNoSuchFunction") ? "found" : "not found");
    printf("cuInit=%d\n", init(0));
    for (int i = 0; i < reps; i++) {
        int v = 0, d = -1, cc = 0;
        int a = ver(&v), b = get(&d, 0), c = attr(&cc, 75, 0);
        if (i == 0) printf("ver=%d:%d get=%d:%d cc_major=%d:%d\n", a, v, b, d, c, cc);
    }
    printf("cuDeviceGet(bad)=%d\n", get(NULL, 7));
    return 0;
}
