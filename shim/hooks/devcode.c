/* Device code: every image given to the driver is summarised from its headers (SASS archs, PTX
 * targets and ISA versions), kept per module or library, and every CUfunction/CUkernel is
 * mapped to its name and module. When a load, a kernel lookup or a launch fails with 209, 222
 * or 200, the summary, the device and the driver explain why, as a finding.
 *
 * Nothing here is on the per-call fast path except the map lookups a failing call makes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

#include "../../wrappers/gen/cuda_api.h"
#include "../base/fatbin.h"
#include "../base/image_explain.h"
#include "../process/locks.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../evidence/driver_ask.h"
#include "../evidence/inventory.h"
#include "../rules/rules.h"
#include "../diagnose/diagnose.h"
#include "devcode.h"
#include "../../wrappers/gen/results.h"
#include "../../wrappers/gen/hooks.h"  /* the hooks' signatures, from the API tables */

struct module {
    void *handle;              /* CUmodule or CUlibrary */
    struct cs_entry e[CS_MOD_ENTRIES];
    int n, truncated;
    char source[64];           /* which API loaded it */
    char origin[256];          /* the library or file the image came from, when known */
    UT_hash_handle hh;
};
struct function {
    void *handle;              /* CUfunction or CUkernel */
    void *module;
    char name[256];
    UT_hash_handle hh;
};
static struct module *modules;
static struct function *functions;
/* The kernels that failed for their image, per image file and result, in the order they failed:
 * the rule names them all in one finding (said again, whole, as one more joins). */
#define FAILED_IMAGES 16
static struct failed_image { int result, n, more; char origin[256], kernels[512]; } failed_images[FAILED_IMAGES];
static int nfailed_images;
static pid_t failed_pid;  /* whose they are: a forked child says its own */

/* A child forked while another thread changed the tables starts empty ones (leaving the parent's
 * entries allocated: a lookup may be reading one). */
void cs_devcode_drop(void) { modules = NULL; functions = NULL; nfailed_images = 0; }

static int device_cc;          /* from the program's own queries, or asked on a failure */
static int loading_mode;       /* 1 lazy, 2 eager (CUmoduleLoadingMode), 0 unknown */

/* --- summarising images ---------------------------------------------------------------- */

struct collect { struct cs_entry *e; int n, cap, truncated; char origin[256]; };

/* Which library holds an image: the fatbins a framework or an extension registers live in its
 * own .nv_fatbin section, so the address names the file (libtorch_cuda.so, flash_attn...so). */
static void image_origin(const void *image, char *out, size_t cap)
{
    out[0] = 0;
    const char *name = cs_lm_name_of_addr(image);  /* lock-free: this runs inside a module load */
    char exe[PATH_MAX];
    if (name && !name[0]) {  /* the program itself */
        cs_exe_path(exe, sizeof exe);
        name = exe;
    }
    if (name && name[0]) {
        const char *slash = strrchr(name, '/');
        snprintf(out, cap, "%s", slash ? slash + 1 : name);
    }
}

static int collect_entry(const struct cs_entry *e, void *arg)
{
    struct collect *c = arg;
    if (c->n < c->cap) c->e[c->n++] = *e;
    else c->truncated = 1;
    return 0;
}

/* A size-less pointer to a container: its header says how long it is. */
static int container_at(const unsigned char *p, struct collect *c)
{
    uint32_t magic;
    uint16_t hs;
    uint64_t fs;
    memcpy(&magic, p, 4), memcpy(&hs, p + 6, 2), memcpy(&fs, p + 8, 8);
    if (magic != CS_FATBIN_MAGIC || fs > (4ull << 30)) return -1;
    const char *err;
    size_t size;
    return cs_fatbin_parse(p, hs + (size_t)fs, collect_entry, c, &size, &err) < 0 ? -1 : 0;
}

/* Image kinds of the size-less loaders: container, wrapper (v1, or v2 with prelinked
 * containers), cubin, PTX text. len is 0 when unknown. */
static int summarise(const void *image, size_t len, struct collect *c)
{
    const unsigned char *p = image;
    if (!p) return -1;
    image_origin(image, c->origin, sizeof c->origin);
    enum cs_image kind = cs_image_kind(p, len ? len : 64);
    if (kind == CS_IMG_CONTAINER) return container_at(p, c);
    if (kind == CS_IMG_WRAPPER) {
        int version;
        const unsigned char *data, *const *prelinked;
        memcpy(&version, p + 4, 4), memcpy(&data, p + 8, sizeof data), memcpy(&prelinked, p + 16, sizeof prelinked);
        int r = data ? container_at(data, c) : -1;
        for (int i = 0; version == 2 && prelinked && prelinked[i] && i < 1024; i++) container_at(prelinked[i], c);
        return r;
    }
    if (kind == CS_IMG_CUBIN || kind == CS_IMG_PTX || kind == CS_IMG_UNKNOWN) {
        struct cs_entry e;
        int ok = !memcmp(p, "\177ELF", 4) ? cs_cubin_entry(p, len ? len : 64, &e)
                                           : cs_ptx_entry((const char *)p, len ? len : 65536, &e);
        if (ok) return -1;
        collect_entry(&e, c);
        return 0;
    }
    return -1;
}

static int summarise_file(const char *path, struct collect *c)
{
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd < 0) return -1;
    if (fstat(fd, &st) || st.st_size <= 0) { close(fd); return -1; }
    size_t len = (size_t)st.st_size;
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return -1;
    int r = summarise(m, len, c);
    const char *slash = strrchr(path, '/');
    snprintf(c->origin, sizeof c->origin, "%s", slash ? slash + 1 : path);
    munmap(m, len);
    return r;
}

static void remember_module(void *handle, const struct collect *c, const char *source)
{
    if (!handle) return;
    struct module *m = calloc(1, sizeof *m);
    if (!m) return;
    m->handle = handle;
    m->n = c->n;
    m->truncated = c->truncated;
    memcpy(m->e, c->e, sizeof(struct cs_entry) * (size_t)c->n);
    snprintf(m->source, sizeof m->source, "%s", source);
    snprintf(m->origin, sizeof m->origin, "%s", c->origin);
    cs_lock(CS_LOCK_DEVCODE);
    struct module *old;
    HASH_FIND_PTR(modules, &handle, old);
    if (old) HASH_DEL(modules, old);  /* kept allocated: a failing launch may still be reading it */
    HASH_ADD_PTR(modules, handle, m);
    cs_unlock(CS_LOCK_DEVCODE);
}

/* The second step of a hook here: what was collected, written into the call's record at once. */
static void write_image(struct cs_thread *t, const struct collect *c)
{
    char text[1200];
    cs_image_contents(c->e, c->n, text, sizeof text);
    cs_extra_str(t, "image", text);
    if (c->origin[0]) cs_extra_str(t, "image_from", c->origin);
}

static void write_diagnosis(struct cs_thread *t, const struct cs_devcode_facts *f)
{
    if (f->diagnosis[0]) cs_extra_str(t, "diagnosis", f->diagnosis);
}

/* --- the device and the driver, for predictions ---------------------------------------- */

void cs_devcode_note_cc(int cc) { if (cc > 0) device_cc = cc, cs_device_cc_saw(cc); }

static int ask_cc(void)
{
    if (device_cc) return device_cc;
    int dev = 0, maj = 0, min = 0;
    if (cs_ask_ctx_device(&dev)) dev = 0;
    if (!cs_ask_attribute(&maj, 75, dev) && !cs_ask_attribute(&min, 76, dev) && maj > 0) cs_devcode_note_cc(maj * 10 + min);
    return device_cc;
}

static int ask_driver(void)
{
    int v = cs_driver_version_seen();
    if (v) return v;
    return !cs_ask_driver_version(&v) ? v : 0;
}

/* --- explaining a failure -------------------------------------------------------------- */

/* This kernel joins the others its image (file, result) failed: the list, and how many, into out. */
static int failed_kernels(const struct cs_devcode_facts *f, int result, char *out, size_t cap)
{
    struct failed_image *g = NULL;
    int n = 0;
    cs_lock(CS_LOCK_DEVCODE);
    if (failed_pid != getpid()) failed_pid = getpid(), nfailed_images = 0;
    for (int i = 0; i < nfailed_images && !g; i++)
        if (failed_images[i].result == result && !strcmp(failed_images[i].origin, f->origin)) g = &failed_images[i];
    if (!g && nfailed_images < FAILED_IMAGES) {
        g = &failed_images[nfailed_images++];
        g->result = result, g->n = g->more = 0, g->kernels[0] = 0;
        snprintf(g->origin, sizeof g->origin, "%s", f->origin);
    }
    if (g) {
        size_t len = strlen(g->kernels), k = strlen(f->kernel);
        int seen = 0;
        for (const char *p = g->kernels; k && (p = strstr(p, f->kernel)); p += k)
            if ((p == g->kernels || p[-1] == ' ') && (p[k] == ',' || !p[k])) { seen = 1; break; }
        if (!seen && len + k + 3 < sizeof g->kernels) {
            snprintf(g->kernels + len, sizeof g->kernels - len, "%s%s", len ? ", " : "", f->kernel);
            g->n++;
        } else if (!seen) {
            g->more = 1;  /* the list is full: the rest are "others" */
        }
        snprintf(out, cap, "%s%s", g->kernels, g->more ? " and others" : "");
        n = g->n + g->more;
    }
    cs_unlock(CS_LOCK_DEVCODE);
    return n;
}

/* The image rule on what was collected (the driver and the GPU asked when not yet seen): its
 * explanation into f->diagnosis, "" when the result is not an image error. */
void cs_devcode_explain(const struct cs_thread *t, int result, const char *where, struct cs_devcode_facts *f)
{
    f->diagnosis[0] = 0;
    const char *mode = getenv("CUDA_MODULE_LOADING");
    if (result == CS_CUDA_ERROR_OUT_OF_MEMORY) {  /* code that did not fit: not an architecture problem */
        struct cs_load_oom m = { .api = !strcmp(where, "load")     ? "a module load"
                                        : !strcmp(where, "launch") ? "a launch (its kernel loaded at first use)"
                                                                   : where, .kernel = f->known ? f->kernel : NULL,
                                 .origin = f->origin[0] ? f->origin : NULL,
                                 .lazy = loading_mode == 1 || (!loading_mode && (!mode || !strcmp(mode, "LAZY"))) };
        size_t free_b = 0, total_b = 0;
        m.have_info = !cs_ask_mem_info(&free_b, &total_b);
        m.free = free_b, m.total = total_b;
        uint64_t count;
        cs_memory_live(&m.live, &count);
        m.xla_preallocate = getenv("XLA_PYTHON_CLIENT_PREALLOCATE"), m.xla_fraction = getenv("XLA_PYTHON_CLIENT_MEM_FRACTION");
        m.tf_growth = getenv("TF_FORCE_GPU_ALLOW_GROWTH");
        cs_rule_module_load_oom(&m);
        return;
    }
    if (!cs_rule_is_image_failure(result)) return;
    int lookup = strcmp(where, "load") && strcmp(where, "launch");
    struct cs_image_failure failure = {
        .result = result, .where = where, .kernel = f->known ? f->kernel : NULL, .origin = f->origin,
        .entries = f->e, .n = f->n, .cc = ask_cc(), .driver = ask_driver(),
        .lazy_loading = loading_mode == 1 || (!loading_mode && (!mode || !strcmp(mode, "LAZY"))),
        .probe = lookup && t && t->depth > 1,
    };
    /* What is loaded (the framework's build, for the alternatives) is the scanner's to find: this
     * failure, rare and usually fatal, waits for a scan of its own (bounded), so a framework
     * loaded at start-up is known even when the failure comes in the first moments. */
    if (result == CS_CUDA_ERROR_NO_BINARY_FOR_GPU) cs_scan_wait(300);
    char kernels[512];
    if (f->known && f->kernel[0] && f->origin[0] && !failure.probe) failure.nkernels = failed_kernels(f, result, kernels, sizeof kernels),
                                                   failure.kernels = kernels;
    struct cs_evidence ev;
    cs_inventory_rdlock();
    cs_evidence_take(&ev);
    cs_rule_image_failure(&ev, &failure, f->diagnosis, sizeof f->diagnosis);
    cs_inventory_unlock();
}

/* A failed load's facts: its image as collected. */
static void load_facts(const struct collect *c, struct cs_devcode_facts *f)
{
    f->kernel[0] = 0, f->known = 0;
    f->n = c->n;
    memcpy(f->e, c->e, sizeof(struct cs_entry) * (size_t)c->n);
    snprintf(f->origin, sizeof f->origin, "%s", c->origin);
}

/* A load: its image collected (ok 0: parsed), the module remembered or the failure explained,
 * then written. */
static void load_done(struct cs_thread *t, struct cs_event *ev, void **out, struct collect *c, int ok, const char *api)
{
    struct cs_devcode_facts f;
    f.diagnosis[0] = 0;
    if (ev->result == 0 && out) remember_module(*out, c, api);
    else if (ev->result) load_facts(c, &f), cs_devcode_explain(t, ev->result, "load", &f);
    if (ok == 0) write_image(t, c);
    write_diagnosis(t, &f);
}

#define COLLECT(c) struct cs_entry entries_[CS_MOD_ENTRIES]; struct collect c = { entries_, 0, CS_MOD_ENTRIES, 0, "" }

void cs_hook_cuModuleLoadData(struct cs_thread *t, struct cs_event *ev, void *module, void *image)
{
    COLLECT(c);
    load_done(t, ev, module, &c, summarise(image, 0, &c), "cuModuleLoadData");
}

void cs_hook_cuModuleLoadDataEx(struct cs_thread *t, struct cs_event *ev, void *module, void *image, uint32_t n,
                                void *o, void *v)
{
    (void)n, (void)o, (void)v;
    COLLECT(c);
    load_done(t, ev, module, &c, summarise(image, 0, &c), "cuModuleLoadDataEx");
}

void cs_hook_cuModuleLoadFatBinary(struct cs_thread *t, struct cs_event *ev, void *module, void *image)
{
    COLLECT(c);
    load_done(t, ev, module, &c, summarise(image, 0, &c), "cuModuleLoadFatBinary");
}

void cs_hook_cuModuleLoad(struct cs_thread *t, struct cs_event *ev, void *module, void *fname)
{
    COLLECT(c);
    if (fname) cs_extra_str(t, "file", fname);
    load_done(t, ev, module, &c, summarise_file(fname, &c), "cuModuleLoad");
}

void cs_hook_cuLibraryLoadData(struct cs_thread *t, struct cs_event *ev, void *library, void *code, void *a, void *b,
                               uint32_t c1, void *d, void *e, uint32_t f)
{
    (void)a, (void)b, (void)c1, (void)d, (void)e, (void)f;
    COLLECT(c);
    load_done(t, ev, library, &c, summarise(code, 0, &c), "cuLibraryLoadData");
}

void cs_hook_cuLibraryLoadFromFile(struct cs_thread *t, struct cs_event *ev, void *library, void *fname, void *a,
                                   void *b, uint32_t c1, void *d, void *e, uint32_t f)
{
    (void)a, (void)b, (void)c1, (void)d, (void)e, (void)f;
    COLLECT(c);
    if (fname) cs_extra_str(t, "file", fname);
    load_done(t, ev, library, &c, summarise_file(fname, &c), "cuLibraryLoadFromFile");
}

/* cuLink inputs have a type and a size: CUBIN 0, PTX 1, FATBINARY 2 (OBJECT/LIBRARY/NVVM: not read). */
void cs_hook_cuLinkAddData(struct cs_thread *t, struct cs_event *ev, void *state, uint32_t type, void *data,
                           uint64_t size, void *name, uint32_t n, void *o, void *v)
{
    (void)state, (void)n, (void)o, (void)v;
    COLLECT(c);
    int ok = type <= 2 ? summarise(data, (size_t)size, &c) : -1;
    if (name) cs_extra_str(t, "name", name);
    load_done(t, ev, NULL, &c, ok, "cuLinkAddData");
}

void cs_hook_cuLinkAddFile(struct cs_thread *t, struct cs_event *ev, void *state, uint32_t type, void *path,
                           uint32_t n, void *o, void *v)
{
    (void)state, (void)n, (void)o, (void)v;
    COLLECT(c);
    int ok = type <= 2 ? summarise_file(path, &c) : -1;
    if (path) cs_extra_str(t, "file", path);
    load_done(t, ev, NULL, &c, ok, "cuLinkAddFile");
}

void cs_hook_cuModuleGetLoadingMode(struct cs_thread *t, struct cs_event *ev, void *mode)
{
    if (ev->result == 0 && mode) {
        loading_mode = *(int *)mode;
        cs_extra_str(t, "loading_mode", loading_mode == 1 ? "lazy" : loading_mode == 2 ? "eager" : "unknown");
    }
}

/* --- names ----------------------------------------------------------------------------- */

static void remember_function(void *handle, void *module, const char *name)
{
    if (!handle) return;
    struct function *f = calloc(1, sizeof *f);
    if (!f) return;
    f->handle = handle;
    f->module = module;
    snprintf(f->name, sizeof f->name, "%s", name ? name : "");
    cs_lock(CS_LOCK_DEVCODE);
    struct function *old;
    HASH_FIND_PTR(functions, &handle, old);
    if (old && old->module == module && !strcmp(old->name, f->name)) {  /* already known: no churn */
        cs_unlock(CS_LOCK_DEVCODE);
        free(f);
        return;
    }
    if (old) { HASH_DEL(functions, old); free(old); }
    HASH_ADD_PTR(functions, handle, f);
    cs_unlock(CS_LOCK_DEVCODE);
}

/* A function's raw name and module, copied under the lock (entries may be replaced). 1 when mapped. */
static int lookup_function(void *handle, char *raw, size_t cap, void **module)
{
    struct function *f;
    cs_lock_read(CS_LOCK_DEVCODE);
    HASH_FIND_PTR(functions, &handle, f);
    if (f) {
        snprintf(raw, cap, "%s", f->name);
        if (module) *module = f->module;
    }
    cs_unlock(CS_LOCK_DEVCODE);
    return f != NULL;
}

/* C++ names read better demangled; the demangler is the process's own libstdc++, if loaded. */
static void demangle(const char *in, char *out, size_t cap)
{
    static char *(*dem)(const char *, char *, size_t *, int *);
    static int looked;
    if (!looked) {
        /* lock-free: this runs in hooks on program threads, where dlsym's loader lock is not ours to take */
        dem = (char *(*)(const char *, char *, size_t *, int *))cs_elf_default("__cxa_demangle");
        looked = 1;
    }
    int st = -1;
    char *d = in[0] == '_' && in[1] == 'Z' && dem ? dem(in, NULL, NULL, &st) : NULL;
    snprintf(out, cap, "%s", d && st == 0 ? d : in);
    free(d);
}

/* The name from the map only: for the watchdog, which must not call the driver. */
void cs_kernel_name_cached(void *handle, char *out, size_t cap)
{
    char raw[256] = "";
    lookup_function(handle, raw, sizeof raw, NULL);
    if (raw[0]) snprintf(out, cap, "%s", raw);
    else snprintf(out, cap, "%p", handle);
}

/* The name when the shim has seen it (never asks the driver), demangled; 0 when not known. */
int cs_kernel_name_known(void *handle, char *out, size_t cap)
{
    char raw[256] = "";
    lookup_function(handle, raw, sizeof raw, NULL);
    if (!raw[0]) return 0;
    demangle(raw, out, cap);
    return 1;
}

/* A module's image and origin, copied under the lock (entries may be replaced). */
static void module_facts(void *module, struct cs_devcode_facts *f)
{
    struct module *m = NULL;
    f->n = 0, f->origin[0] = 0;
    if (!module) return;
    cs_lock_read(CS_LOCK_DEVCODE);
    HASH_FIND_PTR(modules, &module, m);
    if (m) {
        f->n = m->n;
        memcpy(f->e, m->e, sizeof(struct cs_entry) * (size_t)m->n);
        snprintf(f->origin, sizeof f->origin, "%s", m->origin);
    }
    cs_unlock(CS_LOCK_DEVCODE);
}

/* The function's raw name: from the map, else (loaded before the shim saw it) from the driver
 * (12.3+), the answer remembered, a miss too, so the driver is asked once per function, not once
 * per launch. 1 when mapped or answered. */
static int raw_name(void *handle, char *raw, size_t cap, void **module)
{
    raw[0] = 0;
    if (lookup_function(handle, raw, cap, module) || !handle) return raw[0] != 0;
    const char *nm = NULL;
    if (!cs_ask_func_name(&nm, handle) && nm) snprintf(raw, cap, "%s", nm);
    remember_function(handle, NULL, raw);
    return raw[0] != 0;
}

int cs_kernel_facts(void *handle, struct cs_devcode_facts *f)
{
    char raw[256];
    void *module = NULL;
    f->diagnosis[0] = 0;
    f->known = raw_name(handle, raw, sizeof raw, &module);
    if (f->known) demangle(raw, f->kernel, sizeof f->kernel);
    else snprintf(f->kernel, sizeof f->kernel, "%p", handle);
    module_facts(module, f);
    return f->known;
}

int cs_kernel_name(void *handle, char *out, size_t cap)
{
    char raw[256];
    if (!raw_name(handle, raw, sizeof raw, NULL)) { snprintf(out, cap, "%p", handle); return 0; }
    demangle(raw, out, cap);
    return 1;
}

/* A kernel lookup failed (lazy loading reports 209 here): explained with its module's image. */
static void lookup_failed(struct cs_thread *t, int result, void *module, const char *name, const char *api)
{
    struct cs_devcode_facts f;
    snprintf(f.kernel, sizeof f.kernel, "%s", name ? name : "");
    f.known = name != NULL;
    module_facts(module, &f);
    cs_devcode_explain(t, result, api, &f);
    if (name) cs_extra_str(t, "kernel", name);
    write_diagnosis(t, &f);
}

void cs_hook_cuModuleGetFunction(struct cs_thread *t, struct cs_event *ev, void *hfunc, void *hmod, void *name)
{
    if (ev->result == 0 && hfunc) remember_function(*(void **)hfunc, hmod, name);
    if (ev->result) lookup_failed(t, ev->result, hmod, name, "cuModuleGetFunction");
}

void cs_hook_cuLibraryGetKernel(struct cs_thread *t, struct cs_event *ev, void *pkernel, void *library, void *name)
{
    if (ev->result == 0 && pkernel) remember_function(*(void **)pkernel, library, name);
    if (ev->result) lookup_failed(t, ev->result, library, name, "cuLibraryGetKernel");
}

void cs_hook_cuKernelGetFunction(struct cs_thread *t, struct cs_event *ev, void *pfunc, void *kernel)
{
    /* The runtime may ask this per launch: on success only copy the kernel's entry (no demangling,
     * no driver call, and nothing at all once the function is known). */
    if (ev->result == 0 && pfunc) {
        char raw[256], known[256];
        void *module = NULL;
        if (lookup_function(kernel, raw, sizeof raw, &module) && raw[0] &&
            !lookup_function(*(void **)pfunc, known, sizeof known, NULL))
            remember_function(*(void **)pfunc, module, raw);
        return;
    }
    if (!ev->result) return;
    struct cs_devcode_facts f;
    cs_kernel_facts(kernel, &f);
    cs_devcode_explain(t, ev->result, "cuKernelGetFunction", &f);
    cs_extra_str(t, "kernel", f.kernel);
    write_diagnosis(t, &f);
}
