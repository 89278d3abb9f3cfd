/* The CUDA stack's library file names (library_names.c): pure string work. */
#ifndef CS_LIBRARY_NAMES_H
#define CS_LIBRARY_NAMES_H

#include <stddef.h>

int cs_is_cuda_library_name(const char *base, size_t len);  /* libcudart.so.13, libnccl.so.2, ... */
const char *cs_base_name(const char *path);

/* "9.19.0" against "9.1.0", number by number ("535.54" before "535.54.03"); what follows the
 * numbers ("+cu128") is not compared. <0, 0, >0. */
int cs_version_order(const char *a, const char *b);

#endif
