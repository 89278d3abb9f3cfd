/* A fake libnccl.so.2 for the NCCL tests: a chosen version (-DVERSION=22809), and failures,
 * async errors and a blocking init on request. Environment:
 *   FAKE_NCCL_FAIL_ALLREDUCE=code   ncclAllReduce returns code
 *   FAKE_NCCL_ASYNC_ERROR=code      ncclCommGetAsyncError reports code
 *   FAKE_NCCL_INIT_SLEEP=seconds    ncclCommInitRank blocks that long (a rank waiting for its peers)
 *   FAKE_NCCL_NVLS=1                ncclCommInitRank sets up NVLS as NCCL 2.17+ does: it looks up
 *                                   cuMulticastCreate and calls it; a failure is ncclUnhandledCudaError
 *   FAKE_NCCL_HANG_AT=K             the K-th ncclAllReduce (from 1) blocks FAKE_NCCL_HANG_S seconds (3): a
 *                                   rank stuck in a collective its peers never joined
 *   FAKE_NCCL_COUNT_S=seconds       ncclCommCount blocks that long (a call the hot path takes)
 *   FAKE_NCCL_SAME_GPU=1            ncclCommInitRank fails as NCCL does when two ranks are on one GPU:
 *                                   ncclInvalidUsage, with NCCL's own last message
 *   FAKE_NCCL_SHM_FULL=1            ncclCommInitRank fails as NCCL does when /dev/shm is full: ncclSystemError,
 *                                   with NCCL's own last message
 *   FAKE_NCCL_PROBE=cuda            ncclCommInitRank asks the driver for NCCL's newer functions through
 *                                   cuGetProcAddress_v2 at that cudaVersion (12080), as NCCL's static runtime
 *                                   does; when the driver has none of them: ncclUnhandledCudaError */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { char internal[128]; } ncclUniqueId;
struct comm { int nranks, rank; };
static int env(const char *n) { const char *s = getenv(n); return s ? atoi(s) : 0; }
static const char *last_error = "fake last error: peer 1 unreachable";

int ncclGetVersion(int *v) { *v = VERSION; return 0; }
int ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "fake-nccl-id-%s", getenv("FAKE_NCCL_ID") ? getenv("FAKE_NCCL_ID") : "x");
    return 0;
}
int ncclCommInitRank(struct comm **c, int nranks, ncclUniqueId id, int rank)
{
    (void)id;
    if (env("FAKE_NCCL_INIT_SLEEP")) sleep((unsigned)env("FAKE_NCCL_INIT_SLEEP"));
    if (env("FAKE_NCCL_SAME_GPU")) {
        last_error = "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 60";
        return 5;  /* ncclInvalidUsage */
    }
    if (env("FAKE_NCCL_SHM_FULL")) {
        last_error = "Error while creating shared memory segment /dev/shm/nccl-KWfVyt (size 5967872)";
        return 2;  /* ncclSystemError */
    }
    if (env("FAKE_NCCL_PROBE")) {
        typedef int (*procaddr_t)(const char *, void **, int, unsigned long long, int *);
        procaddr_t pa = (procaddr_t)dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2");
        int (*driver_version)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
        int dv = 0;
        if (driver_version) driver_version(&dv);  /* a static runtime asks first, as NCCL's does */
        static const char *const wanted[] = { "cuMulticastCreate", "cuMulticastBindMem", "cuMemGetHandleForAddressRange" };
        int found = 0;
        for (size_t i = 0; pa && i < sizeof wanted / sizeof *wanted; i++) {
            void *fn = NULL;
            int status = 0;
            found += pa(wanted[i], &fn, env("FAKE_NCCL_PROBE"), 0, &status) == 0 && status == 0 && fn;
        }
        if (!found) {
            last_error = "Cuda failure 'operation not supported'";
            return 1;  /* ncclUnhandledCudaError */
        }
    }
    if (env("FAKE_NCCL_NVLS")) {
        int (*mc)(void *, const void *) = (int (*)(void *, const void *))dlsym(RTLD_DEFAULT, "cuMulticastCreate");
        unsigned long long handle = 0;
        char prop[64] = { 0 };
        if (mc && mc(&handle, prop) != 0) return 1;  /* ncclUnhandledCudaError */
    }
    *c = malloc(sizeof **c);
    (*c)->nranks = nranks, (*c)->rank = rank;
    return 0;
}
int ncclCommCount(struct comm *c, int *n)
{
    if (env("FAKE_NCCL_COUNT_S")) sleep((unsigned)env("FAKE_NCCL_COUNT_S"));
    *n = c ? 2 : 0;
    return 0;
}
int ncclCommCuDevice(struct comm *c, int *dev) { *dev = c ? c->rank : -1; return 0; }
int ncclAllReduce(const void *s, void *r, size_t n, int dt, int op, struct comm *c, void *stream)
{
    static int calls;
    (void)s, (void)r, (void)n, (void)dt, (void)op, (void)c, (void)stream;
    if (env("FAKE_NCCL_HANG_AT") && ++calls == env("FAKE_NCCL_HANG_AT"))
        sleep(env("FAKE_NCCL_HANG_S") ? (unsigned)env("FAKE_NCCL_HANG_S") : 3);
    return env("FAKE_NCCL_FAIL_ALLREDUCE");
}
int ncclCommGetAsyncError(struct comm *c, int *e) { (void)c; *e = env("FAKE_NCCL_ASYNC_ERROR"); return 0; }
int ncclCommDestroy(struct comm *c) { free(c); return 0; }
const char *ncclGetErrorString(int r) { static char b[64]; snprintf(b, sizeof b, "fake nccl error %d", r); return b; }
const char *ncclGetLastError(struct comm *c) { (void)c; return last_error; }
