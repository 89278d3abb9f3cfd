/* The rules that turn evidence into findings. Each rule runs where its evidence appears (a
 * hook, a library scan, a failed lookup, exit) and says "found X, which needs Y; do Z".
 * docs/diagnoses.md has a section per id; a healthy stack produces no warning or error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inventory.h"
#include "internal.h"
#include "loader_message.h"
#include "reference_data.h"
#include "../wrappers/gen/results.h"

int cs_cuda_initialised, cs_forked_after_init;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Runtimes seen through cuGetProcAddress: a static cudart copy inside any library shows up
 * here with the CUDA version it was built for. */
#define MAX_RUNTIMES 64
/* Written by the procaddr hook under `lock`; rules iterate them under it too (what they call
 * under it, findings and the writer, never takes it). */
static struct runtime { char caller[PATH_MAX]; int cuda; } runtimes[MAX_RUNTIMES];
static int nruntimes;




static void cuda_text(char *out, size_t cap, int code)
{
    snprintf(out, cap, "%d.%d", code / 1000, (code % 1000) / 10);
}

static void put_kv(struct cs_buf *b, const char *k, const char *v, int *first)
{
    if (!*first) cs_put(b, ",");
    *first = 0;
    cs_put_str(b, k);
    cs_put(b, ":");
    if (v) cs_put_str(b, v); else cs_put(b, "null");
}

static const struct cs_library *driver_lib(void) { return cs_library_find_kind("driver", 0); }

static int known_driver_version(void)
{
    int v = cs_driver_version_seen();
    if (v) return v;
    const struct cs_library *d = driver_lib();
    return d && d->code > 0 ? (int)d->code : 0;
}

/* "CUDA 12.2 (libcuda 535.54.03)" */
static void driver_text(char *out, size_t cap)
{
    char c[16];
    const struct cs_library *d = driver_lib();
    cuda_text(c, sizeof c, known_driver_version());
    if (d && d->file_version[0]) snprintf(out, cap, "CUDA %s (libcuda %s)", c, d->file_version);
    else snprintf(out, cap, "CUDA %s", c);
}

/* "Linux >= 580.65.06; no Windows driver" for the major of `cuda` (or its exact toolkit row). */
static void min_driver_text(char *out, size_t cap, int cuda, int exact, const char **lin, const char **win)
{
    const struct cs_ref_driver *r = exact ? cs_ref_toolkit_for(cuda) : NULL;
    if (!r) r = cs_ref_floor_for(cuda);
    char c[16];
    cuda_text(c, sizeof c, cuda);
    *lin = r ? r->linux_min : NULL;
    *win = r ? r->windows_min : NULL;
    if (!r) snprintf(out, cap, "a driver for CUDA %s or later", c);
    else snprintf(out, cap, "Linux >= %s; %s%s", r->linux_min ? r->linux_min : "?",
                  r->windows_min ? "Windows >= " : "no Windows driver", r->windows_min ? r->windows_min : "");
}

/* --- 1. driver too old for a runtime ------------------------------------------------------- */

static int _Atomic exiting;  /* the last scan: say what is known, complete or not (set at exit, read by the scanner) */

static void too_old(const char *who_path, int needs, const char *how)
{
    int have = known_driver_version();
    if (!have || needs / 1000 <= have / 1000) return;
    if (!driver_lib() && !exiting) return;  /* the scanner has not named the driver's file yet: it will */
    char need_c[16], have_t[128], mins[160], summary[1024], fix[2560], ev[3072], alternatives[1600];
    const char *lin, *win;
    cuda_text(need_c, sizeof need_c, needs);
    driver_text(have_t, sizeof have_t);
    cs_diagnose_alternatives(0, have, alternatives, sizeof alternatives);  /* run with the inventory read-locked */
    min_driver_text(mins, sizeof mins, needs, 0, &lin, &win);
    snprintf(summary, sizeof summary,
             "found %s (CUDA %s), which needs a driver for CUDA %d.x (%s); this driver is %s; upgrade the driver, "
             "or use forward compatibility, or install a build for CUDA %d",
             cs_base_name(who_path), need_c, needs / 1000, mins, have_t, have / 1000);
    snprintf(fix, sizeof fix,
             "Upgrade the NVIDIA driver to one for CUDA %d.x (%s). Or, on a datacenter GPU only, install the "
             "cuda-compat package for CUDA %s and put its directory first on LD_LIBRARY_PATH. Or install the "
             "framework's build for CUDA %d.%s%s",
             needs / 1000, mins, need_c, have / 1000, alternatives[0] ? " " : "", alternatives);
    struct cs_buf b = { ev, 0, sizeof ev - 1 };
    int first = 1;
    char hv[16];
    cuda_text(hv, sizeof hv, have);
    cs_put(&b, "{");
    put_kv(&b, "library", who_path, &first);
    put_kv(&b, "library_cuda", need_c, &first);
    put_kv(&b, "seen_by", how, &first);
    put_kv(&b, "driver_cuda", hv, &first);
    const struct cs_library *d = driver_lib();
    put_kv(&b, "driver_version", d && d->file_version[0] ? d->file_version : NULL, &first);
    put_kv(&b, "driver_path", d ? d->path : NULL, &first);
    put_kv(&b, "min_driver_linux", lin, &first);
    put_kv(&b, "min_driver_windows", win, &first);
    put_kv(&b, "alternatives", alternatives[0] ? alternatives : NULL, &first);
    cs_put(&b, "}");
    ev[b.len] = 0;
    cs_finding(CS_F_DRIVER_TOO_OLD, CS_ERROR, who_path, summary, fix, ev);
}

static void check_driver_too_old(void)
{
    for (int i = 0; i < cs_library_count(); i++) {
        const struct cs_library *l = cs_library_at(i);
        if (!strcmp(l->kind, "cudart") && l->code > 0) too_old(l->path, (int)l->code, "its file name");
        /* Libraries that carry their own runtime say which CUDA they were built for: cuDNN
         * (cudnnGetCudartVersion), NCCL (its wheel), and those whose version is the CUDA one. */
        if ((!strcmp(l->kind, "cudnn") || !strcmp(l->kind, "nccl") || !strcmp(l->kind, "framework")) &&
            l->built_for_cuda > 0)
            too_old(l->path, l->built_for_cuda, l->built_for_how);
        if ((!strcmp(l->kind, "cublas") || !strcmp(l->kind, "cublasLt")) && l->code >= 11000)
            too_old(l->path, (int)l->code, "its version");
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nruntimes; i++) too_old(runtimes[i].caller, runtimes[i].cuda, "cuGetProcAddress cudaVersion");
    pthread_mutex_unlock(&lock);
}

void cs_diagnose_driver_version(int version)
{
    if (version <= 0) return;
    cs_driver_version_saw(version);
    cs_scan_request();
    cs_inventory_rdlock();
    check_driver_too_old();
    cs_diagnose_cudnn_sublibraries(exiting);
    cs_inventory_unlock();
}

/* --- 2. errors 803 and 804 ----------------------------------------------------------------- */

static int _Atomic no_device;  /* 100 from cuInit, or -1 for a count of 0 */

/* cuInit's result is evidence; the rule runs after the next scan (it names the driver's file). */
static int _Atomic init_failure;

void cs_diagnose_init_result(int result)
{
    if (result == 0) { cs_cuda_initialised = 1; return; }
    int zero = 0;
    if (result == 100 && atomic_compare_exchange_strong(&no_device, &zero, 100)) cs_scan_request();
    zero = 0;
    if (atomic_compare_exchange_strong(&init_failure, &zero, result)) cs_scan_request();
}

/* --- no GPU at all: cuInit 100, or a device count of 0 ------------------------------------ */


void cs_diagnose_device_count(int count)
{
    int zero = 0;
    if (count == 0 && atomic_compare_exchange_strong(&no_device, &zero, -1)) cs_scan_request();
}

static void check_no_gpu(void)
{
    int how = atomic_load(&no_device);
    if (!how) return;
    const struct cs_library *d = driver_lib();
    const char *kmod = cs_kernel_module_version();
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    int hidden = cvd && (!*cvd || !strcmp(cvd, "-1") || !strcmp(cvd, "none") || !strcmp(cvd, "NoDevFiles"));
    char drv[160], summary[2048], fix[1024], ev[2048], cvd_text[160];
    driver_text(drv, sizeof drv);
    if (cvd) snprintf(cvd_text, sizeof cvd_text, "CUDA_VISIBLE_DEVICES is \"%.100s\"", cvd);
    else snprintf(cvd_text, sizeof cvd_text, "CUDA_VISIBLE_DEVICES is unset");
    const char *what = how == 100 ? "cuInit returned CUDA_ERROR_NO_DEVICE (100)" : "the driver counts 0 devices";
    if (!kmod)
        snprintf(summary, sizeof summary,
                 "found no GPU: %s; the NVIDIA kernel module is not loaded (%s is absent or unreadable); %s; the "
                 "user-space driver is %s; load the kernel module or run where a GPU is attached",
                 what, cs_cfg.driver_version_file, cvd_text, drv);
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
    put_kv(&b, how == 100 ? "cuInit" : "device_count", code, &first);
    put_kv(&b, "kernel_module", kmod, &first);
    put_kv(&b, "kernel_module_file", cs_cfg.driver_version_file, &first);
    put_kv(&b, "cuda_visible_devices", cvd, &first);
    put_kv(&b, "libcuda_path", d ? d->path : NULL, &first);
    put_kv(&b, "libcuda_version", d && d->file_version[0] ? d->file_version : NULL, &first);
    cs_put(&b, "}");
    ev[b.len] = 0;
    cs_finding(CS_F_NO_GPU_VISIBLE, CS_ERROR, "no-gpu", summary, fix, ev);
}

static void check_init_result(void)
{
    check_no_gpu();
    int result = atomic_load(&init_failure);
    if (!result || result == CS_CUDA_ERROR_NO_DEVICE) return;
    const struct cs_library *d = driver_lib();
    const char *kmod = cs_kernel_module_version();
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
    put_kv(&b, "cuInit", code, &first);
    put_kv(&b, "libcuda_path", path, &first);
    put_kv(&b, "libcuda_version", d && d->file_version[0] ? d->file_version : NULL, &first);
    put_kv(&b, "libcuda_found_via", d ? d->found_via : NULL, &first);
    put_kv(&b, "kernel_module", kmod, &first);
    put_kv(&b, "compat", d && d->compat ? "yes" : "no", &first);
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

/* --- 3 and 4. one library loaded twice; a library built for another CUDA major ------------ */

static void group_key(const struct cs_library *l, char *out, size_t cap)
{
    /* cuDNN sub-libraries are told apart by name (libcudnn_ops, libcudnn_cnn, ...). */
    if (!strcmp(l->kind, "cudnn-sublibrary")) {
        const char *so = strstr(l->name, ".so");
        snprintf(out, cap, "%.*s", so ? (int)(so - l->name) : (int)strlen(l->name), l->name);
    } else {
        snprintf(out, cap, "%s", l->kind);
    }
}

static void describe(const struct cs_library *l, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s%s (%s)", l->path, l->version[0] ? " " : "", l->version, "", l->found_via);
}

/* Did a framework (libtorch*, TensorFlow, JAX) ask for this copy? */
static int requester_is_framework(const struct cs_library *l)
{
    const struct cs_library *r = cs_library_of_path(l->requested_by);
    if (r) return !strcmp(r->kind, "framework");
    const char *b = cs_base_name(l->requested_by);
    return !strncmp(b, "libtorch", 8) || !strncmp(b, "libtensorflow", 13) || !strncmp(b, "libjax", 6) ||
           !strncmp(b, "_pywrap_tensorflow", 18) || !strncmp(b, "xla_extension", 13);
}

static void check_duplicates(void)
{
    int n = cs_library_count();
    for (int i = 0; i < n; i++) {
        const struct cs_library *a = cs_library_at(i);
        if (!strcmp(a->kind, "framework") || !strcmp(a->kind, "nccl-plugin")) continue;
        char ka[64], kb[64];
        group_key(a, ka, sizeof ka);
        for (int j = i + 1; j < n; j++) {
            const struct cs_library *b = cs_library_at(j);
            group_key(b, kb, sizeof kb);
            if (strcmp(ka, kb) || !strcmp(a->path, b->path)) continue;
            int same_soname = a->soname[0] && !strcmp(a->soname, b->soname);
            char da[1600], db[1600], summary[4096], fix[2048], ev[4096], key[64];
            describe(a, da, sizeof da);
            describe(b, db, sizeof db);
            snprintf(summary, sizeof summary,
                     "found %s loaded twice: %s and %s; a process needs one copy (calls bind to whichever "
                     "loaded first, data passes between versions); remove one",
                     ka, da, db);
            const struct cs_library *drop = !strncmp(b->found_via, "LD_LIBRARY_PATH", 15) ? b
                                            : !strncmp(a->found_via, "LD_LIBRARY_PATH", 15) ? a : b;
            const struct cs_library *keep = drop == a ? b : a;
            if (!same_soname && a->requested_by[0] && b->requested_by[0]) {
                /* Two majors (libcudart.so.12 and .13), each asked for by name by its own object: a
                 * directory taken out of the search only makes one of them fail to load. The one
                 * to change is the object that is not the framework (an extension built for
                 * another CUDA); without a framework among them, the one needing the older copy. */
                int a_fw = requester_is_framework(a), b_fw = requester_is_framework(b);
                drop = a_fw && !b_fw ? b : b_fw && !a_fw ? a : strcmp(a->soname, b->soname) < 0 ? a : b;
                keep = drop == a ? b : a;
                snprintf(fix, sizeof fix,
                         "Rebuild %s (it needs %s) for the CUDA of %s, which %s uses (%s); taking %s out of the "
                         "library path would only make %s fail to load.",
                         cs_base_name(drop->requested_by), drop->name, keep->name, cs_base_name(keep->requested_by),
                         keep->path, drop->path, cs_base_name(drop->requested_by));
            } else if (!strncmp(drop->found_via, "LD_LIBRARY_PATH entry ", 22))
                snprintf(fix, sizeof fix, "Remove %s from LD_LIBRARY_PATH so that only %s is loaded.",
                         drop->found_via + 22, keep->path);
            else
                snprintf(fix, sizeof fix,
                         "Make only one copy findable: uninstall one of them, or change what brought %s (%s), so "
                         "that only %s is loaded.", drop->path, drop->found_via, keep->path);
            struct cs_buf e = { ev, 0, sizeof ev - 1 };
            int first = 1;
            cs_put(&e, "{");
            put_kv(&e, "first_path", a->path, &first);
            put_kv(&e, "first_version", a->version[0] ? a->version : NULL, &first);
            put_kv(&e, "first_found_via", a->found_via, &first);
            put_kv(&e, "second_path", b->path, &first);
            put_kv(&e, "second_version", b->version[0] ? b->version : NULL, &first);
            put_kv(&e, "second_found_via", b->found_via, &first);
            put_kv(&e, "first_requested_by", a->requested_by[0] ? a->requested_by : NULL, &first);
            put_kv(&e, "second_requested_by", b->requested_by[0] ? b->requested_by : NULL, &first);
            cs_put(&e, "}");
            ev[e.len] = 0;
            snprintf(key, sizeof key, "%s", ka);
            cs_finding(CS_F_LIBRARY_LOADED_TWICE, same_soname ? CS_ERROR : CS_WARNING, key, summary, fix, ev);
        }
    }
}

static void major_mismatch(const struct cs_library *l, int built_for, int runtime, const char *runtime_path,
                           const char *how)
{
    if (!built_for || !runtime || built_for / 1000 == runtime / 1000) return;
    char b[16], r[16], summary[2048], fix[1024], ev[2048];
    cuda_text(b, sizeof b, built_for);
    cuda_text(r, sizeof r, runtime);
    snprintf(summary, sizeof summary,
             "found %s %s at %s, which is built for CUDA %d (%s); the loaded runtime is CUDA %s (%s); install the %s "
             "build for CUDA %d",
             l->kind, l->version, l->path, built_for / 1000, how, r, runtime_path, l->kind, runtime / 1000);
    snprintf(fix, sizeof fix,
             "Install the %s build made for CUDA %d (for pip: the -cu%d package) and remove the CUDA %d copy from "
             "the library path (%s).", l->kind, runtime / 1000, runtime / 1000, built_for / 1000, l->found_via);
    struct cs_buf e = { ev, 0, sizeof ev - 1 };
    int first = 1;
    cs_put(&e, "{");
    put_kv(&e, "library", l->path, &first);
    put_kv(&e, "library_version", l->version[0] ? l->version : NULL, &first);
    put_kv(&e, "built_for_cuda", b, &first);
    put_kv(&e, "seen_by", how, &first);
    put_kv(&e, "runtime", runtime_path, &first);
    put_kv(&e, "runtime_cuda", r, &first);
    cs_put(&e, "}");
    ev[e.len] = 0;
    cs_finding(CS_F_LIBRARY_CUDA_MAJOR_MISMATCH, CS_WARNING, l->path, summary, fix, ev);
}

static void check_majors(void)
{
    const struct cs_library *rt = cs_library_find_kind("cudart", 0);
    int runtime = rt && rt->code > 0 ? (int)rt->code : 0;
    const char *rt_path = rt ? rt->path : NULL;
    if (!runtime) return;
    for (int i = 0; i < cs_library_count(); i++) {
        const struct cs_library *l = cs_library_at(i);
        if (!strcmp(l->kind, "cudnn")) major_mismatch(l, l->built_for_cuda, runtime, rt_path, l->built_for_how);
        if (!strcmp(l->kind, "cublas") || !strcmp(l->kind, "cublasLt") || !strcmp(l->kind, "nvrtc") ||
            !strcmp(l->kind, "nvJitLink"))
            major_mismatch(l, (int)l->code, runtime, rt_path, "its version");
    }
    /* A static runtime inside a library (NCCL, cuBLAS, a framework) that asks for another major. */
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nruntimes; i++) {
        const struct cs_library *l = cs_library_of_path(runtimes[i].caller);
        /* The version a lookup names is that function's ABI version, not the runtime's: only the
         * highest, and only a newer major than the loaded runtime's, says something. */
        if (l && strcmp(l->kind, "cudart") && strcmp(l->kind, "framework") && runtimes[i].cuda / 1000 > runtime / 1000)
            major_mismatch(l, runtimes[i].cuda, runtime, rt_path, "the CUDA version its runtime asks the driver for");
    }
    pthread_mutex_unlock(&lock);
}

void cs_diagnose_libraries(void)
{
    cs_inventory_rdlock();
    check_init_result();
    check_duplicates();
    check_majors();
    check_driver_too_old();
    cs_diagnose_shadowed();
    cs_diagnose_pairs();
    cs_diagnose_cudnn_sublibraries(exiting);
    cs_inventory_unlock();
}

/* --- 5. missing symbols ------------------------------------------------------------------- */

static void note_runtime(const char *caller, int cuda)
{
    pthread_mutex_lock(&lock);
    int i;
    for (i = 0; i < nruntimes; i++)
        if (!strcmp(runtimes[i].caller, caller)) break;
    int fresh = i == nruntimes || runtimes[i].cuda < cuda;
    if (i == nruntimes && nruntimes < MAX_RUNTIMES) snprintf(runtimes[nruntimes++].caller, PATH_MAX, "%s", caller);
    if (i < nruntimes && runtimes[i].cuda < cuda) runtimes[i].cuda = cuda;
    pthread_mutex_unlock(&lock);
    if (!fresh) return;
    char line[PATH_MAX + 256];
    struct cs_buf b = { line, 0, sizeof line - 2 };
    const struct cs_library *l = cs_library_of_path(caller);
    cs_put(&b, "{\"type\":\"runtime\",\"caller\":"); cs_put_str(&b, caller);
    cs_put(&b, ",\"cuda_version\":"); cs_put_i64(&b, cuda);
    cs_put(&b, ",\"static\":"); cs_put(&b, (l && !strcmp(l->kind, "cudart")) || !strncmp(cs_base_name(caller), "libcudart", 9) ? "false" : "true");
    cs_put(&b, "}\n");
    cs_write_line(line, b.len);
}

void cs_diagnose_procaddr(void *ra, const char *symbol, int cuda, int status, int result)
{
    char caller[PATH_MAX] = "?";
    const char *who = cs_lm_name_of_addr(ra);  /* lock-free: this runs inside the caller's lookup */
    if (who) {
        if (!*who) cs_exe_path(caller, sizeof caller);
        else if (!realpath(who, caller)) snprintf(caller, sizeof caller, "%s", who);
    }
    cs_inventory_rdlock();
    if (cuda > 0 && symbol && *symbol) {
        cs_scan_request();
        note_runtime(caller, cuda);
        too_old(caller, cuda, "cuGetProcAddress cudaVersion");
        check_majors();
    }
    int have = known_driver_version();
    if ((result == 0 && status == 0) || !symbol || !*symbol || !have || cuda <= have) { cs_inventory_unlock(); return; }
    char need[16], have_t[128], mins[160], summary[2048], fix[1024], ev[2048];
    const char *lin, *win;
    cuda_text(need, sizeof need, cuda);
    driver_text(have_t, sizeof have_t);
    min_driver_text(mins, sizeof mins, cuda, 1, &lin, &win);
    snprintf(summary, sizeof summary,
             "found %s asking the driver for %s at CUDA %s, which this driver (%s) does not have; upgrade the "
             "driver to one for CUDA %s (%s)",
             cs_base_name(caller), symbol, need, have_t, need, mins);
    snprintf(fix, sizeof fix, "Upgrade the NVIDIA driver to one for CUDA %s or later (%s), or use a %s built for the "
             "driver's CUDA.", need, mins, cs_base_name(caller));
    struct cs_buf e = { ev, 0, sizeof ev - 1 };
    int first = 1;
    char hv[16], st[8];
    cuda_text(hv, sizeof hv, have);
    snprintf(st, sizeof st, "%d", status);
    cs_put(&e, "{");
    put_kv(&e, "caller", caller, &first);
    put_kv(&e, "symbol", symbol, &first);
    put_kv(&e, "requested_cuda", need, &first);
    put_kv(&e, "driver_cuda", hv, &first);
    put_kv(&e, "status", st, &first);
    cs_put(&e, "}");
    ev[e.len] = 0;
    /* Within one major this is minor-version compatibility at work: a newer runtime on an older
     * driver probes for functions the driver lacks and does without them. Worth knowing (it is
     * the NCCL-04 case when a library then fails), not a fault by itself; across majors it is. */
    cs_finding(CS_F_MISSING_SYMBOL, cuda / 1000 > have / 1000 ? CS_WARNING : CS_INFO, symbol, summary, fix, ev);
    cs_inventory_unlock();
}

static void dlsym_miss(void *handle, const char *name);
static void dlerror_message(const char *msg);
static __thread int lazy_reference;  /* the reference is still lazy: nothing has failed yet */

/* The dlsym and dlerror hooks run inside the program's own loader call: what is loaded now is
 * scanned first, then the rule reads the inventory under its lock. */
void cs_diagnose_dlsym_miss(void *handle, const char *name)
{
    cs_scan_sync();
    cs_inventory_rdlock();
    dlsym_miss(handle, name);
    cs_inventory_unlock();
}

/* A lazy reference that the loaded library lacks: said as the loader would say it at the call
 * ("NEEDER: undefined symbol: SYM"), before the call ends the process. */
void cs_diagnose_unbound(const char *needer, const char *symbol)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s: undefined symbol: %s", needer, symbol);
    cs_inventory_rdlock();
    lazy_reference = 1;
    dlerror_message(msg);
    lazy_reference = 0;
    cs_inventory_unlock();
}

void cs_diagnose_dlerror(const char *msg)
{
    cs_scan_sync();
    cs_inventory_rdlock();
    dlerror_message(msg);
    cs_inventory_unlock();
}

static void dlsym_miss(void *handle, const char *name)
{
    struct link_map *lm = NULL;
    if (!handle || handle == RTLD_DEFAULT || handle == RTLD_NEXT || dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm ||
        !lm->l_name || !*lm->l_name)
        return;
    const struct cs_library *l = cs_library_of_path(lm->l_name);
    if (!l || !strcmp(l->kind, "framework")) return;
    char summary[2048], fix[1024], ev[2048];
    snprintf(summary, sizeof summary,
             "found a lookup of %s in %s%s%s that failed: this copy does not export it, so the caller expects a "
             "newer %s; load one that has it",
             name, l->path, l->version[0] ? " " : "", l->version, l->kind);
    snprintf(fix, sizeof fix, "Make the loader find a newer %s (this one came from %s), or use a caller built for "
             "this version.", l->kind, l->found_via);
    struct cs_buf e = { ev, 0, sizeof ev - 1 };
    int first = 1;
    cs_put(&e, "{");
    put_kv(&e, "symbol", name, &first);
    put_kv(&e, "library", l->path, &first);
    put_kv(&e, "library_version", l->version[0] ? l->version : NULL, &first);
    put_kv(&e, "found_via", l->found_via, &first);
    cs_put(&e, "}");
    ev[e.len] = 0;
    /* Programs probe libcuda for optional entry points: that is information, not a fault. */
    cs_finding(CS_F_MISSING_SYMBOL, !strcmp(l->kind, "driver") ? CS_INFO : CS_WARNING, name, summary, fix, ev);
}

/* The library a symbol belongs to, from its prefix (when the message names no version node). */
static const char *provider_of(const char *sym)
{
    static const struct { const char *prefix, *lib; } map[] = {
        { "__nvJitLink", "libnvJitLink" }, { "nvJitLink", "libnvJitLink" }, { "nvrtc", "libnvrtc" },
        { "cudnn", "libcudnn" }, { "nccl", "libnccl" }, { "cublasLt", "libcublasLt" }, { "cublas", "libcublas" },
        { "cusparse", "libcusparse" }, { "cufft", "libcufft" }, { "curand", "libcurand" },
        { "cusolver", "libcusolver" }, { "cupti", "libcupti" }, { "cuda", "libcudart" }, { "cu", "libcuda.so" },
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strncmp(sym, map[i].prefix, strlen(map[i].prefix))) return map[i].lib;
    return NULL;
}

static int is_cuda_name(const char *base) { return cs_is_cuda_library_name(base, strlen(base)); }

/* A failed load unloads everything it brought in, so the stale copy is gone from the link map:
 * look where the loader looked first, the LD_LIBRARY_PATH entries. */
static int find_on_library_path(const char *prefix, char *path, size_t cap, char *entry, size_t ecap)
{
    const char *llp = getenv("LD_LIBRARY_PATH");
    for (const char *s = llp; s && *s;) {
        const char *end = strchrnul(s, ':');
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)(end - s), s);
        DIR *d = dir[0] ? opendir(dir) : NULL;
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (!strncmp(de->d_name, prefix, strlen(prefix))) {
                snprintf(path, cap, "%s/%s", dir, de->d_name);
                snprintf(entry, ecap, "%s", dir);
                closedir(d);
                return 1;
            }
        if (d) closedir(d);
        s = *end ? end + 1 : end;
    }
    return 0;
}

static void dlerror_message(const char *msg)
{
    static __thread struct cs_loader_message m;  /* 8 KiB: not on a hook's stack */
    int kind = cs_loader_message_parse(msg, &m);
    char summary[3072], fix[2048], ev[3072];
    struct cs_buf e = { ev, 0, sizeof ev - 1 };
    int first = 1;
    cs_put(&e, "{");
    put_kv(&e, "loader_message", msg, &first);
    if (kind == CS_LOADER_UNDEFINED_SYMBOL) {
        const char *needer = m.object, *sym = m.symbol, *vernode = m.version;
        if (!is_cuda_name(cs_base_name(needer)) && !provider_of(sym)) return;
        const char *prov = vernode[0] ? vernode : provider_of(sym);
        if (!prov || !is_cuda_name(prov)) return;
        /* A lookup that found nothing ("libcuda.so.1: undefined symbol: cuFoo", from dlsym) names
         * the library searched, which is the provider itself; a failed load names the library
         * that needed the symbol. Lookups are probes (see cs_diagnose_dlsym_miss), and the shim's
         * own next-definition lookups are not the program's. */
        if (!strncmp(cs_base_name(needer), prov, strlen(prov)) || !strncmp(cs_base_name(needer), "libcudashim", 11)) return;
        /* The stale copy: the loaded library that should have provided the symbol. */
        const struct cs_library *stale = NULL;
        for (int i = 0; i < cs_library_count(); i++) {
            const struct cs_library *l = cs_library_at(i);
            if (!strncmp(l->name, prov, strlen(prov)) || (l->soname[0] && !strncmp(l->soname, prov, strlen(prov)))) {
                stale = l;
                break;
            }
        }
        char lp_path[PATH_MAX], lp_entry[PATH_MAX];
        int on_path = !stale && find_on_library_path(prov, lp_path, sizeof lp_path, lp_entry, sizeof lp_entry);
        if (on_path)
            snprintf(summary, sizeof summary,
                     "found %s needing %s from %s, but the %s the loader finds first, %s (LD_LIBRARY_PATH entry "
                     "%s), lacks it; load the %s that matches %s",
                     cs_base_name(needer), sym, prov, prov, lp_path, lp_entry, prov, cs_base_name(needer));
        else if (stale)
            snprintf(summary, sizeof summary,
                     "found %s needing %s from %s, but the loaded %s (%s%s%s, %s) lacks it; load the %s that "
                     "matches %s",
                     cs_base_name(needer), sym, prov, stale->name, stale->path, stale->version[0] ? " " : "",
                     stale->version, stale->found_via, prov, cs_base_name(needer));
        else
            snprintf(summary, sizeof summary, "found %s needing %s from %s, which no loaded library provides; "
                     "install the %s that matches %s", cs_base_name(needer), sym, prov, prov, cs_base_name(needer));
        if (!strncmp(prov, "libcuda.so", 10))
            snprintf(fix, sizeof fix, "%s is part of the NVIDIA driver: install a driver that provides %s (a newer "
                     "one), or use a build of %s made for the installed driver.", prov, sym, cs_base_name(needer));
        else if (on_path)
            snprintf(fix, sizeof fix, "Remove %s from LD_LIBRARY_PATH: it brings an older %s, and the copy installed "
                     "beside %s provides %s.", lp_entry, prov, cs_base_name(needer), sym);
        else if (stale && !strncmp(stale->found_via, "LD_LIBRARY_PATH entry ", 22))
            snprintf(fix, sizeof fix, "Remove %s from LD_LIBRARY_PATH: it brings the older %s, and the copy installed "
                     "beside %s provides %s.", stale->found_via + 22, stale->name, cs_base_name(needer), sym);
        else
            snprintf(fix, sizeof fix, "Install matching versions of %s and %s (for pip: upgrade both nvidia-* "
                     "packages together).", cs_base_name(needer), prov);
        if (lazy_reference) {
            size_t n = strlen(summary);
            snprintf(summary + n, sizeof summary - n, "; the reference is bound lazily, so the first call of %s "
                     "ends the process with the loader's \"symbol lookup error\" (exit status 127)", sym);
            put_kv(&e, "binding", "lazy: the first call ends the process", &first);
        }
        put_kv(&e, "needed_by", needer, &first);
        put_kv(&e, "symbol", sym, &first);
        put_kv(&e, "provider", prov, &first);
        put_kv(&e, "stale_copy", stale ? stale->path : on_path ? lp_path : NULL, &first);
        put_kv(&e, "stale_found_via", stale ? stale->found_via : on_path ? "LD_LIBRARY_PATH" : NULL, &first);
        cs_put(&e, "}");
        ev[e.len] = 0;
        cs_finding(CS_F_MISSING_SYMBOL, CS_ERROR, sym, summary, fix, ev);
        return;
    }
    /* "/x/libcublas.so.13: version `libcublasLt.so.13' not found (required by /x/libcublas.so.13)":
     * the copy at /x (the first path) lacks a whole version node the requester was linked against. */
    if (kind == CS_LOADER_MISSING_VERSION) {
        const char *lib = m.object, *node = m.version, *req = m.required_by;
        if (!is_cuda_name(cs_base_name(lib)) && !is_cuda_name(node)) return;
        const struct cs_library *l = cs_library_of_path(lib);
        char where[PATH_MAX + 64];
        if (l) snprintf(where, sizeof where, "%s%s%s, %s", lib, l->version[0] ? " " : "", l->version, l->found_via);
        else snprintf(where, sizeof where, "%s", lib);
        snprintf(summary, sizeof summary,
                 "found %s needing version %s of %s, but the copy the loader found, %s, lacks it; load the %s that "
                 "matches %s", req[0] ? cs_base_name(req) : "a library", node, cs_base_name(lib), where, cs_base_name(lib),
                 req[0] ? cs_base_name(req) : "it");
        snprintf(fix, sizeof fix,
                 "Make the loader find the %s that %s was built with: remove the directory of %s from "
                 "LD_LIBRARY_PATH if it brings an older copy, or install matching versions of both (for pip: "
                 "upgrade the nvidia-* packages together).", cs_base_name(lib), req[0] ? cs_base_name(req) : "the caller", lib);
        put_kv(&e, "library", lib, &first);
        put_kv(&e, "version_node", node, &first);
        put_kv(&e, "required_by", req[0] ? req : NULL, &first);
        put_kv(&e, "library_found_via", l ? l->found_via : NULL, &first);
        cs_put(&e, "}");
        ev[e.len] = 0;
        cs_finding(CS_F_MISSING_SYMBOL, CS_ERROR, node, summary, fix, ev);
        return;
    }
    if (kind == CS_LOADER_NOT_FOUND) {
        const char *b = cs_base_name(m.object);
        if (!is_cuda_name(b) || !strncmp(b, "libnccl-", 8)) return;  /* NCCL probes for optional plugins */
        const char *llp = getenv("LD_LIBRARY_PATH");
        snprintf(summary, sizeof summary,
                 "found a load of %s that failed (not found on LD_LIBRARY_PATH=%s, RUNPATH or ld.so.cache); the "
                 "caller needs it; install it or fix the library path", b, llp ? llp : "(unset)");
        const struct cs_library *other = NULL;
        for (int i = 0; i < cs_library_count() && !other; i++) {
            const struct cs_library *l = cs_library_at(i);
            size_t k = strcspn(b, "_.");
            if (!strncmp(l->name, b, k) && strcmp(l->name, b)) other = l;
        }
        if (other)
            snprintf(fix, sizeof fix, "%s is loaded (%s), but not %s: the caller wants another version. Install the "
                     "version the caller was built for, or a caller built for the loaded one.", other->name,
                     other->path, b);
        else
            snprintf(fix, sizeof fix, "Install the package that provides %s, or add its directory to LD_LIBRARY_PATH.", b);
        put_kv(&e, "library", b, &first);
        put_kv(&e, "similar_loaded", other ? other->path : NULL, &first);
        cs_put(&e, "}");
        ev[e.len] = 0;
        cs_finding(CS_F_LIBRARY_NOT_FOUND, CS_WARNING, b, summary, fix, ev);
    }
}

/* --- 6. CUDA in a forked child ------------------------------------------------------------- */

void cs_diagnose_forked_child_call(const char *api)
{
    char summary[1024], ev[512];
    snprintf(summary, sizeof summary,
             "found a CUDA call (%s) in a child forked after its parent initialised CUDA; a forked child cannot use "
             "the parent's CUDA state; start workers with 'spawn' or 'forkserver'", api);
    snprintf(ev, sizeof ev, "{\"api\":\"%s\",\"parent_pid\":%d}", api, (int)getppid());
    cs_finding(CS_F_CUDA_IN_FORKED_CHILD, CS_ERROR, "fork", summary,
               "Create worker processes with multiprocessing.set_start_method('spawn') (or 'forkserver'), or do "
               "not touch CUDA in the parent before forking (e.g. DataLoader workers must not use CUDA).", ev);
}

/* --- 7. a framework that loads no CUDA library ---------------------------------------------- */

/* Only a process that imported a framework counts: under `cudashim run` the launcher, shell
 * wrappers (pyenv, conda) and helper processes load no CUDA either, and that is no fault. */
static void check_no_cuda(void)
{
    if (!cs_cfg.expect_gpu || cs_library_find_kind("driver", 0) || cs_library_find_kind("cudart", 0)) return;
    const struct cs_library *fw = cs_library_find_kind("framework", 0);
    if (!fw) return;
    char summary[2048], ev[2048];
    snprintf(summary, sizeof summary,
             "found %s (%s) but no CUDA library was ever loaded (no libcuda, no libcudart); the installed build "
             "is CPU-only; install the CUDA build", fw->name, fw->path);
    struct cs_buf e = { ev, 0, sizeof ev - 1 };
    int first = 1;
    cs_put(&e, "{");
    put_kv(&e, "framework", fw ? fw->path : NULL, &first);
    cs_put(&e, "}");
    ev[e.len] = 0;
    cs_finding(CS_F_NO_CUDA_LOADED, CS_ERROR, "no-cuda", summary,
               "Install the framework's CUDA build (for PyTorch: pip install torch --index-url "
               "https://download.pytorch.org/whl/cu130, or the cuXXX your driver supports) and check that "
               "`python -c 'import torch; print(torch.version.cuda)'` prints a version.", ev);
}

void cs_diagnose_exit(void)
{
    exiting = 1;
    cs_scan_final();
    cs_kernel_module_version();
    cs_inventory_rdlock();
    check_duplicates();
    check_majors();
    check_driver_too_old();
    check_no_cuda();
    cs_inventory_unlock();
}
