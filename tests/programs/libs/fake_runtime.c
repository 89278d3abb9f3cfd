/* A fake libcudart.so.13 with one function: cudaLaunchKernel launches through the driver's
 * cuLaunchKernel, found with cuGetProcAddress as the real runtime finds its driver functions, so
 * the driver call is made inside the runtime call (98, cudaErrorInvalidDeviceFunction, when the
 * driver refuses the launch). */
#include <stddef.h>
#include <stdint.h>

typedef struct { unsigned x, y, z; } dim3;
typedef uint32_t (*launch_fn)(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, void *,
                              void *, void *);
uint32_t cuGetProcAddress_v2(const char *, void **, int, uint64_t, int *);

__attribute__((visibility("default"))) uint32_t cudaLaunchKernel(const void *f, dim3 grid, dim3 block, void **args,
                                                                 size_t shmem, void *stream)
{
    static launch_fn launch;
    int status;
    if (!launch && cuGetProcAddress_v2("cuLaunchKernel", (void **)&launch, 12000, 0, &status)) return 3;
    return launch((void *)f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (uint32_t)shmem, stream, args, NULL)
               ? 98 : 0;
}
