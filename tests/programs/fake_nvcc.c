/* nvcc --version's text, as a binary: the root it runs in has no shell (t_31). */
#include <stdio.h>

int main(void)
{
    puts("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131");
    return 0;
}
