/* Linked against NVIDIA's libcudnn.so.9 and libcublas.so.13 (-lcudnn -lcublas): the references
 * are versioned (cudnnCreate@libcudnn.so.9), so this checks that the shim's exports of those
 * versions catch linked calls. With no GPU both creations fail, as they do on a broken stack.
 * Expected output: the version numbers, then "cudnnCreate=1001 cublasCreate_v2=1" on the fake driver. */
#include <stddef.h>
#include <stdio.h>

size_t cudnnGetVersion(void);
int cudnnCreate(void **);
int cublasCreate_v2(void **);

int main(void)
{
    void *h = NULL, *b = NULL;
    printf("cudnnGetVersion=%zu\n", cudnnGetVersion());
    int r1 = cudnnCreate(&h);
    int r2 = cublasCreate_v2(&b);
    printf("cudnnCreate=%d cublasCreate_v2=%d\n", r1, r2);
    return 0;
}
