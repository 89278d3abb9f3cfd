/* What would run on this machine: a build of the loaded framework (PyTorch, TensorFlow, JAX) that
 * this driver runs on this GPU, the driver the loaded build needs, and whether NVIDIA's
 * forward-compatibility package is an option on this GPU. From the reference tables alone
 * (data/cuda-reference.txt): no I/O, nothing asked at run time; unit-tested on its own
 * (tests/unit/alternatives_test.c). */
#ifndef CS_ALTERNATIVES_H
#define CS_ALTERNATIVES_H

#include <stddef.h>

struct cs_machine {
    int cc;                        /* the GPU's compute capability (86 is 8.6); 0: unknown */
    int driver_cuda;               /* the CUDA the driver supports (12020 is 12.2); 0: unknown */
    const char *driver_version;    /* "535.104.05"; NULL: unknown */
    const char *gpu_name;          /* "NVIDIA H100 80GB HBM3"; NULL: not seen */
    const char *framework;         /* the loaded framework's wheel: "torch", "tensorflow",
                                      "jax_cuda13_plugin"...; NULL: none loaded */
    const char *framework_version; /* "2.9.0+cu130" */
    int framework_cuda;            /* the CUDA that build was made for; 0: unknown */
    int needs_cuda;                /* the CUDA the failing library needs (0: the framework's) */
};

/* Writes the alternatives, "; "-separated, each a complete instruction; returns how many (0:
 * nothing to offer from the tables). */
int cs_what_would_work(const struct cs_machine *m, char *out, size_t cap);

/* The torch releases whose wheels for this CUDA carry code for cc, as runs ("2.8 to 2.10");
 * returns how many runs. */
int cs_torch_releases_covering(int cuda, int cc, char *out, size_t cap);

/* What a GPU's marketing name says about forward compatibility (NVIDIA allows it on data centre
 * GPUs, Jetson boards and some RTX server SKUs). */
enum cs_gpu_class { CS_GPU_UNKNOWN, CS_GPU_DATACENTER, CS_GPU_JETSON, CS_GPU_WORKSTATION, CS_GPU_CONSUMER };
enum cs_gpu_class cs_gpu_class(const char *name);

#endif
