/* Lazy, retryable bootstrap. Nothing runs at load time: the shim wakes on the first wrapped
 * call or driver lookup, so a program that never touches CUDA never sees it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <unistd.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "inventory.h"

enum { UNINIT, IN_PROGRESS, READY, DISABLED };
static int _Atomic state = UNINIT;
static __thread int initialising __attribute__((tls_model("initial-exec")));

pid_t cs_pid;

static void after_fork_child(void)
{
    if (atomic_load(&state) != READY) return;
    cs_pid = getpid();
    if (cs_cuda_initialised) cs_forked_after_init = 1;
    cs_writer_after_fork();
    cs_inventory_after_fork();
    cs_findings_after_fork();
    for (int i = 0; i < CS_API_TOTAL; i++) atomic_store(&cs_own_calls[i], 0);
    cs_thread_after_fork(cs_tls);
    cs_watchdog_after_fork();
}

static int single_threaded(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')');  /* the command name may hold spaces */
    for (int field = 2; p && field < 20; field++) p = strchr(p + 1, ' ');
    return p && atoi(p + 1) == 1;
}

int cs_init(void)
{
    int s = atomic_load(&state);
    if (cs_likely(s == READY)) return 1;
    if (s == DISABLED || initialising) return 0;
    int expected = UNINIT;
    if (!atomic_compare_exchange_strong(&state, &expected, IN_PROGRESS)) {
        /* Another thread is initialising; it takes microseconds. Pass this call through. */
        while (atomic_load(&state) == IN_PROGRESS)
            ;
        return atomic_load(&state) == READY;
    }
    initialising = 1;
    cs_config_load();
    if (cs_cfg.disable) {
        cs_disabled = 1;
        atomic_store(&state, DISABLED);
        initialising = 0;
        return 0;
    }
    cs_clock_init(cs_cfg.clock);
    cs_pid = getpid();
    cs_scanner_install();
    pthread_atfork(NULL, NULL, after_fork_child);
    atomic_store(&state, READY);
    cs_writer_start();
    cs_crash_install();
    /* With no other thread, nobody can fork while we hold the loader lock: load the unwinder
     * now, so that a crash in the very first calls is unwound too. */
    if (single_threaded()) cs_crash_prepare();
    cs_watchdog_start();
    cs_scan_request();  /* what is loaded: found by the scanner, never on this thread */
    /* A lazy reference that the loaded library lacks ends the process at its first call, with
     * nothing more from the shim: let the scanner say so first. */
    if (cs_rebind_unbound()) cs_scan_wait(500);
    initialising = 0;
    return 1;
}

/* CUDASHIM_EXPECT_GPU=1 (set by `cudashim run`): a program that never touched CUDA is itself
 * the finding, so wake up at exit to say so. Otherwise a CPU program never sees the shim. */
static int expect_gpu(void)
{
    const char *v = getenv("CUDASHIM_EXPECT_GPU");
    int on = 0;
    return v && cs_parse_bool(v, &on) && on;
}

__attribute__((destructor)) static void cs_fini(void)
{
    if (atomic_load(&state) == UNINIT && expect_gpu()) cs_init();
    if (atomic_load(&state) != READY || cs_pid != getpid()) return;
    struct cs_thread *t = cs_tls;
    if (t) t->hide = 1;  /* calls made by other destructors from here on pass through */
    cs_own_thread = 1;
    cs_crash_exit_note();
    cs_diagnose_exit();
    cs_writer_finish();
    cs_findings_stderr();
}
