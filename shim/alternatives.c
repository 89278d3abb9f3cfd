/* What would run on this machine, from the reference tables: a PyTorch build this driver can run
 * on this GPU (the loaded release first, else the newest that works), and the driver that the
 * loaded build itself needs. A driver runs builds of its own CUDA major (minor version
 * compatibility, which PyTorch's wheels rely on) and of older majors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alternatives.h"
#include "reference_data.h"

static int runs_on_driver(int cuda, int driver_cuda) { return cuda / 1000 <= driver_cuda / 1000; }

/* 1: the wheels built with this CUDA carry code for cc; 0: they do not, or it is not known
 * (no row); cc 0 (unknown) counts as covered, and the caller names the range instead. */
static int covers(int cuda, int cc, const struct cs_ref_torcharch **row)
{
    *row = NULL;
    for (int i = 0; i < cs_ref_torcharch_count; i++)
        if (cs_ref_torcharch[i].cuda == cuda) *row = &cs_ref_torcharch[i];
    if (!*row) return 0;
    return !cc || (cc >= (*row)->lowest_cc && cc / 10 <= (*row)->highest_cc / 10);
}

/* The newest CUDA version of a release that runs here, or 0. */
static int best_variant(const struct cs_ref_torch *r, int cc, int driver_cuda)
{
    int best = 0;
    const struct cs_ref_torcharch *row;
    for (int k = 0; k < CS_REF_TORCH_CUDAS && r->cuda[k]; k++)
        if (runs_on_driver(r->cuda[k], driver_cuda) && covers(r->cuda[k], cc, &row)) best = r->cuda[k];
    return best;
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

int cs_what_would_work(int cc, int driver_cuda, const char *torch_version, int torch_cuda, char *out, size_t cap)
{
    int n = 0;
    if (!cap) return 0;
    out[0] = 0;
    char release[16], text[512], dc[16], tc[16], arch[48] = "";
    release_of(torch_version, release, sizeof release);
    cuda_text(dc, sizeof dc, driver_cuda);
    if (driver_cuda > 0) {
        /* 1. Keep the driver: the loaded release's build that runs here, else the newest release's. */
        const struct cs_ref_torch *pick = NULL;
        int v = 0;
        for (int i = 0; i < cs_ref_torch_count; i++)
            if (!strcmp(cs_ref_torch[i].release, release) && (v = best_variant(&cs_ref_torch[i], cc, driver_cuda)))
                pick = &cs_ref_torch[i];
        for (int i = cs_ref_torch_count - 1; i >= 0 && !pick; i--)
            if ((v = best_variant(&cs_ref_torch[i], cc, driver_cuda))) pick = &cs_ref_torch[i];
        if (pick) {
            const struct cs_ref_torcharch *row;
            covers(v, cc, &row);
            if (!cc) snprintf(arch, sizeof arch, " (if the GPU is sm_%d or newer)", row->lowest_cc);
            cuda_text(tc, sizeof tc, v);
            int code = v / 1000 * 10 + v % 1000 / 10;
            snprintf(text, sizeof text,
                     "keep this driver (CUDA %s): torch %s built for CUDA %s runs here%s: pip install \"torch==%s.*\" "
                     "--index-url https://download.pytorch.org/whl/cu%d",
                     dc, pick->release, tc, arch, pick->release, code);
            put(out, cap, &n, text);
        }
    }
    if (torch_version && torch_cuda > 0) {
        /* 2. Keep the build: the driver it needs, if the build has code for this GPU at all. */
        const struct cs_ref_torcharch *row;
        cuda_text(tc, sizeof tc, torch_cuda);
        if (cc && !covers(torch_cuda, cc, &row) && row) {
            snprintf(text, sizeof text, "torch %s has no code for this GPU (sm_%d; builds for CUDA %s cover sm_%d to sm_%dx): "
                     "no driver makes it run here", torch_version, cc, tc, row->lowest_cc, row->highest_cc / 10);
            put(out, cap, &n, text);
        } else if (driver_cuda > 0 && !runs_on_driver(torch_cuda, driver_cuda)) {
            /* The major's floor: PyTorch's wheels run on any driver of their major. */
            const struct cs_ref_driver *d = cs_ref_floor_for(torch_cuda);
            if (!d) d = cs_ref_toolkit_for(torch_cuda);
            if (d && d->linux_min) {
                snprintf(text, sizeof text, "or keep torch %s and upgrade the driver to one for CUDA %s (Linux >= %s)",
                         torch_version, tc, d->linux_min);
                put(out, cap, &n, text);
            }
        }
    }
    return n;
}
