/* Where evidence arrives and the rules run: each hook hands its evidence here (a driver version,
 * cuInit's result, a failed lookup, a loader message, exit); this file keeps what must outlive
 * the call, takes a view of everything known (the inventory under its read lock, what the
 * driver said, the machine's files and environment) and runs the rules (rules/) on it. The
 * rules themselves do no I/O; what needs it (a stat, a directory listing, realpath) is done
 * here, or by the callbacks this file puts in the evidence. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/json.h"
#include "../base/library_names.h"
#include "../base/loader_message.h"
#include "../evidence/needed_files.h"
#include "../process/locks.h"
#include "../process/process.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../evidence/inventory.h"
#include "../rules/rules.h"
#include "diagnose.h"
#include "../../wrappers/gen/results.h"

int cs_cuda_initialised, cs_forked_after_init;

/* Runtimes seen through cuGetProcAddress: a static cudart copy inside any library shows up
 * here with the CUDA version it was built for. Written by the procaddr hook under `lock`; the
 * rules read them under it too (what they call, findings and the writer, never takes it). */
#define MAX_RUNTIMES 64
static struct cs_runtime_seen runtimes[MAX_RUNTIMES];
static int nruntimes;

static int _Atomic exiting;      /* the last look: say what is known, complete or not */
static int _Atomic no_device;    /* 100 from cuInit, or -1 for a count of 0 */
static int _Atomic init_failure; /* cuInit's first failure: the rule runs after the next scan names the driver's file */
/* Lookups of driver functions the driver lacks, when a library needs a newer driver: evidence of
 * driver-too-old (counted, the first few named), not findings of their own. */
static int _Atomic driver_lacks;
static char driver_lacks_first[256];
static void lacked(const char *name)
{
    atomic_fetch_add(&driver_lacks, 1);  /* the list under the DIAGNOSE lock, which the caller holds */
    size_t n = strlen(driver_lacks_first), len = name ? strlen(name) : 0;
    int said = 0, names = 0;
    for (const char *p = driver_lacks_first; *p; p += strcspn(p, " "), p += *p == ' ', names++)
        said |= strcspn(p, " ") == len && !strncmp(p, name, len);
    if (name && !said && names < 4)
        snprintf(driver_lacks_first + n, sizeof driver_lacks_first - n, "%s%s", n ? " " : "", name);
}

/* --- the evidence ------------------------------------------------------------------------ */

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int real_path(const char *path, char *out, size_t cap)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) return 0;
    snprintf(out, cap, "%s", real);
    return 1;
}

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

/* A view of everything known, for the rules. Called with the inventory read-locked (the
 * libraries are read in place) and, when runtimes are wanted, with `lock` held. */
static void take_evidence(struct cs_evidence *e, int with_runtimes)
{
    memset(e, 0, sizeof *e);
    e->nlibs = cs_library_count();
    e->libs = e->nlibs ? cs_library_at(0) : NULL;
    e->driver_version = cs_driver_version_seen();
    e->device_cc = cs_device_cc_seen();
    e->gpu_name = cs_device_name_seen();
    e->kernel_module = cs_kernel_module_version();
    e->kernel_module_file = cs_cfg.driver_version_file;
    e->cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES");
    e->ld_library_path = getenv("LD_LIBRARY_PATH");
    e->init_result = atomic_load(&init_failure);
    e->no_device = atomic_load(&no_device);
    e->final = atomic_load(&exiting);
    e->driver_lacks = atomic_load(&driver_lacks);
    e->driver_lacks_first = driver_lacks_first;
    e->expect_gpu = cs_cfg.expect_gpu;
    if (with_runtimes) e->runtimes = runtimes, e->nruntimes = nruntimes;
    e->dev_nvswitchctl = exists("/dev/nvidia-nvswitchctl");
    e->dev_nvidia_uvm = exists("/dev/nvidia-uvm");
    e->dev_nvidiactl = exists("/dev/nvidiactl");
    /* The driver's PTX compiler is installed beside libcuda.so.1. */
    const struct cs_library *d = cs_library_find_kind("driver", 0);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", d ? d->path : "");
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else dir[0] = 0;
    snprintf(e->ptx_jit_path, sizeof e->ptx_jit_path, "%s/libnvidia-ptxjitcompiler.so.1",
             dir[0] ? dir : "/usr/lib/x86_64-linux-gnu");
    e->ptx_jit_beside_driver = exists(e->ptx_jit_path);
    e->find_on_library_path = find_on_library_path;
    e->real_path = real_path;
}

/* For the rules run elsewhere (devcode.c, launches.c): the caller holds the inventory's read lock. */
void cs_evidence_take(struct cs_evidence *e) { take_evidence(e, 0); }

/* --- the driver -------------------------------------------------------------------------- */

void cs_diagnose_driver_version(int version)
{
    if (version <= 0) return;
    cs_driver_version_saw(version);
    cs_scan_request();
    cs_inventory_rdlock();
    cs_lock(CS_LOCK_DIAGNOSE);
    struct cs_evidence e;
    take_evidence(&e, 1);
    cs_rule_driver_too_old(&e);
    cs_unlock(CS_LOCK_DIAGNOSE);
    cs_diagnose_cudnn_status(&e);
    cs_inventory_unlock();
}

void cs_diagnose_init_result(int result)
{
    if (result == 0) { cs_cuda_initialised = 1; return; }
    int zero = 0;
    if (result == CS_CUDA_ERROR_NO_DEVICE && atomic_compare_exchange_strong(&no_device, &zero, 100)) cs_scan_request();
    zero = 0;
    if (atomic_compare_exchange_strong(&init_failure, &zero, result)) cs_scan_request();
}

void cs_diagnose_device_count(int count)
{
    int zero = 0;
    if (count == 0 && atomic_compare_exchange_strong(&no_device, &zero, -1)) cs_scan_request();
}

/* --- what is loaded: run by the scanner when the inventory changed ------------------------- */

void cs_diagnose_libraries(void)
{
    cs_inventory_rdlock();
    cs_lock(CS_LOCK_DIAGNOSE);
    struct cs_evidence e;
    take_evidence(&e, 1);
    cs_rule_no_gpu(&e);
    cs_rule_init_failure(&e);
    cs_rule_duplicates(&e);
    cs_rule_majors(&e);
    cs_rule_driver_too_old(&e);
    cs_rule_shadowed(&e);
    cs_rule_pairs(&e);
    cs_unlock(CS_LOCK_DIAGNOSE);
    cs_diagnose_cudnn_status(&e);
    cs_inventory_unlock();
}

/* --- driver lookups by version (cuGetProcAddress) ------------------------------------------ */

static void note_runtime(const char *caller, int cuda)
{
    cs_lock(CS_LOCK_DIAGNOSE);
    int i;
    for (i = 0; i < nruntimes; i++)
        if (!strcmp(runtimes[i].caller, caller)) break;
    int fresh = i == nruntimes || runtimes[i].cuda < cuda;
    if (i == nruntimes && nruntimes < MAX_RUNTIMES) snprintf(runtimes[nruntimes++].caller, PATH_MAX, "%s", caller);
    if (i < nruntimes && runtimes[i].cuda < cuda) runtimes[i].cuda = cuda;
    cs_unlock(CS_LOCK_DIAGNOSE);
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
    int asked = cuda > 0 && symbol && *symbol;
    if (!asked && result == 0 && status == 0) return;
    cs_inventory_rdlock();
    if (asked) {
        cs_scan_request();
        note_runtime(caller, cuda);
    }
    cs_lock(CS_LOCK_DIAGNOSE);
    struct cs_evidence e;
    take_evidence(&e, 1);
    if (asked) {
        cs_rule_driver_too_old_for(&e, caller, cuda, "cuGetProcAddress cudaVersion");
        cs_rule_majors(&e);
    }
    if (result != 0 || status != 0) {
        int r = cs_rule_procaddr_missing(&e, symbol, cuda);
        if (r == 1) lacked(symbol);
        if (r == 2) cs_diagnose_keep_miss(caller, symbol, cuda, status);
    }
    cs_unlock(CS_LOCK_DIAGNOSE);
    cs_inventory_unlock();
}

/* --- the loader's answers ----------------------------------------------------------------- */

/* The files the patterns (with "/name" added when name is given) match, one a line, each once. */
static void existing_copies(const char *const *patterns, size_t npatterns, const char *name, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < npatterns; i++) {
        char pattern[PATH_MAX];
        snprintf(pattern, sizeof pattern, "%s%s%s", patterns[i], name ? "/" : "", name ? name : "");
        glob_t g;
        if (glob(pattern, 0, NULL, &g)) continue;
        for (size_t k = 0; k < g.gl_pathc && used + strlen(g.gl_pathv[k]) + 2 < cap; k++)
            if (exists(g.gl_pathv[k]) && !strstr(out, g.gl_pathv[k]))
                used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? "\n" : "", g.gl_pathv[k]);
        globfree(&g);
    }
}

/* A CUDA library not found: who needed it (the program's last dlopen's dependency tree, from the
 * files), a link by its name whose target is gone, and copies elsewhere. */
static const char *const copy_dirs[] = {
    "/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib", "/usr/lib/python3*/dist-packages/nvidia/*/lib",
    "/usr/local/lib/python3*/dist-packages/nvidia/*/lib", "/usr/local/lib/python3*/site-packages/nvidia/*/lib",
    "/opt/conda/lib", "/opt/*", "/opt/*/lib*",
};

static void missing_library(const char *name, struct cs_evidence *e)
{
    static char requester[PATH_MAX], runpath[1024], dangling[2 * PATH_MAX + 8], copies[4096];
    requester[0] = runpath[0] = dangling[0] = copies[0] = 0;
    if (cs_needed_requester(cs_dlopen_last(), name, requester, sizeof requester, runpath, sizeof runpath))
        e->missing_requester = requester;
    /* the places the loader looked, in its order: a link there whose target is gone */
    char origin[PATH_MAX], found[PATH_MAX];
    snprintf(origin, sizeof origin, "%.*s", (int)strcspn(requester, ","), requester);
    char *slash = strrchr(origin, '/');
    if (slash) *slash = 0;
    cs_needed_search(name, runpath, origin, found, sizeof found, dangling, sizeof dangling);
    if (dangling[0]) e->missing_dangling = dangling;
    existing_copies(copy_dirs, sizeof copy_dirs / sizeof *copy_dirs, name, copies, sizeof copies);
    if (copies[0]) e->missing_copies = copies;
}

static void loader_message(const char *msg, int lazy)
{
    struct cs_loader_message m;
    int not_found = cs_loader_message_parse(msg, &m) && m.kind == CS_LOADER_NOT_FOUND &&
                    cs_is_cuda_library_name(cs_base_name(m.object), strlen(cs_base_name(m.object)));
    cs_inventory_rdlock();
    struct cs_evidence e;
    take_evidence(&e, 0);
    if (not_found) {
        cs_lock(CS_LOCK_DIAGNOSE);  /* missing_library's buffers */
        missing_library(cs_base_name(m.object), &e);
    }
    cs_rule_loader_message(&e, msg, lazy);
    if (not_found) cs_unlock(CS_LOCK_DIAGNOSE);
    cs_inventory_unlock();
}

/* The dlsym and dlerror hooks run inside the program's own loader call: what is loaded now is
 * scanned first, then the rule reads the inventory under its lock. */
void cs_diagnose_dlsym_miss(void *handle, const char *name)
{
    struct link_map *lm = NULL;
    if (!handle || handle == RTLD_DEFAULT || handle == RTLD_NEXT || dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm ||
        !lm->l_name || !*lm->l_name)
        return;
    cs_scan_sync();
    cs_inventory_rdlock();
    struct cs_evidence e;
    take_evidence(&e, 0);
    cs_lock(CS_LOCK_DIAGNOSE);
    if (cs_rule_dlsym_miss(&e, lm->l_name, name)) lacked(name);
    cs_unlock(CS_LOCK_DIAGNOSE);
    cs_inventory_unlock();
}

/* A lazy reference that the loaded library lacks: said as the loader would say it at the call
 * ("NEEDER: undefined symbol: SYM"), before the call ends the process. */
void cs_diagnose_unbound(const char *needer, const char *symbol)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s: undefined symbol: %s", needer, symbol);
    loader_message(msg, 1);
}

void cs_diagnose_dlerror(const char *msg)
{
    cs_scan_sync();
    loader_message(msg, 0);
}

/* --- results with one usual cause, and the process's own use of CUDA ------------------------ */

void cs_diagnose_result(const char *api, int result)
{
    if (result != CS_CUDA_ERROR_JIT_COMPILER_NOT_FOUND && result != CS_CUDA_ERROR_SYSTEM_NOT_READY &&
        result != CS_CUDA_ERROR_UNKNOWN)
        return;
    cs_inventory_rdlock();
    struct cs_evidence e;
    take_evidence(&e, 0);
    cs_rule_result(&e, api, result);
    cs_inventory_unlock();
}

/* A forked child whose parent was noting a runtime at the fork: the child starts its own list. */
void cs_diagnose_drop(void) { nruntimes = 0, cs_diagnose_drop_misses(); }

void cs_diagnose_forked_child_call(const char *api) { cs_rule_forked_child(api, (int)getppid()); }

void cs_diagnose_exit(void)
{
    exiting = 1;
    cs_scan_final();
    cs_inventory_rdlock();
    cs_lock(CS_LOCK_DIAGNOSE);
    struct cs_evidence e;
    take_evidence(&e, 1);
    cs_rule_duplicates(&e);
    cs_rule_majors(&e);
    cs_rule_driver_too_old(&e);
    cs_rule_no_cuda(&e);
    cs_diagnose_say_misses(&e);
    cs_unlock(CS_LOCK_DIAGNOSE);
    cs_inventory_unlock();
    cs_diagnose_gemm();
    /* a GPU with the display watchdog that ran compute, unless a 702 already said it */
    const char *id;
    enum cs_severity sev;
    int timed_out = 0;
    for (int i = 0; cs_finding_said(i, &id, &sev); i++) timed_out |= !strcmp(id, "launch-timeout");
    if (!timed_out) cs_rule_display_watchdog(cs_device_watchdog_mask(NULL) & cs_device_compute_mask(), cs_kernel_is_wsl());
}

/* --- no driver: where the loader looks for libcuda.so.1, and copies it does not see ---------- */

static int file_holds(const char *path, const char *needle)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    int found = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (64 << 20)) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            found = memmem(p, (size_t)st.st_size, needle, strlen(needle)) != NULL;
            munmap(p, (size_t)st.st_size);
        }
    }
    close(fd);
    return found;
}

static const char *const default_dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64" };
static const char *const copy_patterns[] = {
    "/usr/lib/x86_64-linux-gnu/nvidia/*/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
    "/usr/local/nvidia/lib/libcuda.so.1", "/usr/lib64/nvidia/libcuda.so.1", "/usr/lib/nvidia*/libcuda.so.1",
    "/usr/local/cuda*/compat/libcuda.so.1", "/opt/*/libcuda.so.1", "/opt/*/lib*/libcuda.so.1",
};

static void driver_places(char *search, size_t scap, char *copies, size_t ccap)
{
    const char *llp = getenv("LD_LIBRARY_PATH");
    int cached = file_holds("/etc/ld.so.cache", "libcuda.so.1");
    snprintf(search, scap, "LD_LIBRARY_PATH=%s; ld.so.cache (%s); %s, %s", llp && *llp ? llp : "(unset)",
             cached < 0 ? "absent" : cached ? "lists libcuda.so.1" : "no libcuda.so.1", default_dirs[0], default_dirs[1]);
    existing_copies(copy_patterns, sizeof copy_patterns / sizeof *copy_patterns, NULL, copies, ccap);
}

/* A runtime call failed with cudaErrorInsufficientDriver or cudaErrorNoDevice: when no driver
 * library is loaded, the runtime could not load one. Once. */
void cs_diagnose_runtime_no_driver(const char *api, int result)
{
    static int _Atomic said;
    if (atomic_exchange(&said, 1)) return;
    static char search[2048], copies[4096];
    driver_places(search, sizeof search, copies, sizeof copies);
    cs_inventory_rdlock();
    struct cs_evidence e;
    take_evidence(&e, 0);
    e.driver_search = search, e.driver_copies = copies;
    cs_rule_no_driver(&e, api, result);
    cs_inventory_unlock();
}
