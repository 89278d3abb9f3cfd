/* An allocation that failed for lack of device memory: how much was asked, how much the driver
 * says is free, how much this process holds. */
#include <stdio.h>
#include <string.h>

#include "../base/json.h"
#include "../trace/findings.h"
#include "rules.h"

static void gib(char *out, size_t cap, uint64_t b)
{
    if (b >= (1ull << 30)) snprintf(out, cap, "%.2f GiB", (double)b / (1024.0 * 1024 * 1024));
    else snprintf(out, cap, "%.1f MiB", (double)b / (1024.0 * 1024));
}

static void pinned_refused(const struct cs_oom *m)
{
    char a[32], lim[48], summary[1200], ev_json[400], n1[24], n2[24];
    gib(a, sizeof a, m->requested);
    if (m->memlock) gib(lim, sizeof lim, m->memlock);
    snprintf(summary, sizeof summary,
             "found %s refusing %s of page-locked host memory (pin_memory, cudaHostAlloc)%s%s; it is host memory, not "
             "the GPU's: the CUDA runtime keeps this error, and the next runtime call that reports errors (a launch, "
             "cudaGetLastError) says \"out of memory\" although the device has room",
             m->api, a, m->memlock ? "; the locked-memory limit (ulimit -l) is " : "", m->memlock ? lim : "");
    snprintf(ev_json, sizeof ev_json, "{\"api\":\"%s\",\"requested\":%s,\"memlock_limit\":%s}", m->api,
             cs_num(n1, m->requested), cs_num(n2, m->memlock));
    cs_finding(CS_F_PINNED_MEMORY_REFUSED, CS_WARNING, m->api, summary,
               "Pin less at once (smaller buffers, fewer DataLoader workers with pin_memory=True) or set "
               "pin_memory=False; raise ulimit -l or the container's memory limit; under WSL2 pinned memory is capped "
               "well below the machine's. Clear the stale error (cudaGetLastError) before the next call.",
               ev_json);
}

static void reservation_refused(const struct cs_oom *m)
{
    char a[32], f[32], lim[48], summary[1200], ev_json[400], n1[24], n2[24], n3[24];
    gib(a, sizeof a, m->requested), gib(f, sizeof f, m->free);
    if (m->as_limit) gib(lim, sizeof lim, m->as_limit);
    snprintf(summary, sizeof summary,
             "found %s refusing %s while the device has %s free: the device has room; the process's virtual address "
             "space does not (a reservation takes address space first): %s%s. cudaMallocAsync's pools and PyTorch's "
             "expandable segments reserve about the GPU's memory and more",
             m->api, a, m->have_info ? f : "?", m->as_limit ? "ulimit -v is " : "a sanitizer's runtime is preloaded and holds most of it",
             m->as_limit ? lim : "");
    snprintf(ev_json, sizeof ev_json, "{\"api\":\"%s\",\"requested\":%s,\"free\":%s,\"as_limit\":%s,\"sanitizer\":%s}",
             m->api, cs_num(n1, m->requested), cs_num(n2, m->free), cs_num(n3, m->as_limit), m->sanitizer ? "true" : "false");
    cs_finding(CS_F_ADDRESS_SPACE_REFUSED, CS_ERROR, m->as_limit ? "ulimit" : "sanitizer", summary,
               "Raise or remove the address-space limit (ulimit -v unlimited; the batch system's vmem limit), or use "
               "an allocator that reserves less: PYTORCH_CUDA_ALLOC_CONF without expandable_segments, or "
               "backend:native instead of cudaMallocAsync. Under a sanitizer, run the GPU job without it.",
               ev_json);
}

void cs_rule_out_of_memory(const struct cs_oom *m)
{
    if (m->kind == CS_OOM_PINNED) { pinned_refused(m); return; }
    /* a pure reservation takes no device memory; a pool's allocation takes both */
    int address_only = !strcmp(m->api, "cuMemAddressReserve") || !strcmp(m->api, "cuMemPoolCreate");
    if (m->kind == CS_OOM_RESERVATION && (address_only || (m->have_info && m->free >= m->requested)) &&
        (m->as_limit || m->sanitizer)) {
        reservation_refused(m);
        return;
    }
    char a[32], f[32], tt[32], l[32], summary[1024], ev_json[512], n1[24], n2[24], n3[24], n4[24];
    gib(a, sizeof a, m->requested), gib(f, sizeof f, m->free), gib(tt, sizeof tt, m->total), gib(l, sizeof l, m->live);
    snprintf(summary, sizeof summary,
             "found %s asking for %s with %s free of %s on the device; this process holds %s in %llu allocations the "
             "shim saw (the rest is other processes, the CUDA context, or allocations made before the shim)",
             m->api, a, m->have_info ? f : "?", m->have_info ? tt : "?", l, (unsigned long long)m->count);
    snprintf(ev_json, sizeof ev_json,
             "{\"api\":\"%s\",\"requested\":%s,\"free\":%s,\"total\":%s,\"process_live_bytes\":%s}",
             m->api, cs_num(n1, m->requested), cs_num(n2, m->free), cs_num(n3, m->total), cs_num(n4, m->live));
    cs_finding(CS_F_OUT_OF_MEMORY, CS_WARNING, "oom", summary,
               "Reduce the batch size or model size, free cached memory (PyTorch: torch.cuda.empty_cache(); "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation), or stop the other processes "
               "on this GPU (nvidia-smi lists them). An upgrade can raise memory use: compare with the old stack's "
               "trace.", ev_json);
}

void cs_rule_module_load_oom(const struct cs_load_oom *m)
{
    char f[32], l[32], summary[1400], ev_json[600], what[600], n1[24], n2[24];
    gib(f, sizeof f, m->free), gib(l, sizeof l, m->live);
    if (m->kernel && m->kernel[0]) snprintf(what, sizeof what, "kernel %s%s%s", m->kernel, m->origin ? " of " : "", m->origin ? m->origin : "");
    else snprintf(what, sizeof what, "device code%s%s", m->origin && m->origin[0] ? " of " : "", m->origin ? m->origin : "");
    snprintf(summary, sizeof summary,
             "found %s failing with CUDA_ERROR_OUT_OF_MEMORY (2) loading %s: the code did not fit in device memory "
             "(%s free, %s held by this process's allocations); it is not a wrong architecture or a bad build, whatever "
             "the framework's message says%s",
             m->api, what, m->have_info ? f : "? ", l,
             m->lazy ? ". With lazy loading (the default since CUDA 12.2, and set by PyTorch) code is loaded at first "
                       "use, after the framework or another process took the memory"
                     : "");
    snprintf(ev_json, sizeof ev_json, "{\"api\":\"%s\",\"free\":%s,\"process_live_bytes\":%s,\"lazy\":%s}", m->api,
             cs_num(n1, m->free), cs_num(n2, m->live), m->lazy ? "true" : "false");
    const char *fix = m->xla_preallocate || m->xla_fraction
                          ? "Leave room for code: XLA_PYTHON_CLIENT_MEM_FRACTION=.6 or XLA_PYTHON_CLIENT_PREALLOCATE=false, or "
                            "CUDA_MODULE_LOADING=EAGER to load all code before the framework allocates."
                          : "Leave room for code: JAX XLA_PYTHON_CLIENT_MEM_FRACTION=.6 or XLA_PYTHON_CLIENT_PREALLOCATE=false, "
                            "TensorFlow TF_FORCE_GPU_ALLOW_GROWTH=true, PyTorch a smaller batch or "
                            "torch.cuda.set_per_process_memory_fraction; or CUDA_MODULE_LOADING=EAGER to load all code "
                            "before the framework allocates.";
    cs_finding(CS_F_MODULE_LOAD_OUT_OF_MEMORY, CS_ERROR, m->api, summary, fix, ev_json);
}
