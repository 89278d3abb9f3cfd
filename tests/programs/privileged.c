/* A program a root-owned setuid bit makes privileged (t_31): "plain" never loads CUDA;
 * "cuda" loads the driver named by argv[2] and makes a few calls. Prints what it saw, so a run with
 * and without the shim can be compared; exits 3 or 4 so the status is compared too. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

typedef int (*init_fn)(unsigned);
typedef int (*version_fn)(int *);

int main(int argc, char **argv)
{
    printf("secure=%lu ruid=%d euid=%d\n", getauxval(AT_SECURE), (int)getuid(), (int)geteuid());
    if (argc < 2 || strcmp(argv[1], "cuda")) return 3;
    void *h = dlopen(argc > 2 ? argv[2] : "libcuda.so.1", RTLD_NOW);
    if (!h) { printf("no driver\n"); return 5; }
    init_fn init = (init_fn)dlsym(h, "cuInit");
    version_fn version = (version_fn)dlsym(h, "cuDriverGetVersion");
    int v = 0;
    printf("cuInit=%d\n", init(0));
    printf("cuDriverGetVersion=%d %d\n", version(&v), v);
    return 4;
}
