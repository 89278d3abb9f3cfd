/* Each loaded library's version, learned without changing the program's run.
 *
 * Most version functions are not constants in NVIDIA's builds: cudnnGetVersion of cuDNN 9 loads
 * libcudnn_graph and runs its initialisers (and prints on failure), cuDNN's and cuBLAS's log the
 * call when API logging is on, cudaRuntimeGetVersion of CUDA 11 runs the runtime's lazy
 * initialisation. Calling any of them from the shim would load, print or initialise what the
 * program has not, and may race the program's own exit. So a version comes, best first, from:
 *   1. the program's own call to the library's version function, seen by its wrapper;
 *   2. a version function that is a constant (no call inside it in NVIDIA's binaries: the tests
 *      disassemble each one), asked by the scanner thread;
 *   3. the files: the library's file name (libcublas.so.11.11.3.6), its wheel's dist-info
 *      (nvidia_cudnn_cu12-9.1.0.70.dist-info), or the version header installed beside it
 *      (include/cudnn_version.h).
 * The driver is the exception: it is asked (once, at exit) when the program never asked. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/build_info.h"
#include "../base/library_names.h"
#include "../loader/loader.h"
#include "driver_ask.h"
#include "inventory.h"
#include "library_version.h"
#include "gpu_code_file.h"

/* How a version function's answer reads. */
enum decode { D_NONE, D_CUDA_INT, D_CUDNN, D_NCCL, D_PROPERTY, D_MAJOR_MINOR, D_UINT };
/* When the scanner may call the version function itself. */
enum ask { ASK_NEVER, ASK_CONSTANT, ASK_AT_EXIT };

static const struct source {
    const char *kind, *fn;
    enum decode how;
    enum ask ask;
    const char *wheel;   /* its wheel's name; CUDA 12's carry "_cu12" (the CUDA it is built for) */
    const char *header;  /* installed beside the library, in ../include */
    const char *macros[3];
} sources[] = {
    { "driver", "cuDriverGetVersion", D_CUDA_INT, ASK_AT_EXIT, NULL, NULL, { 0 } },
    /* The runtime's own version is a CUDA version: major.minor, from its file name or wheel. */
    { "cudart", "cudaRuntimeGetVersion", D_CUDA_INT, ASK_NEVER, "nvidia_cuda_runtime", NULL, { 0 } },
    { "cudnn", "cudnnGetVersion", D_CUDNN, ASK_NEVER, "nvidia_cudnn", "cudnn_version.h",
      { "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL" } },
    { "nccl", "ncclGetVersion", D_NCCL, ASK_CONSTANT, "nvidia_nccl", "nccl.h", { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" } },
    { "cublasLt", "cublasLtGetProperty", D_PROPERTY, ASK_NEVER, "nvidia_cublas", "cublas_api.h",
      { "CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH" } },
    { "cublas", "cublasGetProperty", D_PROPERTY, ASK_NEVER, "nvidia_cublas", "cublas_api.h",
      { "CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH" } },
    { "nvrtc", "nvrtcVersion", D_MAJOR_MINOR, ASK_CONSTANT, "nvidia_cuda_nvrtc", NULL, { 0 } },
    { "nvJitLink", "nvJitLinkVersion", D_MAJOR_MINOR, ASK_CONSTANT, "nvidia_nvjitlink", NULL, { 0 } },
    { "cusparse", "cusparseGetProperty", D_PROPERTY, ASK_NEVER, "nvidia_cusparse", "cusparse.h",
      { "CUSPARSE_VER_MAJOR", "CUSPARSE_VER_MINOR", "CUSPARSE_VER_PATCH" } },
    { "cufft", "cufftGetProperty", D_PROPERTY, ASK_CONSTANT, "nvidia_cufft", NULL, { 0 } },
    { "curand", "curandGetProperty", D_PROPERTY, ASK_NEVER, "nvidia_curand", NULL, { 0 } },
    { "cusolver", "cusolverGetProperty", D_PROPERTY, ASK_NEVER, "nvidia_cusolver", NULL, { 0 } },
    { "cupti", "cuptiGetVersion", D_UINT, ASK_CONSTANT, "nvidia_cuda_cupti", NULL, { 0 } },
};
#define NSOURCES (sizeof sources / sizeof *sources)

static const struct source *source_of(const char *kind)
{
    for (size_t i = 0; i < NSOURCES; i++)
        if (!strcmp(sources[i].kind, kind)) return &sources[i];
    return NULL;
}

const char *cs_version_function(const char *kind, int *constant)
{
    const struct source *s = source_of(kind);
    if (constant) *constant = s && s->ask == ASK_CONSTANT;
    return s ? s->fn : NULL;
}

/* A version's text and code from its parts, as the library's own API encodes it. */
static void set_version(struct cs_library *l, const struct source *s, int major, int minor, int patch, int nparts,
                        int rank, const char *how)
{
    if (major <= 0) return;
    switch (s->how) {
    case D_CUDA_INT:
        l->code = major * 1000 + (nparts > 1 ? minor * 10 : 0);
        if (nparts > 1) snprintf(l->version, sizeof l->version, "%d.%d", major, minor);
        else snprintf(l->version, sizeof l->version, "%d", major);
        break;
    case D_CUDNN:
        l->code = major >= 9 ? major * 10000 + minor * 100 + patch : major * 1000 + minor * 100 + patch;
        snprintf(l->version, sizeof l->version, "%d.%d.%d", major, minor, patch);
        break;
    case D_NCCL:
        l->code = major * 10000 + minor * 100 + patch;
        snprintf(l->version, sizeof l->version, "%d.%d.%d", major, minor, patch);
        break;
    case D_PROPERTY: case D_MAJOR_MINOR: case D_UINT: case D_NONE:
        l->code = major * 1000 + minor * 10;
        if (nparts > 2) snprintf(l->version, sizeof l->version, "%d.%d.%d", major, minor, patch);
        else snprintf(l->version, sizeof l->version, "%d.%d", major, minor);
        break;
    }
    snprintf(l->version_api, sizeof l->version_api, "%s", how);
    l->version_rank = rank;
}

/* A function's raw answer, split into parts. */
static int decode(const struct source *s, long v, int *major, int *minor, int *patch)
{
    switch (s->how) {
    case D_CUDA_INT: *major = (int)(v / 1000); *minor = (int)(v % 1000 / 10); *patch = 0; return 2;
    case D_CUDNN:  /* cuDNN 9: major*10000 + minor*100 + patch; cuDNN 8: major*1000 + minor*100 + patch */
        if (v >= 90000) { *major = (int)(v / 10000); *minor = (int)(v % 10000 / 100); }
        else { *major = (int)(v / 1000); *minor = (int)(v % 1000 / 100); }
        *patch = (int)(v % 100);
        return 3;
    case D_NCCL:  /* 2.28.9 is 22809; before 2.9 it was 2809 */
        if (v >= 10000) { *major = (int)(v / 10000); *minor = (int)(v % 10000 / 100); }
        else { *major = (int)(v / 1000); *minor = (int)(v % 1000 / 100); }
        *patch = (int)(v % 100);
        return 3;
    default: return 0;
    }
}

/* --- 1. what the program's own calls answered -------------------------------------------- */

/* Written by hooks on program threads, read by the scanner: one slot per source. */
static struct seen {
    void *_Atomic fn;
    _Atomic long value;
    _Atomic int cuda, parts[3];
    _Atomic unsigned have;  /* bit 0: value; 1: cuda; 2..4: parts */
} seen[NSOURCES];

static struct seen *seen_of(const char *kind, void *fn)
{
    const struct source *s = source_of(kind);
    if (!s) return NULL;
    struct seen *x = &seen[s - sources];
    atomic_store(&x->fn, fn);
    return x;
}

void cs_version_seen_value(const char *kind, void *fn, long value)
{
    struct seen *x = seen_of(kind, fn);
    if (!x || value <= 0) return;
    atomic_store(&x->value, value);
    atomic_fetch_or(&x->have, 1u);
    cs_scan_request();
}

void cs_version_seen_cuda(const char *kind, void *fn, int cuda)
{
    struct seen *x = seen_of(kind, fn);
    if (!x || cuda <= 0) return;
    atomic_store(&x->cuda, cuda);
    atomic_fetch_or(&x->have, 2u);
    cs_scan_request();
}

void cs_version_seen_part(const char *kind, void *fn, int part, int value)
{
    struct seen *x = seen_of(kind, fn);
    if (!x || part < 0 || part > 2) return;
    atomic_store(&x->parts[part], value);
    if ((atomic_fetch_or(&x->have, 4u << part) | (4u << part)) >> 2 == 7) cs_scan_request();
}

/* Is this answer from this copy of the library? (Two copies of one kind may be loaded.) */
static int seen_here(const struct seen *x, const struct cs_library *l)
{
    void *fn = atomic_load(&x->fn);
    return !fn || !l->map || cs_lm_of_addr(fn) == l->map;
}

static int apply_seen(struct cs_library *l, const struct source *s)
{
    struct seen *x = &seen[s - sources];
    unsigned have = atomic_load(&x->have);
    if (!have || !seen_here(x, l)) return 0;
    int changed = 0, major = 0, minor = 0, patch = 0, n;
    if ((have & 2u) && l->built_for_cuda != atomic_load(&x->cuda)) {
        l->built_for_cuda = atomic_load(&x->cuda);
        snprintf(l->built_for_how, sizeof l->built_for_how, "cudnnGetCudartVersion");
        changed = 1;
    }
    if (l->version_rank >= CS_VERSION_API) return changed;
    if ((have & 1u) && (n = decode(s, atomic_load(&x->value), &major, &minor, &patch))) {
        set_version(l, s, major, minor, patch, n, CS_VERSION_API, s->fn);
        return 1;
    }
    if ((have >> 2) == 7) {
        set_version(l, s, atomic_load(&x->parts[0]), atomic_load(&x->parts[1]), atomic_load(&x->parts[2]), 3,
                    CS_VERSION_API, s->fn);
        return 1;
    }
    return changed;
}

/* --- 2. a constant function, asked by the scanner ---------------------------------------- */

struct question { const struct source *s; void *fn; int a, b, c, n; };

/* The function's answer in a, b, c (n parts; CUPTI's one number in a, n = -1). */
static void call_source(struct question *q)
{
    const struct source *s = q->s;
    void *fn = q->fn;
    switch (s->how) {
    case D_CUDA_INT: case D_NCCL:
        if (((int (*)(int *))fn)(&q->a) == 0) q->n = decode(s, q->a, &q->a, &q->b, &q->c);
        break;
    case D_PROPERTY:
        if (((int (*)(int, int *))fn)(0, &q->a) == 0 && ((int (*)(int, int *))fn)(1, &q->b) == 0 &&
            ((int (*)(int, int *))fn)(2, &q->c) == 0)
            q->n = 3;
        break;
    case D_MAJOR_MINOR:
        if (((int (*)(int *, int *))fn)(&q->a, &q->b) == 0) q->n = 2;
        break;
    case D_UINT:  /* CUPTI's API version: one number */
        if (((int (*)(unsigned *))fn)((unsigned *)&q->a) == 0 && q->a > 0) q->n = -1;
        break;
    case D_CUDNN: case D_NONE: break;
    }
}

/* Under the loader's write lock: the entry is checked to be live (not closed and freed) and the
 * library fully loaded (known to _dl_find_object, which a library is not before it is
 * relocated; the next scan asks it). Only constant functions are asked here: they call nothing
 * (tests/t_23_loads_nothing.sh), so nothing waits on the loader's other lock, which a thread
 * inside dlopen holds while it may wait for a scan. */
struct held_question { struct question q; const struct link_map *map; const char *name_path; int asked; };

static void ask_held(void *arg)
{
    struct held_question *h = arg;
    const struct link_map *m = cs_lm_head();
    while (m && !(m == h->map && m->l_name && !strcmp(m->l_name, h->name_path))) m = m->l_next;
    if (!m || !m->l_addr || cs_lm_of_addr((void *)m->l_addr) != m) return;
    h->q.fn = cs_elf_lookup(m, h->q.s->fn);
    if (!h->q.fn || cs_lm_of_addr(h->q.fn) != m) return;
    call_source(&h->q);
    h->asked = 1;
}

/* 1 when asked. may_wait: off every program thread's CUDA frames. The driver, asked at exit (not
 * a constant: it runs driver code), is held with dlopen(RTLD_NOLOAD) while it is asked, so that
 * a dlclose on another thread cannot unmap it under the call. */
static int ask(struct cs_library *l, const struct source *s, int may_wait)
{
    if (!l->map) return 0;
    struct question q = { s, NULL, 0, 0, 0, 0 };
    if (s->ask == ASK_AT_EXIT) {
        if (!may_wait) return 0;
        struct link_map *m = NULL;
        void *h = dlopen(l->name_path, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) return 0;
        if (!dlinfo(h, RTLD_DI_LINKMAP, &m) && m) {
            l->map = m;
            q.fn = cs_elf_lookup(m, s->fn);
            if (q.fn) {
                cs_own_count(cs_api_find(&cs_api_cuda, s->fn));
                call_source(&q);
            }
        }
        dlclose(h);
        if (!m) return 0;
    } else {
        struct held_question h = { q, l->map, l->name_path, 0 };
        cs_loader_held(ask_held, &h);
        if (!h.asked) return 0;
        q = h.q;
    }
    if (q.n > 0) set_version(l, s, q.a, q.b, q.c, q.n, CS_VERSION_API, s->fn);
    if (q.n < 0) {
        l->code = q.a;
        snprintf(l->version, sizeof l->version, "api %d", q.a);
        snprintf(l->version_api, sizeof l->version_api, "%s", s->fn);
        l->version_rank = CS_VERSION_API;
    }
    return 1;
}

/* --- 3. the files ------------------------------------------------------------------------- */

/* A wheel's copy says its version in the package's dist-info directory, beside the "nvidia"
 * package (site-packages/nvidia_cudnn_cu12-9.1.0.70.dist-info) or in a toolkit's dist-info
 * folder: the ancestors of the library's directory, three levels up at most. The package is
 * named PACKAGE or PACKAGE_cuNN (nvidia_cublas-13.1.0.3, nvidia_cublas_cu12-12.4.5.8); cuda
 * gets NN*1000 (0 without), version the package's version. */
static int dist_info(const char *path, const char *package, int *cuda, char *version, size_t vcap)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) return 0;
        *slash = 0;
        for (int sub = 0; sub < 2; sub++) {
            char where[PATH_MAX + 16];
            snprintf(where, sizeof where, "%s%s", dir, sub ? "/dist-info" : "");
            DIR *d = opendir(where);
            struct dirent *de;
            while (d && (de = readdir(d))) {
                size_t n = strlen(de->d_name);
                size_t p = strlen(package);
                if (strncmp(de->d_name, package, p) || n < 11 || strcmp(de->d_name + n - 10, ".dist-info")) continue;
                char stem[256];
                snprintf(stem, sizeof stem, "%.*s", (int)(n - 10), de->d_name);
                char *dash = strrchr(stem, '-');
                if (!dash || dash < stem + p) continue;
                *dash = 0;
                int cu = 0, used = 0;
                if (stem[p] && !(sscanf(stem + p, "_cu%d%n", &cu, &used) == 1 && !stem[p + (size_t)used])) continue;
                *cuda = cu * 1000;
                snprintf(version, vcap, "%s", dash + 1);
                closedir(d);
                return 1;
            }
            if (d) closedir(d);
        }
    }
    return 0;
}

/* The version header installed beside the library (lib/../include/HEADER): its three macros. */
static int header_version(const char *path, const struct source *s, int *v)
{
    if (!s->header) return 0;
    char where[PATH_MAX + 64];
    snprintf(where, sizeof where, "%s", path);
    char *slash = strrchr(where, '/');
    if (!slash) return 0;
    *slash = 0;
    size_t room = sizeof where - strlen(where);
    snprintf(where + strlen(where), room, "/../include/%s", s->header);
    FILE *f = fopen(where, "re");
    if (!f) return 0;
    char line[256];
    int found = 0;
    while (found != 7 && fgets(line, sizeof line, f)) {
        char macro[64];
        int value;
        if (sscanf(line, " #define %63s %d", macro, &value) != 2) continue;
        for (int i = 0; i < 3; i++)
            if (!strcmp(macro, s->macros[i])) { v[i] = value; found |= 1 << i; }
    }
    fclose(f);
    return found == 7;
}


/* A framework's build, from its wheel beside it: torch-2.5.1+cu121 says the CUDA it was built
 * for, which is what a user upgrading the driver or the toolkit has to match. Each library is
 * matched only with its own framework's wheels: site-packages often holds several frameworks. */
static const struct framework_wheels {
    const char *prefix;           /* the library's file name */
    const char *wheels[3];        /* its framework's distributions, the CUDA-specific ones first */
} framework_wheels[] = {
    { "libtorch", { "torch" } },
    { "libtensorflow", { "tensorflow" } },
    { "_pywrap_tensorflow", { "tensorflow" } },
    { "xla_cuda_plugin", { "jax_cuda13_plugin", "jax_cuda12_plugin" } },
    { "xla_extension", { "jaxlib" } },
    { "libjax", { "jaxlib" } },
    { "libonnxruntime", { "onnxruntime_gpu", "onnxruntime" } },
};

/* TensorFlow says the CUDA it was built with in tensorflow/python/platform/build_info.py, a
 * file of its package (the library is in tensorflow/ or a folder below it). */
static int tensorflow_cuda(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) return 0;
        *slash = 0;
        if (strcmp(cs_base_name(dir), "tensorflow")) continue;
        char where[PATH_MAX + 40], text[4096];
        snprintf(where, sizeof where, "%s/python/platform/build_info.py", dir);
        FILE *f = fopen(where, "re");
        if (!f) return 0;
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = 0;
        return cs_build_info_cuda(text);
    }
    return 0;
}

/* PyTorch's own torch/version.py, for builds without a wheel beside them (Debian's, conda's,
 * a source build): the package is beside the library (torch/lib/libtorch_cuda.so), or holds the
 * extension the interpreter loaded (torch/_C.cpython-313-x86_64-linux-gnu.so). */
static int torch_version_py(const char *path, struct cs_library *l)
{
    char dir[PATH_MAX], where[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    snprintf(where, sizeof where, "%s/../version.py", dir);
    FILE *f = fopen(where, "re");
    for (const struct link_map *m = cs_lm_head(); !f && m; m = m->l_next) {
        const char *c = m->l_name ? strstr(m->l_name, "/torch/_C.") : NULL;
        if (!c) continue;
        snprintf(where, sizeof where, "%.*s/torch/version.py", (int)(c - m->l_name), m->l_name);
        f = fopen(where, "re");
    }
    if (!f) return 0;
    char text[4096], version[32];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    int cuda = cs_torch_version_py(text, version, sizeof version);
    if (cuda < 0) return 0;
    snprintf(l->version, sizeof l->version, "%s", version);
    snprintf(l->version_api, sizeof l->version_api, "torch/version.py (torch)");
    l->version_rank = CS_VERSION_FILE;
    if (cuda > 0) {
        l->built_for_cuda = cuda;
        snprintf(l->built_for_how, sizeof l->built_for_how, "torch/version.py (%s, CUDA %d.%d)", version, cuda / 1000,
                 cuda % 1000 / 10);
    }
    return 1;
}

static void framework_version(struct cs_library *l)
{
    const char *base = cs_base_name(l->path);
    char version[32];
    int cuda;
    for (size_t f = 0; f < sizeof framework_wheels / sizeof *framework_wheels; f++) {
        const struct framework_wheels *fw = &framework_wheels[f];
        if (strncmp(base, fw->prefix, strlen(fw->prefix))) continue;
        for (int i = 0; i < 3 && fw->wheels[i]; i++) {
            const char *wheel = fw->wheels[i];
            if (!dist_info(l->path, wheel, &cuda, version, sizeof version)) continue;
            snprintf(l->version, sizeof l->version, "%s", version);
            snprintf(l->version_api, sizeof l->version_api, "its wheel (%s)", wheel);
            l->version_rank = CS_VERSION_FILE;
            int v = 0;
            const char *cu = strstr(version, "+cu");  /* torch 2.5.1+cu121: built for CUDA 12.1 */
            if (cu) v = atoi(cu + 3), v = v >= 100 ? v / 10 * 1000 + v % 10 * 10 : 0;
            else if (!strncmp(wheel, "jax_cuda", 8)) v = atoi(wheel + 8) * 1000;  /* jax_cuda12_plugin */
            else if (!strcmp(wheel, "tensorflow")) v = tensorflow_cuda(l->path);
            if (v > 0) {
                l->built_for_cuda = v;
                snprintf(l->built_for_how, sizeof l->built_for_how, "its wheel (%s %s)", wheel, version);
            }
            return;
        }
        if (!strcmp(fw->prefix, "libtorch")) torch_version_py(l->path, l);
        return;
    }
}

void cs_version_from_files(struct cs_library *l)
{
    const struct source *s = source_of(l->kind);
    const char *so = strstr(cs_base_name(l->path), ".so.");
    const char *text = so ? so + 4 : "";
    if (strchr(text, '.')) snprintf(l->file_version, sizeof l->file_version, "%s", text);
    if (!strcmp(l->kind, "framework")) { framework_version(l); return; }
    if (!s || !strcmp(l->kind, "driver")) return;
    int soname_major = atoi(text);
    char wheel[32];
    int cuda = 0;
    int from_wheel = s->wheel && dist_info(l->path, s->wheel, &cuda, wheel, sizeof wheel) &&
                     (!soname_major || atoi(wheel) == soname_major || !strcmp(l->kind, "nccl") ||
                      !strcmp(l->kind, "cudnn"));
    if (from_wheel && cuda && !l->built_for_cuda) {
        /* nvidia_nccl_cu13, nvidia_cudnn_cu12: built for that CUDA major */
        l->built_for_cuda = cuda;
        snprintf(l->built_for_how, sizeof l->built_for_how, "its wheel (%s_cu%d)", s->wheel, cuda / 1000);
    }
    if (!l->built_for_cuda && (!strcmp(l->kind, "cudnn") || !strcmp(l->kind, "nccl"))) {
        /* A toolkit's or a distribution's copy has no wheel: its GPU code says (the CUDA runtime
         * built into it needs a driver for that major before the program calls it). */
        char how[sizeof l->built_for_how];
        int c = cs_gpu_code_cuda_of_kind(l->kind, l->path, how, sizeof how);
        if (c) l->built_for_cuda = c, memcpy(l->built_for_how, how, sizeof how);
    }
    int v[3] = { 0 }, n;
    if (strchr(text, '.') && (n = sscanf(text, "%d.%d.%d", &v[0], &v[1], &v[2])) >= 2) {
        set_version(l, s, v[0], v[1], v[2], n, CS_VERSION_FILE, "file name");
    } else if (from_wheel && strcmp(l->kind, "nccl") && (n = sscanf(wheel, "%d.%d.%d", &v[0], &v[1], &v[2])) >= 2) {
        /* NCCL's wheel number is its own version too, but ncclGetVersion is asked anyway. */
        snprintf(l->file_version, sizeof l->file_version, "%s", wheel);
        set_version(l, s, v[0], v[1], v[2], n, CS_VERSION_FILE, "its wheel");
    } else if (header_version(l->path, s, v) && (!soname_major || v[0] == soname_major)) {
        set_version(l, s, v[0], v[1], v[2], 3, CS_VERSION_FILE, s->header);
    } else if (!strcmp(l->kind, "cudart") && soname_major > 0) {
        set_version(l, s, soname_major, 0, 0, 1, CS_VERSION_FILE, "file name");
    }
}

/* --- the scanner's step -------------------------------------------------------------------- */

int cs_version_update(struct cs_library *l, int asking)
{
    const struct source *s = source_of(l->kind);
    if (!s) return 0;
    int changed = apply_seen(l, s);
    if (l->version_rank >= CS_VERSION_API || l->asked) return changed;
    /* Constants are asked by any scan (a synchronous one only of libraries fully loaded); the
     * driver only at exit, and only when the program never asked it. */
    if (s->ask != ASK_CONSTANT && !(s->ask == ASK_AT_EXIT && asking >= 2)) return changed;
    int before = l->version_rank;
    char was[sizeof l->version];
    memcpy(was, l->version, sizeof was);
    if (ask(l, s, asking > 0)) l->asked = 1;
    return changed || l->version_rank != before || strcmp(was, l->version);
}
