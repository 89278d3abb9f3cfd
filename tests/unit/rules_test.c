/* The rules on their own: a made-up snapshot of evidence in, the findings out. Every finding id
 * in shim/trace/findings_table.h has a case here that raises it, and the healthy stacks and the
 * near misses raise nothing. Linked with shim/rules/ and the pure helpers only (t_26_unit.sh):
 * cs_finding below stands in for the findings writer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../shim/base/fatbin.h"
#include "../../shim/base/gemm_math.h"
#include "../../shim/rules/rules.h"

/* --- the findings sink ------------------------------------------------------------------- */

#define MAX_GOT 16
static struct got { enum cs_finding_id f; enum cs_severity sev; char key[256], summary[4096], fix[4096], ev[4096]; } got[MAX_GOT];
static int ngot, failures, raised[CS_F_COUNT];

void cs_finding(enum cs_finding_id f, enum cs_severity sev, const char *key, const char *summary, const char *fix,
                const char *evidence_json)
{
    if (ngot == MAX_GOT) return;
    struct got *g = &got[ngot++];
    g->f = f, g->sev = sev;
    snprintf(g->key, sizeof g->key, "%s", key ? key : "");
    snprintf(g->summary, sizeof g->summary, "%s", summary);
    snprintf(g->fix, sizeof g->fix, "%s", fix);
    snprintf(g->ev, sizeof g->ev, "%s", evidence_json ? evidence_json : "");
}

static const char *const sev_name[] = { "info", "warning", "error" };

/* The case raised exactly this one finding, with this severity, and every text in `says`
 * (NULL-ended) appears in its summary, fix or evidence. */
static void expect(const char *name, enum cs_finding_id f, enum cs_severity sev, const char *const says[])
{
    int ok = ngot == 1 && got[0].f == f && got[0].sev == sev;
    const char *missing = NULL;
    for (int i = 0; ok && says && says[i]; i++)
        if (!strstr(got[0].summary, says[i]) && !strstr(got[0].fix, says[i]) && !strstr(got[0].ev, says[i]))
            ok = 0, missing = says[i];
    if (ok) raised[f] = 1;
    printf("%s %s: %s", ok ? "ok  " : "FAIL", name, ngot ? cs_finding_rows[got[0].f].id : "(nothing)");
    if (ngot) printf(" %s", sev_name[got[0].sev]);
    if (ngot > 1) printf(" and %d more", ngot - 1);
    if (missing) printf("; does not say \"%s\"", missing);
    printf("\n");
    if (!ok && ngot) printf("     summary: %s\n     fix: %s\n", got[0].summary, got[0].fix);
    failures += !ok;
    ngot = 0;
}

static void expect_nothing(const char *name)
{
    printf("%s %s: %s%s\n", ngot ? "FAIL" : "ok  ", name, ngot ? "raised " : "nothing raised",
           ngot ? cs_finding_rows[got[0].f].id : "");
    if (ngot) printf("     summary: %s\n", got[0].summary);
    failures += ngot != 0;
    ngot = 0;
}

#define SAYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* --- evidence ------------------------------------------------------------------------------ */

static struct cs_library libs[16];
static struct cs_evidence ev;

static void reset(void)
{
    memset(libs, 0, sizeof libs);
    memset(&ev, 0, sizeof ev);
    ev.libs = libs;
    ev.kernel_module_file = "/proc/driver/nvidia/version";
    ngot = 0;
}

/* A loaded library: kind, path, the version as its API reports it, its file's version. */
static struct cs_library *lib(const char *kind, const char *path, const char *version, long code, const char *via)
{
    struct cs_library *l = &libs[ev.nlibs++];
    snprintf(l->kind, sizeof l->kind, "%s", kind);
    snprintf(l->path, sizeof l->path, "%s", path);
    snprintf(l->name_path, sizeof l->name_path, "%s", path);
    const char *base = strrchr(path, '/');
    snprintf(l->name, sizeof l->name, "%s", base ? base + 1 : path);
    snprintf(l->soname, sizeof l->soname, "%s", base ? base + 1 : path);
    snprintf(l->version, sizeof l->version, "%s", version ? version : "");
    snprintf(l->found_via, sizeof l->found_via, "%s", via ? via : "RUNPATH");
    l->code = code;
    return l;
}

static void driver_535(void)
{
    struct cs_library *d = lib("driver", "/usr/lib/x86_64-linux-gnu/libcuda.so.535.54.03", NULL, 12020, "ld.so.cache");
    snprintf(d->file_version, sizeof d->file_version, "535.54.03");
    ev.driver_version = 12020;
    ev.kernel_module = "535.54.03";
}

static struct cs_library *torch(const char *version, int built_for)
{
    struct cs_library *t = lib("framework", "/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", version, 0,
                               "dlopen by path");
    snprintf(t->version_api, sizeof t->version_api, "%s (torch)", version);
    t->built_for_cuda = built_for;
    return t;
}

/* A healthy CUDA 12 stack on driver 535: PyTorch's wheel with its own runtime, cuBLAS and cuDNN. */
static void healthy_cu121(void)
{
    driver_535();
    torch("2.5.1+cu121", 12010);
    lib("cudart", "/venv/nvidia/cuda_runtime/lib/libcudart.so.12", "12.1.105", 12010, NULL);
    lib("cublas", "/venv/nvidia/cublas/lib/libcublas.so.12", "12.1.3.1", 12010, NULL);
    lib("cublasLt", "/venv/nvidia/cublas/lib/libcublasLt.so.12", "12.1.3.1", 12010, NULL);
    struct cs_library *dnn = lib("cudnn", "/venv/nvidia/cudnn/lib/libcudnn.so.9", "9.1.0", 90100, NULL);
    dnn->built_for_cuda = 12020;
    lib("cudnn-sublibrary", "/venv/nvidia/cudnn/lib/libcudnn_ops.so.9", "9.1.0", 90100, NULL);
    lib("nccl", "/venv/nvidia/nccl/lib/libnccl.so.2", "2.21.5", 22105, NULL);
}

static void library_rules(void)
{
    cs_rule_no_gpu(&ev);
    cs_rule_init_failure(&ev);
    cs_rule_duplicates(&ev);
    cs_rule_majors(&ev);
    cs_rule_driver_too_old(&ev);
    cs_rule_shadowed(&ev);
    cs_rule_pairs(&ev);
    cs_rule_no_cuda(&ev);
}

static int fake_find(const char *prefix, char *path, size_t cap, char *entry, size_t ecap)
{
    if (strcmp(prefix, "libcublasLt.so.12")) return 0;
    snprintf(path, cap, "/opt/cuda-12.0/lib64/libcublasLt.so.12");
    snprintf(entry, ecap, "/opt/cuda-12.0/lib64");
    return 1;
}

/* --- GEMM census rows ------------------------------------------------------------------------ */

static struct cs_gemm_row grows[8];
static int ngrows;
static uint64_t gflags[CS_GEMM_ALGOS + 1];
static uint8_t gknown[CS_GEMM_ALGOS + 1];

static struct cs_gemm_row *grow(unsigned at, unsigned compute, unsigned math, unsigned trans, int64_t m, int64_t n,
                                int64_t k, uint64_t count, uint64_t failed, int cc)
{
    struct cs_gemm_row *r = &grows[ngrows++];
    *r = (struct cs_gemm_row){ .count = count, .failed = failed };
    r->key.atype = r->key.btype = r->key.ctype = (uint8_t)at;
    r->key.compute = (uint8_t)compute, r->key.math = (uint8_t)math, r->key.trans = (uint8_t)trans;
    r->key.m = m, r->key.n = n, r->key.k = k, r->key.batch = 1, r->key.cc = (uint8_t)cc, r->key.aligned = 1;
    r->flops = (double)count * 2.0 * (double)m * (double)n * (double)k;
    return r;
}

static void gemm_rules(int cublaslt, const char *tf32_override)
{
    /* largest work first, as the census gives them */
    for (int i = 0; i < ngrows; i++)
        for (int j = i + 1; j < ngrows; j++)
            if (grows[j].flops > grows[i].flops) {
                struct cs_gemm_row t = grows[i];
                grows[i] = grows[j], grows[j] = t;
            }
    struct cs_gemm_evidence g = { grows, ngrows, 0, cublaslt, tf32_override, gflags, gknown, NULL };
    cs_rule_gemm(&g);
    ngrows = 0;
    memset(gknown, 0, sizeof gknown);
}

int main(void)
{
    /* Healthy stacks and near misses: nothing. */
    reset(), healthy_cu121(), library_rules();
    expect_nothing("healthy CUDA 12.1 stack on driver 535");
    reset(), healthy_cu121();
    ev.final = 1, ev.expect_gpu = 1;
    library_rules();
    expect_nothing("the same at exit, a GPU expected");
    reset(), driver_535();
    lib("cudart", "/usr/local/cuda/lib64/libcudart.so.12", "12.8.90", 12080, "LD_LIBRARY_PATH entry /usr/local/cuda/lib64");
    library_rules();
    expect_nothing("a CUDA 12.8 runtime on a CUDA 12.2 driver (minor-version compatibility)");
    reset(), torch("2.5.1+cpu", 0), library_rules();
    expect_nothing("a CPU-only framework when no GPU is expected");

    /* driver-too-old */
    reset(), driver_535(), torch("2.9.0+cu130", 0);
    lib("cudart", "/venv/nvidia/cuda_runtime/lib/libcudart.so.13", "13.0.48", 13000, NULL);
    cs_rule_driver_too_old(&ev);
    expect("a CUDA 13 runtime on a CUDA 12.2 driver", CS_F_DRIVER_TOO_OLD, CS_ERROR,
           SAYS("libcudart.so.13", "580.65.06", "535.54.03", "What would work here", "/whl/cu12"));
    /* The GPU the program named decides whether forward compatibility is offered. */
    reset(), driver_535();
    ev.gpu_name = "NVIDIA H100 80GB HBM3";
    lib("cudart", "/usr/local/cuda-13.0/lib64/libcudart.so.13", "13.0.48", 13000, NULL);
    cs_rule_driver_too_old(&ev);
    expect("a CUDA 13 runtime on an H100 with a CUDA 12.2 driver", CS_F_DRIVER_TOO_OLD, CS_ERROR,
           SAYS("keep driver 535.54.03 and install NVIDIA's forward-compatibility package cuda-compat-13-0",
                "allowed on the NVIDIA H100 80GB HBM3"));
    reset(), driver_535();
    ev.gpu_name = "NVIDIA GeForce RTX 3090";
    lib("cudart", "/usr/local/cuda-13.0/lib64/libcudart.so.13", "13.0.48", 13000, NULL);
    cs_rule_driver_too_old(&ev);
    expect("a CUDA 13 runtime on a GeForce with a CUDA 12.2 driver", CS_F_DRIVER_TOO_OLD, CS_ERROR,
           SAYS("forward compatibility (cuda-compat-13-0) is not an option: the NVIDIA GeForce RTX 3090 is not a data centre GPU"));
    reset(), driver_535();
    struct cs_runtime_seen rt = { "/venv/lib/libnccl.so.2", 13000 };
    ev.runtimes = &rt, ev.nruntimes = 1;
    cs_rule_driver_too_old(&ev);
    expect("a static CUDA 13 runtime inside NCCL", CS_F_DRIVER_TOO_OLD, CS_ERROR, SAYS("libnccl.so.2", "cuGetProcAddress"));
    /* only cuDNN too new (a toolkit's CUDA 13 build first on the path), torch's own CUDA 12 fine:
     * the fix is cuDNN's CUDA 12 build, not another torch */
    reset(), healthy_cu121();
    libs[5].built_for_cuda = 13010;
    snprintf(libs[5].built_for_how, sizeof libs[5].built_for_how, "its GPU code (PTX 9.1) in libcudnn_ops.so.9");
    snprintf(libs[5].found_via, sizeof libs[5].found_via, "LD_LIBRARY_PATH entry /usr/local/cuda-13.1/lib64");
    cs_rule_driver_too_old(&ev);
    expect("a CUDA 13 cuDNN under a CUDA 12 torch on a CUDA 12.2 driver", CS_F_DRIVER_TOO_OLD, CS_ERROR,
           SAYS("libcudnn.so.9 (CUDA 13.1)", "Use the builds of libcudnn.so.9 (CUDA 13.1) for CUDA 12",
                "pip install nvidia-cudnn-cu12", "take /usr/local/cuda-13.1/lib64, which brought them, off LD_LIBRARY_PATH"));
    /* the same with torch itself built for CUDA 13: torch is what changes, not cuDNN alone */
    reset(), healthy_cu121();
    libs[1].built_for_cuda = 13000, libs[5].built_for_cuda = 13000;
    cs_rule_driver_too_old(&ev);
    if (ngot && strstr(got[0].fix, "Use the builds of")) printf("FAIL a CUDA 13 torch: the fix names cuDNN alone\n"), failures++;
    expect("a CUDA 13 torch and cuDNN on a CUDA 12.2 driver", CS_F_DRIVER_TOO_OLD, CS_ERROR, SAYS("Upgrade the NVIDIA driver"));
    reset();
    ev.driver_version = 12020;
    lib("cudart", "/x/libcudart.so.13", "13.0", 13000, NULL);
    cs_rule_driver_too_old(&ev);
    expect_nothing("before the driver's file is named (the next scan says it)");

    /* driver-kernel-mismatch, compat-unsupported-gpu */
    reset(), driver_535();
    ev.kernel_module = "550.54.14", ev.init_result = 803;
    cs_rule_init_failure(&ev);
    expect("cuInit 803: libcuda 535 with kernel module 550", CS_F_DRIVER_KERNEL_MISMATCH, CS_ERROR,
           SAYS("550.54.14", "535.54.03", "reboot"));
    reset(), driver_535();
    ev.kernel_module = "550.54.14", ev.init_result = 999;
    cs_rule_init_failure(&ev);
    expect("cuInit 999 with a module that differs", CS_F_DRIVER_KERNEL_MISMATCH, CS_ERROR, SAYS("550.54.14"));
    reset(), driver_535();
    libs[0].compat = 1, ev.init_result = 804;
    cs_rule_init_failure(&ev);
    expect("cuInit 804: cuda-compat on a GPU without forward compatibility", CS_F_COMPAT_UNSUPPORTED_GPU, CS_ERROR,
           SAYS("forward-compatibility", "host driver"));

    /* no-gpu-visible */
    reset(), driver_535();
    ev.no_device = 100, ev.cuda_visible_devices = "";
    cs_rule_no_gpu(&ev);
    expect("cuInit 100 with CUDA_VISIBLE_DEVICES empty", CS_F_NO_GPU_VISIBLE, CS_ERROR,
           SAYS("CUDA_VISIBLE_DEVICES hides every GPU", "Unset CUDA_VISIBLE_DEVICES"));
    reset(), driver_535();
    ev.no_device = -1, ev.kernel_module = NULL;
    cs_rule_no_gpu(&ev);
    expect("0 devices and no kernel module", CS_F_NO_GPU_VISIBLE, CS_ERROR, SAYS("kernel module is not loaded", "modprobe"));

    /* library-loaded-twice */
    reset(), healthy_cu121();
    lib("cudnn", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "9.8.0", 90800, "LD_LIBRARY_PATH entry /usr/lib/x86_64-linux-gnu");
    cs_rule_duplicates(&ev);
    expect("two copies of libcudnn.so.9, the first older", CS_F_LIBRARY_LOADED_TWICE, CS_ERROR,
           SAYS("9.1.0 is older than the 9.8.0", "Remove /usr/lib/x86_64-linux-gnu from LD_LIBRARY_PATH"));
    reset(), healthy_cu121();
    lib("cudnn", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "9.1.0", 90100, "LD_LIBRARY_PATH entry /usr/lib/x86_64-linux-gnu");
    cs_rule_duplicates(&ev);
    expect("two copies of libcudnn.so.9 of one version and CUDA major", CS_F_LIBRARY_LOADED_TWICE, CS_WARNING,
           SAYS("Remove /usr/lib/x86_64-linux-gnu from LD_LIBRARY_PATH"));
    reset(), healthy_cu121();
    struct cs_library *ext = lib("cudart", "/usr/local/cuda-11.8/lib64/libcudart.so.11.0", "11.8.89", 11080,
                                 "LD_LIBRARY_PATH entry /usr/local/cuda-11.8/lib64");
    snprintf(ext->requested_by, sizeof ext->requested_by, "/venv/lib/python3.11/site-packages/myext/_C.so");
    snprintf(libs[2].requested_by, sizeof libs[2].requested_by, "%s", libs[1].path);
    cs_rule_duplicates(&ev);
    expect("an extension's CUDA 11 runtime beside the framework's CUDA 12 one", CS_F_LIBRARY_LOADED_TWICE, CS_WARNING,
           SAYS("Rebuild _C.so", "fail to load"));

    /* library-cuda-major-mismatch */
    reset(), driver_535();
    lib("cudart", "/venv/nvidia/cuda_runtime/lib/libcudart.so.12", "12.1.105", 12010, NULL);
    lib("cublas", "/usr/local/cuda-11.8/lib64/libcublas.so.11", "11.11.3.6", 11080, "LD_LIBRARY_PATH entry /usr/local/cuda-11.8/lib64");
    cs_rule_majors(&ev);
    expect("cuBLAS for CUDA 11 with a CUDA 12 runtime", CS_F_LIBRARY_CUDA_MAJOR_MISMATCH, CS_WARNING, SAYS("-cu12"));

    /* library-shadowed */
    reset(), healthy_cu121();
    struct cs_library *sh = &libs[5];
    snprintf(sh->found_via, sizeof sh->found_via, "LD_LIBRARY_PATH entry /usr/lib/x86_64-linux-gnu");
    snprintf(sh->shadowed_copy, sizeof sh->shadowed_copy, "/venv/nvidia/cudnn/lib/libcudnn.so.9");
    snprintf(sh->shadowed_for, sizeof sh->shadowed_for, "%s", libs[1].path);
    snprintf(sh->shadowed_version, sizeof sh->shadowed_version, "9.5.1");
    cs_rule_shadowed(&ev);
    expect("a system cuDNN 9.1 on LD_LIBRARY_PATH before the wheel's 9.5.1", CS_F_LIBRARY_SHADOWED, CS_WARNING,
           SAYS("Remove /usr/lib/x86_64-linux-gnu from LD_LIBRARY_PATH", "libtorch_cuda.so",
                "9.1.0 is older than the 9.5.1 it put aside"));
    /* severity by compatibility: a newer cuDNN for the same CUDA major, put first on purpose */
    reset(), healthy_cu121();
    sh = &libs[5];
    snprintf(sh->found_via, sizeof sh->found_via, "LD_LIBRARY_PATH entry /opt/cudnn-9.1/lib");
    snprintf(sh->shadowed_copy, sizeof sh->shadowed_copy, "/venv/nvidia/cudnn/lib/libcudnn.so.9");
    snprintf(sh->shadowed_for, sizeof sh->shadowed_for, "%s", libs[1].path);
    snprintf(sh->shadowed_version, sizeof sh->shadowed_version, "9.0.0");
    sh->shadowed_built_for = 12020;
    cs_rule_shadowed(&ev);
    expect("a newer cuDNN of the same CUDA major first on purpose", CS_F_LIBRARY_SHADOWED, CS_INFO,
           SAYS("libcudnn.so.9 9.1.0", "instead of /venv/nvidia/cudnn/lib/libcudnn.so.9, 9.0.0", "not older and built for "
                "the same CUDA major", "Nothing to do if that is on purpose"));
    /* the same newer copy, built for CUDA 13 where the framework's is for 12 */
    reset(), healthy_cu121();
    sh = &libs[5];
    snprintf(sh->found_via, sizeof sh->found_via, "LD_LIBRARY_PATH entry /usr/local/cuda-13.0/lib64");
    snprintf(sh->shadowed_copy, sizeof sh->shadowed_copy, "/venv/nvidia/cudnn/lib/libcudnn.so.9");
    snprintf(sh->shadowed_for, sizeof sh->shadowed_for, "%s", libs[1].path);
    snprintf(sh->shadowed_version, sizeof sh->shadowed_version, "9.0.0");
    sh->built_for_cuda = 13000;
    cs_rule_shadowed(&ev);
    expect("a newer cuDNN for another CUDA major", CS_F_LIBRARY_SHADOWED, CS_WARNING,
           SAYS("built for CUDA 13 where the other copy is for CUDA 12", "Remove /usr/local/cuda-13.0/lib64"));
    /* the other copy's CUDA not known: the framework's stands in */
    sh->shadowed_built_for = 0, ngot = 0;
    cs_rule_shadowed(&ev);
    expect("a cuDNN for CUDA 13 over one of unknown CUDA, torch for 12.1", CS_F_LIBRARY_SHADOWED, CS_WARNING,
           SAYS("built for CUDA 13 where the other copy is for CUDA 12"));

    /* library-set-mismatch */
    reset(), healthy_cu121();
    snprintf(libs[4].version, sizeof libs[4].version, "12.4.5.8");
    snprintf(libs[4].found_via, sizeof libs[4].found_via, "LD_LIBRARY_PATH entry /usr/local/cuda-12.4/lib64");
    cs_rule_pairs(&ev);
    expect("cuBLAS 12.1 with cuBLASLt 12.4", CS_F_LIBRARY_SET_MISMATCH, CS_ERROR,
           SAYS("Remove /usr/local/cuda-12.4/lib64 from LD_LIBRARY_PATH"));

    /* no-cuda-loaded */
    reset(), torch("2.5.1+cpu", 0);
    ev.expect_gpu = 1;
    cs_rule_no_cuda(&ev);
    expect("a CPU-only PyTorch where a GPU is expected", CS_F_NO_CUDA_LOADED, CS_ERROR, SAYS("CPU-only"));

    /* missing-symbol: lookups by version, failed lookups, loader messages */
    reset(), driver_535();
    if (cs_rule_procaddr_missing(&ev, "cuKernelGetName", 13000) != 1)
        printf("FAIL a CUDA 13 runtime's lookup on a 12.2 driver is not counted as driver-too-old's evidence\n"), failures++;
    expect_nothing("a CUDA 13 runtime asking a 12.2 driver for a function (driver-too-old's evidence)");
    /* library-not-found: the objects that needed it, a dangling link, copies elsewhere */
    reset();
    ev.missing_requester = "/usr/lib/x86_64-linux-gnu/libtorch_python.so.2.6, /usr/lib/x86_64-linux-gnu/libtorch_cuda.so.2.6";
    ev.missing_dangling = "/lib/x86_64-linux-gnu/libcudnn.so.9 -> libcudnn.so.9.0.0";
    ev.missing_copies = "/usr/local/cuda-13.0/lib64/libcudnn.so.9";
    cs_rule_loader_message(&ev, "libcudnn.so.9: cannot open shared object file: No such file or directory", 0);
    expect("Debian's cuDNN link with nothing behind it, needed by torch", CS_F_LIBRARY_NOT_FOUND, CS_ERROR,
           SAYS("libtorch_python.so.2.6 and libtorch_cuda.so.2.6 needing libcudnn.so.9",
                "libcudnn.so.9 -> libcudnn.so.9.0.0", "/usr/local/cuda-13.0/lib64/libcudnn.so.9", "nvidia-cudnn"));
    reset();
    ev.missing_copies = "/opt/conda/lib/libcudnn.so.9";
    cs_rule_loader_message(&ev, "libcudnn.so.9: cannot open shared object file: No such file or directory", 0);
    expect("a direct load of a missing cuDNN, a copy elsewhere", CS_F_LIBRARY_NOT_FOUND, CS_WARNING,
           SAYS("/opt/conda/lib/libcudnn.so.9"));
    /* no-driver: the runtime could not load libcuda.so.1 */
    reset();
    lib("cudart", "/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127", "12.4", 12040, "system directory");
    ev.driver_search = "LD_LIBRARY_PATH=(unset); ld.so.cache (no libcuda.so.1); /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu";
    ev.driver_copies = "/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1";
    cs_rule_no_driver(&ev, "cudaGetDeviceCount", 35);
    expect("Debian's driver without its alternatives link", CS_F_NO_DRIVER, CS_ERROR,
           SAYS("cudaGetDeviceCount -> 35", "libcudart.so.12.4.127", "ld.so.cache (no libcuda.so.1)",
                "ln -s nvidia/current/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1", "kernel module is not loaded"));
    reset();
    lib("cudart", "/venv/nvidia/cuda_runtime/lib/libcudart.so.12", "12.4", 12040, NULL);
    ev.driver_search = "LD_LIBRARY_PATH=(unset)";
    ev.kernel_module = "550.54.14";
    cs_rule_no_driver(&ev, "cudaGetDeviceCount", 35);
    expect("a kernel module without its user-space driver", CS_F_NO_DRIVER, CS_ERROR,
           SAYS("no copy of libcuda.so.1", "550.54.14 is loaded but its user-space library is missing"));
    reset();
    lib("cudart", "/venv/nvidia/cuda_runtime/lib/libcudart.so.12", "12.4", 12040, NULL);
    ev.driver_copies = "/usr/local/nvidia/lib64/libcuda.so.1";
    cs_rule_no_driver(&ev, "cudaGetDeviceCount", 35);
    expect("a GPU container's mounted driver off the path", CS_F_NO_DRIVER, CS_ERROR,
           SAYS("add /usr/local/nvidia/lib64 to LD_LIBRARY_PATH"));
    reset(), driver_535();
    cs_rule_no_driver(&ev, "cudaGetDeviceCount", 35);
    expect_nothing("a runtime failing with 35 while a driver is loaded (driver-too-old's case)");
    /* driver-too-old: one cause, every library that needs a newer driver in one finding */
    reset(), driver_535();
    ev.driver_lacks = 3, ev.driver_lacks_first = "cuKernelGetName cuLibraryLoadData", ev.final = 1;
    lib("cudart", "/venv/lib/libcudart.so.13", "13.0", 13000, "RUNPATH");
    cs_rule_driver_too_old_for(&ev, "/venv/nvidia/cudnn/lib/libcudnn.so.9", 13010, "cudnnGetCudartVersion");
    expect("two libraries too new for a 12.2 driver, said as one cause", CS_F_DRIVER_TOO_OLD, CS_ERROR,
           SAYS("2 libraries", "libcudart.so.13 (CUDA 13.0)", "libcudnn.so.9 (CUDA 13.1)", "580.65.06",
                "3 lookups of driver functions this driver lacks", "cuKernelGetName"));
    reset(), driver_535();
    if (cs_rule_procaddr_missing(&ev, "cuGraphAddNode", 12040) == 2)
        cs_rule_lookup_missing_say(&ev, "/venv/lib/libcudart.so.12", "cuGraphAddNode", 12040, 1);
    expect("a 12.4 runtime probing a 12.2 driver", CS_F_MISSING_SYMBOL, CS_INFO, SAYS("cuGraphAddNode"));
    reset(), healthy_cu121();
    cs_rule_dlsym_miss(&ev, "/venv/nvidia/cudnn/lib/libcudnn.so.9", "cudnnGetLastErrorString");
    expect("a lookup cuDNN 9.1 cannot answer", CS_F_MISSING_SYMBOL, CS_WARNING, SAYS("cudnnGetLastErrorString", "newer cudnn"));
    reset(), healthy_cu121();
    cs_rule_dlsym_miss(&ev, "/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", "foo");
    expect_nothing("a lookup in the framework itself");
    reset(), healthy_cu121();
    ev.find_on_library_path = fake_find;
    cs_rule_loader_message(&ev, "/venv/nvidia/cublas/lib/libcublas.so.12: undefined symbol: cublasLtGetVersionX, "
                                "version libcublasLt.so.12", 0);
    expect("libcublas needing a symbol the loaded cuBLASLt lacks", CS_F_MISSING_SYMBOL, CS_ERROR,
           SAYS("the loaded libcublasLt.so.12 (/venv/nvidia/cublas/lib/libcublasLt.so.12 12.1.3.1"));
    reset(), driver_535();
    ev.find_on_library_path = fake_find;
    cs_rule_loader_message(&ev, "/venv/nvidia/cublas/lib/libcublas.so.12: undefined symbol: cublasLtSSSMatmulAlgoGetIds, "
                                "version libcublasLt.so.12", 1);
    expect("libcublas needing a symbol an older cuBLASLt on LD_LIBRARY_PATH lacks", CS_F_MISSING_SYMBOL, CS_ERROR,
           SAYS("/opt/cuda-12.0/lib64", "symbol lookup error"));
    reset(), healthy_cu121();
    cs_rule_loader_message(&ev, "/venv/nvidia/cublas/lib/libcublasLt.so.12: version `libcublasLt.so.12' not found "
                                "(required by /venv/nvidia/cudnn/lib/libcudnn_ops.so.9)", 0);
    expect("a version node the loaded cuBLASLt lacks", CS_F_MISSING_SYMBOL, CS_ERROR, SAYS("libcudnn_ops.so.9"));

    /* library-not-found */
    reset(), healthy_cu121();
    cs_rule_loader_message(&ev, "libcudnn_graph.so.9: cannot open shared object file: No such file or directory", 0);
    expect("a cuDNN sub-library not found", CS_F_LIBRARY_NOT_FOUND, CS_WARNING, SAYS("libcudnn_graph.so.9"));
    reset(), healthy_cu121();
    cs_rule_loader_message(&ev, "libnccl-net.so: cannot open shared object file: No such file or directory", 0);
    expect_nothing("NCCL probing for an optional plugin");
    reset();
    lib("driver", "/usr/lib/wsl/lib/libcuda.so.1", NULL, 12080, "ld.so.cache");
    cs_rule_loader_message(&ev, "libcuda.so: cannot open shared object file: No such file or directory", 0);
    expect("the unversioned libcuda.so on WSL, libcuda.so.1 loaded", CS_F_LIBRARY_NOT_FOUND, CS_WARNING,
           SAYS("asks for the unversioned name", "/usr/lib/wsl/lib/libcuda.so.1", "WSL's /usr/lib/wsl/lib",
                "ln -s /usr/lib/wsl/lib/libcuda.so.1 DIR/libcuda.so"));

    /* Driver results with one usual cause */
    reset(), driver_535();
    snprintf(ev.ptx_jit_path, sizeof ev.ptx_jit_path, "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1");
    cs_rule_result(&ev, "cuModuleLoadData", 221);
    expect("221: the PTX JIT library is not installed", CS_F_PTX_JIT_MISSING, CS_ERROR,
           SAYS("not installed beside libcuda.so.1", "libnvidia-ptxjitcompiler1"));
    reset(), driver_535();
    ev.dev_nvswitchctl = 1;
    cs_rule_result(&ev, "cuInit", 802);
    expect("802 on an NVSwitch system", CS_F_FABRIC_MANAGER_NOT_RUNNING, CS_ERROR, SAYS("nvidia-fabricmanager", "NVSwitch"));
    reset(), driver_535();
    ev.dev_nvidiactl = 1, ev.dev_nvidia_uvm = 0;
    cs_rule_result(&ev, "cuInit", 999);
    expect("999 at cuInit without /dev/nvidia-uvm", CS_F_CUDA_UNKNOWN_ERROR, CS_ERROR, SAYS("modprobe nvidia-uvm"));
    reset(), driver_535();
    ev.kernel_module = "550.54.14";
    cs_rule_result(&ev, "cuInit", 999);
    expect_nothing("999 at cuInit with a mismatched module (driver-kernel-mismatch says it)");
    reset(), driver_535();
    cs_rule_result(&ev, "cuMemcpy", 999);
    expect_nothing("999 elsewhere than cuInit");

    /* Library statuses */
    struct cs_inner_failure mc = { "cuMulticastCreate", "CUDA_ERROR_NOT_SUPPORTED", 801 };
    reset(), cs_rule_nccl_cuda_failure("ncclCommInitRank", &mc, "Cuda failure 801 'operation not supported'", NULL);
    expect("NCCL's unhandled CUDA error from a multicast object", CS_F_NCCL_CUDA_FAILURE, CS_ERROR,
           SAYS("cuMulticastCreate", "NCCL_NVLS_ENABLE=0", "\"nccl_message\":\"Cuda failure 801 'operation not supported'\""));
    reset(), cs_rule_nccl_cuda_failure("ncclAllReduce", NULL, NULL, NULL);
    expect("NCCL's unhandled CUDA error, the call unseen", CS_F_NCCL_CUDA_FAILURE, CS_ERROR, SAYS("NCCL_DEBUG=INFO"));
    /* NCCL's last warning names the CUDA error when the shim did not see the call. */
    reset(), cs_rule_nccl_cuda_failure("ncclCommInitRank", NULL, "Cuda failure 2 'out of memory'\n", NULL);
    expect("NCCL's unhandled CUDA error, unseen, NCCL says out of memory", CS_F_NCCL_CUDA_FAILURE, CS_ERROR,
           SAYS("NCCL's own message: \"Cuda failure 2 'out of memory'\"", "NCCL_BUFFSIZE"));
    reset(), cs_rule_nccl_cuda_failure("ncclCommInitRank", NULL, "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'", NULL);
    expect("NCCL's unhandled CUDA error, unseen, NCCL's runtime refused the driver", CS_F_NCCL_CUDA_FAILURE, CS_ERROR,
           SAYS("older than the CUDA that NCCL was built for", "nvidia-nccl-cu12"));
    /* An NCCL for CUDA 12.8 on a 12.2 driver asked for functions the driver lacks, then failed: one
     * finding with the lookups as its cause, and the fix for them first. */
    struct cs_driver_gap gap = { "cuMulticastCreate cuMulticastBindMem", 2, 12080, 12020 };
    reset(), cs_rule_nccl_cuda_failure("ncclCommInitRank", NULL, "Cuda failure 'operation not supported'", &gap);
    expect("NCCL's unhandled CUDA error after lookups of driver functions this driver lacks", CS_F_NCCL_CUDA_FAILURE,
           CS_ERROR, SAYS("before it, NCCL asked the driver for 2 functions this driver (CUDA 12.2) does not have "
                          "(cuMulticastCreate cuMulticastBindMem): they are CUDA 12.8's",
                          "Upgrade the NVIDIA driver to one for CUDA 12.8 (Linux >= 570.26", "NCCL built for the driver's CUDA (12.2)"));
    reset(), cs_rule_cublas_not_initialized("cublasCreate_v2", NULL, &gap);
    expect("cuBLAS not initialised after lookups the driver lacks", CS_F_CUBLAS_NOT_INITIALIZED, CS_ERROR,
           SAYS("before it, cuBLAS asked the driver for 2 functions", "Upgrade the NVIDIA driver to one for CUDA 12.8"));
    /* NVIDIA's NCCL 2.28 (CUDA 13) on the real 535 driver: the call it names is not the cause, its words are. */
    struct cs_inner_failure export_table = { "cuGetExportTable", "CUDA_ERROR_INVALID_VALUE", 1 };
    reset(), cs_rule_nccl_cuda_failure("ncclCommInitRank", &export_table,
                                       "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'", NULL);
    expect("NCCL's unhandled CUDA error at cuGetExportTable, NCCL's runtime refused the driver", CS_F_NCCL_CUDA_FAILURE,
           CS_ERROR, SAYS("cuGetExportTable -> CUDA_ERROR_INVALID_VALUE (1)", "older than the CUDA that NCCL was built for",
                          "nvidia-nccl-cu12"));
    reset(), cs_rule_nccl_cuda_failure("ncclAllReduce", NULL, "Cuda failure 'invalid argument'", NULL);
    expect("NCCL's unhandled CUDA error, unseen, NCCL quoted", CS_F_NCCL_CUDA_FAILURE, CS_ERROR,
           SAYS("\"Cuda failure 'invalid argument'\"", "The quoted CUDA error is the cause"));
    /* NCCL 2.7+ in a container with the default 64 MiB /dev/shm (catalog NCCL-07). */
    reset(), cs_rule_nccl_shared_memory("ncclCommInitRank", "ncclSystemError",
                                        "Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 bytes", 64ll << 20, 0);
    expect("NCCL's shared memory in a full 64 MiB /dev/shm", CS_F_NCCL_SHARED_MEMORY, CS_ERROR,
           SAYS("/dev/shm holds 64 MiB, 0 MiB free", "--shm-size", "NCCL_SHM_DISABLE=1", "\"shm_bytes\":67108864"));
    reset(), cs_rule_nccl_shared_memory("ncclCommInitRank", "ncclSystemError", "Call to shm_open failed : Permission denied",
                                        8ll << 30, 8ll << 30);
    expect("NCCL's shared memory not writable", CS_F_NCCL_SHARED_MEMORY, CS_ERROR, SAYS("may not create files in /dev/shm"));
    reset(), cs_rule_nccl_shared_memory("ncclAllReduce", "ncclSystemError", "socket connect to 10.0.0.2 failed", 64ll << 20, 0);
    expect_nothing("an NCCL system error that is not about shared memory");
    /* Two ranks on one GPU: NCCL 2.28's words on an H200 (two mp.spawn ranks without set_device). */
    reset(), cs_rule_nccl_duplicate_gpu("ncclCommInitRankConfig", "ncclInvalidUsage",
                                        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 60");
    expect("two NCCL ranks on one GPU", CS_F_NCCL_DUPLICATE_GPU, CS_ERROR,
           SAYS("found ncclInvalidUsage at ncclCommInitRankConfig", "rank 1 and rank 0 both on CUDA device 60",
                "torch.cuda.set_device", "LOCAL_RANK", "CUDA_VISIBLE_DEVICES"));
    reset(), cs_rule_nccl_duplicate_gpu("ncclCommInitRank", "ncclInvalidUsage", "invalid argument");
    expect_nothing("another invalid usage of NCCL");
    struct cs_inner_failure nodev = { "cuInit", "CUDA_ERROR_NO_DEVICE", 100 }, no_memory = { "cuMemAlloc_v2", "CUDA_ERROR_OUT_OF_MEMORY", 2 };
    reset(), cs_rule_cublas_not_initialized("cublasCreate_v2", &nodev, NULL);
    expect("cuBLAS not initialised: no GPU", CS_F_CUBLAS_NOT_INITIALIZED, CS_ERROR,
           SAYS("cuInit -> CUDA_ERROR_NO_DEVICE (100)", "the driver sees no GPU"));
    reset(), cs_rule_cublas_not_initialized("cublasLtCreate", &no_memory, NULL);
    expect("cuBLAS not initialised: no memory for the workspace", CS_F_CUBLAS_NOT_INITIALIZED, CS_ERROR,
           SAYS("cublasLtCreate", "cuMemAlloc_v2 -> CUDA_ERROR_OUT_OF_MEMORY (2)", "no device memory was left"));
    reset(), cs_rule_cublas_not_initialized("cublasCreate_v2", NULL, NULL);
    expect("cuBLAS not initialised, no driver call failed", CS_F_CUBLAS_NOT_INITIALIZED, CS_ERROR,
           SAYS("no driver call failed inside it", "driver-too-old"));
    /* NVIDIA's cuBLAS 13 on the real 535 driver: its runtime's first question fails. */
    reset(), cs_rule_cublas_not_initialized("cublasCreate_v2", &export_table, NULL);
    expect("cuBLAS not initialised: its runtime asked a driver older than it", CS_F_CUBLAS_NOT_INITIALIZED, CS_ERROR,
           SAYS("cuGetExportTable -> CUDA_ERROR_INVALID_VALUE (1)", "older than the CUDA cuBLAS was built for"));
    /* cuDNN turns the driver's answer into a generic status: a GPU newer than the build, no GPU. */
    struct cs_inner_failure no_image = { "cuLaunchKernel", "CUDA_ERROR_NO_BINARY_FOR_GPU", 209 };
    reset(), cs_rule_cudnn_cuda_failure("cudnnConvolutionForward", "CUDNN_STATUS_EXECUTION_FAILED", &no_image, NULL);
    expect("cuDNN execution failed: no kernel for this GPU inside it", CS_F_CUDNN_CUDA_FAILURE, CS_ERROR,
           SAYS("found CUDNN_STATUS_EXECUTION_FAILED at cudnnConvolutionForward", "cuLaunchKernel -> CUDA_ERROR_NO_BINARY_FOR_GPU (209)",
                "cuDNN carries no kernels this GPU can run", "sm_86", "\"cudnn_status\":\"CUDNN_STATUS_EXECUTION_FAILED\""));
    reset(), cs_rule_cudnn_cuda_failure("cudnnCreate", "CUDNN_STATUS_NOT_INITIALIZED", &nodev, NULL);
    expect("cuDNN not initialised: no GPU", CS_F_CUDNN_CUDA_FAILURE, CS_ERROR, SAYS("cuInit -> CUDA_ERROR_NO_DEVICE (100)", "sees no GPU"));
    reset(), cs_rule_cudnn_cuda_failure("cudnnConvolutionForward", "CUDNN_STATUS_BAD_PARAM", NULL, NULL);
    expect_nothing("a cuDNN status with no driver call failing inside it (cuDNN's own status says it)");
    reset(), healthy_cu121();
    lib("cudnn-sublibrary", "/usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9", "9.8.0", 90800, "ld.so.cache");
    cs_rule_cudnn_sublibraries(&ev, 1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "cudnnBackendFinalize");
    expect("a cuDNN engine sub-library from another install", CS_F_CUDNN_SUBLIBRARY_MISMATCH, CS_ERROR,
           SAYS("two installs", "libcudnn_engines_precompiled.so.9 from /usr/lib/x86_64-linux-gnu"));

    /* Device code */
    struct cs_entry sm80 = { 0 };
    sm80.kind = CS_ENTRY_ELF, sm80.arch = 80;
    struct cs_image_failure img = { .result = 209, .where = "launch", .kernel = "vectorAdd", .entries = &sm80, .n = 1,
                                    .cc = 61, .driver = 12020, .lazy_loading = 1 };
    char text[2048];
    reset(), driver_535(), torch("2.9.0+cu130", 13000);
    ev.device_cc = 61;
    cs_rule_image_failure(&ev, &img, text, sizeof text);
    expect("209: an sm_80 image on an sm_61 GPU", CS_F_NO_KERNEL_IMAGE, CS_ERROR, SAYS("vectorAdd", "lazy loading", "sm_61"));
    if (!text[0]) printf("FAIL 209 gives the failing call no diagnosis text\n"), failures++;
    /* A second kernel from the same image: one finding, keyed by the image's file, naming both. */
    img.origin = "libflash_attn.so", img.kernels = "vectorAdd, scale", img.nkernels = 2, img.kernel = "scale";
    reset(), cs_rule_image_failure(&ev, &img, text, sizeof text);
    expect("209: a second kernel from the same image", CS_F_NO_KERNEL_IMAGE, CS_ERROR,
           SAYS("kernels vectorAdd, scale from libflash_attn.so failing with 209", "\"kernels\":\"vectorAdd, scale\""));
    if (ngot && strcmp(got[0].key, "209:libflash_attn.so"))
        printf("FAIL the image's finding is keyed %s, not by its file\n", got[0].key), failures++;
    struct cs_entry sm100 = { 0 };
    sm100.kind = CS_ENTRY_ELF, sm100.arch = 100;
    img = (struct cs_image_failure){ .result = 209, .where = "cuLibraryGetKernel", .kernel = "ncclSymkDevKernel_AllReduce",
                                     .origin = "libnccl.so.2", .entries = &sm100, .n = 1, .cc = 90, .driver = 13000,
                                     .probe = 1 };
    reset(), cs_rule_image_failure(&ev, &img, text, sizeof text);
    expect_nothing("209 at a kernel lookup NCCL makes inside its own call (probing for sm_100 kernels)");
    if (!strstr(text, "sm_100")) printf("FAIL a probing lookup's line is not explained: %s\n", text), failures++;
    struct cs_entry ptx = { 0 };
    ptx.kind = CS_ENTRY_PTX, ptx.arch = 90, ptx.ver_major = 8, ptx.ver_minor = 8;
    img = (struct cs_image_failure){ .result = 222, .where = "load", .entries = &ptx, .n = 1, .cc = 90, .driver = 12020 };
    reset(), driver_535(), cs_rule_image_failure(&ev, &img, text, sizeof text);
    expect("222: PTX 8.8 on a CUDA 12.2 driver", CS_F_PTX_TOO_NEW, CS_ERROR, SAYS("Upgrade the driver"));
    img = (struct cs_image_failure){ .result = 200, .where = "load", .cc = 90, .driver = 12020 };
    reset(), driver_535(), cs_rule_image_failure(&ev, &img, text, sizeof text);
    expect("200: an image the driver cannot use", CS_F_IMAGE_REJECTED, CS_ERROR, SAYS("not seen by the shim"));
    img.result = 1;
    reset(), cs_rule_image_failure(&ev, &img, text, sizeof text);
    expect_nothing("an invalid value is not a device-code failure");

    /* Kernels */
    struct cs_async_failure af = { "cuStreamSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS", 700, 1, "gemm_kernel, softmax",
                                   "[\"gemm_kernel\",\"softmax\"]", 2, 0, 0, 0 };
    reset(), cs_rule_async_error(&af);
    expect("700 at a stream synchronisation", CS_F_ASYNC_KERNEL_ERROR, CS_ERROR, SAYS("gemm_kernel, softmax", "CUDASHIM_SYNC_LAUNCHES=1"));
    af.result = 702, af.result_name = "CUDA_ERROR_LAUNCH_TIMEOUT";
    reset(), cs_rule_async_error(&af);
    expect("702: the display watchdog", CS_F_LAUNCH_TIMEOUT, CS_ERROR, SAYS("display", "gemm_kernel"));
    af.watchdog_devices = 1, af.watchdog_asked = 3;
    reset(), cs_rule_async_error(&af);
    expect("702 on GPU 0 with the watchdog on", CS_F_LAUNCH_TIMEOUT, CS_ERROR,
           SAYS("GPU 0 has the run-time limit on", "KERNEL_EXEC_TIMEOUT = 1", "Interactive", "TCC"));
    af.wsl = 1;
    reset(), cs_rule_async_error(&af);
    expect("702 under WSL", CS_F_LAUNCH_TIMEOUT, CS_ERROR, SAYS("TDR", "TdrDelay", "GraphicsDrivers"));
    af.watchdog_devices = 0, af.wsl = 0;
    reset(), cs_rule_async_error(&af);
    expect("702 where no GPU has the watchdog", CS_F_LAUNCH_TIMEOUT, CS_ERROR, SAYS("KERNEL_EXEC_TIMEOUT = 0", "something else"));
    af.watchdog_asked = 0;
    reset(), cs_rule_display_watchdog(2, 0);
    expect("compute on GPU 1, which drives a display", CS_F_DISPLAY_WATCHDOG, CS_INFO, SAYS("GPU 1", "about 2 s"));
    reset(), cs_rule_display_watchdog(0, 0);
    expect_nothing("compute on GPUs without the watchdog");
    af.result = 2;
    reset(), cs_rule_async_error(&af);
    expect_nothing("out of memory at a synchronisation is not a kernel fault");
    struct cs_kernel_fault kf = { "reduce_kernel", "CUDA_ERROR_ILLEGAL_ADDRESS", 700, { 128, 1, 1 }, { 256, 1, 1 }, NULL };
    reset(), cs_rule_kernel_fault(&kf);
    expect("a kernel pinned by a synchronisation after its launch", CS_F_KERNEL_FAULT, CS_ERROR,
           SAYS("reduce_kernel", "grid 128x1x1", "compute-sanitizer"));

    /* Memory and the process */
    struct cs_oom oom = { "cuMemAlloc_v2", 4ull << 30, 1ull << 30, 80ull << 30, 70ull << 30, 12, 1, CS_OOM_DEVICE, 0, 0, 0 };
    reset(), cs_rule_out_of_memory(&oom);
    expect("4 GiB asked with 1 GiB free", CS_F_OUT_OF_MEMORY, CS_WARNING, SAYS("4.00 GiB", "1.00 GiB free"));
    struct cs_oom pool = { "cuMemAllocAsync", 4ull << 30, 60ull << 30, 80ull << 30, 0, 0, 1, CS_OOM_RESERVATION, 64ull << 30, 0, 0 };
    reset(), cs_rule_out_of_memory(&pool);
    expect("a pool allocation refused under ulimit -v with 60 GiB free", CS_F_ADDRESS_SPACE_REFUSED, CS_ERROR,
           SAYS("ulimit -v is 64.00 GiB", "expandable_segments"));
    pool.as_limit = 0, pool.sanitizer = 1;
    reset(), cs_rule_out_of_memory(&pool);
    expect("the same under a sanitizer", CS_F_ADDRESS_SPACE_REFUSED, CS_ERROR, SAYS("sanitizer"));
    pool.sanitizer = 0;
    reset(), cs_rule_out_of_memory(&pool);
    expect("a pool allocation refused with no limit is device memory", CS_F_OUT_OF_MEMORY, CS_WARNING, SAYS("4.00 GiB"));
    pool.as_limit = 64ull << 30, pool.free = 1ull << 30;
    reset(), cs_rule_out_of_memory(&pool);
    expect("a pool allocation refused with 1 GiB free is device memory", CS_F_OUT_OF_MEMORY, CS_WARNING, SAYS("1.00 GiB free"));
    struct cs_oom pin = { "cuMemHostAlloc", 6ull << 30, 0, 0, 0, 0, 0, CS_OOM_PINNED, 0, 8ull << 20, 0 };
    reset(), cs_rule_out_of_memory(&pin);
    expect("6 GiB of pinned host memory refused", CS_F_PINNED_MEMORY_REFUSED, CS_WARNING,
           SAYS("6.00 GiB", "ulimit -l", "8.0 MiB", "pin_memory=False"));
    struct cs_load_oom lo = { "cuLibraryGetKernel", "flash_fwd_kernel", "libflash.so", 1, 70ull << 30, 8ull << 20,
                              80ull << 30, 1, "true", NULL, NULL };
    reset(), cs_rule_module_load_oom(&lo);
    expect("a kernel's lazy load out of memory", CS_F_MODULE_LOAD_OUT_OF_MEMORY, CS_ERROR,
           SAYS("flash_fwd_kernel", "not a wrong architecture", "lazy loading", "XLA_PYTHON_CLIENT_MEM_FRACTION"));
    reset(), cs_rule_forked_child("cuCtxGetCurrent", 4242);
    expect("CUDA in a forked child", CS_F_CUDA_IN_FORKED_CHILD, CS_ERROR, SAYS("spawn", "4242"));

    /* GEMMs: shares of work, not calls; nothing for trivial work; one cause each */
    enum { TN = 1, NN = 0 };
    grow(CS_R_32F, CS_COMPUTE_IMPLIED, CS_MATH_DEFAULT, NN, 4096, 4096, 4096, 20, 0, 90);
    reset(), gemm_rules(0, NULL);
    expect("fp32 GEMMs under DEFAULT_MATH on 9.0", CS_F_GEMM_FP32_NO_TF32, CS_INFO,
           SAYS("100%", "2.7 TFLOP", "set_float32_matmul_precision('high')", "since 1.12", "9.0"));
    grow(CS_R_32F, CS_COMPUTE_IMPLIED, CS_MATH_DEFAULT, NN, 4096, 4096, 4096, 20, 0, 80);
    reset(), gemm_rules(0, "0");
    expect("the same with NVIDIA_TF32_OVERRIDE=0", CS_F_GEMM_FP32_NO_TF32, CS_INFO, SAYS("NVIDIA_TF32_OVERRIDE=0", "Unset"));
    grow(CS_R_32F, CS_COMPUTE_IMPLIED, CS_MATH_TF32, NN, 4096, 4096, 4096, 20, 0, 90);
    reset(), gemm_rules(0, NULL);
    expect_nothing("fp32 GEMMs under TF32_TENSOR_OP_MATH");
    grow(CS_R_32F, CS_COMPUTE_32F_FAST_TF32, CS_MATH_UNKNOWN, TN, 4096, 4096, 4096, 20, 0, 90);
    reset(), gemm_rules(0, NULL);
    expect_nothing("cuBLASLt fp32 with compute 32F_FAST_TF32");
    grow(CS_R_32F, CS_COMPUTE_IMPLIED, CS_MATH_DEFAULT, NN, 256, 256, 256, 1000, 0, 90);
    reset(), gemm_rules(0, NULL);
    expect_nothing("strict fp32 but trivial work (34 GFLOP)");
    grow(CS_R_32F, CS_COMPUTE_IMPLIED, CS_MATH_DEFAULT, NN, 4096, 4096, 4096, 4, 0, 90);
    grow(CS_R_16BF, CS_COMPUTE_32F, CS_MATH_DEFAULT, TN, 4096, 4096, 4096, 16, 0, 90);
    reset(), gemm_rules(0, NULL);
    expect_nothing("bf16 autocast with 20% left in fp32");
    grow(CS_R_32F, CS_COMPUTE_IMPLIED, CS_MATH_DEFAULT, NN, 4096, 4096, 4096, 20, 0, 70);
    reset(), gemm_rules(0, NULL);
    expect("all fp32 on a V100", CS_F_GEMM_NO_REDUCED_PRECISION, CS_INFO, SAYS("7.0", "autocast", "float16"));
    grow(CS_R_32F, CS_COMPUTE_IMPLIED, CS_MATH_DEFAULT, NN, 4096, 4096, 4096, 20, 0, 61);
    reset(), gemm_rules(0, NULL);
    expect_nothing("all fp32 on a GPU without Tensor Cores (6.1)");
    grow(CS_R_32F, CS_COMPUTE_IMPLIED, CS_MATH_TENSOR_OP, NN, 4096, 4096, 4096, 20, 0, 80);
    reset(), gemm_rules(0, NULL);
    expect("fp32 under CUBLAS_TENSOR_OP_MATH on 8.0", CS_F_GEMM_LEGACY_TENSOR_OP_MATH, CS_WARNING,
           SAYS("FAST_16F", "CUBLAS_TF32_TENSOR_OP_MATH"));
    grow(CS_R_16F, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 50257, 8192, 768, 20, 0, 90)->key.algo = 3;
    grows[0].key.aligned = 0, gknown[3] = 1, gflags[3] = 0x1;
    reset(), gemm_rules(0, NULL);
    expect("fp16 cuBLASLt GEMMs on an FMA algorithm", CS_F_GEMM_FMA_KERNEL, CS_WARNING, SAYS("m=50257", "16-byte", "50304"));
    grow(CS_R_16F, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 50304, 8192, 768, 20, 0, 90)->key.algo = 3;
    gknown[3] = 1, gflags[3] = 0x2;
    reset(), gemm_rules(0, NULL);
    expect_nothing("fp16 cuBLASLt GEMMs on an HMMA algorithm");
    grow(CS_R_8F_E4M3, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 4096, 4096, 4096, 0, 3, 80);
    reset(), gemm_rules(0, NULL);
    expect("FP8 refused on 8.0", CS_F_FP8_CANNOT_RUN, CS_ERROR, SAYS("8.0", "no FP8 Tensor Cores", "bf16"));
    grow(CS_R_8F_E4M3, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 4096, 4096, 4096, 0, 3, 89);
    reset(), gemm_rules(120100, NULL);
    expect("FP8 refused on 8.9 with cuBLASLt 12.1.0", CS_F_FP8_CANNOT_RUN, CS_ERROR, SAYS("12.1.0", "12.1.3"));
    grow(CS_R_8F_E4M3, CS_COMPUTE_32F, CS_MATH_UNKNOWN, NN, 4096, 4096, 4096, 0, 3, 90);
    reset(), gemm_rules(130100, NULL);
    expect("FP8 NN refused on 9.0", CS_F_FP8_CANNOT_RUN, CS_ERROR, SAYS("transa=N transb=N", "TN"));
    grow(CS_R_8F_E4M3, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 4095, 4096, 4096, 0, 3, 90);
    reset(), gemm_rules(130100, NULL);
    expect("FP8 with m=4095 refused on 9.0", CS_F_FP8_CANNOT_RUN, CS_ERROR, SAYS("m=4095", "multiples of 16"));
    grow(CS_R_8F_E4M3, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 4096, 4096, 4096, 20, 0, 90);
    reset(), gemm_rules(130100, NULL);
    expect_nothing("FP8 TN on 9.0, all of the work");
    grow(CS_R_8F_E4M3, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 4096, 4096, 4096, 2, 0, 90);
    grow(CS_R_16BF, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 4096, 4096, 4096, 18, 0, 90);
    reset(), gemm_rules(130100, NULL);
    expect("FP8 on 10% of the work", CS_F_FP8_SMALL_SHARE, CS_INFO, SAYS("10%", "1.05x", "bf16"));
    grow(CS_R_8F_E4M3, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 4096, 4096, 4096, 8, 0, 90);
    grow(CS_R_16BF, CS_COMPUTE_32F, CS_MATH_UNKNOWN, TN, 4096, 4096, 4096, 12, 0, 90);
    reset(), gemm_rules(130100, NULL);
    expect_nothing("FP8 on 40% of the work");

    /* Every id in the table has a case above that raised it. */
    for (int f = 0; f < CS_F_COUNT; f++)
        if (!raised[f]) printf("FAIL no case raises %s\n", cs_finding_rows[f].id), failures++;
    printf("%d failure(s)\n", failures);
    return failures != 0;
}

/* The table's rows, as findings.c has them (findings.c itself writes, so it is not linked). */
const struct cs_finding_row cs_finding_rows[CS_F_COUNT] = {
#define CS_FINDING(name, id, severities, title) [CS_F_##name] = { id, severities, title },
#include "../../shim/trace/findings_table.h"
#undef CS_FINDING
};
