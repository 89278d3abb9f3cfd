/* Driver results that have one usual cause on an upgraded or partly installed machine, each a
 * finding with that cause checked where the shim can check it (a file, the inventory):
 *   221 CUDA_ERROR_JIT_COMPILER_NOT_FOUND  the driver's PTX JIT library is not installed
 *   802 CUDA_ERROR_SYSTEM_NOT_READY        an NVSwitch system whose fabric manager is not running
 *   999 CUDA_ERROR_UNKNOWN                 (at cuInit) the nvidia_uvm module is not loaded
 * 702 (launch timeout) is an asynchronous kernel error (launches.c); 100, 803 and 804 are read
 * at cuInit (diagnose.c). Runs on the calling thread: stat() and the inventory, nothing else. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "inventory.h"
#include "../wrappers/gen/results.h"

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The directory of the user-space driver, where its companion libraries are installed. */
static void driver_dir(char *out, size_t cap)
{
    const struct cs_library *d = cs_library_find_kind("driver", 0);
    snprintf(out, cap, "%s", d ? d->path : "");
    char *slash = strrchr(out, '/');
    if (slash) *slash = 0;
    else out[0] = 0;
}

static void jit_missing(const char *api)
{
    char dir[PATH_MAX], path[PATH_MAX + 64], summary[1536], ev[1024];
    driver_dir(dir, sizeof dir);
    int loaded = cs_library_find_kind("ptxjitcompiler", 0) != NULL;
    snprintf(path, sizeof path, "%s/libnvidia-ptxjitcompiler.so.1", dir[0] ? dir : "/usr/lib/x86_64-linux-gnu");
    int beside = exists(path);
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

static void fabric_manager(const char *api)
{
    char summary[1024], ev[512];
    int nvswitch = exists("/dev/nvidia-nvswitchctl");
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

static void unknown_at_init(const char *api)
{
    int uvm = exists("/dev/nvidia-uvm"), ctl = exists("/dev/nvidiactl");
    const char *kmod = cs_kernel_module_version();
    const struct cs_library *d = cs_library_find_kind("driver", 0);
    /* A kernel module that differs from the user-space driver is driver-kernel-mismatch (diagnose.c). */
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

void cs_diagnose_result(const char *api, int result)
{
    switch (result) {
    case CS_CUDA_ERROR_JIT_COMPILER_NOT_FOUND: jit_missing(api); break;
    case CS_CUDA_ERROR_SYSTEM_NOT_READY: fabric_manager(api); break;
    case CS_CUDA_ERROR_UNKNOWN: if (!strcmp(api, "cuInit")) unknown_at_init(api); break;
    }
}
