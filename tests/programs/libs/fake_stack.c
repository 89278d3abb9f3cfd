/* One source for the small fake CUDA-stack libraries the finding scenarios load, each built
 * with a chosen soname and version (-DKIND_... -DVERSION=...):
 *   -DFAKE_NCCL      ncclGetVersion() -> VERSION, and ncclCommRegister with -DNEW_API
 *   -DFAKE_CUDNN     cudnnGetVersion() -> VERSION, cudnnGetCudartVersion() -> CUDART, and
 *                    cudnnBackendPopulateCudaGraph with -DNEW_API; with -DSUBLIB, cudnnCreate opens
 *                    libcudnn_engines_precompiled.so.9 by name, as cuDNN 9 does, and returns
 *                    CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (1002)
 *   -DFAKE_JITLINK   nvJitLinkVersion() -> MAJOR.MINOR, and __nvJitLinkAddData_12_1 with -DNEW_API
 *   -DFAKE_SPARSE    a cuSPARSE that needs __nvJitLinkAddData_12_1 (linked against the new nvJitLink)
 *   -DFAKE_DRIVER    a libcuda.so.1 of an old driver: cuInit and cuDriverGetVersion only
 *   -DFAKE_FRAMEWORK a CPU-only framework library (libtorch_cpu.so) with no CUDA in it */
#include <stddef.h>
#ifdef FAKE_NCCL
int ncclGetVersion(int *v) { *v = VERSION; return 0; }
#ifdef NEW_API
int ncclCommRegister(void *comm, void *buff, size_t size, void **handle)
{ (void)comm, (void)buff, (void)size, (void)handle; return 0; }
#endif
#endif
#ifdef FAKE_CUDNN
size_t cudnnGetVersion(void) { return VERSION; }
size_t cudnnGetCudartVersion(void) { return CUDART; }
#ifdef SUBLIB
#include <dlfcn.h>
int cudnnCreate(void *handle) { (void)handle; dlopen("libcudnn_engines_precompiled.so.9", RTLD_NOW); return 1002; }
#endif
#ifdef NEW_API
int cudnnBackendPopulateCudaGraph(void *h, void *plan, void *pack, void *graph)
{ (void)h, (void)plan, (void)pack, (void)graph; return 0; }
#endif
#endif
#ifdef FAKE_JITLINK
int nvJitLinkVersion(unsigned *major, unsigned *minor) { *major = MAJOR; *minor = MINOR; return 0; }
#ifdef NEW_API
int __nvJitLinkAddData_12_1(void *h, int kind, const void *data, size_t size, const char *name)
{ (void)h, (void)kind, (void)data, (void)size, (void)name; return 0; }
#endif
#endif
#ifdef FAKE_SPARSE
int __nvJitLinkAddData_12_1(void *, int, const void *, size_t, const char *);
int cusparseGetProperty(int type, int *v) { *v = type == 0 ? 12 : type == 1 ? 5 : 0; return 0; }
int cusparse_uses_jit(void) { return __nvJitLinkAddData_12_1(NULL, 0, NULL, 0, NULL); }
#endif
#ifdef FAKE_DRIVER
int cuInit(unsigned f) { (void)f; return 0; }
int cuDriverGetVersion(int *v) { *v = 12020; return 0; }
#endif
#ifdef FAKE_FRAMEWORK
int torch_cpu_only(void) { return 1; }
#endif
