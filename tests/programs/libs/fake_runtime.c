/* A fake libcudart.so.13 with two functions: cudaLaunchKernel, and __cudaLaunchKernel (what
 * nvcc 13's launch code calls). Each launches through the driver's cuLaunchKernel, found with
 * cuGetProcAddress as the real runtime finds its driver functions, so the driver call is made
 * inside the runtime call (98, cudaErrorInvalidDeviceFunction, when the driver refuses it). */
#include <stddef.h>
#include <stdint.h>

typedef struct { unsigned x, y, z; } dim3;
typedef uint32_t (*launch_fn)(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, void *,
                              void *, void *);
uint32_t cuGetProcAddress_v2(const char *, void **, int, uint64_t, int *);

static uint32_t launch_through_driver(const void *f, dim3 grid, dim3 block, void **args, size_t shmem, void *stream)
{
    static launch_fn launch;
    int status;
    if (!launch && cuGetProcAddress_v2("cuLaunchKernel", (void **)&launch, 12000, 0, &status)) return 3;
    return launch((void *)f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (uint32_t)shmem, stream, args, NULL)
               ? 98 : 0;
}

__attribute__((visibility("default"))) uint32_t cudaLaunchKernel(const void *f, dim3 grid, dim3 block, void **args,
                                                                 size_t shmem, void *stream)
{
    return launch_through_driver(f, grid, block, args, shmem, stream);
}

__attribute__((visibility("default"))) uint32_t __cudaLaunchKernel(const void *kernel, dim3 grid, dim3 block,
                                                                   void **args, size_t shmem, void *stream)
{
    return launch_through_driver(kernel, grid, block, args, shmem, stream);
}
