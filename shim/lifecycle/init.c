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

#include "../process/locks.h"
#include "../process/process.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/findings.h"
#include "../trace/trace.h"
#include "../evidence/driver_ask.h"
#include "../evidence/inventory.h"
#include "../evidence/gemm_census.h"
#include "../../wrappers/gen/cublasLt_api.h"
#include "../diagnose/diagnose.h"
#include "../hooks/devcode.h"
#include "../hooks/hooks_libs.h"
#include "lifecycle.h"
#include "../../wrappers/gen/results.h"

enum { UNINIT, IN_PROGRESS, READY, DISABLED };
static int _Atomic state = UNINIT;
static __thread int initialising __attribute__((tls_model("initial-exec")));
static pid_t _Atomic initialiser;  /* the process whose thread set IN_PROGRESS */

pid_t cs_pid;
static int forked_child;  /* this process is a fork of the one the shim started in */

/* fork.c's, in the child. A start under way on another thread of the parent never ends here: the
 * child starts afresh at its first call (waiting for it would wait for ever). */
void cs_init_after_fork(void)
{
    if (atomic_load(&state) == IN_PROGRESS && !initialising) atomic_store(&state, UNINIT);
    forked_child = 1;
    if (atomic_load(&state) != READY) return;
    cs_pid = getpid();
    if (cs_cuda_initialised) cs_forked_after_init = 1;
    cs_writer_after_fork();
    cs_inventory_after_fork();
    cs_findings_after_fork();
    for (int i = 0; i < CS_API_TOTAL; i++) atomic_store(&cs_own_calls[i], 0);
    cs_thread_after_fork(cs_self());
    cs_watchdog_after_fork();
    cs_scan_request();  /* the child's scanner: its first step proves the loader usable (loader_lock.c) */
}

/* Findings for the references the loaded libraries lack, said once each. */
static void report_unbound(void)
{
    static int reported;
    for (int n = cs_rebind_unbound(); reported < n; reported++) {
        const char *needer, *symbol;
        cs_rebind_unbound_at(reported, &needer, &symbol);
        cs_diagnose_unbound(needer, symbol);
    }
}

static void ask_algorithms(void *arg)
{
    (void)arg;
    cs_lt_algos_inquire((cs_lt_algo_cap_fn)cs_real(&cs_api_cublasLt, CS_CUBLASLT_cublasLtMatmulAlgoCapGetAttribute));
}

/* One scan's work (scanner.c runs it, one at a time): what is loaded and how it was found, the
 * library rules when that changed, the crash unwinder, wrapped names bound in objects loaded
 * where the shim could not follow the dlopen, and the references their libraries lack. */
static void scan_work(int ask)
{
    if (cs_inventory_refresh(ask)) cs_diagnose_libraries();
    cs_crash_prepare();
    cs_rebind_needed();
    cs_rebind();
    report_unbound();
    /* cuBLASLt algorithms seen since: whether each runs on Tensor Cores, asked of cuBLASLt here,
     * never on the program's thread (a getter of the 64 bytes it is given). Only when there are
     * some (so cuBLASLt is loaded and bound), and with the link map held still: resolving walks
     * the loaded objects, and a dlclose on another thread (a failed import unloading cuBLAS) must
     * not unmap one under the walk or the call. */
    if (ask && cs_lt_algos_pending()) cs_loader_held(ask_algorithms, NULL);
}

static int single_threaded(void)
{
    char buf[1024];
    if (cs_read_small("/proc/self/stat", buf, sizeof buf) <= 0) return 0;
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
        /* Another thread is initialising; it takes microseconds. Pass this call through. A
         * child forked meanwhile (before its fork handler could run) has no such thread. */
        pid_t who = atomic_load(&initialiser);
        if (who && who != getpid()) return 0;
        while (atomic_load(&state) == IN_PROGRESS)
            ;
        return atomic_load(&state) == READY;
    }
    initialising = 1;
    atomic_store(&initialiser, getpid());
    cs_config_load();
    if (cs_cfg.disable) {
        cs_disabled = 1;
        atomic_store(&state, DISABLED);
        initialising = 0;
        return 0;
    }
    cs_clock_init(cs_cfg.clock);
    cs_pid = getpid();
    cs_scanner_install(scan_work);
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

/* The first call in a child forked after the parent's cuInit (see after_fork_child). */
static void first_call(struct cs_thread *t, int idx)
{
    if (cs_forked_after_init != 1) return;
    cs_forked_after_init = 2;
    t->hide = 1;
    cs_diagnose_forked_child_call(cs_api_name(idx));
    t->hide = 0;
}

/* A failing call, before it is written: what it says about the stack. */
static void failed_call(struct cs_thread *t, struct cs_api *api, struct cs_event *ev)
{
    if (api == &cs_api_cuda) {
        /* A sticky asynchronous error reported by a copy, an event or any other call (the sync
         * calls have hooks that know the stream). */
        if (!(api->classes[ev->api - api->base] & CS_CLASS_SYNC)) cs_async_error(t, ev, NULL, 0);
        if (ev->result == CS_CUDA_ERROR_JIT_COMPILER_NOT_FOUND || ev->result == CS_CUDA_ERROR_SYSTEM_NOT_READY ||
            ev->result == CS_CUDA_ERROR_UNKNOWN)
            cs_diagnose_result(cs_api_name(ev->api), ev->result);
    } else {
        if (api == &cs_api_cudart && (ev->result == CS_cudaErrorInsufficientDriver || ev->result == CS_cudaErrorNoDevice))
            cs_diagnose_runtime_no_driver(cs_api_name(ev->api), ev->result);
        const char *said = cs_library_error_string(t, api, ev);
        cs_diagnose_library_failure(t, api, ev, said);
    }
}

static void new_trace_part(void)
{
    cs_findings_rewrite();
    cs_inventory_rewrite();
}

/* Wired when the shim is loaded, before any call can reach a wrapper. */
__attribute__((constructor)) static void wire(void)
{
    cs_writer_hooks = (struct cs_writer_hooks){ cs_nccl_version_if_loaded, new_trace_part, failed_call };
    cs_calls_hooks = (struct cs_calls_hooks){ cs_kernel_name_known, cs_trace_open };
    cs_thread_events = (struct cs_thread_events){ cs_init, first_call, cs_crash_thread_init, cs_crash_thread_exit };
}

/* CUDASHIM_EXPECT_GPU=1 (set by `cudashim run`): a program that never touched CUDA is itself
 * the finding, so wake up at exit to say so. Otherwise a CPU program never sees the shim. */
static int expect_gpu(void)
{
    const char *v = cs_setting("CUDASHIM_EXPECT_GPU");
    int on = 0;
    return v && cs_parse_bool(v, &on) && on;
}

static void exit_work(void)
{
    cs_own_thread = 1;
    cs_crash_exit_note();
    cs_diagnose_exit();
    cs_gemm_write_trace();
    cs_writer_finish();
    cs_summary_write();
    cs_findings_stderr();
    cs_prometheus_write();
}

static void *exit_thread(void *arg)
{
    (void)arg;
    exit_work();
    return NULL;
}

/* The exit's writes go to the trace directory, stderr and the metrics directory, any of which
 * can stop answering (a hung network mount, a pipe nobody reads). They run on a thread of their
 * own, waited for CUDASHIM_EXIT_TIMEOUT at most: past it the process exits as it would have,
 * and what was not written is lost with the thread, which holds nothing the exit needs. A forked
 * child that calls exit() (most leave by _exit, which runs none of this) writes them inline. */
static void exit_bounded(void)
{
    /* A forked child's exit is written inline: a thread started there can wait on a lock of the
     * allocator's or a sanitizer's runtime that a thread the fork left behind held (ThreadSanitizer
     * does), and then the bound would cut every child's trace short. */
    pthread_t th;
    if (forked_child || cs_thread_spawn(&th, 0, exit_thread)) { exit_work(); return; }
    struct timespec until = cs_realtime_after_ms((long long)(cs_cfg.exit_timeout_s * 1000));
    if (pthread_timedjoin_np(th, NULL, &until)) pthread_detach(th);
}

__attribute__((destructor)) static void cs_fini(void)
{
    if (atomic_load(&state) == UNINIT && expect_gpu()) cs_init();
    if (atomic_load(&state) != READY || cs_pid != getpid()) return;
    struct cs_thread *t = cs_self();
    if (t) t->hide = 1;  /* calls made by other destructors from here on pass through */
    cs_own_thread = 1;
    exit_bounded();
}
