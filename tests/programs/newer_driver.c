/* Linked against a driver that has cuMemAllocAsync (CUDA 11.2+), run on one that lacks it:
 * cuInit works, and the first call of cuMemAllocAsync ends the process with the loader's
 * "symbol lookup error" (exit 127), lazily bound or not. */
#include <stdio.h>
int cuInit(unsigned flags);
int cuMemAllocAsync(unsigned long long *ptr, size_t size, void *stream);
int main(void)
{
    printf("cuInit=%d\n", cuInit(0));
    fflush(stdout);
    unsigned long long p = 0;
    printf("cuMemAllocAsync=%d\n", cuMemAllocAsync(&p, 256, NULL));
    return 0;
}
