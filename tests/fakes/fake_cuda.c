/* A fake libcuda.so.1 for tests on machines without a GPU.
 *
 * Every exported driver function counts its calls and returns the configured result. A few
 * (below) behave like the real driver: the versioned, per-thread-stream-aware cuGetProcAddress,
 * the device queries, and allocation. Environment:
 *   FAKE_CUDA_DRIVER_VERSION  e.g. 12020 (default 13000)
 *   FAKE_CUDA_EXEC_TIMEOUT (1: KERNEL_EXEC_TIMEOUT set, a display attached),
 *   FAKE_CUDA_DEVICE_NAME, FAKE_CUDA_CC (e.g. 9.0), FAKE_CUDA_DEVICE_COUNT, FAKE_CUDA_TOTAL_MEM, FAKE_CUDA_FREE_MEM
 *   FAKE_CUDA_FAIL     name=code[,name=code...]  make a function return an error
 *   FAKE_CUDA_MISSING  name[,name...]            cuGetProcAddress answers SYMBOL_NOT_FOUND
 *   FAKE_CUDA_CRASH    name                      SIGSEGV inside that function
 *   FAKE_CUDA_BLOCK    name=seconds[,...]        sleep inside those functions
 *   FAKE_CUDA_COUNTS   path                      at exit, write "name count" for every call received
 *   FAKE_CUDA_FAULT_KERNEL name                  a launch of the kernel with this name makes the context
 *                                                sticky with 700 (ILLEGAL_ADDRESS), as a faulting kernel does
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_cuda.h"

#define MAXF 1024
static _Atomic uint64_t counts[MAXF];
/* Counted only when asked for (FAKE_CUDA_COUNTS): a counter every thread writes would make the
 * benchmark's threads contend inside the fake, hiding what the shim adds. */
static int counting;
static int fail_code[MAXF];
static int missing[MAXF];
static int crash_at = -1;
static int block_secs[MAXF];
static int driver_version = 13000, device_count = 1, cc_major = 9, cc_minor = 0;
static unsigned long long total_mem = 80ull << 30, free_mem = 79ull << 30, used_mem;
static const char *device_name = "Fake GPU";
static int _Atomic configured;

static int index_of(const char *name, size_t len)
{
    for (int i = 0; i < fake_count; i++)
        if (strlen(fake_names[i]) == len && !strncmp(fake_names[i], name, len)) return i;
    return -1;
}

/* "name=N,name=N": N for each function named. */
static void per_function(const char *s, int *value)
{
    while (s && *s) {
        const char *eq = strchr(s, '='), *end = strchrnul(s, ',');
        if (eq && eq < end) {
            int i = index_of(s, (size_t)(eq - s));
            if (i >= 0) value[i] = atoi(eq + 1);
        }
        s = *end ? end + 1 : end;
    }
}

static void configure(void)
{
    if (atomic_load_explicit(&configured, memory_order_relaxed) || atomic_exchange(&configured, 1)) return;
    const char *s;
    counting = getenv("FAKE_CUDA_COUNTS") != NULL;
    if ((s = getenv("FAKE_CUDA_DRIVER_VERSION"))) driver_version = atoi(s);
    if ((s = getenv("FAKE_CUDA_DEVICE_COUNT"))) device_count = atoi(s);
    if ((s = getenv("FAKE_CUDA_DEVICE_NAME"))) device_name = s;
    if ((s = getenv("FAKE_CUDA_CC"))) sscanf(s, "%d.%d", &cc_major, &cc_minor);
    if ((s = getenv("FAKE_CUDA_TOTAL_MEM"))) total_mem = strtoull(s, NULL, 0);
    if ((s = getenv("FAKE_CUDA_FREE_MEM"))) free_mem = strtoull(s, NULL, 0);
    per_function(getenv("FAKE_CUDA_FAIL"), fail_code);
    for (s = getenv("FAKE_CUDA_MISSING"); s && *s;) {
        const char *end = strchrnul(s, ',');
        int i = index_of(s, (size_t)(end - s));
        if (i >= 0) missing[i] = 1;
        s = *end ? end + 1 : end;
    }
    if ((s = getenv("FAKE_CUDA_CRASH"))) crash_at = index_of(s, strlen(s));
    per_function(getenv("FAKE_CUDA_BLOCK"), block_secs);
}

uint32_t fake_enter(int i)
{
    configure();
    if (counting) atomic_fetch_add_explicit(&counts[i], 1, memory_order_relaxed);
    if (i == crash_at) {
        volatile int *p = NULL;
        __asm__ volatile("" : "+r"(p)); /* hide the null from the optimiser */
        *p = 1;  /* a driver bug: SIGSEGV inside the call */
    }
    if (block_secs[i]) sleep((unsigned)block_secs[i]);
    return (uint32_t)fail_code[i];
}

static int self(const char *name) { return index_of(name, strlen(name)); }
#define ENTER(name) do { \
        static int idx_ = -1; \
        if (idx_ < 0) idx_ = self(#name); \
        uint32_t r_ = fake_enter(idx_); \
        if (r_) return r_; \
    } while (0)

__attribute__((destructor)) static void write_counts(void)
{
    const char *path = getenv("FAKE_CUDA_COUNTS");
    if (!path) return;
    char p[4096];
    snprintf(p, sizeof p, "%s.%d", path, (int)getpid());
    FILE *f = fopen(p, "w");
    if (!f) return;
    for (int i = 0; i < fake_count; i++)
        if (counts[i]) fprintf(f, "%s %llu\n", fake_names[i], (unsigned long long)counts[i]);
    fclose(f);
}

/* The real driver's resolver: the newest ABI not newer than the requested version and the
 * driver's own version; the per-thread-stream variant when flags ask for it. */
static uint32_t resolve(const char *sym, void **pfn, int ver, uint64_t flags, int *status)
{
    int best = -1, best_ptds = -1, known = 0, too_new = 0;
    if (!sym || !pfn) return 1;  /* CUDA_ERROR_INVALID_VALUE */
    *pfn = NULL;
    for (int i = 0; i < fake_procaddr_count; i++) {
        const struct fake_procaddr *e = &fake_procaddr[i];
        if (strcmp(e->name, sym)) continue;
        known = 1;
        if (e->version > ver) continue;
        if (e->version > driver_version || missing[e->index]) { too_new = 1; continue; }
        if (e->flags == 2) best_ptds = i; else best = i;
    }
    int pick = (flags & 2) && best_ptds >= 0 ? best_ptds : best;
    if (pick < 0) {
        if (status) *status = known && too_new ? 2 : 1;
        return 500;  /* CUDA_ERROR_NOT_FOUND */
    }
    *pfn = fake_fns[fake_procaddr[pick].index];
    if (status) *status = 0;
    return 0;
}

FAKE_EXPORT uint32_t cuGetProcAddress(void *symbol, void *pfn, int32_t ver, uint64_t flags)
{
    ENTER(cuGetProcAddress);
    return resolve(symbol, pfn, ver, flags, NULL);
}

FAKE_EXPORT uint32_t cuGetProcAddress_v2(void *symbol, void *pfn, int32_t ver, uint64_t flags, void *status)
{
    ENTER(cuGetProcAddress_v2);
    return resolve(symbol, pfn, ver, flags, status);
}

FAKE_EXPORT uint32_t cuInit(uint32_t flags) { (void)flags; ENTER(cuInit); return device_count ? 0 : 100; }

FAKE_EXPORT uint32_t cuDriverGetVersion(void *v)
{
    ENTER(cuDriverGetVersion);
    if (!v) return 1;
    *(int *)v = driver_version;
    return 0;
}

FAKE_EXPORT uint32_t cuDeviceGetCount(void *n)
{
    ENTER(cuDeviceGetCount);
    if (!n) return 1;
    *(int *)n = device_count;
    return 0;
}

FAKE_EXPORT uint32_t cuDeviceGet(void *dev, int32_t ordinal)
{
    ENTER(cuDeviceGet);
    if (!dev || ordinal < 0 || ordinal >= device_count) return 101;  /* CUDA_ERROR_INVALID_DEVICE */
    *(int *)dev = ordinal;
    return 0;
}

FAKE_EXPORT uint32_t cuDeviceGetName(void *name, int32_t len, int32_t dev)
{
    ENTER(cuDeviceGetName);
    if (!name || len <= 0 || dev < 0 || dev >= device_count) return 1;
    snprintf(name, (size_t)len, "%s", device_name);
    return 0;
}

FAKE_EXPORT uint32_t cuDeviceGetAttribute(void *value, uint32_t attr, int32_t dev)
{
    ENTER(cuDeviceGetAttribute);
    if (!value || dev < 0 || dev >= device_count) return 1;
    int v = 1;
    switch (attr) {
    case 75: v = cc_major; break;    /* COMPUTE_CAPABILITY_MAJOR */
    case 76: v = cc_minor; break;
    case 1: v = 1024; break;         /* MAX_THREADS_PER_BLOCK */
    case 2: case 3: v = 1024; break; /* MAX_BLOCK_DIM_X/Y */
    case 4: v = 64; break;
    case 8: v = 49152; break;        /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 16: v = 132; break;         /* MULTIPROCESSOR_COUNT */
    case 17: {                       /* KERNEL_EXEC_TIMEOUT: a display attached, its watchdog on */
        const char *w = getenv("FAKE_CUDA_EXEC_TIMEOUT");
        v = w && atoi(w) ? 1 : 0;
        break;
    }
    }
    *(int *)value = v;
    return 0;
}

FAKE_EXPORT uint32_t cuDeviceTotalMem_v2(void *bytes, int32_t dev)
{
    ENTER(cuDeviceTotalMem_v2);
    if (!bytes || dev < 0 || dev >= device_count) return 1;
    *(size_t *)bytes = total_mem;
    return 0;
}

FAKE_EXPORT uint32_t cuMemGetInfo_v2(void *free_b, void *total_b)
{
    ENTER(cuMemGetInfo_v2);
    if (free_b) *(size_t *)free_b = free_mem > used_mem ? free_mem - used_mem : 0;
    if (total_b) *(size_t *)total_b = total_mem;
    return 0;
}

FAKE_EXPORT uint32_t cuMemAlloc_v2(void *dptr, uint64_t size)
{
    ENTER(cuMemAlloc_v2);
    if (!dptr) return 1;
    if (size > free_mem - used_mem) return 2;  /* CUDA_ERROR_OUT_OF_MEMORY */
    used_mem += size;
    *(uint64_t *)dptr = 0x7f0000000000ull + used_mem;
    return 0;
}

FAKE_EXPORT uint32_t cuGetErrorName(uint32_t err, void *out)
{
    ENTER(cuGetErrorName);
    if (out) *(const char **)out = err ? "CUDA_ERROR_FAKE" : "CUDA_SUCCESS";
    return 0;
}

FAKE_EXPORT uint32_t cuGetErrorString(uint32_t err, void *out)
{
    ENTER(cuGetErrorString);
    if (out) *(const char **)out = err ? "fake error" : "no error";
    return 0;
}

/* Device code: modules are counters, functions carry their names, and a kernel named by
 * FAKE_CUDA_FAULT_KERNEL "faults": every later synchronising call returns 700, as the real
 * driver's sticky error does. */
struct fake_func { char name[128]; };
static struct fake_func funcs[256];
static int _Atomic nfuncs, nmods, sticky;

static struct fake_func *func_of(void *f)
{
    struct fake_func *p = f;
    return p >= funcs && p < funcs + atomic_load(&nfuncs) ? p : NULL;
}

static uint32_t new_module(void **out)
{
    if (!out) return 1;
    *out = (void *)(uintptr_t)(0x1000 * (1 + atomic_fetch_add(&nmods, 1)));
    return 0;
}

static uint32_t new_function(void **out, const char *name)
{
    int i = atomic_fetch_add(&nfuncs, 1);
    if (!out || !name || i >= 256) return 1;
    snprintf(funcs[i].name, sizeof funcs[i].name, "%s", name);
    *out = &funcs[i];
    return 0;
}

FAKE_EXPORT uint32_t cuModuleLoadData(void **module, const void *image)
{ (void)image; ENTER(cuModuleLoadData); return new_module(module); }
FAKE_EXPORT uint32_t cuModuleLoadDataEx(void **module, const void *image, uint32_t n, void *o, void *v)
{ (void)image, (void)n, (void)o, (void)v; ENTER(cuModuleLoadDataEx); return new_module(module); }
FAKE_EXPORT uint32_t cuLibraryLoadData(void **library, const void *code, void *a, void *b, uint32_t c, void *d, void *e,
                                       uint32_t f)
{ (void)code, (void)a, (void)b, (void)c, (void)d, (void)e, (void)f; ENTER(cuLibraryLoadData); return new_module(library); }
FAKE_EXPORT uint32_t cuModuleGetFunction(void **f, void *module, const char *name)
{ (void)module; ENTER(cuModuleGetFunction); return new_function(f, name); }
FAKE_EXPORT uint32_t cuLibraryGetKernel(void **k, void *library, const char *name)
{ (void)library; ENTER(cuLibraryGetKernel); return new_function(k, name); }
FAKE_EXPORT uint32_t cuKernelGetFunction(void **f, void *kernel)
{ ENTER(cuKernelGetFunction); if (!f || !func_of(kernel)) return 400; *f = kernel; return 0; }
FAKE_EXPORT uint32_t cuFuncGetName(const char **name, void *f)
{
    ENTER(cuFuncGetName);
    struct fake_func *p = func_of(f);
    if (!name || !p) return 400;  /* CUDA_ERROR_INVALID_HANDLE */
    *name = p->name;
    return 0;
}

static uint32_t launch(void *f, uint32_t bx, uint32_t by, uint32_t bz)
{
    if (atomic_load_explicit(&sticky, memory_order_relaxed)) return (uint32_t)atomic_load(&sticky);
    if ((uint64_t)bx * by * bz > 1024) return 1;
    static const char *fault;
    static int looked;
    if (!looked) fault = getenv("FAKE_CUDA_FAULT_KERNEL"), looked = 1;  /* the benchmark calls this in a loop */
    if (!fault) return 0;
    struct fake_func *p = func_of(f);
    if (fault && p && !strcmp(p->name, fault)) atomic_store(&sticky, 700);
    return 0;
}

/* FAKE_CUDA_ECHO_LAUNCH=1: print every argument a launch arrived with (the wrappers pass the
 * stack arguments on without copying them). */
static void echo_launch(const char *name, void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                        uint32_t bz, uint32_t smem, void *stream, void *params, void *extra)
{
    static int echo = -1;
    if (echo < 0) echo = getenv("FAKE_CUDA_ECHO_LAUNCH") != NULL;
    if (echo)
        printf("%s f=%p grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%p params=%p extra=%p\n", name, f, gx, gy, gz,
               bx, by, bz, smem, stream, params, extra);
}

FAKE_EXPORT uint32_t cuLaunchKernel(void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                                    uint32_t bz, uint32_t smem, void *stream, void *params, void *extra)
{
    ENTER(cuLaunchKernel);
    echo_launch("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
    return launch(f, bx, by, bz);
}

FAKE_EXPORT uint32_t cuLaunchKernel_ptsz(void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                                         uint32_t bz, uint32_t smem, void *stream, void *params, void *extra)
{
    ENTER(cuLaunchKernel_ptsz);
    echo_launch("cuLaunchKernel_ptsz", f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
    return launch(f, bx, by, bz);
}

FAKE_EXPORT uint32_t cuCtxSynchronize(void) { ENTER(cuCtxSynchronize); return (uint32_t)atomic_load(&sticky); }
FAKE_EXPORT uint32_t cuCtxSynchronize_v2(void *ctx) { (void)ctx; ENTER(cuCtxSynchronize_v2); return (uint32_t)atomic_load(&sticky); }
FAKE_EXPORT uint32_t cuStreamSynchronize(void *s) { (void)s; ENTER(cuStreamSynchronize); return (uint32_t)atomic_load(&sticky); }
FAKE_EXPORT uint32_t cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n)
{ (void)dst, (void)src, (void)n; ENTER(cuMemcpyDtoH_v2); return (uint32_t)atomic_load(&sticky); }

/* The runtime asks for private tables. The fake answers with a table whose first word is its
 * size and whose entries all succeed and do nothing; FAKE_CUDA_NO_EXPORT_TABLE=1 refuses. */
/* Host functions run on a thread the driver owns, as the real driver does: a crash inside a
 * callback happens on a thread the program never created. */
struct host_call { void (*fn)(void *); void *data; };
static void *host_thread(void *p)
{
    struct host_call *c = p;
    c->fn(c->data);
    return NULL;
}
FAKE_EXPORT uint32_t cuLaunchHostFunc(void *stream, void *fn, void *data)
{
    (void)stream;
    ENTER(cuLaunchHostFunc);
    struct host_call c = { (void (*)(void *))fn, data };
    pthread_t th;
    if (pthread_create(&th, NULL, host_thread, &c)) return 2;
    pthread_join(th, NULL);
    return 0;
}

static uint32_t export_noop(void) { return 0; }
static void *export_table[128];

FAKE_EXPORT uint32_t cuGetExportTable(void *table, void *uuid)
{
    (void)uuid;
    ENTER(cuGetExportTable);
    if (!table) return 1;
    if (getenv("FAKE_CUDA_NO_EXPORT_TABLE")) {
        *(void **)table = NULL;
        return 500;
    }
    export_table[0] = (void *)sizeof export_table;
    for (int i = 1; i < 128; i++) export_table[i] = (void *)export_noop;
    *(void **)table = export_table;
    return 0;
}

/* For the benchmark: the fake's own function, bypassing any interposer (the "direct" baseline). */
FAKE_EXPORT void *fake_direct(const char *name)
{
    int i = self(name);
    return i >= 0 ? fake_fns[i] : NULL;
}
