/* The rules: pure functions from evidence to findings. A rule reads the evidence it is given (the
 * loaded libraries, what the driver and the machine said, the failing call) and calls
 * cs_finding; it does no I/O, takes no lock, calls no loader function and no CUDA library.
 * Gathering the evidence is the caller's job (diagnose.c, devcode.c, launches.c, memory.c), so
 * each rule can be run on a made-up snapshot (tests/unit/rules_test.c).
 * tests/core_layers.py keeps the objects in this directory to that. */
#ifndef CS_RULES_H
#define CS_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "../base/fatbin.h"
#include "../base/json.h"
#include "../trace/findings.h"
#include "../evidence/inventory.h"

/* A CUDA version the program's runtime asked the driver for (cuGetProcAddress's cudaVersion),
 * by the object that asked: a static runtime inside a library shows up this way. */
struct cs_runtime_seen { char caller[4096]; int cuda; };

struct cs_evidence {
    const struct cs_library *libs;   /* what is loaded (inventory.c), in load order */
    int nlibs;
    int driver_version;              /* cuDriverGetVersion as the program saw it; 0: not asked */
    int device_cc;                   /* the GPU's compute capability (86); 0: unknown */
    const char *gpu_name;            /* cuDeviceGetName's answer to the program; NULL: not asked */
    const char *kernel_module;       /* the kernel module's version; NULL: not loaded or unreadable */
    const char *kernel_module_file;  /* where it was read */
    const char *cuda_visible_devices, *ld_library_path;  /* NULL: unset */
    int init_result;                 /* cuInit's first failure; 0: none */
    int no_device;                   /* 100: cuInit said so; -1: the driver counted 0 devices */
    int final;                       /* the last look, at exit: say what is known */
    int driver_lacks;                /* lookups of driver functions this driver lacks (dlsym misses, cuGetProcAddress) */
    const char *driver_lacks_first;  /* the first few of them, space-separated */
    int expect_gpu;                  /* CUDASHIM_EXPECT_GPU: a framework without CUDA is a fault */
    /* Where the loader looks for libcuda.so.1 ("LD_LIBRARY_PATH=...; ld.so.cache (no entry); ...")
     * and copies on the machine it does not search, one path a line (NULL: not looked for). */
    const char *driver_search, *driver_copies;
    /* A library not found: the object whose DT_NEEDED named it (NULL: the load asked for it
     * directly), a link by that name whose target is missing ("DIR/NAME -> TARGET"), and copies
     * elsewhere on the machine, one path a line. */
    const char *missing_requester, *missing_dangling, *missing_copies;
    const struct cs_runtime_seen *runtimes;
    int nruntimes;
    /* The machine's device nodes and the driver's companion library (present: 1). */
    int dev_nvswitchctl, dev_nvidia_uvm, dev_nvidiactl;
    int ptx_jit_beside_driver;
    char ptx_jit_path[1100];
    /* The first LD_LIBRARY_PATH entry holding a file whose name starts with prefix (a failed load
     * has unloaded what it brought, so the stale copy is found where the loader looked first). */
    int (*find_on_library_path)(const char *prefix, char *path, size_t cap, char *entry, size_t ecap);
    /* A path as the loader or a message names it, resolved to the file's real path (NULL: no way). */
    int (*real_path)(const char *path, char *out, size_t cap);
};

/* view.c: reading the evidence */
const struct cs_library *cs_ev_kind(const struct cs_evidence *e, const char *kind, int nth);
const struct cs_library *cs_ev_path(const struct cs_evidence *e, const char *path);
int cs_ev_driver_cuda(const struct cs_evidence *e);  /* the driver's CUDA version (12020), 0: unknown */
void cs_cuda_text(char *out, size_t cap, int code);  /* 12020 -> "12.2" */
void cs_ev_driver_text(const struct cs_evidence *e, char *out, size_t cap);  /* "CUDA 12.2 (libcuda 535.54.03)" */
void cs_min_driver_text(char *out, size_t cap, int cuda, int exact, const char **lin, const char **win);
struct cs_buf;
void cs_put_kv(struct cs_buf *b, const char *k, const char *v, int *first);  /* "k":"v" (null when v is) */
void cs_lines_joined(char *out, size_t cap, const char *lines);  /* one path a line -> "a, b, c" */

/* driver.c */
void cs_rule_driver_too_old(const struct cs_evidence *e);  /* every runtime and library against the driver */
void cs_rule_driver_too_old_for(const struct cs_evidence *e, const char *who, int needs, const char *how);
void cs_rule_no_gpu(const struct cs_evidence *e);
int cs_ev_entry_shadows(const struct cs_evidence *e, const char *entry);  /* shadowed.c: that entry put a library aside */
void cs_rule_no_driver(const struct cs_evidence *e, const char *api, int result);  /* a runtime call: 35 or 100, no libcuda */
void cs_rule_init_failure(const struct cs_evidence *e);  /* 803, 804 */
/* A lookup of a driver function this driver lacks, by the cudaVersion asked: 1 evidence of
 * driver-too-old (counted there), 2 within the driver's major (said below, or by a failure), 0 nothing. */
int cs_rule_procaddr_missing(const struct cs_evidence *e, const char *symbol, int cuda);
/* cs_rule_procaddr_missing's 2 (a lookup above the driver within its major): the missing-symbol
 * info line, said by the caller at exit unless a library failure took the lookup as its cause. */
void cs_rule_lookup_missing_say(const struct cs_evidence *e, const char *caller, const char *symbol, int cuda, int status);
/* Driver functions a library asked for by cudaVersion that this driver lacks, before it failed:
 * their names (space-separated, the first few), how many, the newest CUDA asked at, the driver's. */
struct cs_driver_gap { const char *functions; int count, needs, driver; };
/* libraries.c */
void cs_rule_duplicates(const struct cs_evidence *e);
void cs_rule_majors(const struct cs_evidence *e);
void cs_rule_no_cuda(const struct cs_evidence *e);
void cs_rule_shadowed(const struct cs_evidence *e);
/* Two copies of one library (one soname) compared, for library-shadowed and library-loaded-twice:
 * compatible when the copy in use is not older than the other and is built for the same CUDA
 * major (a copy's CUDA not known: the framework's stands in; 0 for unknown). why: the reason
 * when not compatible ("older than", "built for CUDA 13, the other for 12"). */
enum cs_copies { CS_COPIES_COMPATIBLE, CS_COPIES_OLDER, CS_COPIES_OTHER_MAJOR, CS_COPIES_UNKNOWN };
enum cs_copies cs_compare_copies(const char *in_use, int in_use_cuda, const char *other, int other_cuda, int framework_cuda,
                                 char *why, size_t cap);
void cs_rule_pairs(const struct cs_evidence *e);
/* loader.c: a failed lookup (the library's path as the loader has it) and a loader message */
int cs_rule_dlsym_miss(const struct cs_evidence *e, const char *library_path, const char *name);  /* 1: as above */
void cs_rule_loader_message(const struct cs_evidence *e, const char *message, int lazy_reference);
/* results.c: driver results with one usual cause */
void cs_rule_result(const struct cs_evidence *e, const char *api, int result);
/* library_status.c */
struct cs_inner_failure { const char *api, *result_name; int result; };  /* the CUDA call that failed inside */
/* inner NULL: unseen; nccl_said: NCCL's last error message (ncclGetLastError), NULL: none */
void cs_rule_nccl_cuda_failure(const char *nccl_call, const struct cs_inner_failure *inner, const char *nccl_said,
                               const struct cs_driver_gap *gap);  /* gap NULL or count 0: none */
/* NCCL's shared-memory transport refused (its message names /dev/shm, shm_open, posix_fallocate):
 * shm_total/shm_free in bytes, -1 when /dev/shm could not be read. */
void cs_rule_nccl_duplicate_gpu(const char *call, const char *status_name, const char *nccl_said);
void cs_rule_nccl_shared_memory(const char *call, const char *status_name, const char *nccl_said, long long shm_total,
                                long long shm_free);
void cs_rule_cublas_not_initialized(const char *call, const struct cs_inner_failure *inner,  /* inner NULL: unseen */
                                   const struct cs_driver_gap *gap);
void cs_rule_cudnn_cuda_failure(const char *call, const char *status_name, const struct cs_inner_failure *inner,
                                const struct cs_driver_gap *gap);
void cs_rule_cudnn_sublibraries(const struct cs_evidence *e, int status, const char *status_name, const char *call);
/* device_code.c: a module load or launch refused (209, 222, 200, 218) */
struct cs_entry;
struct cs_image_failure {
    int result;
    const char *where, *kernel, *origin;  /* "load" or the API; the kernel's name; the file the image came from */
    const struct cs_entry *entries;       /* the image's contents as parsed (fatbin.h); n 0: not seen */
    int n;
    int cc, driver;                       /* 0: unknown */
    int lazy_loading;                     /* CUDA_MODULE_LOADING is LAZY (the default since 12.2) */
    /* A kernel lookup a library made inside its own call: it may be trying kernels built for other
     * architectures and carry on without them (NCCL 2.28 asks for its sm_100 symmetric-memory
     * kernels on an sm_90 GPU). The call's line is explained, no finding raised: when the library's
     * call fails for it, the library's own rule reads the failure inside it. */
    int probe;
    /* The kernels from the same image (its file, this result) that failed in this process, this one
     * last ("addk, mulk"), and how many: one cause, said once, naming each kernel it stopped. */
    const char *kernels;
    int nkernels;
};
void cs_rule_image_failure(const struct cs_evidence *e, const struct cs_image_failure *f, char *text, size_t cap);
int cs_rule_is_image_failure(int result);  /* 209, 222, 200, 218: what cs_rule_image_failure explains */
/* kernels.c: an asynchronous error and the launches not yet covered by a synchronisation */
struct cs_async_failure {
    const char *api, *result_name;
    int result, stream_known;
    const char *suspects_text, *suspects_json;  /* "k1, k2"; ["k1","k2"] */
    int nsuspects;
    /* The display watchdog: devices with KERNEL_EXEC_TIMEOUT set (bit N: device N) among those the
     * program asked about (watchdog_asked 0: never asked); wsl: the kernel is WSL's. */
    uint64_t watchdog_devices, watchdog_asked;
    int wsl;
};
int cs_rule_is_async_error(int result);
void cs_rule_async_error(const struct cs_async_failure *f);
struct cs_kernel_fault { const char *kernel, *result_name; unsigned result, grid[3], block[3]; const void *stream; };
void cs_rule_kernel_fault(const struct cs_kernel_fault *f);
/* At exit: compute ran on devices with the display watchdog on (bit N: device N). */
void cs_rule_display_watchdog(uint64_t devices, int wsl);
/* memory.c */
struct cs_oom {
    const char *api;
    uint64_t requested, free, total, live, count;
    int have_info;
    int kind;              /* CS_OOM_DEVICE, CS_OOM_RESERVATION (address space: pools, cuMemAddressReserve), CS_OOM_PINNED (host) */
    uint64_t as_limit;     /* RLIMIT_AS in bytes; 0: unlimited */
    uint64_t memlock;      /* RLIMIT_MEMLOCK in bytes; 0: unlimited */
    int sanitizer;         /* a sanitizer's runtime is preloaded (it reserves terabytes of shadow) */
};
enum { CS_OOM_DEVICE, CS_OOM_RESERVATION, CS_OOM_PINNED };
void cs_rule_out_of_memory(const struct cs_oom *m);
/* Out of memory at a module load or kernel lookup (lazy loading loads code at first use). */
struct cs_load_oom {
    const char *api, *kernel, *origin;   /* NULL: unknown */
    int lazy;
    uint64_t live, free, total;
    int have_info;
    const char *xla_preallocate, *xla_fraction, *tf_growth;  /* the environment's; NULL: unset */
};
void cs_rule_module_load_oom(const struct cs_load_oom *m);
/* gemm.c: the GEMM census at exit (rows largest work first, as cs_gemm_snapshot gives them) */
#include "../evidence/gemm_census.h"
struct cs_gemm_evidence {
    const struct cs_gemm_row *rows;
    int n;
    int cc;                          /* the GPU's compute capability, for rows that did not see it */
    int cublaslt_version;            /* 120103 for 12.1.3; 0: unknown */
    const char *tf32_override;       /* NVIDIA_TF32_OVERRIDE; NULL: unset */
    const uint64_t *algo_flags;      /* by a row's algo (1..CS_GEMM_ALGOS): NUMERICAL_IMPL_FLAGS */
    const uint8_t *algo_known;       /* 1: that algorithm's flags were read */
    const char *(*api_name)(int api);
};
void cs_rule_gemm(const struct cs_gemm_evidence *g);
/* process.c */
void cs_rule_forked_child(const char *api, int parent_pid);
/* alternatives: "What would work here: ..." for this GPU and driver (empty: nothing to offer) */
void cs_rule_alternatives(const struct cs_evidence *e, int cc, int driver, int needs, char *out, size_t cap);

#endif
