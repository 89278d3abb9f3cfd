/* What is loaded, not what is installed: every CUDA-stack library in the process, with its
 * path, soname, build-id, the version it reports through its own API, and how the loader found
 * it. Written as "library" lines as soon as a library is seen; rescanned cheaply (the loader's
 * add counter) whenever the shim writes anything, and at exit.
 *
 * Versions are asked only of libraries already loaded, through their own handle
 * (dlopen RTLD_NOLOAD), and only of functions that return a constant: nothing is loaded and
 * nothing is initialised that the program has not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inventory.h"
#include "internal.h"

/* Library families: file-name prefix, kind, and how the library reports its version. */
enum ver_kind { V_NONE, V_INT, V_SIZE, V_PROPERTY, V_MAJOR_MINOR, V_UINT };
static const struct family {
    const char *prefix, *kind, *fn;
    enum ver_kind how;
} families[] = {
    { "libcuda.so", "driver", "cuDriverGetVersion", V_INT },
    { "libcudart.so", "cudart", "cudaRuntimeGetVersion", V_INT },
    { "libcudnn.so", "cudnn", "cudnnGetVersion", V_SIZE },
    { "libcudnn_", "cudnn-sublibrary", NULL, V_NONE },
    { "libnccl.so", "nccl", "ncclGetVersion", V_INT },
    { "libnccl-net", "nccl-plugin", NULL, V_NONE },
    { "libcublasLt.so", "cublasLt", "cublasLtGetProperty", V_PROPERTY },
    { "libcublas.so", "cublas", "cublasGetProperty", V_PROPERTY },
    { "libnvrtc-builtins", "nvrtc-builtins", NULL, V_NONE },
    { "libnvrtc.so", "nvrtc", "nvrtcVersion", V_MAJOR_MINOR },
    { "libnvJitLink.so", "nvJitLink", "nvJitLinkVersion", V_MAJOR_MINOR },
    { "libcusparse.so", "cusparse", "cusparseGetProperty", V_PROPERTY },
    { "libcufft.so", "cufft", "cufftGetProperty", V_PROPERTY },
    { "libcurand.so", "curand", "curandGetProperty", V_PROPERTY },
    { "libcusolver.so", "cusolver", "cusolverGetProperty", V_PROPERTY },
    { "libcupti.so", "cupti", "cuptiGetVersion", V_UINT },
    { "libnvidia-ptxjitcompiler", "ptxjitcompiler", NULL, V_NONE },
    { "libnvidia-ml.so", "nvml", NULL, V_NONE },
    /* Frameworks: not CUDA libraries, but they say what the program expected to use. */
    { "libtorch_cuda", "framework", NULL, V_NONE },
    { "libtorch_cpu", "framework", NULL, V_NONE },
    { "libtensorflow", "framework", NULL, V_NONE },
    { "_pywrap_tensorflow", "framework", NULL, V_NONE },
    { "xla_extension", "framework", NULL, V_NONE },
    { "libjax", "framework", NULL, V_NONE },
    { "libonnxruntime", "framework", NULL, V_NONE },
};

/* The one list of CUDA-stack file-name stems (crash frames, loader messages). Pure string
 * compares: the crash handler calls it. */
int cs_is_cuda_library_name(const char *base, size_t len)
{
    static const char *const stems[] = {
        "libcuda.", "libcudart", "libcudnn", "libnccl", "libcublas", "libnvrtc", "libnvJitLink", "libcusparse",
        "libcufft", "libcurand", "libcusolver", "libcupti", "libnvidia-", "libnvToolsExt", "libnvperf",
    };
    for (size_t i = 0; i < sizeof stems / sizeof *stems; i++) {
        size_t n = strlen(stems[i]);
        if (len >= n && !memcmp(base, stems[i], n)) return 1;
    }
    return 0;
}

static struct cs_library libs[CS_MAX_LIBRARIES];
static int _Atomic nlibs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long last_adds;
static char kernel_module[64];

int cs_library_count(void) { return atomic_load(&nlibs); }
struct cs_library *cs_library_at(int i) { return &libs[i]; }

static const struct family *family_of(const char *base)
{
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (!strncmp(base, families[i].prefix, strlen(families[i].prefix))) return &families[i];
    return NULL;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
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

static int same_dir(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb)) return !strcmp(a, b);
    return !strcmp(ra, rb);
}

static int dir_in_list(const char *dir, const char *list, const char *origin, char *hit, size_t cap)
{
    for (const char *s = list; s && *s;) {
        const char *end = strchrnul(s, ':');
        char entry[PATH_MAX];
        size_t n = (size_t)(end - s);
        if (n && n < sizeof entry) {
            if (origin && n >= 7 && !strncmp(s, "$ORIGIN", 7))
                snprintf(entry, sizeof entry, "%s%.*s", origin, (int)(n - 7), s + 7);
            else
                snprintf(entry, sizeof entry, "%.*s", (int)n, s);
            if (same_dir(entry, dir)) { snprintf(hit, cap, "%s", entry); return 1; }
        }
        s = *end ? end + 1 : end;
    }
    return 0;
}

struct runpath_search { const char *dir, *self; char *out; size_t cap; int found; };

static int runpath_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct runpath_search *rs = arg;
    if (rs->found) return 1;
    if (info->dlpi_name && !strcmp(info->dlpi_name, rs->self)) return 0;  /* its own $ORIGIN says nothing */
    const char *rp = dyn_string(info, DT_RUNPATH);
    const char *tag = "RUNPATH";
    if (!rp) rp = dyn_string(info, DT_RPATH), tag = "RPATH";
    if (!rp) return 0;
    const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the program";
    char origin[PATH_MAX], hit[PATH_MAX];
    if (info->dlpi_name && *info->dlpi_name) {
        snprintf(origin, sizeof origin, "%s", info->dlpi_name);
    } else {
        ssize_t n = readlink("/proc/self/exe", origin, sizeof origin - 1);
        origin[n > 0 ? n : 0] = 0;
    }
    char *slash = strrchr(origin, '/');
    if (slash) *slash = 0;
    if (dir_in_list(rs->dir, rp, origin, hit, sizeof hit)) {
        snprintf(rs->out, rs->cap, "%s %s of %s", tag, hit, name);
        rs->found = 1;
        return 1;
    }
    return 0;
}

static void found_via(const char *path, char *out, size_t cap)
{
    char dir[PATH_MAX], hit[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) { snprintf(out, cap, "unknown"); return; }
    *slash = 0;
    if (dir_in_list(dir, getenv("LD_LIBRARY_PATH"), NULL, hit, sizeof hit)) {
        snprintf(out, cap, "LD_LIBRARY_PATH entry %s", hit);
        return;
    }
    struct runpath_search rs = { dir, path, out, cap, 0 };
    dl_iterate_phdr(runpath_cb, &rs);
    if (rs.found) return;
    static const char *const system_dirs[] = { "/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu",
                                               "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                                               "/usr/lib/aarch64-linux-gnu" };
    for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs; i++)
        if (!strcmp(dir, system_dirs[i])) { snprintf(out, cap, "system directory %s", dir); return; }
    snprintf(out, cap, "ld.so.cache or a full path given to dlopen (%s)", dir);
}

/* --- versions --------------------------------------------------------------------------- */

static void ask_version(struct cs_library *l, const struct family *f)
{
    if (!f->fn) return;
    if (f->how == V_INT && !strcmp(f->kind, "driver")) {
        /* The program's own cuDriverGetVersion answered already: asking again would add a driver
         * call the program did not make. Only at exit, if nobody asked, does the shim ask. */
        int v = cs_driver_version_seen();
        if (v) {
            l->code = v;
            snprintf(l->version, sizeof l->version, "%d.%d", v / 1000, (v % 1000) / 10);
            snprintf(l->version_api, sizeof l->version_api, "%s", f->fn);
            return;
        }
    }
    void *h = dlopen(l->path, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return;
    cs_dlsym_fn sym = cs_real_dlsym();
    void *fn = sym(h, f->fn);
    if (fn && !strcmp(f->kind, "driver")) cs_own_count(cs_api_find(&cs_api_cuda, f->fn));
    if (fn) {
        int a = 0, b = 0, c = 0;
        switch (f->how) {
        case V_INT:
            if (((int (*)(int *))fn)(&a) == 0) {
                l->code = a;
                snprintf(l->version, sizeof l->version, "%d.%d", a / 1000, (a % 1000) / 10);
            }
            break;
        case V_SIZE: {
            size_t v = ((size_t (*)(void))fn)();
            l->code = (long)v;
            /* cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 major*1000 + minor*100 + patch */
            if (v >= 90000) snprintf(l->version, sizeof l->version, "%zu.%zu.%zu", v / 10000, v % 10000 / 100, v % 100);
            else snprintf(l->version, sizeof l->version, "%zu.%zu.%zu", v / 1000, v % 1000 / 100, v % 100);
            void *rt = sym(h, "cudnnGetCudartVersion");
            if (rt) l->built_for_cuda = (int)((size_t (*)(void))rt)();
            break;
        }
        case V_PROPERTY:
            if (((int (*)(int, int *))fn)(0, &a) == 0 && ((int (*)(int, int *))fn)(1, &b) == 0 &&
                ((int (*)(int, int *))fn)(2, &c) == 0) {
                l->code = a * 1000 + b * 10;
                snprintf(l->version, sizeof l->version, "%d.%d.%d", a, b, c);
            }
            break;
        case V_MAJOR_MINOR:
            if (((int (*)(int *, int *))fn)(&a, &b) == 0) {
                l->code = a * 1000 + b * 10;
                snprintf(l->version, sizeof l->version, "%d.%d", a, b);
            }
            break;
        case V_UINT:
            if (((int (*)(unsigned *))fn)((unsigned *)&a) == 0) {
                l->code = a;
                snprintf(l->version, sizeof l->version, "api %d", a);
            }
            break;
        case V_NONE: break;
        }
        if (!strcmp(f->kind, "nccl") && l->code) {
            int v = (int)l->code;  /* 2.28.9 is 22809; before 2.9 it was 2809 */
            if (v >= 10000) snprintf(l->version, sizeof l->version, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
            else snprintf(l->version, sizeof l->version, "%d.%d.%d", v / 1000, v % 1000 / 100, v % 100);
        }
        snprintf(l->version_api, sizeof l->version_api, "%s", f->fn);
    }
    dlclose(h);
}

/* The driver's own version is in its file name: libcuda.so.580.65.06. */
static void file_version(struct cs_library *l)
{
    const char *b = base_name(l->path);
    const char *so = strstr(b, ".so.");
    if (so && strchr(so + 4, '.')) snprintf(l->file_version, sizeof l->file_version, "%s", so + 4);
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
    if (l->built_for_cuda) { cs_put(&b, ",\"built_for_cuda\":"); cs_put_i64(&b, l->built_for_cuda); }
    if (l->compat) cs_put(&b, ",\"compat\":true");
    cs_put(&b, ",\"found_via\":"); cs_put_str(&b, l->found_via);
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
    const struct family *f = family_of(base_name(name));
    if (!f) return 0;
    char real[PATH_MAX];
    if (!realpath(name, real)) snprintf(real, sizeof real, "%s", name);
    int n = atomic_load(&nlibs);
    for (int i = 0; i < n; i++)
        if (!strcmp(libs[i].path, real) || !strcmp(libs[i].name_path, name)) return 0;
    if (n >= CS_MAX_LIBRARIES) return 0;
    struct cs_library *l = &libs[n];
    memset(l, 0, sizeof *l);
    snprintf(l->path, sizeof l->path, "%s", real);
    snprintf(l->name_path, sizeof l->name_path, "%s", name);
    snprintf(l->name, sizeof l->name, "%s", base_name(name));
    snprintf(l->kind, sizeof l->kind, "%s", f->kind);
    const char *soname = dyn_string(info, DT_SONAME);
    if (soname) snprintf(l->soname, sizeof l->soname, "%s", soname);
    build_id(info, l->build_id, sizeof l->build_id);
    l->compat = strstr(real, "/compat/") != NULL;
    l->family = (int)(f - families);
    atomic_store(&nlibs, n + 1);
    return 0;
}

void cs_inventory_refresh(int ask_versions)
{
    struct scan s = { 0, 1 };
    dl_iterate_phdr(add_cb, &s);  /* one callback: the loader's counter of objects ever added */
    if (s.adds && s.adds == __atomic_load_n(&last_adds, __ATOMIC_RELAXED) && !ask_versions) return;
    if (pthread_mutex_trylock(&lock)) return;  /* another thread is scanning */
    int before = atomic_load(&nlibs);
    s.check_only = 0;
    dl_iterate_phdr(add_cb, &s);
    __atomic_store_n(&last_adds, s.adds, __ATOMIC_RELAXED);
    int after = atomic_load(&nlibs);
    for (int i = before; i < after; i++) {
        struct cs_library *l = &libs[i];
        found_via(l->name_path, l->found_via, sizeof l->found_via);
        file_version(l);
    }
    /* Versions are asked once per library, from a program-level call or at exit. */
    for (int i = 0; i < after; i++) {
        struct cs_library *l = &libs[i];
        int deferred = !strcmp(l->kind, "driver") && !ask_versions && !cs_driver_version_seen();
        if (!l->asked && !deferred && (ask_versions || i >= before)) {
            ask_version(l, &families[l->family]);
            l->asked = 1;
        }
        if (!l->written && !deferred) { write_library(l); l->written = 1; }
    }
    pthread_mutex_unlock(&lock);
    if (after != before) cs_diagnose_libraries();
}

/* The kernel module's version: a user-space driver that does not match it gives error 803. */
const char *cs_kernel_module_version(void)
{
    if (kernel_module[0]) return kernel_module[0] == '-' ? NULL : kernel_module;
    char buf[512];
    int fd = open(cs_cfg.driver_version_file, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    kernel_module[0] = '-';
    if (n <= 0) return NULL;
    buf[n] = 0;
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." */
    const char *p = strstr(buf, "Kernel Module");
    if (!p) p = strstr(buf, "Open Kernel Module");
    if (!p) return NULL;
    p += strlen("Kernel Module");
    while (*p == ' ') p++;
    size_t k = 0;
    while ((p[k] >= '0' && p[k] <= '9') || p[k] == '.') k++;
    if (!k || k >= sizeof kernel_module) return NULL;
    memcpy(kernel_module, p, k);
    kernel_module[k] = 0;
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
