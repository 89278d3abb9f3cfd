/* TensorFlow's build_info.py as it is spelled by its releases, and texts that name no CUDA.
 * PyTorch's torch/version.py likewise. Built and run by tests/t_26_unit.sh. */
#include <stdio.h>
#include <string.h>

#include "../../shim/base/build_info.h"

static int failures;

static void check(const char *name, const char *text, int want)
{
    int got = cs_build_info_cuda(text);
    printf("%s %s: %d\n", got == want ? "ok  " : "FAIL", name, got);
    failures += got != want;
}

static void torch(const char *name, const char *text, const char *want_version, int want_cuda)
{
    char version[32] = "";
    int got = cs_torch_version_py(text, version, sizeof version);
    int ok = got == want_cuda && (want_cuda < 0 || !strcmp(version, want_version));
    printf("%s torch/version.py, %s: %d %s\n", ok ? "ok  " : "FAIL", name, got, version);
    failures += !ok;
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
    torch("Debian's", "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda']\n__version__ = '2.6.0+debian'\n"
          "debug = False\ncuda: Optional[str] = '12.4'\ngit_version = 'Unknown'\nhip: Optional[str] = None\n", "2.6.0+debian", 12040);
    torch("a wheel", "__version__ = '2.9.1+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\n", "2.9.1+cu130", 13000);
    torch("a CPU build", "__version__ = '2.6.0+cpu'\ncuda: Optional[str] = None\n", "2.6.0+cpu", 0);
    torch("no version", "debug = False\n", "", -1);
    return failures != 0;
}
