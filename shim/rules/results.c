/* Driver results that have one usual cause on an upgraded or partly installed machine, each a
 * finding with that cause checked against the evidence (the driver's files, the device nodes):
 *   221 CUDA_ERROR_JIT_COMPILER_NOT_FOUND  the driver's PTX JIT library is not installed
 *   802 CUDA_ERROR_SYSTEM_NOT_READY        an NVSwitch system whose fabric manager is not running
 *   999 CUDA_ERROR_UNKNOWN                 (at cuInit) the nvidia_uvm module is not loaded
 * 702 (launch timeout) is an asynchronous kernel error (kernels.c); 100, 803 and 804 are read
 * at cuInit (driver.c). */
#include <stdio.h>
#include <string.h>

#include "../trace/findings.h"
#include "../evidence/inventory.h"
#include "rules.h"
#include "../../wrappers/gen/results.h"

static void jit_missing(const struct cs_evidence *e, const char *api)
{
    char summary[1536], ev[1536];
    int loaded = cs_ev_kind(e, "ptxjitcompiler", 0) != NULL;
    const char *path = e->ptx_jit_path;
    int beside = e->ptx_jit_beside_driver;
    snprintf(summary, sizeof summary,
             "found %s failing with CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221): the program's GPU code is PTX that the "
             "driver must compile, and the driver's PTX compiler, libnvidia-ptxjitcompiler.so.1, is %s; install "
             "the driver's complete user space (the same version as libcuda.so.1)",
             api, loaded ? "loaded but unusable" : beside ? "installed but could not be loaded" : "not installed beside libcuda.so.1");
    snprintf(ev, sizeof ev, "{\"api\":\"%s\",\"result\":221,\"looked_for\":\"%s\",\"found\":%s,\"loaded\":%s}", api, path,
             beside ? "true" : "false", loaded ? "true" : "false");
    cs_finding(CS_F_PTX_JIT_MISSING, CS_ERROR, "221", summary,
               "Install the driver package's PTX JIT library (Debian/Ubuntu: libnvidia-ptxjitcompiler1 of the same "
               "version as libcuda1); in a container, run with the NVIDIA container toolkit's compute capability "
               "(NVIDIA_DRIVER_CAPABILITIES=compute,utility), which mounts it. Or use a build of the program that "
               "carries SASS for this GPU, so nothing needs compiling.", ev);
}

static void fabric_manager(const struct cs_evidence *e, const char *api)
{
    char summary[1024], ev[512];
    int nvswitch = e->dev_nvswitchctl;
    snprintf(summary, sizeof summary,
             "found %s failing with CUDA_ERROR_SYSTEM_NOT_READY (802): on an NVSwitch system (HGX/DGX) the GPUs are "
             "usable only once nvidia-fabricmanager runs, at the same version as the driver%s; start it (systemctl "
             "start nvidia-fabricmanager), or upgrade it together with the driver",
             api, nvswitch ? "; this machine has NVSwitch devices (/dev/nvidia-nvswitchctl)" : "");
    snprintf(ev, sizeof ev, "{\"api\":\"%s\",\"result\":802,\"nvswitch_device\":%s}", api, nvswitch ? "true" : "false");
    cs_finding(CS_F_FABRIC_MANAGER_NOT_RUNNING, CS_ERROR, "802", summary,
               "systemctl status nvidia-fabricmanager: it must run, and its version must equal the driver's (a driver "
               "upgrade without the matching fabric manager leaves it failing to start).", ev);
}

static void unknown_at_init(const struct cs_evidence *e, const char *api)
{
    int uvm = e->dev_nvidia_uvm, ctl = e->dev_nvidiactl;
    const char *kmod = e->kernel_module;
    const struct cs_library *d = cs_ev_kind(e, "driver", 0);
    /* A kernel module that differs from the user-space driver is driver-kernel-mismatch (driver.c). */
    if (kmod && d && d->file_version[0] && strcmp(kmod, d->file_version)) return;
    char summary[1024], ev[512];
    if (!uvm && ctl)
        snprintf(summary, sizeof summary,
                 "found %s failing with CUDA_ERROR_UNKNOWN (999): /dev/nvidia-uvm is missing, so the nvidia_uvm kernel "
                 "module is not loaded (CUDA needs it; nvidia-smi does not, so it may look fine); load it", api);
    else
        snprintf(summary, sizeof summary,
                 "found %s failing with CUDA_ERROR_UNKNOWN (999)%s; after a driver upgrade, a suspend/resume or a GPU "
                 "fault this usually clears only with the nvidia modules reloaded", api,
                 ctl ? "" : ": /dev/nvidiactl is missing too (no NVIDIA device nodes)");
    snprintf(ev, sizeof ev, "{\"api\":\"%s\",\"result\":999,\"dev_nvidia_uvm\":%s,\"dev_nvidiactl\":%s}", api,
             uvm ? "true" : "false", ctl ? "true" : "false");
    cs_finding(CS_F_CUDA_UNKNOWN_ERROR, CS_ERROR, "999", summary,
               !uvm && ctl ? "sudo modprobe nvidia-uvm (or nvidia-modprobe -u -c=0), then rerun; make it load at boot."
                           : "Reboot, or unload and reload the nvidia modules (nvidia_uvm, nvidia_drm, nvidia_modeset, "
                             "nvidia); check dmesg for Xid errors.",
               ev);
}

void cs_rule_result(const struct cs_evidence *e, const char *api, int result)
{
    switch (result) {
    case CS_CUDA_ERROR_JIT_COMPILER_NOT_FOUND: jit_missing(e, api); break;
    case CS_CUDA_ERROR_SYSTEM_NOT_READY: fabric_manager(e, api); break;
    case CS_CUDA_ERROR_UNKNOWN: if (!strcmp(api, "cuInit")) unknown_at_init(e, api); break;
    }
}
