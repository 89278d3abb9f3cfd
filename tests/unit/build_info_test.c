/* TensorFlow's build_info.py as it is spelled by its releases, and texts that name no CUDA.
 * Built and run by tests/t_26_unit.sh. */
#include <stdio.h>

#include "../../shim/build_info.h"

static int failures;

static void check(const char *name, const char *text, int want)
{
    int got = cs_build_info_cuda(text);
    printf("%s %s: %d\n", got == want ? "ok  " : "FAIL", name, got);
    failures += got != want;
}

int main(void)
{
    check("dict", "build_info = {'cpu_compiler': '/usr/bin/gcc', 'cuda_compute_capabilities': ['sm_50', 'compute_90'], "
          "'cuda_version': '12.3', 'cudnn_version': '8', 'is_cuda_build': True}", 12030);
    check("tuple list", "build_info = collections.OrderedDict([('cuda_version', '11.8'), ('cudnn_version', '8')])", 11080);
    check("assignment", "build_info = {}\nbuild_info[\"cuda_version\"] = \"12.5.1\"\n", 12050);
    check("major only", "'cuda_version': '64_112'", 0);  /* the Windows spelling of 11.2 is not guessed at */
    check("cpu build", "build_info = {'is_cuda_build': False, 'is_rocm_build': False}", 0);
    check("longer key", "'cuda_version_number': '12.3'", 0);
    check("empty", "", 0);
    check("null", NULL, 0);
    return failures != 0;
}
