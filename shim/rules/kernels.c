/* Kernel errors: an asynchronous error reported by a later call, with the launches not yet
 * covered by a successful synchronisation (the suspects); the display watchdog's timeout; and a
 * kernel pinned by a synchronisation right after its launch. */
#include <stdio.h>

#include "../trace/findings.h"
#include "rules.h"
#include "../../wrappers/gen/results.h"

int cs_rule_is_async_error(int r)
{
    return r == CS_CUDA_ERROR_ILLEGAL_ADDRESS || r == CS_CUDA_ERROR_LAUNCH_TIMEOUT || r == CS_CUDA_ERROR_LAUNCH_FAILED ||
           r == CS_CUDA_ERROR_ILLEGAL_INSTRUCTION || r == CS_CUDA_ERROR_MISALIGNED_ADDRESS || r == CS_CUDA_ERROR_ASSERT ||
           r == CS_CUDA_ERROR_HARDWARE_STACK_ERROR;
}

void cs_rule_async_error(const struct cs_async_failure *f)
{
    if (!cs_rule_is_async_error(f->result)) return;
    const char *rn = f->result_name;
    const char *launched = f->nsuspects ? f->suspects_text
                                        : "no launch the shim saw (it came from before the shim, or from a graph)";
    char summary[2400], ev_json[2400], key[32];
    snprintf(ev_json, sizeof ev_json, "{\"api\":\"%s\",\"result\":%d,\"suspects\":%s}", f->api, f->result,
             f->suspects_json);
    snprintf(key, sizeof key, "%d", f->result);
    if (f->result == CS_CUDA_ERROR_LAUNCH_TIMEOUT) {
        /* The display watchdog: the kernel is not wrong, it is long, on a GPU that drives a display. */
        snprintf(summary, sizeof summary,
                 "found CUDA_ERROR_LAUNCH_TIMEOUT (702) at %s: a kernel ran longer than the watchdog of a GPU that "
                 "drives a display allows (a few seconds); launched on %s since its last successful synchronisation: "
                 "%s; run on a GPU without a display, or without the display server, or split the kernel",
                 f->api, f->stream_known ? "that stream" : "the context", launched);
        cs_finding(CS_F_LAUNCH_TIMEOUT, CS_ERROR, key, summary,
                   "Use a GPU that drives no display (CUDA_VISIBLE_DEVICES), stop the display server (X, Wayland) on this "
                   "one, or make each kernel shorter. The context is lost: the process must start again.", ev_json);
        return;
    }
    snprintf(summary, sizeof summary,
             "found %s (%d) at %s, which reports a fault in a kernel that ran earlier; launched on %s since its last "
             "successful synchronisation: %s; rerun with CUDASHIM_SYNC_LAUNCHES=1 to pin the kernel",
             rn ? rn : "an error", f->result, f->api, f->stream_known ? "that stream" : "the context", launched);
    cs_finding(CS_F_ASYNC_KERNEL_ERROR, CS_ERROR, key, summary,
               "Rerun with CUDASHIM_SYNC_LAUNCHES=1 (or =PATTERN for some kernels) to find the exact kernel, then debug "
               "it with compute-sanitizer. The error is sticky: every later call in this context fails too.", ev_json);
}

void cs_rule_kernel_fault(const struct cs_kernel_fault *f)
{
    char summary[1024], ev_json[1024];
    snprintf(summary, sizeof summary,
             "found kernel %s (grid %ux%ux%u, block %ux%ux%u) failing with %s (%u): the synchronisation right after its "
             "launch reported it, so this kernel is the one that faulted",
             f->kernel, f->grid[0], f->grid[1], f->grid[2], f->block[0], f->block[1], f->block[2],
             f->result_name ? f->result_name : "?", f->result);
    snprintf(ev_json, sizeof ev_json, "{\"kernel\":\"%.200s\",\"result\":%u,\"stream\":\"%p\"}", f->kernel, f->result,
             f->stream);
    cs_finding(CS_F_KERNEL_FAULT, CS_ERROR, f->kernel, summary,
               "Debug this kernel: run it under compute-sanitizer, check the inputs it was given; after an upgrade, "
               "check that the build targets this GPU natively (a JIT-compiled or wrong-architecture kernel can "
               "fault where native code does not).", ev_json);
}
