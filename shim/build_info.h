/* A framework's own record of how it was built, parsed without running it. Pure: text in,
 * numbers out (unit-tested in tests/unit/build_info_test.c). */
#ifndef CS_BUILD_INFO_H
#define CS_BUILD_INFO_H

/* TensorFlow's tensorflow/python/platform/build_info.py: the CUDA it was built with (12030 for
 * "12.3"), 0 when the text names none (a CPU build). Accepts the dict, tuple-list and
 * assignment spellings ('cuda_version': '12.3', ('cuda_version', '12.3'),
 * build_info['cuda_version'] = '12.3'). */
int cs_build_info_cuda(const char *text);

#endif
