/* What is loaded, not what is installed: every CUDA-stack library in the process, with its
 * path, soname, build-id, the version it reports through its own API, and how the loader found
 * it. Written as "library" lines as soon as a library is seen; rescanned cheaply (the loader's
 * add counter) whenever the shim writes anything, and at exit.
 *
 * Versions come from the program's own calls, from constant functions and from the files
 * (library_version.c): nothing is loaded, printed or initialised that the program has not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/stat.h>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../base/json.h"
#include "../base/library_names.h"
#include "../base/loader_message.h"
#include "../process/locks.h"
#include "../process/process.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "inventory.h"
#include "library_version.h"

/* Library families: file-name prefix and kind (library_version.c says how each reports its
 * version). */
static const struct family {
    const char *prefix, *kind;
} families[] = {
    { "libcuda.so", "driver" },
    { "libcudart.so", "cudart" },
    { "libcudnn.so", "cudnn" },
    { "libcudnn_", "cudnn-sublibrary" },
    { "libnccl.so", "nccl" },
    { "libnccl-net", "nccl-plugin" },
    { "libcublasLt.so", "cublasLt" },
    { "libcublas.so", "cublas" },
    { "libnvrtc-builtins", "nvrtc-builtins" },
    { "libnvrtc.so", "nvrtc" },
    { "libnvJitLink.so", "nvJitLink" },
    { "libcusparse.so", "cusparse" },
    { "libcufft.so", "cufft" },
    { "libcurand.so", "curand" },
    { "libcusolver.so", "cusolver" },
    { "libcupti.so", "cupti" },
    { "libnvidia-ptxjitcompiler", "ptxjitcompiler" },
    { "libnvidia-ml.so", "nvml" },
    /* Frameworks: not CUDA libraries, but they say what the program expected to use. */
    { "libtorch_cuda", "framework" },
    { "libtorch_cpu", "framework" },
    { "libtensorflow", "framework" },
    { "_pywrap_tensorflow", "framework" },
    { "xla_extension", "framework" },
    { "xla_cuda_plugin", "framework" },
    { "libjax", "framework" },
    { "libonnxruntime", "framework" },
};

static struct cs_library libs[CS_MAX_LIBRARIES];
static int _Atomic rewrite_all;  /* a new trace part: every library line again */
/* Entries are complete before they are published (nlibs); what the scanner learns later (a
 * version) is stored under this lock, and rules read under it. */
void cs_inventory_rdlock(void) { cs_lock_read(CS_LOCK_INVENTORY); }
void cs_inventory_unlock(void) { cs_unlock(CS_LOCK_INVENTORY); }
static int _Atomic nlibs;
static unsigned long long last_adds;
static char kernel_module[64];

static int _Atomic driver_version;  /* the program's cuDriverGetVersion, 0 while unknown */
void cs_driver_version_saw(int v) { atomic_store(&driver_version, v); }
static int _Atomic device_cc;  /* the GPU's compute capability (86 is 8.6), once a call told it */
void cs_device_cc_saw(int cc) { if (cc > 0) atomic_store(&device_cc, cc); }
int cs_device_cc_seen(void) { return atomic_load(&device_cc); }
/* Devices with a kernel run-time limit (KERNEL_EXEC_TIMEOUT: a display attached), as the program's
 * own queries said, and devices the program made a context on; bit N is device N (< 64). */
static uint64_t _Atomic watchdog_devices, watchdog_asked, compute_devices;
void cs_device_watchdog_saw(int dev, int on)
{
    if (dev < 0 || dev >= 64) return;
    atomic_fetch_or(&watchdog_asked, 1ull << dev);
    if (on) atomic_fetch_or(&watchdog_devices, 1ull << dev);
}
uint64_t cs_device_watchdog_mask(uint64_t *asked)
{
    if (asked) *asked = atomic_load(&watchdog_asked);
    return atomic_load(&watchdog_devices);
}
/* WSL's kernel names itself (osrelease "...-microsoft-standard-WSL2"): Windows' TDR then governs
 * the GPU's watchdog. Read on the failure path or at exit only. */
int cs_kernel_is_wsl(void)
{
    char buf[256];
    if (cs_read_small("/proc/sys/kernel/osrelease", buf, sizeof buf) <= 0) return 0;
    return strcasestr(buf, "microsoft") != NULL || strstr(buf, "WSL") != NULL;
}
void cs_device_compute_started(int dev) { if (dev >= 0 && dev < 64) atomic_fetch_or(&compute_devices, 1ull << dev); }
uint64_t cs_device_compute_mask(void) { return atomic_load(&compute_devices); }
/* The first GPU name the driver gave the program: written once, then only read. */
static char gpu_name[96];
static int _Atomic gpu_name_claimed, gpu_name_ready;
void cs_device_name_saw(const char *name)
{
    if (!name || !*name || atomic_exchange(&gpu_name_claimed, 1)) return;
    snprintf(gpu_name, sizeof gpu_name, "%s", name);
    atomic_store(&gpu_name_ready, 1);
}
/* Without the program's answer (a runtime refusing the driver never asks), the kernel module's
 * own list: gpus/<bus id>/information beside its version file has "Model: NVIDIA H100 ...". */
static char gpu_model[96];
static int _Atomic gpu_model_state;  /* 0: not read, 1: being read, 2: read */
static void read_gpu_model(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", cs_cfg.driver_version_file ? cs_cfg.driver_version_file : "");
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    snprintf(slash, sizeof dir - (size_t)(slash - dir), "/gpus");
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && !gpu_model[0] && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[PATH_MAX + 300], line[256];
        snprintf(path, sizeof path, "%s/%s/information", dir, de->d_name);
        FILE *f = fopen(path, "re");
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "Model:", 6)) {
                const char *v = line + 6;
                while (*v == ' ' || *v == '\t') v++;
                snprintf(gpu_model, sizeof gpu_model, "%.*s", (int)strcspn(v, "\r\n"), v);
                break;
            }
        if (f) fclose(f);
    }
    if (d) closedir(d);
}
const char *cs_device_name_seen(void)
{
    if (atomic_load(&gpu_name_ready)) return gpu_name;
    int state = atomic_load(&gpu_model_state);
    if (state == 0 && atomic_exchange(&gpu_model_state, 1) == 0) read_gpu_model(), atomic_store(&gpu_model_state, state = 2);
    return state == 2 && gpu_model[0] ? gpu_model : NULL;
}
int cs_driver_version_seen(void) { return atomic_load(&driver_version); }

int cs_library_count(void) { return atomic_load(&nlibs); }
struct cs_library *cs_library_at(int i) { return &libs[i]; }

static const struct family *family_of(const char *base)
{
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (!strncmp(base, families[i].prefix, strlen(families[i].prefix))) return &families[i];
    return NULL;
}


/* --- ELF facts from the mapped image ---------------------------------------------------- */

static const char *dyn_string(const struct dl_phdr_info *info, ElfW(Sxword) tag)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return NULL;
    uintptr_t strtab = 0;
    ElfW(Xword) off = (ElfW(Xword))-1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
        if (dyn->d_tag == tag) off = dyn->d_un.d_val;
    }
    if (!strtab || off == (ElfW(Xword))-1) return NULL;
    if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;  /* not relocated in place (vDSO) */
    return (const char *)strtab + off;
}

static void build_id(const struct dl_phdr_info *info, char *out, size_t cap)
{
    out[0] = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const unsigned char *p = (const void *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const void *)p;
            const unsigned char *name = p + sizeof *n, *desc = name + ((n->n_namesz + 3) & ~3u);
            if (desc + n->n_descsz > end) break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                size_t k = 0;
                for (unsigned j = 0; j < n->n_descsz && k + 3 < cap; j++) k += (size_t)snprintf(out + k, cap - k, "%02x", desc[j]);
                return;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
}

/* --- how the loader found it ------------------------------------------------------------ */

/* The loader's own search, replayed: for a name requested by an object, the directories glibc
 * tries in order (that object's DT_RPATH when it has no DT_RUNPATH, LD_LIBRARY_PATH, its
 * DT_RUNPATH, ld.so.cache, the default directories). The first that holds the file is what the
 * loader chose; when it is the loaded copy, that step is how it was found. */
static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb)) return !strcmp(a, b);
    return !strcmp(ra, rb);
}

static const char *object_name(const struct link_map *m)
{
    return m->l_name && *m->l_name ? m->l_name : "the program";
}

static void origin_of(const struct link_map *m, char *out, size_t cap)
{
    if (m->l_name && *m->l_name) {
        snprintf(out, cap, "%s", m->l_name);
    } else {
        cs_exe_path(out, cap);
    }
    char *slash = strrchr(out, '/');
    if (slash) *slash = 0;
}

/* Is `want` the first file named `name` in the list's directories? *stop: the search ends
 * here (an earlier directory holds another copy). hit: the directory entry that matched. */
static int first_in_list(const char *list, const char *origin, const char *name, const char *want, char *hit,
                         size_t cap, int *stop)
{
    for (const char *s = list; s && *s;) {
        const char *end = strchrnul(s, ':');
        size_t n = (size_t)(end - s);
        char dir[PATH_MAX], file[PATH_MAX + 256];
        if (n && n < sizeof dir) {
            if (origin && n >= 7 && !strncmp(s, "$ORIGIN", 7))
                snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(n - 7), s + 7);
            else if (origin && n >= 9 && !strncmp(s, "${ORIGIN}", 9))
                snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(n - 9), s + 9);
            else
                snprintf(dir, sizeof dir, "%.*s", (int)n, s);
            snprintf(file, sizeof file, "%s/%s", dir, name);
            if (access(file, F_OK) == 0) {
                *stop = 1;
                snprintf(hit, cap, "%.*s", (int)n, s);
                return same_file(file, want);
            }
        }
        s = *end ? end + 1 : end;
    }
    return 0;
}

/* ld.so.cache lists the path (the cache file holds the strings as they are). */
static int in_ld_cache(const char *path)
{
    static char *cache;
    static size_t len;
    if (!cache) {
        int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 0;
        off_t sz = lseek(fd, 0, SEEK_END);
        if (sz > 0 && sz < (64 << 20)) {
            cache = mmap(NULL, (size_t)sz, PROT_READ, MAP_PRIVATE, fd, 0);
            if (cache == MAP_FAILED) cache = NULL; else len = (size_t)sz;
        }
        close(fd);
        if (!cache) return 0;
    }
    size_t n = strlen(path);
    return memmem(cache, len, path, n + 1) != NULL;  /* with its terminating NUL */
}

/* How `requester` (NULL: a dlopen from an object we do not know) would find `name`; 1 and the
 * step in out when the result is the loaded copy at want. */
static int replay(const struct link_map *requester, const char *name, const char *want, char *out, size_t cap)
{
    char origin[PATH_MAX] = "", hit[PATH_MAX];
    int stop = 0;
    const char *runpath = NULL, *rpath = NULL;
    if (requester) {
        origin_of(requester, origin, sizeof origin);
        runpath = cs_elf_dyn_str(requester, DT_RUNPATH, 0);
        rpath = runpath ? NULL : cs_elf_dyn_str(requester, DT_RPATH, 0);
    }
    const char *who = requester ? object_name(requester) : "the caller";
    if (rpath && first_in_list(rpath, origin, name, want, hit, sizeof hit, &stop)) {
        snprintf(out, cap, "RPATH %s of %s", hit, who);
        return 1;
    }
    if (stop) return 0;
    if (first_in_list(getenv("LD_LIBRARY_PATH"), NULL, name, want, hit, sizeof hit, &stop)) {
        snprintf(out, cap, "LD_LIBRARY_PATH entry %s", hit);
        return 1;
    }
    if (stop) return 0;
    if (runpath && first_in_list(runpath, origin, name, want, hit, sizeof hit, &stop)) {
        snprintf(out, cap, "RUNPATH %s of %s", hit, who);
        return 1;
    }
    if (stop) return 0;
    char real[PATH_MAX];
    if (in_ld_cache(want) || (realpath(want, real) && in_ld_cache(real))) {
        snprintf(out, cap, "ld.so.cache");
        return 1;
    }
    static const char *const system_dirs = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/aarch64-linux-gnu:"
                                           "/usr/lib/aarch64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";
    if (first_in_list(system_dirs, NULL, name, want, hit, sizeof hit, &stop)) {
        snprintf(out, cap, "system directory %s", hit);
        return 1;
    }
    return 0;
}

/* The copy of `name` the requester's own RUNPATH holds, when it is another file than `want`:
 * what the requester would have got without LD_LIBRARY_PATH. */
static int runpath_copy(const struct link_map *requester, const char *name, const char *want, char *copy, size_t cap)
{
    const char *runpath = requester ? cs_elf_dyn_str(requester, DT_RUNPATH, 0) : NULL;
    if (!runpath) return 0;
    char origin[PATH_MAX], hit[PATH_MAX];
    origin_of(requester, origin, sizeof origin);
    int stop = 0;
    if (first_in_list(runpath, origin, name, want, hit, sizeof hit, &stop) || !stop) return 0;
    /* hit is the RUNPATH entry as written; the file is the entry with $ORIGIN expanded, plus the name */
    char dir[PATH_MAX];
    if (!strncmp(hit, "$ORIGIN", 7)) snprintf(dir, sizeof dir, "%s%s", origin, hit + 7);
    else if (!strncmp(hit, "${ORIGIN}", 9)) snprintf(dir, sizeof dir, "%s%s", origin, hit + 9);
    else snprintf(dir, sizeof dir, "%s", hit);
    snprintf(copy, cap, "%s/%s", dir, name);
    return 1;
}

/* Found through LD_LIBRARY_PATH: is it shadowing the requester's own copy? */
/* The copy of `name` in a system directory, when it is another file than the loaded one: what
 * the system's packages provide, which LD_LIBRARY_PATH put aside (a toolkit's lib64 first). */
static int system_copy(const char *name, const char *loaded, char *copy, size_t cap)
{
    static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64" };
    struct stat a, b;
    if (stat(loaded, &a)) return 0;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(copy, cap, "%s/%s", dirs[i], name);
        if (stat(copy, &b) == 0 && (a.st_dev != b.st_dev || a.st_ino != b.st_ino)) return 1;
    }
    return 0;
}

static void note_shadowing(struct cs_library *l, const struct link_map *requester, const char *name, const char *via)
{
    if (strncmp(via, "LD_LIBRARY_PATH entry ", 22)) return;
    char copy[PATH_MAX];
    l->shadowed_system = 0;
    if (!runpath_copy(requester, name, l->name_path, copy, sizeof copy)) {
        if (!system_copy(name, l->path, copy, sizeof copy)) return;
        l->shadowed_system = 1;
    }
    char real[PATH_MAX];
    snprintf(l->shadowed_copy, sizeof l->shadowed_copy, "%s", realpath(copy, real) ? real : copy);
    snprintf(l->shadowed_for, sizeof l->shadowed_for, "%s", object_name(requester));
    /* The shadowed copy's version, from its files (name, wheel, header), never by loading it. */
    static struct cs_library other;
    memset(&other, 0, sizeof other);
    snprintf(other.path, sizeof other.path, "%s", l->shadowed_copy);  /* the real file: its name has the version */
    snprintf(other.name_path, sizeof other.name_path, "%s", copy);
    snprintf(other.name, sizeof other.name, "%s", l->name);
    snprintf(other.kind, sizeof other.kind, "%s", l->kind);
    cs_version_from_files(&other);
    snprintf(l->shadowed_version, sizeof l->shadowed_version, "%s", other.version);
    l->shadowed_built_for = other.built_for_cuda;
}

static struct link_map *object_named(const char *path)
{
    if (!path || !*path) return NULL;
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next)
        if (m->l_name && !strcmp(m->l_name, path)) return m;
    return NULL;
}

static void found_via(struct cs_library *l, char *out, size_t cap)
{
    const char *name = l->soname[0] ? l->soname : l->name;
    /* 1. The objects that list it in DT_NEEDED, in load order: the first one's search loaded it. */
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next) {
        const char *needed;
        for (int k = 0; (needed = cs_elf_dyn_str(m, DT_NEEDED, k)); k++) {
            if (strcmp(needed, name) && strcmp(needed, l->name)) continue;
            if (strchr(needed, '/')) { snprintf(out, cap, "a path in DT_NEEDED of %s", object_name(m)); return; }
            snprintf(l->requested_by, sizeof l->requested_by, "%s", object_name(m));
            if (replay(m, needed, l->name_path, out, cap)) { note_shadowing(l, m, needed, out); return; }
        }
    }
    /* 2. A dlopen the shim saw: a full path, or a name searched from the calling object. */
    char caller[512];
    int by_name = 0;
    if (cs_dlopen_request(l->name_path, caller, sizeof caller, &by_name)) {
        snprintf(l->requested_by, sizeof l->requested_by, "%s", caller);
        if (!by_name) { snprintf(out, cap, "a full path given to dlopen by %s", caller); return; }
        struct link_map *c = object_named(caller);
        if (replay(c, l->name, l->name_path, out, cap)) { note_shadowing(l, c, l->name, out); return; }
        snprintf(out, cap, "dlopen of %s by %s", l->name, caller);
        return;
    }
    /* 3. Opened before the shim was watching: what a search from nowhere in particular finds. */
    if (replay(NULL, l->name, l->name_path, out, cap)) return;
    snprintf(out, cap, "a full path given to dlopen (or a search from an object the shim did not see)");
}

/* --- the scan ---------------------------------------------------------------------------- */

static void write_library(const struct cs_library *l)
{
    char line[8192];
    struct cs_buf b = { line, 0, sizeof line - 2 };
    cs_put(&b, "{\"type\":\"library\",\"kind\":"); cs_put_str(&b, l->kind);
    cs_put(&b, ",\"name\":"); cs_put_str(&b, l->name);
    cs_put(&b, ",\"path\":"); cs_put_str(&b, l->path);
    if (l->soname[0]) { cs_put(&b, ",\"soname\":"); cs_put_str(&b, l->soname); }
    if (l->build_id[0]) { cs_put(&b, ",\"build_id\":"); cs_put_str(&b, l->build_id); }
    if (l->version[0]) {
        cs_put(&b, ",\"version\":"); cs_put_str(&b, l->version);
        cs_put(&b, ",\"version_code\":"); cs_put_i64(&b, l->code);
        cs_put(&b, ",\"version_api\":"); cs_put_str(&b, l->version_api);
    }
    if (l->file_version[0]) { cs_put(&b, ",\"file_version\":"); cs_put_str(&b, l->file_version); }
    if (l->built_for_cuda) {
        cs_put(&b, ",\"built_for_cuda\":"); cs_put_i64(&b, l->built_for_cuda);
        cs_put(&b, ",\"built_for_source\":"); cs_put_str(&b, l->built_for_how);
    }
    if (l->compat) cs_put(&b, ",\"compat\":true");
    cs_put(&b, ",\"found_via\":"); cs_put_str(&b, l->found_via);
    if (l->shadowed_copy[0]) {
        cs_put(&b, ",\"shadowed_copy\":"); cs_put_str(&b, l->shadowed_copy);
        cs_put(&b, ",\"shadowed_from\":"); cs_put_str(&b, l->shadowed_system ? "system directory" : "RUNPATH");
    }
    cs_put(&b, "}\n");
    cs_write_line(line, b.len);
}

struct scan { unsigned long long adds; int check_only; };

static int add_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct scan *s = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds) s->adds = info->dlpi_adds;
    if (s->check_only) return 1;
    const char *name = info->dlpi_name;
    if (!name || !*name) return 0;
    const struct family *f = family_of(cs_base_name(name));
    if (!f) return 0;
    char real[PATH_MAX];
    if (!realpath(name, real)) snprintf(real, sizeof real, "%s", name);
    int n = atomic_load(&nlibs);
    for (int i = 0; i < n; i++)
        if (!strcmp(libs[i].path, real) || !strcmp(libs[i].name_path, name)) {
            /* Unloaded and loaded again (cudart closes libcuda when the driver is too old, and
             * cuBLAS opens it again): the entry must point at the live copy. */
            for (struct link_map *m = cs_lm_head(); m; m = m->l_next)
                if (m->l_name == name) libs[i].map = m;
            return 0;
        }
    if (n >= CS_MAX_LIBRARIES) return 0;
    struct cs_library *l = &libs[n];
    memset(l, 0, sizeof *l);
    snprintf(l->path, sizeof l->path, "%s", real);
    snprintf(l->name_path, sizeof l->name_path, "%s", name);
    snprintf(l->name, sizeof l->name, "%s", cs_base_name(name));
    snprintf(l->kind, sizeof l->kind, "%s", f->kind);
    const char *soname = dyn_string(info, DT_SONAME);
    if (soname) snprintf(l->soname, sizeof l->soname, "%s", soname);
    build_id(info, l->build_id, sizeof l->build_id);
    l->compat = strstr(real, "/compat/") != NULL;
    for (struct link_map *m = cs_lm_head(); m; m = m->l_next)
        if (m->l_name == name) l->map = m;
    l->family = (int)(f - families);
    /* Complete before it is published: hooks on other threads read the inventory. */
    char via[sizeof l->found_via];
    found_via(l, via, sizeof via);
    memcpy(l->found_via, via, sizeof via);
    cs_version_from_files(l);
    atomic_store(&nlibs, n + 1);
    return 0;
}

/* Called by the scanner only (scanner.c). asking: the
 * scanner may ask constant version functions (2: at exit, the driver too). A library's line is
 * written once something is known of its version, and again when a better source answers;
 * readers keep the last line per path. */
static uint64_t _Atomic refresh_started;  /* clock time at the start of the latest scan */
uint64_t cs_inventory_scanned_since(void) { return atomic_load(&refresh_started); }

int cs_inventory_refresh(int asking)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    atomic_store(&refresh_started, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
    struct scan s = { 0, 1 };
    cs_loader_iterate(add_cb, &s);  /* one callback: the loader's counter of objects ever added */
    int before = atomic_load(&nlibs);
    if (!s.adds || s.adds != last_adds) {
        s.check_only = 0;
        cs_loader_iterate(add_cb, &s);
        last_adds = s.adds;
    }
    int after = atomic_load(&nlibs), changed = 0;
    for (int i = 0; i < after; i++) {
        struct cs_library *l = &libs[i];
        /* Learned into a copy (an ask may take time, or wait for a load), stored briefly under
         * the lock that the rules on program threads read under. */
        static struct cs_library tmp;
        tmp = *l;
        if (!cs_version_update(&tmp, asking)) continue;
        cs_lock(CS_LOCK_INVENTORY);
        memcpy(l->version, tmp.version, sizeof l->version);
        memcpy(l->version_api, tmp.version_api, sizeof l->version_api);
        memcpy(l->built_for_how, tmp.built_for_how, sizeof l->built_for_how);
        l->code = tmp.code;
        l->version_rank = tmp.version_rank;
        l->built_for_cuda = tmp.built_for_cuda;
        l->asked = tmp.asked;
        cs_unlock(CS_LOCK_INVENTORY);
        if (!strcmp(l->kind, "nccl")) cs_trace_nccl_version((int)l->code);
        changed = 1;
    }
    if (atomic_exchange(&rewrite_all, 0))
        for (int i = 0; i < after; i++) libs[i].written = 0;
    for (int i = 0; i < after; i++) {
        struct cs_library *l = &libs[i];
        int constant = 0;
        cs_version_function(l->kind, &constant);
        /* A library with a constant version function waits for the scan that asks it, so that
         * its first line carries the version; the others go out at once. */
        int ready = asking || l->asked || !constant;
        if ((!l->written && ready) || (l->written && l->written < 1 + l->version_rank)) {
            write_library(l);
            l->written = 1 + l->version_rank;
        }
    }
    return after != before || changed || asking;
}

/* The kernel module's version: a user-space driver that does not match it gives error 803.
 * Read once, by whichever thread asks first; one asking meanwhile yields for a bounded time (a
 * read of a /proc file), then is told "not known yet" (a forked child whose parent was reading). */
static int _Atomic kernel_module_state;  /* 0: not read, 1: being read, 2: read (kernel_module[0] '-': none) */
static const char *read_kernel_module(void);
const char *cs_kernel_module_version(void)
{
    int state = atomic_load(&kernel_module_state);
    if (state == 0 && atomic_exchange(&kernel_module_state, 1) == 0) return read_kernel_module();
    for (int i = 0; i < 2000 && state == 1; i++) sched_yield(), state = atomic_load(&kernel_module_state);
    return state == 2 && kernel_module[0] != '-' ? kernel_module : NULL;
}

static const char *read_kernel_module(void)
{
    char buf[512];
    int fd = open(cs_cfg.driver_version_file, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    char parsed[sizeof kernel_module];
    if (n > 0) buf[n] = 0;
    if (n <= 0 || !cs_nvrm_version_parse(buf, parsed, sizeof parsed)) {
        kernel_module[0] = '-';
        atomic_store(&kernel_module_state, 2);
        return NULL;
    }
    memcpy(kernel_module, parsed, sizeof kernel_module);
    atomic_store(&kernel_module_state, 2);  /* complete before it reads as set */
    char line[256];
    struct cs_buf b = { line, 0, sizeof line - 2 };
    cs_put(&b, "{\"type\":\"system\",\"kernel_module\":"); cs_put_str(&b, kernel_module); cs_put(&b, "}\n");
    cs_write_line(line, b.len);
    return kernel_module;
}

const struct cs_library *cs_library_find_kind(const char *kind, int nth)
{
    int n = atomic_load(&nlibs);
    for (int i = 0; i < n; i++)
        if (!strcmp(libs[i].kind, kind) && nth-- == 0) return &libs[i];
    return NULL;
}

const struct cs_library *cs_library_of_path(const char *path)
{
    int n = atomic_load(&nlibs);
    char real[PATH_MAX];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    for (int i = 0; i < n; i++)
        if (!strcmp(libs[i].path, real)) return &libs[i];
    return NULL;
}

void cs_inventory_rewrite(void)
{
    atomic_store(&rewrite_all, 1);
    cs_scan_request();
}

/* A child forked while the scanner was writing an entry: the child's next scan finds what is
 * loaded again (last_adds cleared: the loader's count of additions is unchanged). */
void cs_inventory_drop(void)
{
    atomic_store(&nlibs, 0);
    last_adds = 0;
}

void cs_inventory_after_fork(void)
{
    if (atomic_load(&kernel_module_state) == 1) atomic_store(&kernel_module_state, 0);  /* its reader did not come along */
    int n = atomic_load(&nlibs);
    for (int i = 0; i < n; i++) libs[i].written = 0;
}
