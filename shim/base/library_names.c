/* Names of files: the one list of CUDA-stack file-name stems, and a path's last part. Pure
 * string work: the crash handler and the loader hooks call it. */
#include <stdlib.h>
#include <string.h>

#include "library_names.h"

int cs_is_cuda_library_name(const char *base, size_t len)
{
    static const char *const stems[] = {
        "libcuda.", "libcudart", "libcudnn", "libnccl", "libcublas", "libnvrtc", "libnvJitLink", "libcusparse",
        "libcufft", "libcurand", "libcusolver", "libcupti", "libnvidia-", "libnvToolsExt", "libnvperf",
    };
    for (size_t i = 0; i < sizeof stems / sizeof *stems; i++) {
        size_t n = strlen(stems[i]);
        if (len >= n && !memcmp(base, stems[i], n)) return 1;
    }
    return 0;
}

const char *cs_base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int cs_version_order(const char *a, const char *b)
{
    while (*a || *b) {
        long x = strtol(a, (char **)&a, 10), y = strtol(b, (char **)&b, 10);
        if (x != y) return x < y ? -1 : 1;
        if (*a == '.') a++;
        if (*b == '.') b++;
        int end_a = !*a || *a < '0' || *a > '9', end_b = !*b || *b < '0' || *b > '9';  /* "+cu12", "-1": the end */
        if (end_a && end_b) break;
        if (end_a || end_b) return end_a ? -1 : 1;
    }
    return 0;
}
