/* Overhead benchmark. One process measures, in the same run, ns per call of cuLaunchKernel on
 * the fake driver: called directly (the fake's own pointer, no shim in the way), and through
 * each path the shim wraps: linked (PLT), dlsym(handle) and cuGetProcAddress.
 *
 *   bench calls THREADS ITERS ROUNDS   prints "path ns_per_call" (median of ROUNDS, interleaved)
 *   bench rss                          makes 1000 calls, prints VmRSS in KiB
 *   bench burst N                      N calls as fast as possible (ALL-mode loss test)
 *   bench burst2 N                     N linked cuEventRecord calls (two arguments, for callgrind)
 *   bench startup                      returns at once (start-up cost is timed from outside)
 *   bench exit                         makes 1000 calls, prints CLOCK_MONOTONIC in ns, returns
 *                                      (the exit's cost is timed from outside, to the process's end)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                         void **, void **);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                   void **);
int cuInit(unsigned);
int cuEventRecord(void *, void *);

enum { DIRECT, LINKED, DLSYM, PROCADDR, NPATHS };
static const char *const names[] = { "direct", "linked", "dlsym", "cuGetProcAddress" };
static launch_fn fns[NPATHS];
static long iters;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *run(void *arg)
{
    launch_fn f = (launch_fn)arg;
    for (long i = 0; i < iters; i++) f((void *)1, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0);
    return NULL;
}

static void *run2(void *arg)
{
    (void)arg;
    for (long i = 0; i < iters; i++) cuEventRecord((void *)8, 0);
    return NULL;
}

static double measure(launch_fn f, int threads)
{
    pthread_t t[64];
    double t0 = now();
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, run, (void *)f);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    return (now() - t0) / iters;  /* wall ns per call per thread */
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void setup(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    void *(*direct)(const char *) = (void *(*)(const char *))dlsym(h, "fake_direct");
    int (*gpa)(const char *, void **, int, unsigned long long, int *) =
        (int (*)(const char *, void **, int, unsigned long long, int *))dlsym(h, "cuGetProcAddress_v2");
    fns[DIRECT] = (launch_fn)direct("cuLaunchKernel");
    fns[LINKED] = cuLaunchKernel;
    fns[DLSYM] = (launch_fn)dlsym(h, "cuLaunchKernel");
    void *p = NULL;
    int st = 0;
    gpa("cuLaunchKernel", &p, 12000, 0, &st);
    fns[PROCADDR] = (launch_fn)p;
    cuInit(0);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    if (!strcmp(argv[1], "startup")) return 0;
    setup();
    if (!strcmp(argv[1], "burst2")) {
        iters = atol(argv[2]);
        void *(*volatile loop)(void *) = run2;  /* called through a pointer: its name stays "run2" */
        loop(NULL);
        return 0;
    }
    if (!strcmp(argv[1], "burst")) {
        iters = atol(argv[2]);
        run((void *)fns[LINKED]);
        return 0;
    }
    if (!strcmp(argv[1], "exit")) {
        iters = 1000;
        run((void *)fns[LINKED]);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
        return 0;
    }
    if (!strcmp(argv[1], "rss")) {
        iters = 1000;
        run((void *)fns[LINKED]);
        char line[256];
        FILE *f = fopen("/proc/self/status", "r");
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "VmRSS:", 6)) printf("%ld\n", atol(line + 6));
        return 0;
    }
    int threads = atoi(argv[2]), rounds = atoi(argv[4]);
    iters = atol(argv[3]);
    double r[NPATHS][64];
    measure(fns[DIRECT], threads);  /* warm up */
    for (int k = 0; k < rounds; k++)
        for (int p = 0; p < NPATHS; p++) r[p][k] = measure(fns[p], threads);
    for (int p = 0; p < NPATHS; p++) {
        qsort(r[p], (size_t)rounds, sizeof(double), cmp);
        printf("%s %.1f\n", names[p], r[p][rounds / 2]);
    }
    return 0;
}
