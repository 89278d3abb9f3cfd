/* Loads libouter.so (which has RUNPATH $ORIGIN/sub) and asks it to dlopen its sibling, then runs
 * the RTLD_NEXT probe. Expected output: "leaf=42" and "next=2". */
#include <dlfcn.h>
#include <stdio.h>
int next_a_lookup(void);
int main(int argc, char **argv)
{
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { printf("cannot load outer: %s\n", dlerror()); return 1; }
    int (*load)(void) = (int (*)(void))dlsym(h, "outer_load_leaf");
    printf("leaf=%d\n", load ? load() : -3);
    printf("next=%d\n", next_a_lookup());
    return 0;
}
