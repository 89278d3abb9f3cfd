/* The oldest glibc the preload, the command and the fake driver run on: 2.17 (manylinux2014;
 * the first glibc for aarch64). Included before anything else in every file of theirs (-include
 * in the Makefile), so a build on a new glibc asks only for symbol versions that old ones have.
 *
 * Why it matters: a preload is loaded into every process of an image; one that asks for a symbol
 * version its glibc lacks stops every process before main. glibc 2.34 moved libdl and libpthread
 * into libc under new versions (dlinfo@GLIBC_2.34, pthread_create@GLIBC_2.34) and keeps the old
 * versions beside them, so binding to the old ones works on both sides of 2.34: before it they
 * are found in libdl.so.2 and libpthread.so.0, which the link names (DT_NEEDED) for that reason;
 * after it those two files are empty and the old versions are libc's.
 *
 * tests/t_34_glibc_floor.sh checks every version the binaries ask for against CS_GLIBC_FLOOR
 * and runs them in a Debian 11 root (glibc 2.31). A new libc function the build starts to use
 * fails that check until it is pinned here. */
#ifndef CS_GLIBC_FLOOR_H
#define CS_GLIBC_FLOOR_H

#define CS_GLIBC_FLOOR "2.17"

#if defined(__x86_64__)
#define CS_GLIBC_OLDEST "GLIBC_2.2.5"
#define CS_STAT_VER 1
#elif defined(__aarch64__)
#define CS_GLIBC_OLDEST "GLIBC_2.17"
#define CS_STAT_VER 0
#endif

#ifdef CS_GLIBC_OLDEST
#define CS_GLIBC_PIN(sym, ver) __asm__(".symver " #sym "," #sym "@" ver)

CS_GLIBC_PIN(dladdr, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(dlclose, CS_GLIBC_OLDEST);
/* The preload defines these three itself, under both versions (shim/entry/). */
#ifndef CS_PRELOAD
CS_GLIBC_PIN(dlopen, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(dlsym, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(dlerror, CS_GLIBC_OLDEST);
#endif
CS_GLIBC_PIN(dl_iterate_phdr, CS_GLIBC_OLDEST);
#if defined(__x86_64__)
CS_GLIBC_PIN(dlinfo, "GLIBC_2.3.3");
CS_GLIBC_PIN(pthread_timedjoin_np, "GLIBC_2.3.3");
CS_GLIBC_PIN(pthread_sigmask, CS_GLIBC_OLDEST);
#else
CS_GLIBC_PIN(dlinfo, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_timedjoin_np, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_sigmask, CS_GLIBC_OLDEST);
#endif
CS_GLIBC_PIN(pthread_create, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_join, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_detach, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_attr_setstacksize, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_key_create, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_setspecific, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_getspecific, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_mutex_timedlock, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_mutex_trylock, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_rwlock_init, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_rwlock_rdlock, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_rwlock_wrlock, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_rwlock_timedwrlock, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_rwlock_trywrlock, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_rwlock_unlock, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_once, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(pthread_kill, CS_GLIBC_OLDEST);
/* glob@GLIBC_2.27 changed only GLOB_ALTDIRFUNC's directory reading, which nothing here uses. */
CS_GLIBC_PIN(glob, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(globfree, CS_GLIBC_OLDEST);

/* stat, fstat and lstat became functions in 2.33; before, the headers made them calls of
 * __xstat and friends, which 2.33 and later keep. */
#include <sys/stat.h>
extern int __xstat(int, const char *, struct stat *);
extern int __lxstat(int, const char *, struct stat *);
extern int __fxstat(int, int, struct stat *);
CS_GLIBC_PIN(__xstat, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(__lxstat, CS_GLIBC_OLDEST);
CS_GLIBC_PIN(__fxstat, CS_GLIBC_OLDEST);
#define stat(path, buf) __xstat(CS_STAT_VER, path, buf)
#define lstat(path, buf) __lxstat(CS_STAT_VER, path, buf)
#define fstat(fd, buf) __fxstat(CS_STAT_VER, fd, buf)
#endif

#endif
