/* The driver against what the program needs: a runtime or library built for a newer CUDA than
 * the driver's, no GPU at all, a user-space driver that does not match its kernel module or a
 * forward-compatibility driver on a GPU that cannot use it, and a driver function a runtime
 * asked for by version that this driver lacks. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../base/json.h"
#include "../base/library_names.h"
#include "../trace/findings.h"
#include "../evidence/inventory.h"
#include "rules.h"
#include "../../wrappers/gen/results.h"

/* One cause, said once: every library and runtime built for a newer CUDA than the driver
 * supports, in one finding (key "driver") that names each with the CUDA it needs, the newest
 * first in the fix; said again, whole, when another joins (readers keep the last). */
#define MAX_NEEDERS 16
struct needer { const char *path; int needs; const char *how; };

static void add_needer(struct needer *n, int *count, int have, const char *path, int needs, const char *how)
{
    if (!path || !*path || needs / 1000 <= have / 1000) return;
    for (int i = 0; i < *count; i++)
        if (!strcmp(cs_base_name(n[i].path), cs_base_name(path))) {
            if (needs > n[i].needs) n[i].needs = needs, n[i].how = how;
            return;
        }
    if (*count < MAX_NEEDERS) n[(*count)++] = (struct needer){ path, needs, how };
}

static void say_driver_too_old(const struct cs_evidence *e, const char *extra, int extra_needs, const char *extra_how)
{
    int have = cs_ev_driver_cuda(e);
    if (!have) return;
    if (!cs_ev_kind(e, "driver", 0) && !e->final) return;  /* the scanner has not named the driver's file yet: it will */
    struct needer n[MAX_NEEDERS];
    int count = 0;
    for (int i = 0; i < e->nlibs; i++) {
        const struct cs_library *l = &e->libs[i];
        if (!strcmp(l->kind, "cudart") && l->code > 0) add_needer(n, &count, have, l->path, (int)l->code, "its file name");
        /* Libraries that carry their own runtime say which CUDA they were built for: cuDNN
         * (cudnnGetCudartVersion), NCCL (its wheel), and those whose version is the CUDA one. */
        if ((!strcmp(l->kind, "cudnn") || !strcmp(l->kind, "nccl") || !strcmp(l->kind, "framework")) &&
            l->built_for_cuda > 0)
            add_needer(n, &count, have, l->path, l->built_for_cuda, l->built_for_how);
        if ((!strcmp(l->kind, "cublas") || !strcmp(l->kind, "cublasLt")) && l->code >= 11000)
            add_needer(n, &count, have, l->path, (int)l->code, "its version");
    }
    for (int i = 0; i < e->nruntimes; i++)
        add_needer(n, &count, have, e->runtimes[i].caller, e->runtimes[i].cuda, "cuGetProcAddress cudaVersion");
    add_needer(n, &count, have, extra, extra_needs, extra_how);
    if (!count) return;
    int top = 0;
    for (int i = 1; i < count; i++)
        if (n[i].needs > n[top].needs) top = i;
    int needs = n[top].needs;
    char need_c[16], have_t[128], mins[160], summary[2048], fix[2560], ev[4096], alternatives[1600], list[1200], one[160];
    const char *lin, *win;
    cs_cuda_text(need_c, sizeof need_c, needs);
    cs_ev_driver_text(e, have_t, sizeof have_t);
    cs_rule_alternatives(e, 0, have, needs, alternatives, sizeof alternatives);
    cs_min_driver_text(mins, sizeof mins, needs, 0, &lin, &win);
    struct cs_buf lb = { list, 0, sizeof list - 1 };
    for (int i = 0; i < count; i++) {
        char c[16];
        cs_cuda_text(c, sizeof c, n[i].needs);
        snprintf(one, sizeof one, "%s%s (CUDA %s)", i ? ", " : "", cs_base_name(n[i].path), c);
        cs_put(&lb, one);
    }
    list[lb.len] = 0;
    char lacks[400] = "";
    if (e->final && e->driver_lacks > 0)
        snprintf(lacks, sizeof lacks, "; %d lookup%s of driver functions this driver lacks followed (%s, ...)",
                 e->driver_lacks, e->driver_lacks == 1 ? "" : "s", e->driver_lacks_first ? e->driver_lacks_first : "");
    if (count == 1)
        snprintf(summary, sizeof summary,
                 "found %s, which needs a driver for CUDA %d.x (%s); this driver is %s; upgrade the driver, or use "
                 "forward compatibility, or install a build for CUDA %d%s",
                 list, needs / 1000, mins, have_t, have / 1000, lacks);
    else
        snprintf(summary, sizeof summary,
                 "found %d libraries built for a newer CUDA than this driver supports: %s; together they need a driver "
                 "for CUDA %d.x (%s); this driver is %s; upgrade the driver, or use forward compatibility, or install "
                 "a build for CUDA %d%s",
                 count, list, needs / 1000, mins, have_t, have / 1000, lacks);
    /* Only cuDNN or NCCL too new, while the framework's own CUDA runs on this driver: those two
     * libraries are what to change (each carries its own runtime), not the framework. */
    const struct cs_library *fw = cs_ev_kind(e, "framework", 0);
    int carried_only = 1;
    char wheels[160] = "", via[1300] = "";
    for (int i = 0; i < count; i++) {
        const struct cs_library *l = cs_ev_path(e, n[i].path);
        int carried = l && (!strcmp(l->kind, "cudnn") || !strcmp(l->kind, "nccl"));
        carried_only &= carried;
        if (!carried) continue;
        size_t k = strlen(wheels);
        snprintf(wheels + k, sizeof wheels - k, "%snvidia-%s-cu%d", k ? " " : "", l->kind,
                 fw && fw->built_for_cuda ? fw->built_for_cuda / 1000 : have / 1000);
        if (!strncmp(l->found_via, "LD_LIBRARY_PATH entry ", 22) && !strstr(via, l->found_via + 22)) {
            k = strlen(via);
            snprintf(via + k, sizeof via - k, "%s%s", k ? ", " : "", l->found_via + 22);
        }
    }
    if (carried_only && fw && fw->built_for_cuda && fw->built_for_cuda / 1000 <= have / 1000) {
        char drop[1400] = "";
        if (via[0]) snprintf(drop, sizeof drop, " (or take %s, which brought them, off LD_LIBRARY_PATH)", via);
        snprintf(fix, sizeof fix, "Use the builds of %s for CUDA %d, the framework's: pip install %s%s; or upgrade the "
                 "NVIDIA driver to one for CUDA %d.x (%s).", list, fw->built_for_cuda / 1000, wheels, drop,
                 needs / 1000, mins);
    } else if (alternatives[0])  /* the alternatives name the builds, the driver and forward compatibility for this GPU */
        snprintf(fix, sizeof fix, "Upgrade the NVIDIA driver to one for CUDA %d.x (%s). %s", needs / 1000, mins, alternatives);
    else
        snprintf(fix, sizeof fix,
                 "Upgrade the NVIDIA driver to one for CUDA %d.x (%s). Or, on a datacenter GPU only, install the "
                 "cuda-compat package for CUDA %s and put its directory first on LD_LIBRARY_PATH. Or install the "
                 "framework's build for CUDA %d.", needs / 1000, mins, need_c, have / 1000);
    struct cs_buf b = { ev, 0, sizeof ev - 1 };
    int first = 1;
    char hv[16], nl[16];
    cs_cuda_text(hv, sizeof hv, have);
    cs_put(&b, "{");
    cs_put_kv(&b, "library", n[top].path, &first);
    cs_put_kv(&b, "library_cuda", need_c, &first);
    cs_put_kv(&b, "seen_by", n[top].how, &first);
    cs_put_kv(&b, "libraries", list, &first);
    cs_put_kv(&b, "driver_cuda", hv, &first);
    const struct cs_library *d = cs_ev_kind(e, "driver", 0);
    cs_put_kv(&b, "driver_version", d && d->file_version[0] ? d->file_version : NULL, &first);
    cs_put_kv(&b, "driver_path", d ? d->path : NULL, &first);
    cs_put_kv(&b, "min_driver_linux", lin, &first);
    cs_put_kv(&b, "min_driver_windows", win, &first);
    snprintf(nl, sizeof nl, "%d", e->driver_lacks);
    cs_put_kv(&b, "driver_lacks", e->driver_lacks ? nl : NULL, &first);
    cs_put_kv(&b, "driver_lacks_first", e->driver_lacks ? e->driver_lacks_first : NULL, &first);
    cs_put_kv(&b, "alternatives", alternatives[0] ? alternatives : NULL, &first);
    cs_put(&b, "}");
    ev[b.len] = 0;
    cs_finding(CS_F_DRIVER_TOO_OLD, CS_ERROR, "driver", summary, fix, ev);
}

void cs_rule_driver_too_old_for(const struct cs_evidence *e, const char *who_path, int needs, const char *how)
{
    say_driver_too_old(e, who_path, needs, how);
}

void cs_rule_driver_too_old(const struct cs_evidence *e) { say_driver_too_old(e, NULL, 0, NULL); }

void cs_rule_no_gpu(const struct cs_evidence *e)
{
    int how = e->no_device;
    if (!how) return;
    const struct cs_library *d = cs_ev_kind(e, "driver", 0);
    const char *kmod = e->kernel_module;
    const char *cvd = e->cuda_visible_devices;
    int hidden = cvd && (!*cvd || !strcmp(cvd, "-1") || !strcmp(cvd, "none") || !strcmp(cvd, "NoDevFiles"));
    char drv[160], summary[2048], fix[1024], ev[2048], cvd_text[160];
    cs_ev_driver_text(e, drv, sizeof drv);
    if (cvd) snprintf(cvd_text, sizeof cvd_text, "CUDA_VISIBLE_DEVICES is \"%.100s\"", cvd);
    else snprintf(cvd_text, sizeof cvd_text, "CUDA_VISIBLE_DEVICES is unset");
    const char *what = how == 100 ? "cuInit returned CUDA_ERROR_NO_DEVICE (100)" : "the driver counts 0 devices";
    if (!kmod)
        snprintf(summary, sizeof summary,
                 "found no GPU: %s; the NVIDIA kernel module is not loaded (%s is absent or unreadable); %s; the "
                 "user-space driver is %s; load the kernel module or run where a GPU is attached",
                 what, e->kernel_module_file, cvd_text, drv);
    else
        snprintf(summary, sizeof summary,
                 "found no GPU: %s; the NVIDIA kernel module %s is loaded; %s; the user-space driver is %s; %s",
                 what, kmod, cvd_text, drv,
                 hidden ? "CUDA_VISIBLE_DEVICES hides every GPU: unset it or list the GPUs to use"
                        : "the process cannot reach a GPU (check nvidia-smi, and /dev/nvidia* inside a container)");
    if (hidden)
        snprintf(fix, sizeof fix, "Unset CUDA_VISIBLE_DEVICES, or set it to the GPUs this job should use (e.g. 0).");
    else if (!kmod)
        snprintf(fix, sizeof fix,
                 "Load the NVIDIA kernel module (modprobe nvidia, or reboot after a driver install), or, in a "
                 "container, run with the GPUs passed in (docker run --gpus all; Kubernetes: request nvidia.com/gpu).");
    else
        snprintf(fix, sizeof fix,
                 "Run nvidia-smi: if it lists no GPU, the GPU is not attached or has fallen off the bus; if it does, "
                 "give the process access to /dev/nvidia* (container device nodes, cgroup rules).");
    struct cs_buf b = { ev, 0, sizeof ev - 1 };
    int first = 1;
    char code[16];
    snprintf(code, sizeof code, "%d", how == 100 ? 100 : 0);
    cs_put(&b, "{");
    cs_put_kv(&b, how == 100 ? "cuInit" : "device_count", code, &first);
    cs_put_kv(&b, "kernel_module", kmod, &first);
    cs_put_kv(&b, "kernel_module_file", e->kernel_module_file, &first);
    cs_put_kv(&b, "cuda_visible_devices", cvd, &first);
    cs_put_kv(&b, "libcuda_path", d ? d->path : NULL, &first);
    cs_put_kv(&b, "libcuda_version", d && d->file_version[0] ? d->file_version : NULL, &first);
    cs_put(&b, "}");
    ev[b.len] = 0;
    cs_finding(CS_F_NO_GPU_VISIBLE, CS_ERROR, "no-gpu", summary, fix, ev);
}

void cs_rule_init_failure(const struct cs_evidence *e)
{
    int result = e->init_result;
    if (!result || result == CS_CUDA_ERROR_NO_DEVICE) return;
    const struct cs_library *d = cs_ev_kind(e, "driver", 0);
    const char *kmod = e->kernel_module;
    const char *ver = d && d->file_version[0] ? d->file_version : "of unknown version";
    const char *path = d ? d->path : "(not found in the link map)";
    char summary[1024], fix[1024], ev[2048], dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    struct cs_buf b = { ev, 0, sizeof ev - 1 };
    int first = 1;
    char code[16];
    snprintf(code, sizeof code, "%d", result);
    cs_put(&b, "{");
    cs_put_kv(&b, "cuInit", code, &first);
    cs_put_kv(&b, "libcuda_path", path, &first);
    cs_put_kv(&b, "libcuda_version", d && d->file_version[0] ? d->file_version : NULL, &first);
    cs_put_kv(&b, "libcuda_found_via", d ? d->found_via : NULL, &first);
    cs_put_kv(&b, "kernel_module", kmod, &first);
    cs_put_kv(&b, "compat", d && d->compat ? "yes" : "no", &first);
    cs_put(&b, "}");
    ev[b.len] = 0;
    int mismatch = kmod && d && d->file_version[0] && strcmp(kmod, d->file_version);
    if (result == CS_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH || (result == CS_CUDA_ERROR_UNKNOWN && mismatch)) {
        snprintf(summary, sizeof summary,
                 "found user-space driver libcuda %s at %s (%s), which needs the kernel module of the same "
                 "version; the kernel module is %s; make them match",
                 ver, path, d ? d->found_via : "?", kmod ? kmod : "unreadable (/proc/driver/nvidia/version)");
        if (d && d->compat)
            snprintf(fix, sizeof fix,
                     "Remove %s from LD_LIBRARY_PATH (or ld.so.conf.d) so the host driver's libcuda.so.1 is used: "
                     "forward-compatibility libraries are only for hosts whose driver is older.", dir);
        else
            snprintf(fix, sizeof fix,
                     "The driver package was upgraded under a loaded kernel module: reboot (or reload the nvidia "
                     "modules), or remove the stray libcuda from %s.", dir);
        cs_finding(CS_F_DRIVER_KERNEL_MISMATCH, CS_ERROR, "803", summary, fix, ev);
    } else if (result == CS_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
        snprintf(summary, sizeof summary,
                 "found forward-compatibility libcuda %s at %s, which needs a datacenter GPU; this GPU does not "
                 "support forward compatibility (kernel module %s); use the host driver's libcuda",
                 ver, path, kmod ? kmod : "unknown");
        snprintf(fix, sizeof fix,
                 "Remove %s from LD_LIBRARY_PATH (or ld.so.conf.d, or the image) so the host driver's libcuda.so.1 "
                 "is used, and upgrade the host driver if the framework needs a newer CUDA.", dir);
        cs_finding(CS_F_COMPAT_UNSUPPORTED_GPU, CS_ERROR, "804", summary, fix, ev);
    }
}

int cs_rule_procaddr_missing(const struct cs_evidence *e, const char *symbol, int cuda)
{
    int have = cs_ev_driver_cuda(e);
    if (!symbol || !*symbol) return 0;
    /* The caller needs a newer driver: driver-too-old's evidence. Not known yet (a runtime probes
     * as it starts, before anyone asked the driver's version): counted too, said with
     * driver-too-old if the version then shows it. */
    if (!have || cuda / 1000 > have / 1000) return 1;
    if (cuda <= have) return 0;
    return 2;
}

void cs_rule_lookup_missing_say(const struct cs_evidence *e, const char *caller, const char *symbol, int cuda, int status)
{
    int have = cs_ev_driver_cuda(e);
    char need[16], have_t[128], mins[160], summary[2048], fix[1024], ev[2048];
    const char *lin, *win;
    cs_cuda_text(need, sizeof need, cuda);
    cs_ev_driver_text(e, have_t, sizeof have_t);
    cs_min_driver_text(mins, sizeof mins, cuda, 1, &lin, &win);
    snprintf(summary, sizeof summary,
             "found %s asking the driver for %s at CUDA %s, which this driver (%s) does not have; upgrade the "
             "driver to one for CUDA %s (%s)",
             cs_base_name(caller), symbol, need, have_t, need, mins);
    snprintf(fix, sizeof fix, "Upgrade the NVIDIA driver to one for CUDA %s or later (%s), or use a %s built for the "
             "driver's CUDA.", need, mins, cs_base_name(caller));
    struct cs_buf b = { ev, 0, sizeof ev - 1 };
    int first = 1;
    char hv[16], st[8];
    cs_cuda_text(hv, sizeof hv, have);
    snprintf(st, sizeof st, "%d", status);
    cs_put(&b, "{");
    cs_put_kv(&b, "caller", caller, &first);
    cs_put_kv(&b, "symbol", symbol, &first);
    cs_put_kv(&b, "requested_cuda", need, &first);
    cs_put_kv(&b, "driver_cuda", hv, &first);
    cs_put_kv(&b, "status", st, &first);
    cs_put(&b, "}");
    ev[b.len] = 0;
    /* Within one major this is minor-version compatibility at work: a newer runtime on an older
     * driver probes for functions the driver lacks and does without them. Worth knowing (a library
     * that then fails, NCCL's unhandled CUDA error, often starts here), not a fault by itself.
     * Across majors it is driver-too-old's evidence (above). */
    cs_finding(CS_F_MISSING_SYMBOL, CS_INFO, symbol, summary, fix, ev);
}

/* What to do about one copy of libcuda the loader does not search, by where it is. */
static void copy_advice(const char *copy, char *out, size_t cap)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", copy);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    const char *nv = strstr(copy, "/nvidia/current/");
    if (nv)
        snprintf(out, cap, "%s is Debian's driver package without the link update-alternatives makes: run "
                 "`update-alternatives --auto nvidia` (or `ln -s nvidia/current/libcuda.so.1 %.*s/libcuda.so.1`), "
                 "or reinstall the driver packages", copy, (int)(nv - copy), copy);
    else if (strstr(copy, "/usr/lib/wsl/"))
        snprintf(out, cap, "%s is WSL's driver: add /usr/lib/wsl/lib to LD_LIBRARY_PATH (or run ldconfig)", copy);
    else if (strstr(copy, "/usr/local/nvidia/"))
        snprintf(out, cap, "%s is the driver a GPU container runtime mounted: add %s to LD_LIBRARY_PATH, or list it "
                 "in /etc/ld.so.conf.d and run ldconfig", copy, dir);
    else if (strstr(copy, "/compat/"))
        snprintf(out, cap, "%s is a forward-compatibility package: it works only beside an installed driver and its "
                 "kernel module, with %s first on LD_LIBRARY_PATH", copy, dir);
    else
        snprintf(out, cap, "%s is not on the loader's search path: add %s to LD_LIBRARY_PATH if it is the driver "
                 "this machine's kernel module belongs to", copy, dir);
}

void cs_rule_no_driver(const struct cs_evidence *e, const char *api, int result)
{
    if (cs_ev_kind(e, "driver", 0)) return;  /* loaded: another rule says what is wrong with it */
    const struct cs_library *rt = cs_ev_kind(e, "cudart", 0);
    char summary[3072], fix[3072], ev[4096], first_copy[1024] = "", advice[1200] = "";
    const char *copies = e->driver_copies && *e->driver_copies ? e->driver_copies : NULL;
    int ncopies = 0;
    for (const char *p = copies; p && *p; p += strcspn(p, "\n"), p += *p == '\n') ncopies++;
    if (copies) {
        snprintf(first_copy, sizeof first_copy, "%.*s", (int)strcspn(copies, "\n"), copies);
        copy_advice(first_copy, advice, sizeof advice);
    }
    const char *kmod = e->kernel_module;
    char copies_text[1400] = "", joined[1200];
    if (copies) {
        cs_lines_joined(joined, sizeof joined, copies);
        snprintf(copies_text, sizeof copies_text, "; %d cop%s on this machine the loader does not search: %s",
                 ncopies, ncopies == 1 ? "y" : "ies", joined);
    }
    snprintf(summary, sizeof summary,
             "found %s -> %d with no driver library loaded: %s could not load libcuda.so.1 (the loader looked in %s)%s%s; %s",
             api, result, rt ? rt->name : "the CUDA runtime", e->driver_search ? e->driver_search : "its search path",
             copies_text[0] ? copies_text : "; no copy of libcuda.so.1 on this machine",
             kmod ? "" : "; no NVIDIA kernel module is loaded",
             copies ? "make the loader find the right copy" : "install the NVIDIA driver, or run where a GPU and its driver are");
    if (copies)
        snprintf(fix, sizeof fix, "%s.%s", advice,
                 kmod ? "" : " The NVIDIA kernel module is not loaded either: the driver needs it (modprobe nvidia, or a "
                             "machine or container with the GPU passed in).");
    else if (kmod)
        snprintf(fix, sizeof fix, "The kernel module %s is loaded but its user-space library is missing: install the "
                 "matching driver libraries (Debian: libcuda1; Ubuntu: libnvidia-compute-<branch>; NVIDIA's .run "
                 "installer), or, in a container, start it with the GPU and driver passed in (docker run --gpus all; "
                 "Kubernetes: the NVIDIA device plugin).", kmod);
    else
        snprintf(fix, sizeof fix, "Install the NVIDIA driver (Debian: nvidia-driver; Ubuntu: nvidia-driver-<branch>; "
                 "NVIDIA's .run installer) and reboot; in a container, start it with the GPU and driver passed in "
                 "(docker run --gpus all; Kubernetes: the NVIDIA device plugin). A CPU-only job needs a CPU-only build.");
    struct cs_buf b = { ev, 0, sizeof ev - 1 };
    int first = 1;
    char r[16];
    snprintf(r, sizeof r, "%d", result);
    cs_put(&b, "{");
    cs_put_kv(&b, "call", api, &first);
    cs_put_kv(&b, "result", r, &first);
    cs_put_kv(&b, "runtime", rt ? rt->path : NULL, &first);
    cs_put_kv(&b, "searched", e->driver_search, &first);
    cs_put_kv(&b, "copies", copies, &first);
    cs_put_kv(&b, "kernel_module", kmod, &first);
    cs_put(&b, "}");
    ev[b.len] = 0;
    cs_finding(CS_F_NO_DRIVER, CS_ERROR, "", summary, fix, ev);
}
