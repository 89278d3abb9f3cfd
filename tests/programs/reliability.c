/* Things a program may do to its process that the shim must survive without hurting it.
 * Linked against libcuda.so.1 (the fake). Steps, in order:
 *   fail:N         N failing driver calls (cuMemAlloc_v2 of 2^63+1 bytes: each is written)
 *   key:N          N successful key calls (cuDeviceGet)
 *   closeall:FILE  close every descriptor from 3 up (close_range), open FILE, and put it on
 *                  descriptors 100-199 too (where the shim kept its trace)
 *   check:FILE     print FILE's size: the shim must never have written into it
 *   fork           fork; the child makes a key call and exits 0
 *   sleep:MS       sleep
 * Exits 3, so a changed status shows. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int CUresult;
CUresult cuInit(unsigned);
CUresult cuDeviceGet(int *, int);
CUresult cuMemAlloc_v2(unsigned long long *, size_t);

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("cuInit=%d\n", cuInit(0));
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (!strncmp(a, "fail:", 5)) {
            unsigned long long p;
            int n = atoi(a + 5), r = 0;
            for (int k = 0; k < n; k++) r = cuMemAlloc_v2(&p, ((size_t)1 << 63) + 1);
            printf("fail x%d: %d\n", n, r);
        } else if (!strncmp(a, "key:", 4)) {
            int n = atoi(a + 4), dev, r = 0;
            for (int k = 0; k < n; k++) r = cuDeviceGet(&dev, 0);
            printf("key x%d: %d\n", n, r);
        } else if (!strncmp(a, "closeall:", 9)) {
            syscall(SYS_close_range, 3u, ~0u, 0u);
            int fd = open(a + 9, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            for (int k = 100; k < 200; k++) dup2(fd, k);
            printf("closed all, own file on %d and 100-199\n", fd);
        } else if (!strncmp(a, "check:", 6)) {
            struct stat st;
            printf("%s: %lld bytes\n", a + 6, stat(a + 6, &st) ? -1LL : (long long)st.st_size);
        } else if (!strcmp(a, "fork")) {
            pid_t pid = fork();
            if (pid == 0) {
                int dev;
                cuDeviceGet(&dev, 0);
                _exit(0);
            }
            int st;
            waitpid(pid, &st, 0);
            printf("child exited %d\n", WEXITSTATUS(st));
        } else if (!strncmp(a, "sleep:", 6)) {
            usleep((useconds_t)atoi(a + 6) * 1000);
        }
    }
    return 3;
}
