/* The "what would work" rule on its own: a machine (GPU, driver) and a loaded framework build in,
 * the alternatives out, against the reference tables; and GPU names sorted by what
 * forward compatibility allows on them. Built and run by tests/t_26_unit.sh. */
#include <stdio.h>
#include <string.h>

#include "../../shim/base/alternatives.h"

static int failures;

/* want: texts the output must hold in this order (NULL-ended); want_n: how many alternatives;
 * never: a text it must not hold (NULL: none). */
static void check(const char *name, struct cs_machine m, int want_n, const char *const want[], const char *never)
{
    char out[2048];
    int n = cs_what_would_work(&m, out, sizeof out);
    int ok = n == want_n && (!never || !strstr(out, never));
    const char *at = out;
    for (int i = 0; ok && want[i]; i++) {
        const char *hit = strstr(at, want[i]);
        if (!hit) ok = 0;
        else at = hit + strlen(want[i]);
    }
    printf("%s %s: %d: %s\n", ok ? "ok  " : "FAIL", name, n, out);
    failures += !ok;
}

#define WANT(...) (const char *const[]){ __VA_ARGS__, NULL }

static void gpu(const char *name, enum cs_gpu_class want)
{
    enum cs_gpu_class got = cs_gpu_class(name);
    printf("%s gpu class of %s: %d\n", got == want ? "ok  " : "FAIL", name ? name : "(none)", (int)got);
    failures += got != want;
}

/* PyTorch's Linux x86-64 wheels (the torch and torcharch tables). */
static void torch_x86_64(void)
{
    /* PyTorch. A CUDA 13 build on a GTX 1080 Ti (sm_61) with driver 535: CUDA 13 dropped Pascal;
     * nothing makes that build run, so forward compatibility is not offered either. */
    check("pascal-cu130-535", (struct cs_machine){ .cc = 61, .driver_cuda = 12020, .gpu_name = "NVIDIA GeForce GTX 1080 Ti",
          .framework = "torch", .framework_version = "2.9.0+cu130", .framework_cuda = 13000 }, 2,
          WANT("keep this driver (CUDA 12.2): torch 2.9 built for CUDA 12.6 runs here", "whl/cu126",
               "torch 2.9.0+cu130 has no code for this GPU (sm_61", "no driver makes it run here"), "cuda-compat");
    /* The same build on an H100 with driver 535: cu128 runs by minor version compatibility; the
     * driver for 13.0; or forward compatibility, which an H100 allows. */
    check("hopper-cu130-535", (struct cs_machine){ .cc = 90, .driver_cuda = 12020, .driver_version = "535.104.05",
          .gpu_name = "NVIDIA H100 80GB HBM3", .framework = "torch", .framework_version = "2.9.0+cu130",
          .framework_cuda = 13000 }, 3,
          WANT("torch 2.9 built for CUDA 12.8 runs here", "whl/cu128",
               "or keep torch 2.9.0+cu130 and upgrade the driver to one for CUDA 13.0 (Linux >= 580.65.06)",
               "or keep driver 535.104.05 and install NVIDIA's forward-compatibility package cuda-compat-13-0 and put "
               "/usr/local/cuda-13.0/compat first on LD_LIBRARY_PATH (forward compatibility: allowed on the NVIDIA H100"), NULL);
    /* torch 2.5.1+cu121 on a CUDA 11.8 driver, an RTX 3090: the same release's cu118, or a 12.x
     * driver; forward compatibility is not for GeForce cards, and the rule says so. */
    check("ampere-cu121-520", (struct cs_machine){ .cc = 86, .driver_cuda = 11080, .gpu_name = "NVIDIA GeForce RTX 3090",
          .framework = "torch", .framework_version = "2.5.1+cu121", .framework_cuda = 12010 }, 3,
          WANT("torch 2.5 built for CUDA 11.8", "whl/cu118", "Linux >= 525.60.13",
               "forward compatibility (cuda-compat-12-1) is not an option: the NVIDIA GeForce RTX 3090 is not a data centre GPU"),
          NULL);
    /* A release with no build for the driver's major: the newest release that has one. */
    check("cu128-on-11.4", (struct cs_machine){ .cc = 80, .driver_cuda = 11040, .framework = "torch",
          .framework_version = "2.9.0+cu128", .framework_cuda = 12080 }, 3,
          WANT("torch 2.7 built for CUDA 11.8", "torch==2.7.*", "Linux >= 525.60.13",
               "cuda-compat-12-8", "data centre GPUs only; the GPU's name was not seen"), NULL);
    /* A Blackwell GPU and a build from before Blackwell: the newest release with code for it. */
    check("blackwell-cu124-570", (struct cs_machine){ .cc = 120, .driver_cuda = 12080, .framework = "torch",
          .framework_version = "2.5.1+cu124", .framework_cuda = 12040 }, 2,
          WANT("torch 2.11 built for CUDA 12.8", "torch 2.5.1+cu124 has no code for this GPU (sm_120", "sm_50 to sm_9x"), NULL);
    /* A V100 (sm_70) and torch 2.11's cu128 wheel on a 12.8 driver: 2.11 dropped Volta from cu128,
     * while 2.8 to 2.10's cu128 wheels carry sm_70; the newest release that runs is a cu126 one. */
    check("volta-2.11-cu128", (struct cs_machine){ .cc = 70, .driver_cuda = 12080, .gpu_name = "Tesla V100-SXM2-16GB",
          .framework = "torch", .framework_version = "2.11.0+cu128", .framework_cuda = 12080 }, 2,
          WANT("keep this driver (CUDA 12.8): torch 2.11 built for CUDA 12.6 runs here",
               "torch 2.11.0+cu128 has no code for this GPU (sm_70; its builds for CUDA 12.8 cover sm_75 to sm_12x; "
               "torch 2.8 to 2.10's builds for CUDA 12.8 do)"), NULL);
    /* torch 2.10's cu128 wheel on the same V100 runs: no "no code". */
    check("volta-2.10-cu128", (struct cs_machine){ .cc = 70, .driver_cuda = 12080, .gpu_name = "Tesla V100-SXM2-16GB",
          .framework = "torch", .framework_version = "2.10.0+cu128", .framework_cuda = 12080 }, 1,
          WANT("keep this driver (CUDA 12.8): torch 2.10 built for CUDA 12.8 runs here"), "no code");
    /* The GPU unknown (cuInit failed): the range is named instead. */
    check("unknown-gpu", (struct cs_machine){ .driver_cuda = 11080, .framework = "torch", .framework_version = "2.5.1+cu121",
          .framework_cuda = 12010 }, 3,
          WANT("torch 2.5 built for CUDA 11.8 runs here (if the GPU is sm_37 or newer)"), NULL);
}

/* PyTorch's Linux aarch64 (SBSA) wheels: fewer architectures per build (torch-aarch64,
 * torcharch-aarch64), so a machine that an x86-64 wheel serves may have no aarch64 one. */
static void torch_aarch64(void)
{
    /* A GH200 (sm_90) on driver 535 with 2.12's cu130 wheel: its cu126 wheel runs here. */
    check("gh200-cu130-535", (struct cs_machine){ .cc = 90, .driver_cuda = 12020, .driver_version = "535.261.03",
          .gpu_name = "NVIDIA GH200 480GB", .framework = "torch", .framework_version = "2.12.0+cu130",
          .framework_cuda = 13000 }, 3,
          WANT("keep this driver (CUDA 12.2): torch 2.12 built for CUDA 12.6 runs here", "whl/cu126",
               "or keep torch 2.12.0+cu130 and upgrade the driver to one for CUDA 13.0 (Linux >= 580.65.06)",
               "cuda-compat-13-0"), NULL);
    /* A T4G (sm_75, AWS g5g) with 2.12's cu126 wheel: on aarch64 it carries sm_80 and sm_90 only
     * (on x86-64 it runs there), and no aarch64 build in the tables covers sm_75. */
    check("t4g-cu126", (struct cs_machine){ .cc = 75, .driver_cuda = 12080, .gpu_name = "NVIDIA T4G",
          .framework = "torch", .framework_version = "2.12.0+cu126", .framework_cuda = 12060 }, 1,
          WANT("torch 2.12.0+cu126 has no code for this GPU (sm_75"), "runs here");
    /* DGX Spark's GB10 (sm_121) on driver 580 with 2.11's cu126 wheel: its cu130 wheel has sm_120 code,
     * which an sm_121 runs. */
    check("gb10-cu126-580", (struct cs_machine){ .cc = 121, .driver_cuda = 13000, .gpu_name = "NVIDIA GB10",
          .framework = "torch", .framework_version = "2.11.0+cu126", .framework_cuda = 12060 }, 2,
          WANT("torch 2.11 built for CUDA 13.0 runs here", "whl/cu130", "torch 2.11.0+cu126 has no code for this GPU (sm_121"),
          NULL);
}

int main(void)
{
#if defined(__aarch64__)  /* the build's own platform's tables are the ones it has */
    torch_aarch64(), (void)torch_x86_64;
#else
    torch_x86_64(), (void)torch_aarch64;
#endif
    /* No framework loaded, the CUDA 13 runtime on a 12.2 driver of an A100: forward compatibility only. */
    check("no-framework", (struct cs_machine){ .cc = 80, .driver_cuda = 12020, .driver_version = "535.54.03",
          .gpu_name = "NVIDIA A100-SXM4-80GB", .needs_cuda = 13000 }, 1,
          WANT("keep driver 535.54.03 and install NVIDIA's forward-compatibility package cuda-compat-13-0",
               "allowed on the NVIDIA A100-SXM4-80GB"), "torch");
    /* A Kepler GPU (sm_35) on a CUDA 11 driver, no framework: nothing from the tables. */
    check("kepler-nothing", (struct cs_machine){ .cc = 35, .driver_cuda = 11040 }, 0, WANT(""), NULL);
    /* Nothing known of the driver: no advice about it. */
    check("driver-unknown", (struct cs_machine){ .cc = 86, .framework = "torch", .framework_version = "2.9.0+cu130",
          .framework_cuda = 13000 }, 0, WANT(""), NULL);
    /* An RTX workstation card: forward compatibility only on NGC Server Ready SKUs. */
    check("workstation", (struct cs_machine){ .cc = 86, .driver_cuda = 12020, .gpu_name = "NVIDIA RTX A6000",
          .needs_cuda = 13000 }, 1, WANT("if the NVIDIA RTX A6000 is one of the NGC Server Ready RTX SKUs"), NULL);

    /* TensorFlow 2.15 (CUDA 12.2) on a CUDA 11.8 driver: 2.14 was the last built with CUDA 11.8. */
    check("tensorflow-2.15-on-11.8", (struct cs_machine){ .cc = 75, .driver_cuda = 11080, .gpu_name = "Tesla T4",
          .framework = "tensorflow", .framework_version = "2.15.0", .framework_cuda = 12020 }, 3,
          WANT("keep this driver (CUDA 11.8): tensorflow 2.14, built with CUDA 11.8 and cuDNN 8.7, runs here: "
               "pip install \"tensorflow==2.14.*\"",
               "or keep tensorflow 2.15.0 and upgrade the driver to one for CUDA 12.2 (Linux >= 525.60.13)",
               "cuda-compat-12-2", "allowed on the Tesla T4"), NULL);
    /* TensorFlow on a driver older than any tabled build's CUDA: no release to keep the driver with. */
    check("tensorflow-on-10.2", (struct cs_machine){ .cc = 70, .driver_cuda = 10020, .framework = "tensorflow",
          .framework_version = "2.12.0", .framework_cuda = 11080 }, 2,
          WANT("keep tensorflow 2.12.0 and upgrade the driver to one for CUDA 11.8 (Linux >= 450.80.02)", "cuda-compat-11-8"),
          "keep this driver (CUDA");
    /* JAX's CUDA 13 plugin on a CUDA 12.2 driver (L4): jax[cuda12], the driver for 13, or compat. */
    check("jax-cuda13-on-12.2", (struct cs_machine){ .cc = 89, .driver_cuda = 12020, .driver_version = "535.183.01",
          .gpu_name = "NVIDIA L4", .framework = "jax_cuda13_plugin", .framework_version = "0.7.2", .framework_cuda = 13000 }, 3,
          WANT("keep this driver (CUDA 12.2): JAX's CUDA 12 plugin runs here: pip install -U \"jax[cuda12]\"",
               "or keep jax_cuda13_plugin 0.7.2 and upgrade the driver to one for CUDA 13.0 (Linux >= 580.65.06)",
               "cuda-compat-13-0", "allowed on the NVIDIA L4"), NULL);
    /* JAX's CUDA 13 plugin on a Pascal GPU: JAX's CUDA 12 plugin still runs there. */
    check("jax-cuda13-on-pascal", (struct cs_machine){ .cc = 60, .driver_cuda = 13000, .gpu_name = "Tesla P100-PCIE-16GB",
          .framework = "jax_cuda13_plugin", .framework_version = "0.7.2", .framework_cuda = 13000 }, 2,
          WANT("JAX's CUDA 12 plugin runs here", "jax_cuda13_plugin 0.7.2 has no code for this GPU (sm_60; JAX for CUDA 13 "
               "needs sm_75 or newer)"), "cuda-compat");

    gpu("NVIDIA H100 80GB HBM3", CS_GPU_DATACENTER);
    gpu("NVIDIA A100-SXM4-40GB", CS_GPU_DATACENTER);
    gpu("NVIDIA A10G", CS_GPU_DATACENTER);
    gpu("NVIDIA L40S", CS_GPU_DATACENTER);
    gpu("NVIDIA L4", CS_GPU_DATACENTER);
    gpu("NVIDIA H20", CS_GPU_DATACENTER);
    gpu("NVIDIA GH200 480GB", CS_GPU_DATACENTER);
    gpu("Tesla V100-SXM2-16GB", CS_GPU_DATACENTER);
    gpu("NVIDIA GeForce RTX 4090", CS_GPU_CONSUMER);
    gpu("NVIDIA TITAN RTX", CS_GPU_CONSUMER);
    gpu("Quadro RTX 8000", CS_GPU_CONSUMER);
    gpu("NVIDIA RTX 6000 Ada Generation", CS_GPU_WORKSTATION);
    gpu("Orin (nvgpu)", CS_GPU_JETSON);
    gpu("NVIDIA L400X", CS_GPU_UNKNOWN);  /* no such model: not mistaken for an L4 or L40 */
    gpu(NULL, CS_GPU_UNKNOWN);
    return failures != 0;
}
