/* The scanner: the one place that takes the loader lock, and the one that asks libraries for
 * their versions. Hooks on program threads never do either: they record evidence and ask for a
 * scan (cs_scan_request, lock-free), and this thread runs the scan's work (init.c's: the
 * inventory, the library rules, binding), one scan at a time.
 *
 * Why a thread: a hook that takes the loader lock (dl_iterate_phdr, dladdr, dlopen) while another
 * thread forks leaves the child's loader locked for ever, and a hook that calls into a CUDA
 * library can wait on that library's own initialisation, which may be the very frame that called
 * the hook (cudart 11 calls cuGetProcAddress inside its pthread_once). Its reading of the link
 * map is fenced from fork (loader_lock.c), so a fork never lands inside it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../process/locks.h"
#include "../process/process.h"
#include "loader.h"

static uint32_t _Atomic requests;
static uint32_t _Atomic completed;  /* the request count each finished scan had seen */
static int _Atomic running, stopping;
static pthread_t scanner;
static void (*work)(int ask);  /* what a scan does: init.c's, so that this file calls nothing above it */

/* One scan at a time (the scanner thread, a hook's synchronous scan, exit): the SCAN lock, held
 * across the scan's work, which may wait for another thread's dlopen (loading the crash unwinder,
 * asking the driver at exit): a synchronous scan, which can run inside a dlopen (a constructor's
 * dlsym), waits for it only a bounded time. A fork waits for the scan under way, a bounded time
 * too (fork.c): an allocation the scanner is making at the fork would stay frozen in the child,
 * and allocators without fork handlers of their own (AddressSanitizer's in gcc 12) then deadlock
 * the child's first malloc. */

/* The thread is gone in a forked child; the child's next request starts its own. */
void cs_scanner_after_fork(void) { atomic_store(&running, 0); }

/* One scan. ask: also ask libraries for their versions (only
 * off every program thread's CUDA frames: the scanner, or exit). */
static void scan(int ask)
{
    if (ask) cs_lock(CS_LOCK_SCAN);
    else if (!cs_lock_timed(CS_LOCK_SCAN, 300)) return;  /* the scan under way may be waiting for this thread's dlopen */
    if ((!atomic_load(&stopping) || ask == 2) && work) work(ask);
    cs_unlock(CS_LOCK_SCAN);
}

static void *scanner_main(void *arg)
{
    (void)arg;
    cs_own_thread = 1;
    cs_loader_probe();  /* a forked child's: before any scan, holding nothing */
    uint32_t seen = (uint32_t)-1;
    while (!atomic_load(&stopping)) {
        uint32_t now = atomic_load(&requests);
        if (now != seen) {
            seen = now;
            scan(1);
            atomic_store(&completed, now);
            syscall(SYS_futex, &completed, FUTEX_WAKE_PRIVATE, 64, NULL, NULL, 0);
            continue;
        }
        /* Woken by a request, or once a second to notice libraries the program loaded itself. */
        struct timespec ts = { 1, 0 };
        syscall(SYS_futex, &requests, FUTEX_WAIT_PRIVATE, now, &ts, NULL, 0);
        if (atomic_load(&requests) == now) scan(1);
    }
    return NULL;
}

void cs_scanner_install(void (*scan_work)(int ask))
{
    work = scan_work;
}

void cs_scan_request(void)
{
    atomic_fetch_add(&requests, 1);
    int zero = 0;
    if (!atomic_load(&stopping) && atomic_compare_exchange_strong(&running, &zero, 1)) {
        if (cs_thread_spawn(&scanner, 256 * 1024, scanner_main)) atomic_store(&running, 0);
        else pthread_detach(scanner);
        return;
    }
    syscall(SYS_futex, &requests, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Ask for a scan and wait for it, at most ms milliseconds: for the few hooks whose line is worth
 * more with the library's version (a communicator's creation, once). Bounded, so a scanner that
 * cannot finish never holds the program up for longer. */
void cs_scan_wait(int ms)
{
    uint32_t want = atomic_load(&requests) + 1;
    cs_scan_request();
    struct timespec end, now;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_nsec += (long)ms * 1000000;
    end.tv_sec += end.tv_nsec / 1000000000, end.tv_nsec %= 1000000000;
    for (;;) {
        uint32_t c = atomic_load(&completed);
        if ((int32_t)(c - want) >= 0) return;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = (end.tv_sec - now.tv_sec) * 1000000000L + (end.tv_nsec - now.tv_nsec);
        if (left <= 0) return;
        struct timespec ts = { left / 1000000000L, left % 1000000000L };
        syscall(SYS_futex, &completed, FUTEX_WAIT_PRIVATE, c, &ts, NULL, 0);
    }
}

/* On the calling thread, without asking any library: for the dlsym and dlerror hooks, where the
 * program has just called the loader itself and the diagnosis needs what is loaded now. */
void cs_scan_sync(void) { scan(0); }

/* At exit: the last scan, with versions; the scanner stops for good. */
void cs_scan_final(void)
{
    atomic_store(&stopping, 1);
    scan(2);
}
