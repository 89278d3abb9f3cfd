/* Kernel errors: an asynchronous error reported by a later call, with the launches not yet
 * covered by a successful synchronisation (the suspects); the display watchdog's timeout; and a
 * kernel pinned by a synchronisation right after its launch. */
#include <stdio.h>

#include "../trace/findings.h"
#include "rules.h"
#include "../../wrappers/gen/results.h"

/* "0" or "0, 2" */
static void devices_text(char *out, size_t cap, uint64_t mask)
{
    size_t len = 0;
    out[0] = 0;
    for (int d = 0; d < 64 && len < cap; d++)
        if (mask >> d & 1) len += (size_t)snprintf(out + len, cap - len, "%s%d", len ? ", " : "", d);
}

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
        char devices[128] = "", confirm[400];
        devices_text(devices, sizeof devices, f->watchdog_devices);
        if (f->watchdog_devices)
            snprintf(confirm, sizeof confirm, "GPU %s has the run-time limit on (KERNEL_EXEC_TIMEOUT = 1: a display is "
                                              "attached%s)", devices, f->wsl ? ", and under WSL Windows' TDR watchdog "
                                                                              "governs it" : "");
        else if (f->watchdog_asked)
            snprintf(confirm, sizeof confirm, "no GPU the program asked about has the display watchdog "
                                              "(KERNEL_EXEC_TIMEOUT = 0), so the kernel was stopped by something else "
                                              "(a debugger, the driver's own reset after a hang)");
        else snprintf(confirm, sizeof confirm, "whether the GPU drives a display was not asked");
        snprintf(summary, sizeof summary,
                 "found CUDA_ERROR_LAUNCH_TIMEOUT (702) at %s: a kernel ran longer than the watchdog of a GPU that "
                 "drives a display allows (about 2 s on Windows and WSL, a few seconds under X); %s; launched on %s "
                 "since its last successful synchronisation: %s",
                 f->api, confirm, f->stream_known ? "that stream" : "the context", launched);
        const char *fix = f->wsl ? "Under WSL the Windows TDR watchdog stops the kernel: use a GPU that drives no display, "
                                   "make each kernel shorter, or (test machines only) raise TdrDelay (a DWORD, seconds) "
                                   "under HKLM\\System\\CurrentControlSet\\Control\\GraphicsDrivers and reboot. The "
                                   "context is lost: the process must start again."
                                 : "Use a GPU that drives no display (CUDA_VISIBLE_DEVICES), or run without X on this one "
                                   "(or set Option \"Interactive\" \"False\" in its Device section of xorg.conf), or make "
                                   "each kernel shorter; on Windows, TCC mode (nvidia-smi -g N -dm 1) on GPUs that have "
                                   "it, or TdrDelay on test machines. The context is lost: the process must start again.";
        cs_finding(CS_F_LAUNCH_TIMEOUT, CS_ERROR, key, summary, fix, ev_json);
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

void cs_rule_display_watchdog(uint64_t devices, int wsl)
{
    if (!devices) return;
    char list[128], summary[900], ev_json[160];
    devices_text(list, sizeof list, devices);
    snprintf(summary, sizeof summary,
             "found compute on GPU %s, which has a kernel run-time limit (KERNEL_EXEC_TIMEOUT = 1: it drives a "
             "display%s): a single kernel longer than about 2 s (Windows, WSL) or a few seconds (X) is stopped with "
             "CUDA_ERROR_LAUNCH_TIMEOUT and the context is lost",
             list, wsl ? "; under WSL Windows' TDR watchdog applies" : "");
    snprintf(ev_json, sizeof ev_json, "{\"devices\":\"%s\",\"wsl\":%s}", list, wsl ? "true" : "false");
    cs_finding(CS_F_DISPLAY_WATCHDOG, CS_INFO, list, summary,
               "For long kernels use a GPU that drives no display (CUDA_VISIBLE_DEVICES), or run without the display "
               "server on this one; nothing to do if every kernel is short.",
               ev_json);
}
