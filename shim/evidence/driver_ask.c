/* The few driver calls the shim makes itself, only to explain a failure (device limits, free
 * memory, a kernel's name, the driver version) or because CUDASHIM_SYNC_LAUNCHES asks for it.
 * They go straight to the real functions (never through the wrappers) and are counted apart, in
 * the summary's "own_calls", so a trace's "calls" stay exactly the program's. */
#include "../../wrappers/gen/cuda_api.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "driver_ask.h"

uint64_t _Atomic cs_own_calls[CS_API_TOTAL];

void cs_own_count(int idx) { atomic_fetch_add_explicit(&cs_own_calls[idx], 1, memory_order_relaxed); }

static void *real(int idx)
{
    void *fn = cs_real(&cs_api_cuda, idx);
    if (fn) cs_own_count(idx);
    return fn;
}

int cs_ask_ctx_device(int *dev)
{
    uint32_t (*fn)(int *) = (uint32_t (*)(int *))real(CS_CUDA_cuCtxGetDevice);
    if (!fn) return -1;
    struct cs_thread *own = cs_hide();
    int r = (int)fn(dev);
    cs_unhide(own);
    return r;
}

int cs_ask_attribute(int *v, int attr, int dev)
{
    uint32_t (*fn)(int *, int, int) = (uint32_t (*)(int *, int, int))real(CS_CUDA_cuDeviceGetAttribute);
    if (!fn) return -1;
    struct cs_thread *own = cs_hide();
    int r = (int)fn(v, attr, dev);
    cs_unhide(own);
    return r;
}

int cs_ask_driver_version(int *v)
{
    uint32_t (*fn)(int *) = (uint32_t (*)(int *))real(CS_CUDA_cuDriverGetVersion);
    if (!fn) return -1;
    struct cs_thread *own = cs_hide();
    int r = (int)fn(v);
    cs_unhide(own);
    return r;
}

int cs_ask_func_name(const char **name, void *f)
{
    uint32_t (*fn)(const char **, void *) = (uint32_t (*)(const char **, void *))real(CS_CUDA_cuFuncGetName);
    if (!fn) return -1;
    struct cs_thread *own = cs_hide();
    int r = (int)fn(name, f);
    cs_unhide(own);
    return r;
}

int cs_ask_stream_sync(void *stream)
{
    uint32_t (*fn)(void *) = (uint32_t (*)(void *))real(CS_CUDA_cuStreamSynchronize);
    if (!fn) return -1;
    struct cs_thread *own = cs_hide();
    int r = (int)fn(stream);
    cs_unhide(own);
    return r;
}

int cs_ask_mem_info(size_t *free_b, size_t *total_b)
{
    uint32_t (*fn)(size_t *, size_t *) = (uint32_t (*)(size_t *, size_t *))real(CS_CUDA_cuMemGetInfo_v2);
    if (!fn) return -1;
    struct cs_thread *own = cs_hide();
    int r = (int)fn(free_b, total_b);
    cs_unhide(own);
    return r;
}
