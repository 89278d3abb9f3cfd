/* A directory that stops answering, as a hung network mount does: preloaded beside the shim,
 * this makes every write, open and rename under $STUCK_DIR wait for ever once the program has set
 * STUCK_NOW in its environment (the tests set it just before exit, so the run itself writes). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static int under_stuck(const char *path)
{
    const char *dir = getenv("STUCK_DIR");
    return getenv("STUCK_NOW") && dir && *dir && path && !strncmp(path, dir, strlen(dir));
}

static int fd_stuck(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    return under_stuck(path);
}

static void hang(void)
{
    for (;;) pause();
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (fd_stuck(fd)) hang();
    return real(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real) real = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    if (fd_stuck(fd)) hang();
    return real(fd, iov, n);
}

int open(const char *path, int flags, ...)
{
    static int (*real)(const char *, int, ...);
    if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
    va_end(ap);
    if (under_stuck(path)) hang();
    return real(path, flags, mode);
}

int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (!real) real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    if (under_stuck(from) || under_stuck(to)) hang();
    return real(from, to);
}
