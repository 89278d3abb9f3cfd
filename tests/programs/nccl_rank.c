/* One rank of a fake two-rank NCCL job (RANK=0 or 1): unique id, communicator, the current context, optionally a pause (PAUSE_S) and the rank count, N all-reduces on
 * stream 0x10, a stream synchronize, the async-error check, destroy. Linked against libnccl.so.2
 * and libcuda.so.1 (fakes). Expected output: each call's result. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct { char internal[128]; } ncclUniqueId;
int ncclGetUniqueId(ncclUniqueId *);
int ncclCommInitRank(void **, int, ncclUniqueId, int);
int ncclAllReduce(const void *, void *, size_t, int, int, void *, void *);
int ncclCommGetAsyncError(void *, int *);
int ncclCommCount(void *, int *);
int ncclCommDestroy(void *);
int cuInit(unsigned);
int cuStreamSynchronize(void *);
int cuCtxGetCurrent(void **);

int main(int argc, char **argv)
{
    int rank = getenv("RANK") ? atoi(getenv("RANK")) : 0, n = argc > 1 ? atoi(argv[1]) : 1, e = 0;
    void *comm = NULL, *stream = (void *)0x10;
    ncclUniqueId id;
    printf("cuInit=%d\n", cuInit(0));
    printf("ncclGetUniqueId=%d\n", ncclGetUniqueId(&id));
    printf("ncclCommInitRank=%d\n", ncclCommInitRank(&comm, 2, id, rank));
    void *ctx;  /* a hot-path driver call between collectives, as a framework makes */
    printf("cuCtxGetCurrent=%d\n", cuCtxGetCurrent(&ctx));
    if (getenv("PAUSE_S")) {  /* idle, then a quick query, before the collectives */
        int ranks = 0;
        sleep((unsigned)atoi(getenv("PAUSE_S")));
        printf("ncclCommCount=%d ranks=%d\n", ncclCommCount(comm, &ranks), ranks);
    }
    for (int i = 0; i < n; i++) {
        int r = ncclAllReduce(NULL, NULL, 1024, 7 /* float32 */, 0 /* sum */, comm, stream);
        if (i == 0 || r) printf("ncclAllReduce=%d\n", r);
    }
    printf("cuStreamSynchronize=%d\n", cuStreamSynchronize(stream));
    printf("ncclCommGetAsyncError=%d async=%d\n", ncclCommGetAsyncError(comm, &e), e);
    printf("ncclCommDestroy=%d\n", ncclCommDestroy(comm));
    return 0;
}
