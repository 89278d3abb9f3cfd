/* Two frameworks, two cuDNN majors in one process: each must keep calling its own (symbol
 * versioning keeps cudnnGetVersion@libcudnn.so.8 and @libcudnn.so.9 apart). Expected output:
 * "framework8=8907 framework9=91900", with and without the shim. */
#include <stddef.h>
#include <stdio.h>
size_t framework8_version(void);
size_t framework9_version(void);
int main(void)
{
    printf("framework8=%zu framework9=%zu\n", framework8_version(), framework9_version());
    return 0;
}
