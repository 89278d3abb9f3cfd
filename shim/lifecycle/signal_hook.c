/* sigaction and signal: while the shim's crash handler holds a fatal signal (SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE, SIGABRT), a handler the program (or a library: UCX, faulthandler, a JVM)
 * installs later is kept as the one the shim hands the signal to after its record, and the
 * program is told what it would have been told without the shim (its previous disposition).
 * Every other call goes straight to libc. A sanitizer's runtime calls sigaction while it starts,
 * before its shadow memory exists: this file is never instrumented (Makefile, EARLY_OBJ), and
 * reaches crash.c only through the keeper it sets once its handler is installed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "../process/state.h"
#include "../loader/loader.h"
#include "lifecycle.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn _Atomic real;
int (*cs_signal_keeper)(int, const struct sigaction *, struct sigaction *);

/* libc's sigaction: the shim's own calls must not reach the interposer below. */
int cs_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn f = atomic_load_explicit(&real, memory_order_acquire);
    if (!f) {
        f = (sigaction_fn)cs_elf_next("sigaction", (void *)cs_real_sigaction);
        if (!f) return -1;
        atomic_store_explicit(&real, f, memory_order_release);
    }
    return f(sig, act, old);
}

static int kept(int sig, const struct sigaction *act, struct sigaction *old)
{
    int (*keeper)(int, const struct sigaction *, struct sigaction *) = __atomic_load_n(&cs_signal_keeper, __ATOMIC_ACQUIRE);
    return keeper && keeper(sig, act, old);
}

CS_EXPORT int cs_sigaction(int sig, const struct sigaction *act, struct sigaction *old) __asm__("cs_sigaction");
int cs_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (kept(sig, act, old)) return 0;
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
    if (kept(sig, &act, &old) || cs_real_sigaction(sig, &act, &old) == 0) return old.sa_handler;
    return SIG_ERR;
}

#if defined(__x86_64__)
__asm__(".symver cs_sigaction, sigaction@@GLIBC_2.2.5");
__asm__(".symver cs_signal, signal@@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver cs_sigaction, sigaction@@GLIBC_2.17");
__asm__(".symver cs_signal, signal@@GLIBC_2.17");
#endif
