/* sigaction and signal: while the shim's crash handler holds a fatal signal (SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE, SIGABRT), a handler the program (or a library: UCX, faulthandler, a JVM)
 * installs later is kept as the one the shim hands the signal to after its record, and the
 * program is told what it would have been told without the shim (its previous disposition).
 * Every other call goes straight to libc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"

CS_EXPORT int cs_sigaction(int sig, const struct sigaction *act, struct sigaction *old) __asm__("cs_sigaction");
int cs_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (cs_crash_keeps(sig, act, old)) return 0;
    return cs_real_sigaction(sig, act, old);
}

/* glibc's signal() sets its handler through an internal sigaction, past the one above: the
 * same, with signal()'s BSD semantics (SA_RESTART, the signal blocked in its handler). */
CS_EXPORT sighandler_t cs_signal(int sig, sighandler_t handler) __asm__("cs_signal");
sighandler_t cs_signal(int sig, sighandler_t handler)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    if (cs_crash_keeps(sig, &act, &old) || cs_real_sigaction(sig, &act, &old) == 0) return old.sa_handler;
    return SIG_ERR;
}

#if defined(__x86_64__)
__asm__(".symver cs_sigaction, sigaction@@GLIBC_2.2.5");
__asm__(".symver cs_signal, signal@@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver cs_sigaction, sigaction@@GLIBC_2.17");
__asm__(".symver cs_signal, signal@@GLIBC_2.17");
#endif
