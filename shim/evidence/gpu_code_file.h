/* The CUDA a library was built with, read from the GPU code in its file: the newest PTX ISA among
 * its fatbin's entries (PTX 9.0 is written by CUDA 13.0 and read by no older driver), and ABI-8
 * cubins for pre-Blackwell GPUs, which only CUDA 13 writes. Used by the shim's inventory and by
 * `cudashim check`, so that the run and the check see the same evidence. */
#ifndef CS_GPU_CODE_FILE_H
#define CS_GPU_CODE_FILE_H

#include <stddef.h>

/* A CUDA code (13000 is 13.0), or 0 when the file has no GPU code that says. how: what said it,
 * e.g. "its GPU code (PTX 9.0)". Reads at most a few hundred entry headers with pread. */
int cs_gpu_code_cuda(const char *path, char *how, size_t cap);

/* The same for a library whose code lives in companion files beside it (cuDNN's dispatcher
 * libcudnn.so.9 and its libcudnn_ops.so.9...): the first companion that says. */
int cs_gpu_code_cuda_of_kind(const char *kind, const char *path, char *how, size_t cap);

#endif
