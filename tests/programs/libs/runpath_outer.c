/* A pip-wheel-style library: RUNPATH $ORIGIN/sub, and it dlopens a sibling by bare name, as
 * libcudnn.so.9 does for its sub-libraries. The caller glibc sees must stay this library. */
#include <dlfcn.h>
#include <stdio.h>
int outer_load_leaf(void)
{
    void *h = dlopen("libleaf.so", RTLD_NOW);
    if (!h) { printf("dlopen failed: %s\n", dlerror()); return -1; }
    int (*leaf)(void) = (int (*)(void))dlsym(h, "leaf_value");
    return leaf ? leaf() : -2;
}
