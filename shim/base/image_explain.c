/* The words for a prediction: what the image holds, what the device and driver are, why no
 * entry fits, and what to do. Used by the shim (a failing load or launch) and by inspect. */
#include <stdio.h>
#include <string.h>

#include "fatbin.h"
#include "image_explain.h"
#include "reference_data.h"

/* "SASS for sm_80, sm_86 and PTX 8.4 for compute_80" (distinct names, in order seen) */
void cs_image_contents(const struct cs_entry *e, int n, char *out, size_t cap)
{
    char sass[512] = "", ptx[512] = "";
    size_t ls = 0, lp = 0;
    for (int i = 0; i < n; i++) {
        char name[32], item[64];
        cs_entry_name(&e[i], name, sizeof name);
        if (e[i].kind == CS_ENTRY_PTX) snprintf(item, sizeof item, "PTX %u.%u for %s", e[i].ver_major, e[i].ver_minor, name);
        else snprintf(item, sizeof item, "%s", name);
        char *buf = e[i].kind == CS_ENTRY_ELF ? sass : ptx;
        size_t *l = e[i].kind == CS_ENTRY_ELF ? &ls : &lp;
        if (e[i].kind != CS_ENTRY_ELF && e[i].kind != CS_ENTRY_PTX) continue;
        if (strstr(buf, item)) continue;
        int w = snprintf(buf + *l, 512 - *l, "%s%s", *l ? ", " : "", item);
        if (w > 0 && (size_t)w < 512 - *l) *l += (size_t)w;
    }
    snprintf(out, cap, "%s%s%s%s%s", ls ? "SASS for " : "", sass, ls && lp ? " and " : "", ptx,
             !ls && !lp ? "no loadable code (only LTO-IR or unknown kinds)" : "");
}

static void device_text(unsigned cc, char *out, size_t cap)
{
    const struct cs_ref_arch *a = cs_ref_arch_for((int)cc);
    if (a) snprintf(out, cap, "sm_%u (%s, e.g. %s)", cc, a->name, a->examples);
    else snprintf(out, cap, "sm_%u", cc);
}

void cs_explain_prediction(const struct cs_entry *e, int n, unsigned cc, int driver, const struct cs_prediction *p,
                           char *out, size_t cap)
{
    char contents[1100], dev[160], name[32];
    cs_image_contents(e, n, contents, sizeof contents);
    device_text(cc, dev, sizeof dev);
    if (p->outcome == CS_RUNS_SASS || p->outcome == CS_RUNS_JIT) {
        cs_entry_name(&e[p->chosen], name, sizeof name);
        snprintf(out, cap, "runs: the driver would use %s %s", p->outcome == CS_RUNS_SASS ? "SASS" : "JIT of", name);
        return;
    }
    if (p->outcome == CS_INVALID_IMAGE) {
        snprintf(out, cap, "image has %s, compressed with zstd; a driver older than CUDA 12.4 cannot read it "
                 "(CUDA_ERROR_INVALID_IMAGE, 200): upgrade the driver to 550 or later", contents);
        return;
    }
    if (p->outcome == CS_PTX_TOO_NEW) {
        const struct cs_entry *t = &e[p->too_new_ptx];
        int need = cs_ptx_min_cuda(t->ver_major, t->ver_minor);
        const struct cs_ref_driver *r = need ? cs_ref_toolkit_for(need) : NULL;
        char needs[128];
        if (need) snprintf(needs, sizeof needs, "a driver for CUDA %d.%d or later%s%s%s", need / 1000, need % 1000 / 10,
                           r && r->linux_min ? " (Linux >= " : "", r && r->linux_min ? r->linux_min : "", r && r->linux_min ? ")" : "");
        else snprintf(needs, sizeof needs, "a driver newer than any this cudashim knows");
        snprintf(out, cap, "image has %s; the device is %s; no SASS fits, and JIT of PTX %u.%u needs %s, but this "
                 "driver is CUDA %d.%d (reads PTX up to %u.%u): upgrade the driver, or install a build with SASS "
                 "for sm_%u (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)",
                 contents, dev, t->ver_major, t->ver_minor, needs, driver / 1000, driver % 1000 / 10, p->max_ptx / 10,
                 p->max_ptx % 10, cc);
        return;
    }
    /* 209: explain which rule shuts each kind of entry out. */
    const struct cs_ref_arch *a = cs_ref_arch_for((int)cc);
    char advice[256];
    if (a && a->first_cuda && a->last_major)
        /* CUDA 13 cannot target Pascal: "made with CUDA 8.0 or later" would send a user to a build
         * that cannot exist. */
        snprintf(advice, sizeof advice,
                 "install a build that includes sm_%u, made with CUDA %d.%d to %d.x (CUDA %d and later cannot target "
                 "it)", cc, a->first_cuda / 1000, a->first_cuda % 1000 / 10, a->last_major, a->last_major + 1);
    else if (a && a->last_major)
        snprintf(advice, sizeof advice, "install a build that includes sm_%u, made with CUDA %d.x or earlier (CUDA %d "
                 "and later cannot target it)", cc, a->last_major, a->last_major + 1);
    else if (a && a->first_cuda)
        snprintf(advice, sizeof advice, "install a build that includes sm_%u (made with CUDA %d.%d or later)", cc,
                 a->first_cuda / 1000, a->first_cuda % 1000 / 10);
    else
        snprintf(advice, sizeof advice, "install a build that includes sm_%u, or PTX for a compute capability <= %u.%u",
                 cc, cc / 10, cc % 10);
    int lower_sass = 0, higher = 0, specific = 0;
    for (int i = 0; i < n; i++) {
        if (e[i].suffix == 'a' && e[i].arch != cc) specific = 1;
        if (e[i].arch > cc) higher = 1;
        if (e[i].kind == CS_ENTRY_ELF && e[i].arch < cc) lower_sass = 1;
    }
    char why[400];
    snprintf(why, sizeof why, "%s%s%s",
             lower_sass ? "SASS runs only on its own major (and higher minors of it); " : "",
             higher ? "code for a newer architecture never runs on an older one; " : "",
             specific ? "sm_XXa/compute_XXa code runs only on exactly that architecture; " : "");
    snprintf(out, cap, "image has %s; the device is %s; %sno PTX can be JIT-compiled for it "
             "(CUDA_ERROR_NO_BINARY_FOR_GPU, 209): %s",
             contents, dev, why, advice);
}
