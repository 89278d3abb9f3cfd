/* The "what would work" rule on its own: a machine (GPU, driver) and a loaded PyTorch build in,
 * the alternatives out, against the reference tables. Built and run by tests/t_26_units.sh. */
#include <stdio.h>
#include <string.h>

#include "../../shim/alternatives.h"

static int failures;

/* expect: text every alternative must hold in order ("" for none), n: how many */
static void check(const char *name, int cc, int driver, const char *torch, int torch_cuda, int want_n,
                  const char *const want[])
{
    char out[2048];
    int n = cs_what_would_work(cc, driver, torch, torch_cuda, out, sizeof out);
    int ok = n == want_n;
    const char *at = out;
    for (int i = 0; ok && want[i]; i++) {
        const char *hit = strstr(at, want[i]);
        if (!hit) ok = 0;
        else at = hit + strlen(want[i]);
    }
    printf("%s %s: %d: %s\n", ok ? "ok  " : "FAIL", name, n, out);
    failures += !ok;
}

int main(void)
{
    /* A CUDA 13 build on a GTX 1080 Ti (sm_61) with driver 535: CUDA 13 dropped Pascal. */
    check("pascal-cu130-535", 61, 12020, "2.9.0+cu130", 13000, 2,
          (const char *const[]){ "keep this driver (CUDA 12.2): torch 2.9 built for CUDA 12.6 runs here",
                                 "whl/cu126", "torch 2.9.0+cu130 has no code for this GPU (sm_61",
                                 "no driver makes it run here", NULL });
    /* The same build on an H100 with driver 535: cu128 runs by minor version compatibility. */
    check("hopper-cu130-535", 90, 12020, "2.9.0+cu130", 13000, 2,
          (const char *const[]){ "torch 2.9 built for CUDA 12.8 runs here", "whl/cu128",
                                 "or keep torch 2.9.0+cu130 and upgrade the driver to one for CUDA 13.0 (Linux >= 580.65.06)",
                                 NULL });
    /* torch 2.5.1+cu121 on a CUDA 11.8 driver: the same release's cu118, or a 12.x driver. */
    check("ampere-cu121-520", 86, 11080, "2.5.1+cu121", 12010, 2,
          (const char *const[]){ "torch 2.5 built for CUDA 11.8", "whl/cu118", "Linux >= 525.60.13", NULL });
    /* A release with no build for the driver's major: the newest release that has one. */
    check("cu128-on-11.4", 80, 11040, "2.9.0+cu128", 12080, 2,
          (const char *const[]){ "torch 2.7 built for CUDA 11.8", "torch==2.7.*", "Linux >= 525.60.13", NULL });
    /* A Blackwell GPU and a build from before Blackwell: the newest release with code for it. */
    check("blackwell-cu124-535", 120, 12020, "2.5.1+cu124", 12040, 2,
          (const char *const[]){ "torch 2.11 built for CUDA 12.8", "torch 2.5.1+cu124 has no code for this GPU (sm_120",
                                 "sm_50 to sm_9x", NULL });
    /* The GPU unknown (cuInit failed): the range is named instead. */
    check("unknown-gpu", 0, 11080, "2.5.1+cu121", 12010, 2,
          (const char *const[]){ "torch 2.5 built for CUDA 11.8 runs here (if the GPU is sm_37 or newer)", NULL });
    /* No PyTorch loaded: the newest release for this driver and GPU. */
    check("no-torch", 86, 12020, NULL, 0, 1, (const char *const[]){ "torch 2.12 built for CUDA 12.6", NULL });
    /* A Kepler GPU (sm_35) on a CUDA 11 driver: no PyTorch build in the table has code for it. */
    check("kepler-nothing", 35, 11040, NULL, 0, 0, (const char *const[]){ NULL });
    /* Nothing known of the driver: no advice about it. */
    check("driver-unknown", 86, 0, "2.9.0+cu130", 13000, 0, (const char *const[]){ NULL });
    return failures != 0;
}
