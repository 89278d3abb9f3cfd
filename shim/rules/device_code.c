/* A module load or a launch the driver refused for its device code: no image for this GPU (209),
 * PTX newer than the driver reads (222), an image it cannot use (200, 218). Says what the image
 * holds against the GPU and the driver (image_explain.c), and what would run. */
#include <stdio.h>
#include <string.h>

#include "../base/fatbin.h"
#include "../base/image_explain.h"
#include "../base/json.h"
#include "../trace/findings.h"
#include "rules.h"
#include "../../wrappers/gen/results.h"

int cs_rule_is_image_failure(int r)
{
    return r == CS_CUDA_ERROR_NO_BINARY_FOR_GPU || r == CS_CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
           r == CS_CUDA_ERROR_INVALID_IMAGE || r == CS_CUDA_ERROR_INVALID_PTX;
}

/* text: the diagnosis in one line, for the failing call's own trace line. */
void cs_rule_image_failure(const struct cs_evidence *e, const struct cs_image_failure *f, char *text, size_t cap)
{
    text[0] = 0;
    int result = f->result, cc = f->cc, drv = f->driver, n = f->n;
    if (!cs_rule_is_image_failure(result)) return;
    const struct cs_entry *en = f->entries;
    char summary[3072], ev[2048], key[64];
    if (n && cc) {
        struct cs_prediction p;
        cs_predict(en, n, (unsigned)cc, drv ? drv : 99000, &p);
        cs_explain_prediction(en, n, (unsigned)cc, drv ? drv : 99000, &p, text, cap);
    } else if (n) {
        char c[1200];
        cs_image_contents(en, n, c, sizeof c);
        snprintf(text, cap, "image has %s; the device's compute capability is unknown", c);
    } else {
        snprintf(text, cap, "the image was not seen by the shim (loaded before it, or in a form it does not "
                 "read); `cudashim inspect --device sm_%d` on the library that holds the kernel says what it contains", cc);
    }
    const char *lazy = f->lazy_loading ? "; with lazy loading (the default since CUDA 12.2) the failure shows at the "
                                         "kernel's first use, not when the library was loaded" : "";
    char from[300] = "";
    if (f->origin && *f->origin) snprintf(from, sizeof from, " from %s", f->origin);
    int many = f->kernels && f->nkernels > 1;
    snprintf(summary, sizeof summary, "found %s%s%s failing with %d at %s: %s%s",
             many ? "kernels " : f->kernel ? "kernel " : "",
             many ? f->kernels : f->kernel ? f->kernel : "a device-code image", from, result, f->where, text,
             strcmp(f->where, "load") ? lazy : "");
    char fix209[2048], alternatives[1600] = "";
    if (result == CS_CUDA_ERROR_NO_BINARY_FOR_GPU) cs_rule_alternatives(e, cc, drv, 0, alternatives, sizeof alternatives);
    snprintf(fix209, sizeof fix209, "Install a build of the framework or extension that includes this GPU's architecture "
             "(or PTX it can JIT), or run on a GPU the build supports.%s%s", alternatives[0] ? " " : "", alternatives);
    const char *fix = result == CS_CUDA_ERROR_NO_BINARY_FOR_GPU ? fix209
                    : result == CS_CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                        ? "Upgrade the driver to one that reads this PTX version, or use a build with SASS for "
                          "this GPU (or PTX from an older toolkit)."
                        : "Upgrade the driver (compressed images need CUDA 12.4 or later), or rebuild the image.";
    struct cs_buf b = { ev, 0, sizeof ev - 1 };
    cs_put(&b, "{\"where\":"); cs_put_str(&b, f->where);
    cs_put(&b, ",\"result\":"); cs_put_i64(&b, result);
    cs_put(&b, ",\"kernel\":"); if (f->kernel) cs_put_str(&b, f->kernel); else cs_put(&b, "null");
    cs_put(&b, ",\"device_cc\":"); cs_put_i64(&b, cc);
    cs_put(&b, ",\"driver_cuda\":"); cs_put_i64(&b, drv);
    char contents[1200];
    cs_image_contents(en, n, contents, sizeof contents);
    cs_put(&b, ",\"image\":"); cs_put_str(&b, n ? contents : "unknown");
    cs_put(&b, ",\"image_from\":"); if (f->origin && *f->origin) cs_put_str(&b, f->origin); else cs_put(&b, "null");
    if (many) { cs_put(&b, ",\"kernels\":"); cs_put_str(&b, f->kernels); }
    if (alternatives[0]) { cs_put(&b, ",\"alternatives\":"); cs_put_str(&b, alternatives); }
    cs_put(&b, "}");
    ev[b.len] = 0;
    /* One finding per image (its file) and result, said again whole as more kernels fail from it;
     * per kernel when the image's file is not known. */
    snprintf(key, sizeof key, "%d:%s", result, f->origin && *f->origin ? f->origin : f->kernel ? f->kernel : f->where);
    enum cs_finding_id id = result == CS_CUDA_ERROR_NO_BINARY_FOR_GPU ? CS_F_NO_KERNEL_IMAGE
                          : result == CS_CUDA_ERROR_UNSUPPORTED_PTX_VERSION ? CS_F_PTX_TOO_NEW : CS_F_IMAGE_REJECTED;
    if (!f->probe) cs_finding(id, CS_ERROR, key, summary, fix, ev);
}
