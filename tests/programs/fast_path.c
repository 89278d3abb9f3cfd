/* The fast path's entry points, each way a call arrives (linked, dlsym, cuGetProcAddress): the
 * driver gets every argument as given (five of cuLaunchKernel's are on the stack), the answer and
 * errno come back unchanged (the first call also resolves the real function), and a failing
 * launch is recorded with its geometry. Linked with -lcuda (the fake, which echoes launches
 * under FAKE_CUDA_ECHO_LAUNCH=1). Expected output: the same with and without the shim. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

typedef uint32_t (*launch_fn)(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, void *,
                              void *, void *);
uint32_t cuInit(unsigned);
uint32_t cuLaunchKernel(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, void *, void *,
                        void *);
uint32_t cuLaunchKernel_ptsz(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, void *,
                             void *, void *);
uint32_t cuGetProcAddress_v2(const char *, void **, int, uint64_t, int *);

static void launches(const char *via, launch_fn fn, uintptr_t base)
{
    errno = 4321;
    uint32_t r = fn((void *)(base + 1), 7, 8, 9, 4, 2, 3, 77, (void *)(base + 2), (void *)(base + 3), (void *)(base + 4));
    printf("%s: %u errno=%d\n", via, r, errno);
    /* 2048 threads a block: the fake fails it as the driver does (CUDA_ERROR_INVALID_VALUE) */
    r = fn((void *)(base + 5), 1, 1, 1, 2048, 1, 1, 4096, (void *)(base + 6), NULL, NULL);
    printf("%s: %u errno=%d\n", via, r, errno);
}

int main(void)
{
    printf("cuInit=%u\n", cuInit(0));
    launches("linked", cuLaunchKernel, 0x1000);
    launches("linked _ptsz", cuLaunchKernel_ptsz, 0x2000);
    launches("dlsym", (launch_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernel"), 0x3000);
    void *p = NULL;
    int status = -1;
    uint32_t r = cuGetProcAddress_v2("cuLaunchKernel", &p, 12000, 0, &status);
    printf("cuGetProcAddress_v2=%u status=%d\n", r, status);
    if (p) launches("cuGetProcAddress", (launch_fn)p, 0x4000);
    return 0;
}
