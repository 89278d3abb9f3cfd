/* Per-thread state: created on a thread's first wrapped call, kept on a global list that the
 * writer, the summary and the crash handler walk. Memory comes from mmap, never malloc, so a
 * wrapper can run inside an allocator or a forked child. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "process.h"
#include "state.h"

/* Every call of a thread without state takes the full path, which makes the state. */
struct cs_thread cs_unborn = { .mode = CS_MODE_FULL };
__thread struct cs_thread *cs_tls __attribute__((tls_model("initial-exec"))) = &cs_unborn;
uint64_t _Atomic cs_coarse_ticks;
static struct cs_thread *_Atomic threads;
static pthread_key_t exit_key;
static int _Atomic key_made;

struct cs_thread *cs_thread_list(void) { return atomic_load(&threads); }

/* What the layers above do as threads come and go: init.c fills it in when the shim is loaded,
 * so that the per-thread state calls nothing above it. */
struct cs_thread_events cs_thread_events;

static void on_thread_exit(void *p)
{
    struct cs_thread *t = p;
    /* Keep the ring for the writer and the flight recorder; the struct is reused once drained. */
    atomic_store(&t->dead, 1);
    if (cs_thread_events.exiting) cs_thread_events.exiting();
}

static void *map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static uint64_t ring_events(void)
{
    uint64_t n = cs_cfg.ring_size, p = 16;
    if (cs_cfg.trace_all && n < 65536) n = 65536;
    while (p < n && p < (1ull << 24)) p <<= 1;
    return p;
}

/* A dead thread's state whose ring the writer has drained can serve a new thread. */
static struct cs_thread *reuse(void)
{
    for (struct cs_thread *t = atomic_load(&threads); t; t = t->next) {
        int one = 1;
        if (atomic_load(&t->dead) &&
            (!cs_cfg.trace_all || atomic_load(&t->ring->tail) == atomic_load(&t->head)) &&
            atomic_compare_exchange_strong(&t->dead, &one, 2))
            return t;
    }
    return NULL;
}

static struct cs_thread *thread_create(void);

/* The shim's own threads (the scanner) and the exit path: whatever they reach is not the
 * program's, so they never get thread state. */
__thread int cs_own_thread __attribute__((tls_model("initial-exec")));

/* The first call on a thread sets things up (and may wake the shim): none of that may leak
 * into the errno the program sees after its call. */
struct cs_thread *cs_thread_slow(int idx)
{
    if (cs_own_thread) return NULL;
    int saved_errno = errno;
    struct cs_thread *t = thread_create();
    if (t && cs_thread_events.first_call) cs_thread_events.first_call(t, idx);
    errno = saved_errno;
    return t;
}

static struct cs_thread *thread_create(void)
{
    if (!cs_thread_events.start || !cs_thread_events.start())
        return NULL;
    struct cs_thread *t = reuse();
    int fresh = !t;
    if (fresh) {
        uint64_t n = ring_events();
        t = map(sizeof *t);
        struct cs_ring *r = map(sizeof *r + n * sizeof(struct cs_event));
        if (!t || !r)
            return NULL;  /* out of memory: this thread's calls pass through unrecorded */
        r->mask = t->ring_mask = n - 1;
        t->ring = r;
    }
    /* Its identity and gate before it is listed (new) or live again (reused: readers skip dead
     * ones): the watchdog and the crash handler read the list. Counts of an earlier thread stay
     * in the totals. */
    t->tid = (int)syscall(SYS_gettid);
    t->lossless = cs_cfg.trace_all;
    t->depth = 0;
    t->hide = 0;
    /* Every call takes the full path when each needs its precise time or more than the fast
     * path records; library calls do when the hang watchdog runs (it needs their entry time). */
    t->mode = cs_cfg.trace_all || cs_cfg.sync_launches ? CS_MODE_FULL : 0;
    t->watch = cs_cfg.hang_timeout && cs_cfg.hang_timeout_s > 0;
    if (fresh) {
        struct cs_thread *head = atomic_load(&threads);
        do t->next = head; while (!atomic_compare_exchange_weak(&threads, &head, t));
    } else {
        atomic_store(&t->dead, 0);
    }
    int zero = 0;
    if (atomic_compare_exchange_strong(&key_made, &zero, 1))
        pthread_key_create(&exit_key, on_thread_exit);
    pthread_setspecific(exit_key, t);
    cs_tls = t;
    if (cs_thread_events.created) cs_thread_events.created();
    return t;
}

/* In a forked child only the forking thread lives on, with a fresh ring and zero counts, so
 * the child's trace describes the child alone. */
void cs_thread_after_fork(struct cs_thread *self)
{
    for (struct cs_thread *t = atomic_load(&threads); t; t = t->next) {
        memset(t->calls, 0, sizeof t->calls);
        memset(t->errors, 0, sizeof t->errors);
        t->dropped = 0;
        atomic_store(&t->ring->tail, atomic_load(&t->head));
        atomic_store(&t->flushing, 0);  /* a writer that was writing it did not come along */
        atomic_store(&t->dead, 1);
    }
    (void)self;
    cs_tls = &cs_unborn;  /* the child's first call takes the full path (and the fork check) */
}

/* The shim's own threads (the scanner, the writer, the watchdog) start with every signal but the
 * faults blocked, from their first instruction: a signal the program sends itself (a timer's, say) must land on
 * the program's threads, whose handlers expect them, never on the shim's. A handler that forked
 * on the writer thread while its start had not yet blocked them raced the program's own fork. */
int cs_thread_spawn(pthread_t *thread, size_t stack_size, void *(*fn)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    /* A fault of the thread's own stays deliverable: blocked, the kernel would end the process
     * at once, with no crash record. */
    static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) sigdelset(&all, faults[i]);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_t a;
    pthread_attr_init(&a);
    if (stack_size) pthread_attr_setstacksize(&a, stack_size);
    int err = pthread_create(thread, &a, fn, NULL);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}
