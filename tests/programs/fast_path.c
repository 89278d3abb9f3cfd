/* The fast path's entry points, each way a call arrives (linked, dlsym, cuGetProcAddress): the
 * driver gets every argument as given (five of cuLaunchKernel's are on the stack), the answer and
 * errno come back unchanged (the first call also resolves the real function), and a failing
 * launch is recorded with its geometry. Linked with -lcuda (the fake, which echoes launches
 * under FAKE_CUDA_ECHO_LAUNCH=1). Expected output: the same with and without the shim.
 *   fast_path ex    cuLaunchKernelEx each way: a configuration that fits, one of 2048 threads a
 *                   block, and none (NULL); the fake refuses them under FAKE_CUDA_FAIL */
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
struct launch_config { unsigned grid[3], block[3], shmem; void *stream; void *attrs; unsigned nattrs; };
typedef uint32_t (*launch_ex_fn)(const struct launch_config *, void *, void **, void **);
uint32_t cuLaunchKernelEx(const struct launch_config *, void *, void **, void **);

static void launches_ex(const char *via, launch_ex_fn fn, uintptr_t base)
{
    struct launch_config fits = { { 7, 8, 9 }, { 4, 2, 3 }, 77, (void *)(base + 2), NULL, 0 };
    struct launch_config big = { { 1, 2, 3 }, { 2048, 1, 1 }, 4096, (void *)(base + 6), NULL, 0 };
    errno = 4321;
    printf("%s: %u", via, fn(&fits, (void *)(base + 1), NULL, NULL));
    printf(" %u", fn(&big, (void *)(base + 5), NULL, NULL));
    printf(" %u errno=%d\n", fn(NULL, (void *)(base + 9), NULL, NULL), errno);
}

static void launches(const char *via, launch_fn fn, uintptr_t base)
{
    errno = 4321;
    uint32_t r = fn((void *)(base + 1), 7, 8, 9, 4, 2, 3, 77, (void *)(base + 2), (void *)(base + 3), (void *)(base + 4));
    printf("%s: %u errno=%d\n", via, r, errno);
    /* 2048 threads a block: the fake fails it as the driver does (CUDA_ERROR_INVALID_VALUE) */
    r = fn((void *)(base + 5), 1, 1, 1, 2048, 1, 1, 4096, (void *)(base + 6), NULL, NULL);
    printf("%s: %u errno=%d\n", via, r, errno);
}

int main(int argc, char **argv)
{
    printf("cuInit=%u\n", cuInit(0));
    if (argc > 1) {
        void *p = NULL;
        int status = -1;
        launches_ex("linked", cuLaunchKernelEx, 0x5000);
        launches_ex("dlsym", (launch_ex_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernelEx"), 0x6000);
        cuGetProcAddress_v2("cuLaunchKernelEx", &p, 12000, 0, &status);
        if (p) launches_ex("cuGetProcAddress", (launch_ex_fn)p, 0x7000);
        return 0;
    }
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
