/* Kernel launches through a CUDA runtime (the fake one in libs/fake_runtime.c): each is a
 * cudaLaunchKernel with the driver's cuLaunchKernel inside it.
 *   runtime_launch N        N launches of 32-thread blocks (the benchmark's loop: run_runtime)
 *   runtime_launch check    one launch that works and one the driver refuses (2048 threads a block),
 *                           then the same through __cudaLaunchKernel (nvcc 13's launch code)
 * Linked against the fake runtime and the fake driver. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { unsigned x, y, z; } dim3;
uint32_t cudaLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shmem, void *stream);
uint32_t __cudaLaunchKernel(const void *kernel, dim3 grid, dim3 block, void **args, size_t shmem, void *stream);
uint32_t cuInit(unsigned);

__attribute__((noinline)) static void run_runtime(long n)
{
    dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
    for (long i = 0; i < n; i++) cudaLaunchKernel((void *)0x1, grid, block, NULL, 0, NULL);
}

int main(int argc, char **argv)
{
    cuInit(0);
    if (argc > 1 && !strcmp(argv[1], "check")) {
        dim3 grid = { 3, 2, 1 }, block = { 32, 1, 1 }, big = { 2048, 1, 1 };
        printf("cudaLaunchKernel=%u\n", cudaLaunchKernel((void *)0x77, grid, block, NULL, 64, (void *)0x10));
        printf("cudaLaunchKernel=%u\n", cudaLaunchKernel((void *)0x78, grid, big, NULL, 128, (void *)0x20));
        printf("__cudaLaunchKernel=%u\n", __cudaLaunchKernel((void *)0x87, grid, block, NULL, 64, (void *)0x30));
        printf("__cudaLaunchKernel=%u\n", __cudaLaunchKernel((void *)0x88, grid, big, NULL, 256, (void *)0x40));
        return 0;
    }
    run_runtime(argc > 1 ? atol(argv[1]) : 1000);
    return 0;
}
