/* The fake driver (libcuda.so.1 for machines without a GPU). See fake_cuda.c. */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H
#include <stdint.h>
#define FAKE_EXPORT __attribute__((visibility("default")))
struct fake_procaddr { const char *name; int version, flags, index; };
extern const char *const fake_names[];
extern void *const fake_fns[];
extern const int fake_count;
extern const struct fake_procaddr fake_procaddr[];
extern const int fake_procaddr_count;
uint32_t fake_enter(int index);
#endif
