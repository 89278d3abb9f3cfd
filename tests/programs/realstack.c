/* Calls NVIDIA's real libraries the way frameworks do, for the real-stack suite. Steps, in order:
 *   rt:PATH          dlopen the runtime (RTLD_GLOBAL), cudaGetDeviceCount, cudaDriverGetVersion
 *   first            cudaGetDeviceCount through the pointer the first rt: step got (after a
 *                    second runtime was loaded, that pointer must still reach the first runtime)
 *   threads:N        N threads call cudaGetDeviceCount on the last runtime at once
 *   cublas:PATH      dlopen cuBLAS, cublasCreate_v2 (its private runtime reaches the driver)
 *   cudnn:PATH       dlopen cuDNN, cudnnGetVersion, cudnnCreate
 *   nccl:PATH        dlopen NCCL, ncclGetVersion, ncclGetUniqueId, ncclCommInitRank (one rank)
 *   forkstorm:N      one thread keeps calling the runtime while the main thread forks N times;
 *                    each child dlopens a library (the loader lock) and exits; a child stuck for
 *                    5 s is a deadlock (exit 9)
 *   fork             fork; the child calls cudaGetDeviceCount
 * Each step prints its results; the output must be the same with and without the shim. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *runtime;
static int (*get_count)(int *), (*first_get_count)(int *);

static void *open_or_die(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) { printf("dlopen failed: %s\n", dlerror()); exit(2); }
    return h;
}

static void *need(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) { printf("%s: missing\n", name); exit(3); }
    return p;
}

static void *count_thread(void *arg)
{
    int n = -1;
    *(int *)arg = get_count(&n);
    return NULL;
}

static int _Atomic stop;
static void *busy_thread(void *arg)
{
    (void)arg;
    int n;
    while (!stop) get_count(&n);
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (!strncmp(a, "rt:", 3)) {
            runtime = open_or_die(a + 3);
            get_count = (int (*)(int *))need(runtime, "cudaGetDeviceCount");
            if (!first_get_count) first_get_count = get_count;
            int n = -1, v = -1;
            int r = get_count(&n);
            int rv = ((int (*)(int *))need(runtime, "cudaDriverGetVersion"))(&v);
            printf("cudaGetDeviceCount=%d count=%d cudaDriverGetVersion=%d version=%d\n", r, r ? -1 : n, rv, v);
        } else if (!strcmp(a, "first")) {
            int n = -1;
            printf("first runtime: cudaGetDeviceCount=%d\n", first_get_count(&n));
        } else if (!strncmp(a, "threads:", 8)) {
            int n = atoi(a + 8), res[64];
            pthread_t t[64];
            for (int k = 0; k < n && k < 64; k++) pthread_create(&t[k], NULL, count_thread, &res[k]);
            for (int k = 0; k < n && k < 64; k++) pthread_join(t[k], NULL);
            int same = 1;
            for (int k = 1; k < n && k < 64; k++) same &= res[k] == res[0];
            printf("threads=%d result=%d same=%d\n", n, res[0], same);
        } else if (!strncmp(a, "cublas:", 7)) {
            void *h = open_or_die(a + 7);
            void *handle = NULL;
            printf("cublasCreate_v2=%d\n", ((int (*)(void **))need(h, "cublasCreate_v2"))(&handle));
        } else if (!strncmp(a, "cudnn:", 6)) {
            void *h = open_or_die(a + 6);
            void *handle = NULL;
            printf("cudnnGetVersion=%zu\n", ((size_t (*)(void))need(h, "cudnnGetVersion"))());
            printf("cudnnCreate=%d\n", ((int (*)(void **))need(h, "cudnnCreate"))(&handle));
        } else if (!strncmp(a, "nccl:", 5)) {
            void *h = open_or_die(a + 5);
            int v = 0;
            char id[128];
            printf("ncclGetVersion=%d version=%d\n", ((int (*)(int *))need(h, "ncclGetVersion"))(&v), v);
            printf("ncclGetUniqueId=%d\n", ((int (*)(void *))need(h, "ncclGetUniqueId"))(id));
            struct unique_id { char internal[128]; } uid;  /* ncclUniqueId, passed by value */
            void *comm = NULL;
            memcpy(uid.internal, id, sizeof id);
            printf("ncclCommInitRank=%d\n",
                   ((int (*)(void **, int, struct unique_id, int))need(h, "ncclCommInitRank"))(&comm, 1, uid, 0));
        } else if (!strncmp(a, "forkstorm:", 10)) {
            int n = atoi(a + 10), stuck = 0;
            pthread_t busy;
            pthread_create(&busy, NULL, busy_thread, NULL);
            for (int k = 0; k < n; k++) {
                pid_t pid = fork();
                if (pid == 0) {
                    alarm(5);  /* a locked loader in the child: SIGALRM ends it */
                    void *h = dlopen("libm.so.6", RTLD_NOW);
                    _exit(h ? 0 : 1);
                }
                int st = 0;
                waitpid(pid, &st, 0);
                if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) stuck++;
            }
            stop = 1;
            pthread_join(busy, NULL);
            printf("forks=%d stuck=%d\n", n, stuck);
            if (stuck) return 9;
        } else if (!strcmp(a, "fork")) {
            pid_t pid = fork();
            if (pid == 0) {
                int n = -1;
                printf("child cudaGetDeviceCount=%d\n", get_count(&n));
                _exit(0);
            }
            waitpid(pid, NULL, 0);
        }
    }
    return 0;
}
