/* A framework's own record of how it was built, parsed without running it. Pure: text in,
 * numbers out (unit-tested in tests/unit/build_info_test.c). */
#ifndef CS_BUILD_INFO_H
#define CS_BUILD_INFO_H

/* TensorFlow's tensorflow/python/platform/build_info.py: the CUDA it was built with (12030 for
 * "12.3"), 0 when the text names none (a CPU build). Accepts the dict, tuple-list and
 * assignment spellings ('cuda_version': '12.3', ('cuda_version', '12.3'),
 * build_info['cuda_version'] = '12.3'). */
int cs_build_info_cuda(const char *text);

/* PyTorch's torch/version.py (wheels, Debian, conda and source builds all have it): its
 * __version__ into version ("2.6.0+debian"), and the CUDA it was built for (12040 for cuda =
 * '12.4'; 0 for a CPU build, cuda = None); -1 when the text has no __version__. */
#include <stddef.h>
int cs_torch_version_py(const char *text, char *version, size_t cap);

#endif
