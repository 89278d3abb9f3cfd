/* A framework library built against a newer NCCL or cuDNN than the one the loader finds at run
 * time: it needs ncclCommRegister (NCCL 2.19+) or cudnnBackendPopulateCudaGraph@libcudnn.so.9
 * (cuDNN 9.5+), so loading it with RTLD_NOW fails when the stale copy wins the search. */
#include <stddef.h>
#ifdef USE_NCCL
int ncclCommRegister(void *comm, void *buff, size_t size, void **handle);
int framework_register(void) { void *h; return ncclCommRegister(NULL, NULL, 0, &h); }
#endif
#ifdef USE_CUDNN
int cudnnBackendPopulateCudaGraph(void *h, void *plan, void *pack, void *graph);
int framework_graph(void) { return cudnnBackendPopulateCudaGraph(NULL, NULL, NULL, NULL); }
#endif
