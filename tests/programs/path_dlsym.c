/* Path 2: global lookups. Linked with -lcuda (so the driver is in the global scope), it asks
 * dlsym(RTLD_DEFAULT, ...) and dlsym(RTLD_NEXT, ...) for driver functions and calls them.
 * Expected: the calls are traced; answers and exit status are as without the shim.
 * With argument "absent" (not linked to libcuda): dlsym(RTLD_DEFAULT, "cuInit") is NULL,
 * exactly as without the shim, although the shim itself exports cuInit. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*ver_fn)(int *);

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "absent")) {
        void *p = dlsym(RTLD_DEFAULT, "cuInit");
        void *n = dlsym(RTLD_NEXT, "cuInit");
        printf("cuInit %s, next %s\n", p ? "found" : "not found", n ? "found" : "not found");
        return p || n ? 1 : 0;
    }
    ver_fn get_version = (ver_fn)dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
    ver_fn get_count = (ver_fn)dlsym(RTLD_NEXT, "cuDeviceGetCount");
    int v = 0, n = 0;
    if (!get_version || !get_count) { printf("lookup failed\n"); return 2; }
    printf("cuDriverGetVersion=%d v=%d\n", get_version(&v), v);
    printf("cuDeviceGetCount=%d n=%d\n", get_count(&n), n);
    printf("missing=%s\n", dlsym(RTLD_DEFAULT, "cuNoSuchFunction") ? "found" : "not found");
    return 0;
}
