/* What would run on this machine, from the reference tables: a build of the loaded framework that
 * this driver runs on this GPU (the loaded release first, else the newest that works), the
 * driver that the loaded build itself needs, and NVIDIA's forward-compatibility package where
 * the GPU allows it. A driver runs builds of its own CUDA major (minor version compatibility,
 * which the frameworks' wheels rely on) and of older majors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alternatives.h"
#include "reference_data.h"

static int runs_on_driver(int cuda, int driver_cuda) { return cuda / 1000 <= driver_cuda / 1000; }

/* 1: PyTorch's wheels of this release built with this CUDA carry code for cc; 0: they do not,
 * or it is not known (no row); cc 0 (unknown) counts as covered, and the caller names the range. */
static int covers(int cuda, const char *release, int cc, const struct cs_ref_torcharch **row)
{
    *row = cs_ref_torcharch_for(cuda, cs_torch_release_code(release));
    return *row && cs_ref_torcharch_covers(*row, cc);
}

/* The newest CUDA version of a release that runs here, or 0. */
static int best_variant(const struct cs_ref_torch *r, int cc, int driver_cuda)
{
    int best = 0;
    const struct cs_ref_torcharch *row;
    for (int k = 0; k < CS_REF_TORCH_CUDAS && r->cuda[k]; k++)
        if (runs_on_driver(r->cuda[k], driver_cuda) && covers(r->cuda[k], r->release, cc, &row)) best = r->cuda[k];
    return best;
}

static int has_cuda(const struct cs_ref_torch *r, int cuda)
{
    for (int k = 0; k < CS_REF_TORCH_CUDAS && r->cuda[k]; k++)
        if (r->cuda[k] == cuda) return 1;
    return 0;
}

int cs_torch_releases_covering(int cuda, int cc, char *out, size_t cap)
{
    int n = 0, first = -1, last = -1;
    size_t len = 0;
    if (cap) out[0] = 0;
    for (int i = 0; i <= cs_ref_torch_count; i++) {
        const struct cs_ref_torch *r = i < cs_ref_torch_count ? &cs_ref_torch[i] : NULL;
        int yes = r && has_cuda(r, cuda) &&
                  cs_ref_torcharch_covers(cs_ref_torcharch_for(cuda, cs_torch_release_code(r->release)), cc);
        if (yes) {
            if (first < 0) first = i;
            last = i;
            continue;
        }
        if (first < 0) continue;
        /* a run of consecutive releases ends: "2.8 to 2.10" */
        if (len < cap)
            len += (size_t)snprintf(out + len, cap - len, "%s%s%s%s", n ? ", " : "", cs_ref_torch[first].release,
                                    last > first ? " to " : "", last > first ? cs_ref_torch[last].release : "");
        n++, first = -1;
    }
    return n;
}

static void cuda_text(char *out, size_t cap, int cuda) { snprintf(out, cap, "%d.%d", cuda / 1000, cuda % 1000 / 10); }

/* "2.9" of "2.9.0+cu130" */
static void release_of(const char *version, char *out, size_t cap)
{
    snprintf(out, cap, "%s", version ? version : "");
    char *dot = strchr(out, '.');
    if (dot && (dot = strchr(dot + 1, '.'))) *dot = 0;
    char *plus = strchr(out, '+');
    if (plus) *plus = 0;
}

static void put(char *out, size_t cap, int *n, const char *text)
{
    size_t len = strlen(out);
    snprintf(out + len, cap > len ? cap - len : 0, "%s%s", *n ? "; " : "", text);
    (*n)++;
}

static int has_word(const char *name, const char *word) { return name && strstr(name, word) != NULL; }

enum cs_gpu_class cs_gpu_class(const char *name)
{
    if (!name || !*name) return CS_GPU_UNKNOWN;
    if (has_word(name, "GeForce") || has_word(name, "TITAN") || has_word(name, "Quadro")) return CS_GPU_CONSUMER;
    if (has_word(name, "Jetson") || has_word(name, "Orin") || has_word(name, "Xavier") || has_word(name, "Thor"))
        return CS_GPU_JETSON;
    if (has_word(name, "Tesla")) return CS_GPU_DATACENTER;
    /* "NVIDIA RTX A6000", "NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX PRO 6000 Blackwell Server Edition" */
    if (has_word(name, "RTX")) return CS_GPU_WORKSTATION;
    /* Data centre parts are named by their model: A100, H100, H200, GH200, B200, L4, L40S, A10, T4, V100... */
    static const char *const models[] = { " A100", " A800", " A30", " A40", " A10", " A16", " A2", " H100", " H200",
                                          " H800", " H20", " GH200", " B100", " B200", " B300", " GB200", " GB300",
                                          " L40", " L20", " L4", " T4", " V100", " P100", " P40", " P4", " K80" };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        const char *at = strstr(name, models[i]);
        if (!at) continue;
        at += strlen(models[i]);
        if (*at == 'S' || *at == 'G') at++;  /* L40S, A10G */
        if (!*at || *at == ' ' || *at == '-') return CS_GPU_DATACENTER;  /* not " L4" inside " L40" */
    }
    return CS_GPU_UNKNOWN;
}

/* The loaded framework's family, from its wheel's name. */
enum family { NONE, TORCH, TENSORFLOW, JAX };
static enum family family_of(const char *wheel)
{
    if (!wheel) return NONE;
    if (!strcmp(wheel, "torch")) return TORCH;
    if (!strcmp(wheel, "tensorflow")) return TENSORFLOW;
    if (!strncmp(wheel, "jax", 3)) return JAX;
    return NONE;
}

static void keep_driver_torch(const struct cs_machine *m, char *out, size_t cap, int *n)
{
    char release[16], text[512], dc[16], tc[16], arch[48] = "";
    release_of(m->framework_version, release, sizeof release);
    cuda_text(dc, sizeof dc, m->driver_cuda);
    const struct cs_ref_torch *pick = NULL;
    int v = 0;
    for (int i = 0; i < cs_ref_torch_count; i++)
        if (!strcmp(cs_ref_torch[i].release, release) && (v = best_variant(&cs_ref_torch[i], m->cc, m->driver_cuda)))
            pick = &cs_ref_torch[i];
    for (int i = cs_ref_torch_count - 1; i >= 0 && !pick; i--)
        if ((v = best_variant(&cs_ref_torch[i], m->cc, m->driver_cuda))) pick = &cs_ref_torch[i];
    if (!pick) return;
    const struct cs_ref_torcharch *row;
    covers(v, pick->release, m->cc, &row);
    if (!m->cc) snprintf(arch, sizeof arch, " (if the GPU is sm_%d or newer)", row->lowest_cc);
    cuda_text(tc, sizeof tc, v);
    snprintf(text, sizeof text,
             "keep this driver (CUDA %s): torch %s built for CUDA %s runs here%s: pip install \"torch==%s.*\" "
             "--index-url https://download.pytorch.org/whl/cu%d",
             dc, pick->release, tc, arch, pick->release, v / 1000 * 10 + v % 1000 / 10);
    put(out, cap, n, text);
}

static void keep_driver_tensorflow(const struct cs_machine *m, char *out, size_t cap, int *n)
{
    char release[16], text[512], dc[16], tc[16];
    release_of(m->framework_version, release, sizeof release);
    cuda_text(dc, sizeof dc, m->driver_cuda);
    const struct cs_ref_tensorflow *pick = NULL;
    for (int i = 0; i < cs_ref_tensorflow_count; i++)
        if (runs_on_driver(cs_ref_tensorflow[i].cuda, m->driver_cuda)) pick = &cs_ref_tensorflow[i];
    if (!pick) return;
    cuda_text(tc, sizeof tc, pick->cuda);
    snprintf(text, sizeof text,
             "keep this driver (CUDA %s): tensorflow %s, built with CUDA %s and cuDNN %s, runs here: "
             "pip install \"tensorflow==%s.*\"", dc, pick->release, tc, pick->cudnn, pick->release);
    put(out, cap, n, text);
}

static void keep_driver_jax(const struct cs_machine *m, char *out, size_t cap, int *n)
{
    char text[512], dc[16];
    cuda_text(dc, sizeof dc, m->driver_cuda);
    const struct cs_ref_jax *pick = NULL;
    for (int i = 0; i < cs_ref_jax_count; i++)
        if (runs_on_driver(cs_ref_jax[i].cuda_major, m->driver_cuda) && (!m->cc || m->cc >= cs_ref_jax[i].lowest_cc))
            pick = &cs_ref_jax[i];
    if (!pick) return;
    snprintf(text, sizeof text, "keep this driver (CUDA %s): JAX's CUDA %d plugin runs here: pip install -U \"jax[cuda%d]\"",
             dc, pick->cuda_major / 1000, pick->cuda_major / 1000);
    put(out, cap, n, text);
}

/* The build itself: the driver it needs, unless it has no code for this GPU at all. Returns 0
 * when no driver makes it run here. */
static int keep_build(const struct cs_machine *m, enum family f, char *out, size_t cap, int *n)
{
    char text[512], tc[16];
    cuda_text(tc, sizeof tc, m->framework_cuda);
    const struct cs_ref_torcharch *row;
    if (f == TORCH && m->cc && !covers(m->framework_cuda, m->framework_version, m->cc, &row) && row) {
        char others[160] = "", which[240] = "";
        if (cs_torch_releases_covering(m->framework_cuda, m->cc, others, sizeof others))
            snprintf(which, sizeof which, "; torch %s's builds for CUDA %s do", others, tc);
        snprintf(text, sizeof text, "torch %s has no code for this GPU (sm_%d; its builds for CUDA %s cover sm_%d to "
                 "sm_%dx%s): no driver makes it run here", m->framework_version, m->cc, tc, row->lowest_cc,
                 row->highest_cc / 10, which);
        put(out, cap, n, text);
        return 0;
    }
    if (f == JAX && m->cc)
        for (int i = 0; i < cs_ref_jax_count; i++)
            if (cs_ref_jax[i].cuda_major / 1000 == m->framework_cuda / 1000 && m->cc < cs_ref_jax[i].lowest_cc) {
                snprintf(text, sizeof text, "%s %s has no code for this GPU (sm_%d; JAX for CUDA %d needs sm_%d or newer): "
                         "no driver makes it run here", m->framework, m->framework_version, m->cc,
                         m->framework_cuda / 1000, cs_ref_jax[i].lowest_cc);
                put(out, cap, n, text);
                return 0;
            }
    if (m->driver_cuda > 0 && !runs_on_driver(m->framework_cuda, m->driver_cuda)) {
        /* The major's floor: the frameworks' wheels run on any driver of their major. */
        const struct cs_ref_driver *d = cs_ref_floor_for(m->framework_cuda);
        if (!d) d = cs_ref_toolkit_for(m->framework_cuda);
        if (d && d->linux_min) {
            snprintf(text, sizeof text, "%skeep %s %s and upgrade the driver to one for CUDA %s (Linux >= %s)",
                     *n ? "or " : "", f == TORCH ? "torch" : m->framework, m->framework_version, tc, d->linux_min);
            put(out, cap, n, text);
        }
    }
    return 1;
}

/* NVIDIA's forward-compatibility package: a newer libcuda over this kernel module, on the GPUs
 * NVIDIA allows it on. */
static void forward_compat(const struct cs_machine *m, int needs, char *out, size_t cap, int *n)
{
    if (!needs || !m->driver_cuda || runs_on_driver(needs, m->driver_cuda)) return;
    char text[640], pkg[32], dir[48], drv[64], gpu[160];
    snprintf(pkg, sizeof pkg, "cuda-compat-%d-%d", needs / 1000, needs % 1000 / 10);
    snprintf(dir, sizeof dir, "/usr/local/cuda-%d.%d/compat", needs / 1000, needs % 1000 / 10);
    snprintf(drv, sizeof drv, "%s%s", m->driver_version ? "driver " : "this driver", m->driver_version ? m->driver_version : "");
    snprintf(gpu, sizeof gpu, "%s", m->gpu_name ? m->gpu_name : "");
    const char *how = "install NVIDIA's forward-compatibility package %s and put %s first on LD_LIBRARY_PATH";
    char install[256];
    snprintf(install, sizeof install, how, pkg, dir);
    const char *or = *n ? "or " : "";
    switch (cs_gpu_class(m->gpu_name)) {
    case CS_GPU_CONSUMER:
        snprintf(text, sizeof text, "forward compatibility (%s) is not an option: the %s is not a data centre GPU", pkg, gpu);
        break;
    case CS_GPU_DATACENTER:
    case CS_GPU_JETSON:
        snprintf(text, sizeof text, "%skeep %s and %s (forward compatibility: allowed on the %s)", or, drv, install, gpu);
        break;
    case CS_GPU_WORKSTATION:
        snprintf(text, sizeof text, "%skeep %s and %s, if the %s is one of the NGC Server Ready RTX SKUs that "
                 "forward compatibility supports", or, drv, install, gpu);
        break;
    default:
        snprintf(text, sizeof text, "%skeep %s and %s (forward compatibility: data centre GPUs only; the GPU's name "
                 "was not seen)", or, drv, install);
    }
    put(out, cap, n, text);
}

int cs_what_would_work(const struct cs_machine *m, char *out, size_t cap)
{
    int n = 0;
    if (!cap) return 0;
    out[0] = 0;
    enum family f = family_of(m->framework);
    if (m->driver_cuda > 0) {
        if (f == TORCH) keep_driver_torch(m, out, cap, &n);
        if (f == TENSORFLOW) keep_driver_tensorflow(m, out, cap, &n);
        if (f == JAX) keep_driver_jax(m, out, cap, &n);
    }
    int runnable = 1;
    if (f != NONE && m->framework_version && m->framework_cuda > 0) runnable = keep_build(m, f, out, cap, &n);
    if (runnable) forward_compat(m, m->needs_cuda ? m->needs_cuda : m->framework_cuda, out, cap, &n);
    return n;
}
