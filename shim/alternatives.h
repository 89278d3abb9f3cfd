/* What would run on this machine: PyTorch builds this driver can run on this GPU, and the
 * driver the loaded build needs. From the reference tables alone (data/cuda-reference.txt):
 * no I/O, nothing asked at run time; unit-tested on its own (tests/unit/alternatives_test.c). */
#ifndef CS_ALTERNATIVES_H
#define CS_ALTERNATIVES_H

#include <stddef.h>

/* cc: the GPU's compute capability (86 is 8.6; 0 unknown); driver_cuda: the CUDA the driver
 * supports (12020 is 12.2); torch_version: the loaded build ("2.9.0+cu130", or NULL);
 * torch_cuda: the CUDA it was built for (0 unknown). Writes the alternatives, "; "-separated,
 * each a complete instruction; returns how many (0: nothing to offer from the tables). */
int cs_what_would_work(int cc, int driver_cuda, const char *torch_version, int torch_cuda, char *out, size_t cap);

#endif
