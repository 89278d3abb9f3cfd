/* Loads libraries the way frameworks do, then makes a few driver calls, for the finding
 * scenarios. Arguments, in order:
 *   dlopen:NAME     dlopen(NAME, RTLD_NOW | RTLD_GLOBAL); a failure prints dlerror()
 *   dlsym:NAME      dlsym on the last handle opened; prints whether it was found
 *   cuda            cuInit, cuDriverGetVersion, cuDeviceGet through the global scope (loading
 *                   libcuda.so.1 first when nothing has)
 *   procaddr:SYM:V  cuGetProcAddress_v2(SYM, V) through the global scope
 *   fork            fork; the child makes a driver call and exits
 *   call:NAME       NAME() (a version function returning size_t) from the last handle opened
 *   libs            prints which of the CUDA stack's libraries are loaded, in load order
 *   sleep:MS        sleeps MS milliseconds
 *   dlclose         closes the last handle opened
 * Expected output states each step's result; the tests assert on the trace's findings. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*fn_i)(int *);
typedef int (*fn_u)(unsigned);
typedef int (*fn_gpa)(const char *, void **, int, unsigned long long, int *);

static void *sym(const char *name)
{
    if (!dlsym(RTLD_DEFAULT, "cuInit")) dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p) { printf("%s: not loaded\n", name); exit(3); }
    return p;
}

static int print_cuda_library(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    const char *slash = strrchr(info->dlpi_name, '/'), *base = slash ? slash + 1 : info->dlpi_name;
    if ((!strncmp(base, "libcu", 5) && strncmp(base, "libcudashim", 11)) || !strncmp(base, "libnccl", 7) ||
        !strncmp(base, "libnv", 5))
        printf("loaded %s\n", base);
    return 0;
}

int main(int argc, char **argv)
{
    void *last = NULL;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (!strncmp(a, "dlopen:", 7)) {
            last = dlopen(a + 7, RTLD_NOW | RTLD_GLOBAL);
            if (!last) printf("dlopen %s failed: %s\n", a + 7, dlerror());
            else printf("dlopen %s ok\n", a + 7);
        } else if (!strncmp(a, "dlsym:", 6)) {
            printf("dlsym %s: %s\n", a + 6, last && dlsym(last, a + 6) ? "found" : "missing");
        } else if (!strcmp(a, "cuda")) {
            int v = 0, dev = 0;
            printf("cuInit=%d\n", ((fn_u)sym("cuInit"))(0));
            printf("cuDriverGetVersion=%d v=%d\n", ((fn_i)sym("cuDriverGetVersion"))(&v), v);
            if (dlsym(RTLD_DEFAULT, "cuDeviceGet"))
                printf("cuDeviceGet=%d\n", ((int (*)(int *, int))sym("cuDeviceGet"))(&dev, 0));
        } else if (!strncmp(a, "procaddr:", 9)) {
            char name[256];
            int ver = 0, status = -1;
            void *p = NULL;
            sscanf(a + 9, "%255[^:]:%d", name, &ver);
            int r = ((fn_gpa)sym("cuGetProcAddress_v2"))(name, &p, ver, 0, &status);
            printf("cuGetProcAddress_v2(%s, %d)=%d status=%d\n", name, ver, r, status);
        } else if (!strncmp(a, "call:", 5)) {
            size_t (*fn)(void) = last ? (size_t (*)(void))dlsym(last, a + 5) : NULL;
            if (fn) printf("%s=%zu\n", a + 5, fn());
            else printf("%s: missing\n", a + 5);
        } else if (!strcmp(a, "dlclose")) {
            printf("dlclose=%d\n", last ? dlclose(last) : -1);
            last = NULL;
        } else if (!strncmp(a, "sleep:", 6)) {
            usleep((useconds_t)atoi(a + 6) * 1000);
        } else if (!strcmp(a, "libs")) {
            dl_iterate_phdr(print_cuda_library, NULL);
        } else if (!strcmp(a, "fork")) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                int dev = -1;
                int r = ((int (*)(int *, int))sym("cuDeviceGet"))(&dev, 0);
                printf("child cuDeviceGet=%d\n", r);
                fflush(stdout);
                _exit(0);
            }
            int st;
            waitpid(pid, &st, 0);
        }
    }
    return 0;
}
