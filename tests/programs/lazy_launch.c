/* A launch that does not return while the main thread waits for the device: what lazy module
 * loading does when a kernel is still running. With the fake driver blocking cuLaunchKernel and
 * cuCtxSynchronize (FAKE_CUDA_BLOCK), a second thread launches while the main thread synchronises.
 * Expected output: each call's result. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int cuInit(unsigned);
int cuCtxSynchronize(void);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);

static void *launcher(void *arg)
{
    (void)arg;
    printf("cuLaunchKernel=%d\n", cuLaunchKernel((void *)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    return NULL;
}

int main(void)
{
    pthread_t t;
    printf("cuInit=%d\n", cuInit(0));
    pthread_create(&t, NULL, launcher, NULL);
    usleep(200000);
    printf("cuCtxSynchronize=%d\n", cuCtxSynchronize());
    pthread_join(t, NULL);
    return 0;
}
